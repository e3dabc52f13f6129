"""The answers of an ALiBi section as plain data (`symattn solve`, `render --format json`).

Every section: kind, tokens, scale, slopes (decimals to 30 significant digits) and exact.slopes (LaTeX).
One head (W_Q, W_K, W_V at the section's top): d_k, slope, bias (the n × n matrix B, B_ij = −m(i − j) for j ≤ i,
"-inf" where masked), Q, K, V and queries, as self-attention's answers, each query with
scores (q·k_j), scaled_scores (q·k_j / √d_k), bias (its row of B), biased_scores (the softmax's logits
a_j = q·k_j / √d_k − m(i − j)), weights and output; every one also exact, in its `exact`.
A list of heads: heads, a list of such heads (each with its d_k, slope, bias, Q, K, V, queries and exact); concat,
each focus token's heads' outputs side by side; and, with W_O, output, the concatenation times W_O; exact forms of
both in exact."""

from __future__ import annotations

from typing import Any

from ...engine import entries
from ...features.attention.answers import attention_answers, exact_text, exact_texts, number_text, row_texts
from .engine import AlibiResult, HeadResult
from .spec import AlibiHead, AlibiSpec


def head_answers(spec: AlibiSpec, head: AlibiHead, result: HeadResult) -> dict[str, Any]:
    """One head's slope, bias matrix, Q, K, V and queries (their biased scores under biased_scores)."""
    answers = attention_answers(result.attention, spec.tokens)
    known = result.attention.known
    for i in result.attention.queries:
        token = spec.tokens[i]
        answer = answers["queries"][token]
        scaled, bias = result.scaled(i), tuple(result.bias.row(i))
        exact = answer["exact"]
        # in the order of the computation; the softmax's logits are the biased scores
        exact = {"scores": exact["scores"], "scaled_scores": exact_texts(scaled), "bias": exact_texts(bias),
                 "biased_scores": exact["scaled_scores"],
                 **{k: v for k, v in exact.items() if k not in ("scores", "scaled_scores")}}
        answers["queries"][token] = {"scores": answer["scores"], "scaled_scores": row_texts(scaled, known),
                                     "bias": row_texts(bias), "biased_scores": answer["scaled_scores"],
                                     **{k: v for k, v in answer.items()
                                        if k not in ("scores", "scaled_scores", "exact")}, "exact": exact}
    bias = entries(result.bias)
    answers["exact"] = {"slope": exact_text(head.slope), "bias": [exact_texts(row) for row in bias],
                        **answers["exact"]}
    return {"d_k": head.d_k, "slope": row_texts((head.slope,))[0], "bias": [row_texts(row) for row in bias],
            **answers}


def answers(spec: AlibiSpec, result: AlibiResult) -> dict[str, Any]:
    slopes = tuple(head.slope for head in spec.heads)
    heads = [head_answers(spec, head, r) for head, r in zip(spec.heads, result.heads, strict=True)]
    scale = {"sqrt_d_k": "sqrt(d_k)", "none": "none"}.get(spec.scale.mode) or number_text(spec.scale.number)
    out: dict[str, Any] = {"kind": spec.kind, "tokens": list(spec.tokens), "scale": scale,
                           "slopes": row_texts(slopes)}
    exact: dict[str, Any] = {"slopes": exact_texts(slopes)}
    if spec.geometric:
        out["geometric_heads"] = spec.of  # the slopes are 2^(-8h/H) for this H
    if not spec.several:
        head = heads[0]
        return {**out, **{k: v for k, v in head.items() if k != "exact"}, "exact": {**exact, **head["exact"]}}
    known = result.known
    tokens = [spec.tokens[i] for i in result.focus]
    out["heads"] = heads
    out["concat"] = {t: row_texts(tuple(result.concats[i]), known) for t, i in zip(tokens, result.focus, strict=True)}
    exact["concat"] = {t: exact_texts(tuple(result.concats[i])) for t, i in zip(tokens, result.focus, strict=True)}
    if result.rows is not None:
        out["output"] = {t: row_texts(tuple(result.rows[i].output), known)
                         for t, i in zip(tokens, result.focus, strict=True)}
        exact["output"] = {t: exact_texts(tuple(result.rows[i].output))
                           for t, i in zip(tokens, result.focus, strict=True)}
    return {**out, "exact": exact}
