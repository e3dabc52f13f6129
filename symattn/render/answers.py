"""Machine-readable answers: every section's results as JSON, decimals to 30 significant digits plus exact LaTeX."""

from __future__ import annotations

import json
import re
from typing import Any

from sympy import Expr, ImmutableMatrix, S

from .. import __version__
from ..attention import Attention, MultiHead, QueryAttention
from ..model import Derivation, DerivedSection
from ..numfmt import exact_latex, significant, softmax_latex

FIGURES = 30


def _number(value: Expr) -> str | None:
    """A decimal string with at least 30 significant digits; "-inf" for a masked score; None for a symbol."""
    if value.free_symbols:
        return None
    if value in (S.Infinity, S.NegativeInfinity):  # a masked score (a structural test: no evaluation)
        return "-inf" if value == S.NegativeInfinity else "inf"
    return significant(value, FIGURES)


def _row(values) -> list[str | None]:
    return [_number(v) for v in values]


def _matrix(matrix: ImmutableMatrix) -> list[list[str | None]]:
    return [_row(matrix.row(i)) for i in range(matrix.rows)]


def _exact_row(values) -> list[str]:
    return [exact_latex(v, decimals=False) for v in values]


def _exact_matrix(matrix: ImmutableMatrix) -> list[list[str]]:
    return [_exact_row(matrix.row(i)) for i in range(matrix.rows)]


def _query(query: QueryAttention, V: ImmutableMatrix) -> dict[str, Any]:
    parts = {"scores": query.scores, "scaled_scores": query.scaled, "weights": query.softmax.weights,
             "output": tuple(query.output)}
    answer: dict[str, Any] = {key: _row(values) for key, values in parts.items()}
    answer["exact"] = {key: _exact_row(parts[key]) for key in ("scores", "scaled_scores")}
    # The softmax forms, in token order: e^{a_j} / Σ_k e^{a_k} and (Σ_j v_j e^{a_j}) / Σ_k e^{a_k}.
    columns = [[V[j, c] for j in range(V.rows)] for c in range(V.cols)]
    answer["exact"]["weights"], answer["exact"]["output"] = softmax_latex(query.softmax.exps, columns)
    return answer


def _projections(result: Attention, tokens: tuple[str, ...]) -> dict[str, Any]:
    """Q, K, V and the focus queries of one attention computation."""
    return {
        "Q": _matrix(result.Q), "K": _matrix(result.K), "V": _matrix(result.V),
        "queries": {tokens[i]: _query(q, result.V) for i, q in result.queries.items()},
        "exact": {"Q": _exact_matrix(result.Q), "K": _exact_matrix(result.K), "V": _exact_matrix(result.V)},
    }


def _attention(section: DerivedSection, result: Attention) -> dict[str, Any]:
    spec = section.spec
    answer: dict[str, Any] = {"kind": section.kind, "tokens": list(spec.tokens)}
    if section.kind == "cross_attention":
        answer["memory_tokens"] = list(spec.memory_tokens)
    answer["d_k"] = spec.d_k
    answer["scale"] = {"sqrt_d_k": "sqrt(d_k)", "none": "none"}.get(spec.scale.mode) or _number(spec.scale.number)
    answer.update(_projections(result, spec.tokens))
    return answer


def _multi_head(section: DerivedSection, result: MultiHead) -> dict[str, Any]:
    return {
        "kind": section.kind,
        "focus": section.spec.focus,
        "heads": [_row(head) for head in result.heads],
        "head_details": [None if a is None else _projections(a, section.spec.tokens) for a in result.attentions],
        "concat": _row(result.concat),
        "output": _row(result.output),
        "exact": {"heads": [_exact_row(head) for head in result.heads], "concat": _exact_row(result.concat),
                  "output": _exact_row(result.output)},
    }


def answers(derivation: Derivation) -> dict[str, Any]:
    """The answers of a derivation as plain data (the schema the README documents)."""
    sections = [
        _multi_head(section, section.result) if isinstance(section.result, MultiHead)
        else _attention(section, section.result)
        for section in derivation.sections
    ]
    return {"symattn": __version__, "title": derivation.title, "significant_digits": FIGURES, "sections": sections}


def render_json(derivation: Derivation) -> str:
    """The answers as indented JSON text (UTF-8, token names as they are), one vector per line."""
    text = json.dumps(answers(derivation), ensure_ascii=False, indent=2)
    return _FLAT_LIST.sub(lambda m: "[" + ", ".join(item.strip() for item in m.group(1).split(",\n")) + "]",
                          text) + "\n"


# A list holding only scalars (strings, numbers, null): raw ",\n" separates its items (JSON escapes newlines).
_SCALAR = r'(?:"(?:[^"\\]|\\.)*"|[-+.\deE]+|null|true|false)'
_FLAT_LIST = re.compile(rf"\[\n\s+((?:{_SCALAR},\n\s+)*{_SCALAR})\n\s*\]")
