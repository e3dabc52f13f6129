"""ALiBi exactly: each head's causal attention with the bias −m·(i − j) added to its scaled scores (the engine's
`bias`), then, for a list of heads, their outputs side by side and projected by W_O if given."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from sympy import Expr, ImmutableMatrix, S

from ...engine import Numbers
from ...engine.matrices import projection
from ...engine.pipeline import Attention, MultiHead, attention_of, combine_heads, concat
from ...spec.model import Mask
from .spec import AlibiHead, AlibiSpec, bias_matrix


@dataclass(frozen=True)
class HeadResult:
    """One head's attention (its queries' logits are the biased scores), slope, divisor and bias matrix (−∞ where
    masked, as shown)."""

    attention: Attention
    slope: Expr
    divisor: Expr
    bias: ImmutableMatrix

    def scaled(self, i: int) -> tuple[Expr, ...]:
        """Query i's scaled scores s_j / √d_k before the bias (−∞ where masked)."""
        query = self.attention.queries[i]
        return tuple(S.NegativeInfinity if j > i else s / self.divisor for j, s in enumerate(query.scores))


@dataclass(frozen=True)
class AlibiResult:
    """The heads' results, and for a list of heads each focus query's concatenation (and W_O's product, in
    `rows`, when W_O is given)."""

    heads: tuple[HeadResult, ...]
    focus: tuple[int, ...]
    concats: dict[int, ImmutableMatrix]
    rows: dict[int, MultiHead] | None = None

    @cached_property
    def known(self) -> Numbers:
        """The numbers of every irrational value (the heads' and W_O's)."""
        return Numbers(*(h.attention.known for h in self.heads), *(r.known for r in (self.rows or {}).values()))

    @property
    def first(self) -> Attention:
        return self.heads[0].attention


def head_attention(X: ImmutableMatrix, head: AlibiHead, spec: AlibiSpec, focus: tuple[int, ...]) -> HeadResult:
    n = X.rows
    divisor = spec.scale.divisor(head.d_k)
    stored = {"Q": projection(X, head.W_Q.values), "K": projection(X, head.W_K.values),
              "V": projection(X, head.W_V.values)}
    attention = attention_of(stored, divisor, focus, Mask.causal(n).values,
                             inputs=(X, X, head.W_Q.values, head.W_K.values, head.W_V.values),
                             bias=bias_matrix(head.slope, n))
    return HeadResult(attention, head.slope, divisor, bias_matrix(head.slope, n, S.NegativeInfinity))


def compute(spec: AlibiSpec) -> AlibiResult:
    X = spec.X.values
    focus = tuple(spec.tokens.index(t) for t in spec.focus.tokens)
    heads = tuple(head_attention(X, head, spec, focus) for head in spec.heads)
    if not spec.several:
        return AlibiResult(heads, focus, {})
    outputs = {i: tuple(h.attention.queries[i].output for h in heads) for i in focus}
    concats = {i: concat(outputs[i]) for i in focus}
    rows = None
    if spec.W_O is not None:
        attentions = tuple(h.attention for h in heads)
        rows = {i: combine_heads(outputs[i], spec.W_O.values, attentions) for i in focus}
    return AlibiResult(heads, focus, concats, rows)
