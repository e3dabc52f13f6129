"""The steps of the feed-forward network, beside document.steps': the network's formula and one token's activation entry
by entry. Like every step they hold values and know nothing about rendering."""

from __future__ import annotations

from dataclasses import dataclass

from ...document.steps import Shown, Step


@dataclass(frozen=True)
class FeedForwardFormula(Step):
    """FFN(x) = φ(x·W_1 + b_1)·W_2 + b_2 (SwiGLU: (SiLU(x·W_1 + b_1) ⊙ (x·W_3 + b_3))·W_2 + b_2), each bias only
    when given, and the activation's definition φ(h)."""

    activation: str
    biases: tuple[bool, bool, bool] = (False, False, False)  # b_1, b_2, b_3 given


@dataclass(frozen=True)
class ActivationStep(Step):
    """a_t = φ(h_t) entry by entry for one token: `hidden` the pre-activation row h_t (SwiGLU: the gate g_t), `up`
    SwiGLU's u_t, `activated` the row a_t (its numbers in its `known`)."""

    activation: str
    token: str
    hidden: Shown
    activated: Shown
    up: Shown | None = None
