"""The steps of FlashAttention's online softmax, beside document.steps'. Like every step they hold values and know
nothing about rendering."""

from __future__ import annotations

from dataclasses import dataclass, field

from sympy import Expr

from ...document.steps import Shown, Step
from ...engine import Numbers


@dataclass(frozen=True)
class OnlineBlock(Step):
    """One block of FlashAttention's online softmax (block `number`, its key tokens): the running maximum
    m^(b) = max(m^(b−1), the block's a_j), the factor e^{m^(b−1) − m^(b)} (None for the first block that sees a key:
    nothing to rescale), the block's e^{a_j − m^(b)}, the running sum ℓ^(b) and the partial output o^(b)."""

    number: int
    tokens: tuple[str, ...]
    logits: tuple[Expr, ...]
    previous: Expr
    maximum: Expr
    rescale: Expr | None
    exps: tuple[Expr, ...]
    values: tuple[Shown, ...]  # the block's value rows v_j
    previous_total: Expr
    total: Expr
    previous_partial: tuple[Expr, ...]
    partial: tuple[Expr, ...]
    known: Numbers | None = field(default=None, compare=False)


@dataclass(frozen=True)
class OnlineResult(Step):
    """z = o^(B) / ℓ^(B) entry by entry after the last block (B = `count`), and the direct softmax's weights,
    whose weighted sum z is exactly."""

    count: int
    partial: tuple[Expr, ...]
    total: Expr
    output: tuple[Expr, ...]
    weights: tuple[Expr, ...]
    known: Numbers | None = field(default=None, compare=False)
