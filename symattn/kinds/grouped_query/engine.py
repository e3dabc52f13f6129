"""Grouped-query attention (GQA) and multi-query attention (MQA), exactly: each K/V head projects X once, and
every query head of its group attends with those keys and values; the heads' outputs are concatenated and
projected by W_O.

Convention (as PyTorch's scaled_dot_product_attention(..., enable_gqa=True), which repeat_interleaves the K/V
heads): with H query heads and G K/V heads (G divides H, r = H / G), query head h (0-based) uses K/V head
⌊h / r⌋, so heads 0 … r − 1 share K/V head 0, the next r heads K/V head 1, and so on. G = 1 is multi-query
attention, G = H plain multi-head attention.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import mpmath
from sympy import QQ, Expr, ImmutableMatrix
from sympy.polys.matrices import DomainMatrix

from ...engine.fast import ball_number, ball_products, binary_precision, fixed_point
from ...engine.matrices import as_matrix, fractions, over_QQ, projection
from ...engine.numbers import PRECISION, WORKING_DIGITS, fraction_numbers
from ...engine.pipeline import Attention, MultiHead, attention_of, combine_heads
from ...engine.softmax import CANCELLED_DIGITS
from ...engine.symbols import any_symbolic
from ...features.kv_cache.engine import decode
from ...features.rope.engine import rotary_attention


def head_mapping(heads: int, kv_heads: int) -> tuple[int, ...]:
    """The K/V head (0-based) of each query head: ⌊h / (heads / kv_heads)⌋."""
    group = heads // kv_heads
    return tuple(h // group for h in range(heads))


@dataclass(frozen=True)
class GroupedQuery:
    """Grouped-query attention of the focus queries: `kv` holds each K/V head's K and V (projected once, shared by
    its query heads), `heads` each query head's attention over its K/V head, `mapping` the K/V head of each query
    head; `W_O` the output projection."""

    mapping: tuple[int, ...]
    kv: tuple[dict[str, object], ...]
    heads: tuple[Attention, ...]
    focus: tuple[int, ...]
    W_O: ImmutableMatrix
    _combined: dict[int, MultiHead] = field(default_factory=dict, compare=False, repr=False)

    def K(self, g: int) -> ImmutableMatrix:
        """K/V head g's keys as the query heads use them (rotated, with RoPE: the first of its query heads' K)."""
        return self.heads[self.mapping.index(g)].K

    def V(self, g: int) -> ImmutableMatrix:
        """K/V head g's values as the query heads use them (with a KV cache, the cached rows first)."""
        return as_matrix(self.heads[self.mapping.index(g)].V)

    def combined(self, i: int) -> MultiHead:
        """Focus query i's head outputs, their concatenation and its projection by W_O, exactly (what a document
        shows, and an answer whose numbers are not enough: rational rows, cancellation)."""
        if i not in self._combined:
            self._combined[i] = combine_heads(tuple(a.queries[i].output for a in self.heads), self.W_O, self.heads)
        return self._combined[i]

    @cached_property
    def symbolic(self) -> bool:
        """Whether W_O or a projection holds symbols (a rational projection's fractions say it has none)."""
        return any_symbolic(self.W_O) or any(a.fractions(name) is None and any_symbolic(getattr(a, name))
                                             for a in self.heads for name in "QV")

    def numbers(self, i: int) -> tuple[list[mpmath.mpf], list[mpmath.mpf]] | None:
        """The numbers (WORKING_DIGITS correct digits) of focus query i's concatenation and output, from the heads'
        softmax numbers without their exact forms (an answer key of 64 tokens and 8 heads would otherwise build
        512 rows of exact sums); None when they would not do: a symbolic section, a row whose weights are exact
        (the exact value is then cheap), an entry cancelled beyond the numbers' digits."""
        return self._numbers.get(i)

    @cached_property
    def _numbers(self) -> dict[int, tuple[list[mpmath.mpf], list[mpmath.mpf]]]:
        """numbers() of every focus query whose numbers do: with the heads' rows in balls, one ball product with
        W_O; else the concatenations as integers times 2^-shift (a shift per query, PRECISION + 64 bits below its
        largest entry) and one exact product with W_O."""
        if self.symbolic:
            return {}
        rows = {i: [a.queries[i].softmax.numbers for a in self.heads] for i in self.focus}
        rows = {i: row for i, row in rows.items() if all(r is not None and r.irrational for r in row)}
        if rows and all(r.balls("outputs") is not None for row in rows.values() for r in row):  # in balls
            balls = {i: [x for r in row for x in r.balls("outputs")] for i, row in rows.items()}
            balls = {i: row for i, row in balls.items() if None not in row}
            products = ball_products(list(balls.values()), fractions(over_QQ(self.W_O)), PRECISION,
                                     binary_precision(WORKING_DIGITS - CANCELLED_DIGITS)) if balls else []
            return {i: ([x for r in rows[i] for x in r.outputs], [ball_number(y) for y in product])
                    for i, product in zip(balls, products, strict=True) if None not in product}
        joined = {i: [x for r in row for x in r.outputs] for i, row in rows.items()
                  if all(None not in r.outputs for r in row)}
        if not joined:
            return {}
        scaled = {i: fixed_point(row, PRECISION + 64) for i, row in joined.items()}
        W_O = over_QQ(self.W_O)
        integers = DomainMatrix([[QQ(m) for m in row] for row, _ in scaled.values()], (len(scaled), self.W_O.rows), QQ)
        products = fractions(integers * W_O)
        # |Σ_c x_c w_c| against Σ_c |x_c| |w_c| ≤ max |x| · Σ_c |w_c|: an output far below it cancelled
        out = {}
        with mpmath.workdps(WORKING_DIGITS + 10):
            rows = [[abs(x) for x in fraction_numbers(row)] for row in fractions(W_O)]
            weights = [mpmath.fsum(column) for column in zip(*rows, strict=True)]
            for (i, (_, shift)), row in zip(scaled.items(), products, strict=True):
                output = [mpmath.ldexp(x, -shift) for x in fraction_numbers(row)]
                top = max(abs(x) for x in joined[i])
                if all(abs(y) > top * w * _CANCELLED for y, w in zip(output, weights, strict=True)):
                    out[i] = (joined[i], output)
        return out


# The most digits an output of W_O may lose to cancellation with its number still good for an answer (as
# engine.softmax's outputs).
_CANCELLED = mpmath.mpf(10) ** -(WORKING_DIGITS - 40)


def grouped_attention(X: ImmutableMatrix, W_Q: tuple[ImmutableMatrix, ...], W_K: tuple[ImmutableMatrix, ...],
                  W_V: tuple[ImmutableMatrix, ...], W_O: ImmutableMatrix, divisor: Expr, focus: tuple[int, ...],
                  mask: ImmutableMatrix | None = None, rope=None, positions: tuple[int, ...] = (),
                  past: tuple[tuple[ImmutableMatrix, ImmutableMatrix], ...] | None = None) -> GroupedQuery:
    """Grouped-query attention of X: K and V once per K/V head (W_K[g], W_V[g]), Q per query head (W_Q[h]), each
    query head attending with its K/V head's keys and values (head_mapping); `rope` rotates q and k for
    `positions` (engine.rope.rotary_attention). `past`: each K/V head's KV cache (K, V of the earlier positions,
    keys rotated already), before the new rows (engine.cache.decode; `mask` is then n × (p + n))."""
    mapping = head_mapping(len(W_Q), len(W_K))
    kv = tuple({"K": projection(X, K), "V": projection(X, V)} for K, V in zip(W_K, W_V, strict=True))
    heads = []
    for h, W in enumerate(W_Q):
        stored = {"Q": projection(X, W), **kv[mapping[h]]}
        if past is not None:
            heads.append(decode(stored, *past[mapping[h]], divisor, focus, mask, rope, positions or None))
        elif rope is None:
            heads.append(attention_of(stored, divisor, focus, mask))
        else:
            stored = {name: as_matrix(M) for name, M in stored.items()}
            heads.append(rotary_attention(stored, positions, positions, rope, divisor, focus, mask))
    return GroupedQuery(mapping, kv, tuple(heads), focus, W_O)
