"""Machine-readable answers: every section's results as JSON, decimals to 30 significant digits plus exact LaTeX."""

from __future__ import annotations

import json
from typing import Any

from sympy import Expr, S

from .. import __version__
from ..engine import Attention, FractionRow, MultiHead, QueryAttention, entries, is_symbolic
from ..model import Derivation, DerivedSection
from ..numfmt import (
    Coefficients,
    coefficients_latex,
    exact_latex,
    exponential_latex,
    fraction_coefficients_latex,
    fraction_latex,
    significant,
    significant_approximation,
    significant_fraction,
    softmax_latex,
    surd_exponential_latex,
    surd_latex,
)

FIGURES = 30
ZERO = significant(S.Zero, FIGURES)
_ENCODER = json.JSONEncoder(ensure_ascii=False)


def _number(value: Expr) -> str | None:
    """A decimal string with at least 30 significant digits; "-inf" for a masked score; None for a symbol."""
    if value.is_Rational:  # most entries: no symbol search
        return significant(value, FIGURES)
    if is_symbolic(value):
        return None
    if value is S.Infinity or value is S.NegativeInfinity:  # a masked score (singletons: no evaluation)
        return "-inf" if value is S.NegativeInfinity else "inf"
    return significant(value, FIGURES)


# a masked logit, −∞
_MINUS_INFINITY, _MINUS_INFINITY_LATEX = _number(S.NegativeInfinity), exact_latex(S.NegativeInfinity, decimals=False)


def _row(values) -> list[str | None]:
    return [_number(v) for v in values]


def _exact_row(values) -> list[str]:
    return [exact_latex(v, decimals=False) for v in values]


def _fraction_row(fractions: FractionRow) -> list[str]:
    """_row() of rationals given as fractions (None: −∞)."""
    return [_MINUS_INFINITY if f is None else significant_fraction(*f, FIGURES) for f in fractions]


def _fraction_exact_row(fractions: FractionRow, radicand: int = 1) -> list[str]:
    """_exact_row() of the numbers c·√radicand given as fractions c (None: −∞)."""
    return [_MINUS_INFINITY_LATEX if f is None else surd_latex(*f, radicand) for f in fractions]


def _query(query: QueryAttention, coefficients: Coefficients) -> dict[str, Any]:
    (scores, scaled), (exact_scores, exact_scaled), terms = _scores(query)
    answer: dict[str, Any] = {"scores": scores, "scaled_scores": scaled}
    answer["weights"], answer["output"] = _softmax_numbers(query)
    # The softmax forms, in token order: Z = Σ_k e^{a_k}, e^{a_j} / Z and (Σ_j v_j e^{a_j}) / Z.
    total, weights, outputs = softmax_latex(terms, coefficients)
    answer["exact"] = {"scores": exact_scores, "scaled_scores": exact_scaled, "Z": total, "weights": weights,
                       "output": outputs}
    return answer


def _scores(query: QueryAttention) -> tuple[list[list[str | None]], list[list[str]], list[str | None]]:
    """A query's raw and scaled scores as decimals and as exact LaTeX, and the softmax's terms e^{a_j}; read from
    their fractions when the engine kept them so (no SymPy number is made)."""
    if query.softmax.fractions is None:
        rows = (query.scores, query.scaled)
        return [_row(r) for r in rows], [_exact_row(r) for r in rows], [exponential_latex(a) for a in rows[1]]
    raw, logits, radicand = query.score_fractions, query.softmax.fractions, query.softmax.radicand
    if radicand == 1:
        scaled = _fraction_row(logits)
    else:  # logits c·√m (√d_k not an integer): their decimals from the engine's numbers
        scaled = [_MINUS_INFINITY if f is None else ZERO if f[0] == 0 else significant_approximation(number, FIGURES)
                  for f, number in zip(logits, query.softmax.logit_numbers, strict=True)]
    terms = [None if f is None else surd_exponential_latex(*f, radicand) for f in logits]
    return [_fraction_row(raw), scaled], [_fraction_exact_row(raw), _fraction_exact_row(logits, radicand)], terms


def _softmax_numbers(query: QueryAttention) -> tuple[list[str | None], list[str | None]]:
    """The weights and outputs of a query. A numeric row's are read from the engine's numbers: its exact forms
    need not be built. Each output entry is a WeightedAverage, as irrational as the weights when they are (else
    it is read as its exact form is); a zero column gives exactly 0, as does a masked key's weight."""
    numbers = query.softmax.numbers
    if numbers is None or not numbers.irrational:
        return _row(query.softmax.weights), _row(tuple(query.output))
    weights = [ZERO if masked else significant_approximation(w, FIGURES)
               for masked, w in zip(query.softmax.masked, numbers.weights, strict=True)]
    outputs = [ZERO if zero else significant_approximation(value, FIGURES)
               for zero, value in zip(query.values.zero_columns, numbers.outputs, strict=True)]
    return weights, outputs


def _projections(result: Attention, tokens: tuple[str, ...]) -> dict[str, Any]:
    """Q, K, V and the focus queries of one attention computation."""
    numbers, exact, columns = {}, {}, None
    for name in "QKV":
        fractions = result.fractions(name)  # a rational projection's entries, without building SymPy numbers
        if fractions is None:
            rows = entries(getattr(result, name))
            numbers[name], exact[name] = [_row(row) for row in rows], [_exact_row(row) for row in rows]
            columns = coefficients_latex(list(zip(*rows, strict=True))) if name == "V" else columns
        else:
            numbers[name] = [[significant_fraction(p, q, FIGURES) for p, q in row] for row in fractions]
            exact[name] = [[fraction_latex(p, q) for p, q in row] for row in fractions]
            columns = fraction_coefficients_latex(list(zip(*fractions, strict=True))) if name == "V" else columns
    return {**numbers, "queries": {tokens[i]: _query(q, columns) for i, q in result.queries.items()}, "exact": exact}


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
    return _dumps(answers(derivation)) + "\n"


def _dumps(value: Any) -> str:
    """JSON indented by two spaces, except that a list of scalars stays on one line."""
    parts: list[str] = []
    _write(value, 0, parts)
    return "".join(parts)


def _write(value: Any, depth: int, parts: list[str]) -> None:
    """Append the JSON text of a value to parts (pieces joined once: nested joins copied the text per level)."""
    if isinstance(value, dict) and value:
        items, brackets = [(f"{_ENCODER.encode(key)}: ", item) for key, item in value.items()], "{}"
    elif isinstance(value, list) and any(isinstance(item, (dict, list)) for item in value):
        items, brackets = [("", item) for item in value], "[]"
    else:
        parts.append(_ENCODER.encode(value))
        return
    pad = "\n" + "  " * (depth + 1)
    for i, (label, item) in enumerate(items):
        parts += (brackets[0] if i == 0 else ",", pad, label)
        _write(item, depth + 1, parts)
    parts.append("\n" + "  " * depth + brackets[1])
