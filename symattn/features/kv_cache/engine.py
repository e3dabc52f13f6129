"""A decoding step with a KV cache, exactly: the cached keys and values of the p earlier positions come first, the
n new tokens' own after them, and only the new queries attend.

Alignment (as Hugging Face's cache and PyTorch's causal mask with an offset): new token t sits at absolute position
p + t and attends to positions 0 … p + t; so its row is row p + t of the causal attention over the whole sequence of
p + n positions, which `recompute` computes to check it. With RoPE the cached keys are stored rotated (for their
own positions) and are not rotated again; the new queries and keys turn by their absolute positions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sympy import Expr, ImmutableMatrix, zeros

from ...engine.matrices import as_matrix
from ...engine.pipeline import Attention, attention_of
from ..rope.engine import rotary_attention

if TYPE_CHECKING:  # the engine reads a Rope's base and pairing; it does not import the spec
    from sympy.polys.matrices import DomainMatrix

    from ...spec.model import Rope


def appended(past: ImmutableMatrix, new: ImmutableMatrix | DomainMatrix) -> ImmutableMatrix:
    """The cache after this step: its p rows, then the new tokens' rows."""
    return ImmutableMatrix(ImmutableMatrix.vstack(past, as_matrix(new)))


def decode(new: dict[str, ImmutableMatrix | DomainMatrix], past_K: ImmutableMatrix, past_V: ImmutableMatrix,
           divisor: Expr, focus: tuple[int, ...], mask: ImmutableMatrix | None = None, rope: Rope | None = None,
           positions: tuple[int, ...] | None = None) -> Attention:
    """The new queries (rows of new["Q"]) against the cached keys and values followed by the new ones. `mask` is
    n × (p + n) (Mask.causal(n, p): the offset causal mask). With `rope`, the new queries and keys are rotated for
    `positions` (their absolute positions, default p, p + 1, …) and the p cached keys are taken as rotated already.
    The result's K and V have all p + n rows (with RoPE, K the rotated keys)."""
    p, n = past_K.rows, as_matrix(new["Q"]).rows
    stored = {"Q": new["Q"], "K": appended(past_K, new["K"]), "V": appended(past_V, new["V"])}
    if rope is None:
        return attention_of(stored, divisor, focus, mask)
    at = positions if positions is not None else tuple(range(p, p + n))
    return rotary_attention(stored, at, tuple(range(p)) + tuple(at), rope, divisor, focus, mask, rotated=p)


def whole_mask(mask: ImmutableMatrix | None, p: int, n: int) -> ImmutableMatrix:
    """The mask of the whole sequence of p + n positions, (p + n) × (p + n): causal for the p earlier rows, and the
    step's n rows (the offset causal mask's rows are the whole causal mask's last n rows)."""
    causal = ImmutableMatrix(p + n, p + n, lambda i, j: 1 if j <= i else 0)
    if mask is None:
        return causal
    return ImmutableMatrix(ImmutableMatrix.vstack(causal[:p, :], mask)) if p else mask


def recompute(new: dict[str, ImmutableMatrix | DomainMatrix], past_K: ImmutableMatrix, past_V: ImmutableMatrix,
              divisor: Expr, mask: ImmutableMatrix | None = None, rope: Rope | None = None,
              positions: tuple[int, ...] | None = None) -> Attention:
    """Attention over the whole sequence without a cache, for its last n rows (queries p … p + n − 1): the keys and
    values of all p + n positions (the earlier ones being the cache's rows), the whole sequence's mask
    (whole_mask), each query at its own row. The earlier positions' queries are not needed for these rows (a row
    reads only its own query), so they are zero here; the result's queries are keyed p + t."""
    p, Q = past_K.rows, as_matrix(new["Q"])
    n = Q.rows
    stored = {"Q": ImmutableMatrix(ImmutableMatrix.vstack(zeros(p, Q.cols), Q)) if p else Q,
              "K": appended(past_K, new["K"]), "V": appended(past_V, new["V"])}
    focus = tuple(range(p, p + n))
    full = whole_mask(mask, p, n)
    if rope is None:
        return attention_of(stored, divisor, focus, full)
    at = tuple(range(p)) + (positions if positions is not None else tuple(range(p, p + n)))
    return rotary_attention(stored, at, at, rope, divisor, focus, full, rotated=p)


def same_rows(step: Attention, whole: Attention, p: int) -> bool:
    """Whether each new query's scores, weights and output equal those of row p + t of the whole sequence,
    exactly (as exact values, not as decimals)."""
    def same(query, row) -> bool:
        return (query.scaled, query.softmax.weights, query.output) == (row.scaled, row.softmax.weights, row.output)

    return all(same(query, whole.queries[p + t]) for t, query in step.queries.items())
