"""The Derivation model's steps of Add & Norm and of a norm alone (LayerNorm, RMSNorm), beside document/steps.py's: one
token's sum, mean and deviations, variance and its square root, normalised row, scale and shift. Exact values
only, no rendering; `known` are the numbers of the result the values come from."""

from __future__ import annotations

from dataclasses import dataclass, field

from sympy import Expr

from ...document.steps import Shown, Step
from ...engine import Numbers


@dataclass(frozen=True)
class NormStep(Step):
    """What every norm step shares: the token, whether the row is a residual sum (u = x + y) and the norm
    ("layer" or "rms")."""

    token: str
    residual: bool
    norm: str
    known: Numbers | None = field(default=None, compare=False, kw_only=True)


@dataclass(frozen=True)
class NormSum(NormStep):
    """u_t = x_t + y_t, entry by entry."""

    x: Shown
    y: Shown
    total: Shown


@dataclass(frozen=True)
class NormMean(NormStep):
    """μ_t = Σ_i u_i / d, then each deviation u_i − μ_t (LayerNorm only)."""

    row: Shown
    mean: Expr
    centred: Shown


@dataclass(frozen=True)
class NormCentred(NormStep):
    """A step computed from the deviations u_t − μ_t (RMSNorm: from u_t itself)."""

    centred: Shown


@dataclass(frozen=True)
class NormVariance(NormCentred):
    """σ²_t = Σ_i (u_i − μ_t)² / d (RMSNorm: the mean of the squares Σ_i u_i² / d), σ²_t + ε and its square root,
    exact beside its decimals."""

    variance: Expr
    eps: Expr
    radicand: Expr
    std: Expr


@dataclass(frozen=True)
class NormNormalised(NormCentred):
    """û_t = (u_t − μ_t) / √(σ²_t + ε) entry by entry (RMSNorm: u_t / RMS), exact beside its decimals; with rational
    inputs each entry is a_i·√m, `root` m and `coefficients` the a_i (else None)."""

    std: Expr
    normalised: Shown
    root: int | None = None
    coefficients: tuple[Expr, ...] | None = None


@dataclass(frozen=True)
class NormAffine(NormStep):
    """o_t = γ ⊙ û_t + β entry by entry; `gamma` None when it is all 1, `beta` None when it is all 0."""

    normalised: Shown
    gamma: Shown | None
    beta: Shown | None
    output: Shown


@dataclass(frozen=True)
class NormSettings(Step):
    """The section's ε (exact, as a decimal and a power of ten where it is one) and the model width d."""

    eps: Expr
    d: int


@dataclass(frozen=True)
class NormScalars(Step):
    """A table of each token's scalars: one column per quantity ("mean" μ_t, "variance" σ²_t, "std" √(σ²_t + ε)),
    one row per token; `residual` and `norm` as NormStep's."""

    tokens: tuple[str, ...]
    residual: bool
    norm: str
    quantities: tuple[str, ...]
    columns: tuple[tuple[Expr, ...], ...]
    known: Numbers | None = field(default=None, compare=False)
