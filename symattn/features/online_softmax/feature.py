"""FlashAttention's online softmax as an option of self- and cross-attention (`softmax = "online"`, `block = 2`):
its keys, the steps that replace a query's softmax and weighted sum, and its answers."""

from __future__ import annotations

from typing import Any

import mpmath
from sympy import S

from ... import engine
from ...document.sentences import weight_sentences
from ...document.steps import Formula, Heading, Name, Paragraph, Shown, Step, Token, Tokens, VectorList
from ...errors import SpecError
from ...numbers.exact_latex import coefficients_latex, exact_latex, normaliser_latex, numerators_latex
from ...numbers.significant import asked, significant_approximation
from ...spec import fields
from ...spec.model import GivenMatrix
from ..attention.answers import EXPLICIT_TERMS, row_texts
from . import engine as online_engine
from .steps import OnlineBlock, OnlineResult

KEYS = frozenset({"softmax", "block"})
SOFTMAX = ("standard", "online")
DEFAULT_BLOCK = 2  # keys per block: the smallest that shows a block of several keys and a rescaling between blocks


def parse(data: dict[str, Any], field: str, matrices: dict[str, GivenMatrix]) -> int | None:
    """The keys per block with `softmax = "online"`, None for the standard (direct) softmax."""
    softmax = data.get("softmax", "standard")
    if softmax not in SOFTMAX:
        raise SpecError(f"{field}.softmax", f"expected \"standard\" or \"online\", got {softmax!r}")
    if softmax == "standard":
        if "block" in data:
            raise SpecError(f"{field}.block", "applies only with softmax = \"online\"")
        return None
    symbolic = [name for name, given in matrices.items() if given.symbolic]
    scores = [name for name in symbolic if name not in ("V", "W_V")]  # the matrices the scores come from
    if scores:
        raise SpecError(f"{field}.softmax", f"\"online\" compares the scores to find their running maximum, "
                                                   f"so it needs numbers ({scores[0]} holds symbols)")
    if symbolic:  # the values only: the running output o is derived in numbers
        raise SpecError(f"{field}.softmax", f"\"online\" rescales a numeric running output block by block, so "
                                                   f"it needs numeric values ({symbolic[0]} holds symbols)")
    return fields.positive_int(data.get("block", DEFAULT_BLOCK), f"{field}.block")


def compute(query: engine.QueryAttention, V: Shown | engine.Attention, block: int, known: engine.Numbers
            ) -> online_engine.OnlineSoftmax:
    """A query's online softmax over the value rows V, in blocks of `block` keys. It equals the direct softmax's
    weighted sum by construction (engine.online's docstring says why; online_engine.matches_direct proves it in
    exact arithmetic, which the tests run: here it would cost more than the whole derivation)."""
    return online_engine.online_softmax(query.scaled, _rows(V), block, known)


def _rows(V: Shown | engine.Attention) -> list[tuple]:
    """The value rows as tuples of exact entries."""
    matrix = V.values if isinstance(V, Shown) else V.V
    return [tuple(matrix[i, :]) for i in range(matrix.rows)]


def steps(key_tokens: tuple[str, ...], V: Shown, query: engine.QueryAttention, block: int, facts, number: int
          ) -> list[Step]:
    """The steps after the scaling, for one query: the blocks one by one (Step `number`), then z = o/ℓ and the
    check against the direct softmax (Step `number` + 1)."""
    online = compute(query, V, block, query.softmax.known)
    token, known = facts.token, query.softmax.known
    names = {"m": Formula("online_m"), "l": Formula("online_l"), "o": Formula("online_o"),
             "term": Formula("online_term")}
    out: list[Step] = [
        Heading(2, "online.step", {"token": Token(token), "n": number}),
        Paragraph("online.intro" if facts.first else "online.again",
                  {"block": block, "count": len(online.blocks), **names, "start": Formula("online_start"),
                   "nn": Formula("online_nn")}),
    ]
    if len(key_tokens) % block and facts.first:
        out.append(Paragraph("online.shorter", {"last": len(online.last.keys)}, note=True))
    out += [Paragraph("attend.values"), VectorList(tuple(Name("v", t) for t in key_tokens), V.rows)]
    total: Any = S.Zero
    partial: tuple = (S.Zero,) * V.values.cols
    for b, step in enumerate(online.blocks, 1):
        keys = step.keys
        tokens = tuple(key_tokens[j] for j in keys)
        out.append(Paragraph("online.block" if len(tokens) > 1 else "online.block_one",
                             {"b": b, "keys": Tokens(tokens)}))
        out.append(OnlineBlock(b, tokens, tuple(online.logits[j] for j in keys), step.previous, step.maximum,
                               step.rescale, step.exps, tuple(V.row(j) for j in keys), total, step.total, partial,
                               step.partial, known))
        out += _block_sentences(step, b, names)
        total, partial = step.total, step.partial
    out += [
        Heading(2, "online.result_step", {"token": Token(token), "n": number + 1}),
        Paragraph("online.divide", {"count": len(online.blocks), **names}),
        OnlineResult(len(online.blocks), partial, total, online.output, query.softmax.weights, known),
        Paragraph("online.same", {"z": Formula("weighted_sum", (("z", Name("z", token)),)),
                                  "split": Formula("online_split"), "identity": Formula("online_identity")}),
        *weight_sentences(facts, itself=token in key_tokens),
    ]
    return out


def _block_sentences(block, b: int, names: dict) -> list[Step]:
    """What a block did, said only where it is true: it changed nothing (all its keys masked), it was the first to
    see a key (nothing to rescale), it did not raise the maximum (e^0 = 1), or it raised it (a factor below 1)."""
    if block.masked:
        return [Paragraph("online.masked_block", {"b": b, "e": Formula("exp_minus_inf"), **names})]
    if block.rescale is None:
        return [Paragraph("online.first_seen", names)]
    if not block.raises:
        return [Paragraph("online.no_rescale", {"b": b, "one": Formula("online_one"), **names})]
    return [Paragraph("online.rescale", {"b": b, "factor": Formula("online_factor"), **names})]


def matrix_note(block: int | None) -> list[Step]:
    """With the online softmax, the note that the matrix form is the direct computation."""
    return [] if block is None else [Paragraph("online.matrix", note=True)]


def add_answers(answers: dict[str, Any], result: engine.Attention, tokens: tuple[str, ...],
                key_tokens: tuple[str, ...], block: int | None) -> dict[str, Any]:
    """The answers with each query's online blocks: its key tokens, m, ℓ and o after it, as decimals and exact."""
    if block is None:
        return answers
    rows = _rows(result)
    coefficients = coefficients_latex(list(zip(*rows, strict=True)))
    for i, query in result.queries.items():
        online = compute(query, result, block, result.known)
        answers["queries"][tokens[i]]["online"] = [
            {"block": [key_tokens[j] for j in step.keys], "m": row_texts((step.maximum,), result.known)[0],
             **_numbers(step, result.known), "exact": _exact(step, b, len(rows), coefficients)}
            for b, step in enumerate(online.blocks, 1)]
    return answers


def _numbers(step: online_engine.Block, known: engine.Numbers) -> dict[str, Any]:
    """ℓ and o of a block as decimals: from the engine's numbers when irrational (their SymPy forms are not built),
    from the exact values when rational (every power seen is e^0 = 1) or when an entry cancels to nearly 0."""
    if step.tied:
        return {"l": row_texts((step.total,), known)[0], "o": row_texts(step.partial, known)}
    scale = step.total_number * mpmath.mpf(10) ** -engine.CANCELLED_DIGITS
    o = [significant_approximation(n, asked()) if abs(n) > scale else row_texts((step.partial[c],), known)[0]
         for c, n in enumerate(step.partial_numbers)]
    return {"l": significant_approximation(step.total_number, asked()), "o": o}


def _exact(step: online_engine.Block, b: int, n: int, coefficients) -> dict[str, Any]:
    """m, ℓ and o of a block as exact LaTeX; beyond EXPLICIT_TERMS keys seen, ℓ and o by reference to the query's
    scaled scores a_j and the section's V, as the direct output's entries are (the JSON would grow as n³)."""
    m = exact_latex(step.maximum, decimals=False)
    seen = step.keys[-1] + 1
    if seen > EXPLICIT_TERMS:
        term = rf"e^{{a_j - m^{{({b})}}}}"
        return {"m": m, "l": rf"\sum_{{j=1}}^{{{seen}}} {term}",
                "o": [rf"\sum_{{j=1}}^{{{seen}}} V_{{j,{c + 1}}} {term}" for c in range(len(step.partial_numbers))]}
    terms = [exact_latex(step.terms[j], decimals=False) if j in step.terms else None for j in range(n)]
    total, _ = normaliser_latex(terms)
    return {"m": m, "l": total, "o": [o or "0" for o in numerators_latex(terms, coefficients)]}
