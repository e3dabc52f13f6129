"""The steps of ALiBi (kinds/alibi/solution.py lays them out, printers.py prints them): the slopes, the bias matrix,
each query's biased scores and all queries at once. The dot products, the softmax and the weighted sum are
document.steps'."""

from __future__ import annotations

from dataclasses import dataclass, field

from sympy import Expr, ImmutableMatrix

from ...document.steps import Shown, Step
from ...engine import Numbers
from ...spec.model import Scale


@dataclass(frozen=True)
class AlibiRule(Step):
    """The logit of query i and key j: a_ij = q_i·k_j / √d_k − m(i − j) for j ≤ i (or / c, or unscaled), −∞ for
    j > i."""

    scale: Scale
    divisor: Expr


@dataclass(frozen=True)
class Slopes(Step):
    """The slopes m (one head) or m^(1), …, m^(H): given, or the paper's geometric 2^(−8h/H) (`of` = H; 0: given),
    each exact, with its decimals when it is irrational. `heads`: the head numbers (None: one head, m unnumbered);
    `numbers`: each slope's h in 2^(−8h/H)."""

    slopes: tuple[Expr, ...]
    of: int = 0
    heads: tuple[int, ...] | None = None
    numbers: tuple[int, ...] = ()


@dataclass(frozen=True)
class BiasMatrix(Step):
    """B (or B^(h)): B_ij = −m(i − j) for j ≤ i, −∞ (masked) for j > i; `slope` as shown beside it, `head` the head
    number (None: one head)."""

    bias: Shown
    slope: Expr
    tokens: tuple[str, ...]
    head: int | None = None


@dataclass(frozen=True)
class BiasedScores(Step):
    """a_j = s_j / √d_k + B_ij for every key of query `query` (0-based position i), written out: the scaling, then
    the bias; a masked key (j > i) is −∞. `scores` are the raw q·k_j of the visible keys."""

    query: int
    tokens: tuple[str, ...]  # every key's token (the masked ones too)
    scores: tuple[Expr, ...]  # of the visible keys 0 … i
    scale: Scale
    d_k: int
    divisor: Expr
    bias: tuple[Expr, ...]  # of the visible keys
    logits: tuple[Expr, ...]  # of every key (−∞ where masked)
    slope: Expr
    head: int | None = None
    known: Numbers | None = field(default=None, compare=False)


@dataclass(frozen=True)
class AlibiMatrices(Step):
    """All queries at once: S = QKᵀ, the logits S / √d_k + B (−∞ above the diagonal), A = softmax of each row and
    Z = A V."""

    scores: ImmutableMatrix
    logits: ImmutableMatrix
    weights: ImmutableMatrix
    output: ImmutableMatrix
    scale: Scale
    d_k: int
    divisor: Expr
    head: int | None = None
    known: Numbers | None = field(default=None, compare=False)
