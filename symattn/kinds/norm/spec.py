"""The spec types of the add_norm and norm sections (kinds/norm/kind.py): the rows, the norm, ε, γ and β."""

from __future__ import annotations

from dataclasses import dataclass

from sympy import Expr, Rational, S

from ...engine.matrices import entries
from ...spec.model import Focus, GivenMatrix, Section

# ε as the two references set it: torch.nn.LayerNorm's eps=1e-5, LLaMA's RMSNorm's norm_eps=1e-6
DEFAULT_EPS = {"layer": Rational(1, 10**5), "rms": Rational(1, 10**6)}
NORMS = tuple(DEFAULT_EPS)


@dataclass(frozen=True)
class NormSpec(Section):
    """Norm(X) of each token's row (`Y` None), or Norm(X + Y) (the subclass AddNormSpec). `gamma` and `beta` None
    are the defaults, all 1 and all 0; `eps_decimals` how ε was written (None: a fraction)."""

    kind = "norm"
    tokens: tuple[str, ...]
    X: GivenMatrix
    Y: GivenMatrix | None
    norm: str
    eps: Expr
    eps_decimals: int | None
    gamma: GivenMatrix | None
    beta: GivenMatrix | None
    focus: Focus

    @property
    def d(self) -> int:
        return self.X.shape[1]

    def rows(self) -> tuple[tuple[Expr, ...], ...]:
        """The rows normalised: x_t, or x_t + y_t."""
        total = self.X.values if self.Y is None else self.X.values + self.Y.values
        return tuple(tuple(row) for row in entries(total))  # read as stored: indexing converts each entry

    def gamma_values(self) -> tuple[Expr, ...]:
        return (S.One,) * self.d if self.gamma is None else tuple(self.gamma.values)

    def beta_values(self) -> tuple[Expr, ...]:
        return (S.Zero,) * self.d if self.beta is None else tuple(self.beta.values)


@dataclass(frozen=True)
class AddNormSpec(NormSpec):
    kind = "add_norm"
