"""Multi-head attention for several queries at once: each query's heads, concatenation and projection by W_O
(pipeline.multi_head of its row), stacked into the matrices torch.nn.MultiheadAttention computes."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from sympy import ImmutableMatrix

from ...engine.numbers import Numbers
from ...engine.pipeline import Attention, MultiHead, combine_heads


@dataclass(frozen=True)
class MultiHeadRows:
    """Multi-head attention of the focus queries (token indices, in focus order): `rows[i]` is query i's MultiHead;
    `attentions` each computed head's attention over every focus query (None for a head whose output is given)."""

    rows: dict[int, MultiHead]
    attentions: tuple[Attention | None, ...]

    @property
    def first(self) -> MultiHead:
        """The first focus query's result (the one a one-token section derives)."""
        return next(iter(self.rows.values()))

    @cached_property
    def known(self) -> Numbers:
        """The numbers of every row's irrational values (the heads' included)."""
        return Numbers(*(row.known for row in self.rows.values()))

    def head(self, h: int) -> ImmutableMatrix:
        """Head h's outputs (0-based), one row per focus query: A_h V_h."""
        return ImmutableMatrix.vstack(*(row.heads[h] for row in self.rows.values()))

    @cached_property
    def concat(self) -> ImmutableMatrix:
        """[A_1 V_1 | … | A_h V_h], one row per focus query."""
        return ImmutableMatrix.vstack(*(row.concat for row in self.rows.values()))

    @cached_property
    def output(self) -> ImmutableMatrix:
        """The concatenation times W_O, one row per focus query."""
        return ImmutableMatrix.vstack(*(row.output for row in self.rows.values()))


def multi_head_rows(focus: tuple[int, ...], outputs: dict[int, tuple[ImmutableMatrix, ...]], W_O: ImmutableMatrix,
                    attentions: tuple[Attention | None, ...]) -> MultiHeadRows:
    """Each focus query's head outputs concatenated and projected by W_O."""
    return MultiHeadRows({i: combine_heads(outputs[i], W_O, attentions) for i in focus}, attentions)
