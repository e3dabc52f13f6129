"""LayerNorm and RMSNorm of each token's row, exactly: the mean, the deviations, the (biased) variance, σ² + ε and
its square root (a surd for rational inputs), the normalised row and γ ⊙ · + β. The irrational values are
evaluated once, at the working precision, and filed in the result's Numbers.

Conventions (PyTorch's torch.nn.LayerNorm, and LLaMA's RMSNorm):
  LayerNorm: y = (x − μ) / √(σ² + ε) · γ + β, with σ² = Σ_i (x_i − μ)² / d (biased: divided by d, not d − 1) and ε
  inside the square root;
  RMSNorm:   y = x / √(Σ_i x_i² / d + ε) · γ (no mean, no β).
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
from sympy import Expr, ImmutableMatrix, Integer, S, sqrt

from .numbers import PRECISION, Numbers


@dataclass(frozen=True)
class NormRow:
    """One token's normalisation: `values` the row normalised (x, or x + y), `mean` μ (None for RMSNorm), `centred`
    x − μ (RMSNorm: x itself), `variance` Σ centred² / d, `radicand` variance + ε, `std` √radicand, `normalised`
    centred / std and `output` γ ⊙ normalised + β."""

    values: tuple[Expr, ...]
    mean: Expr | None
    centred: tuple[Expr, ...]
    variance: Expr
    radicand: Expr
    std: Expr
    normalised: tuple[Expr, ...]
    output: tuple[Expr, ...]


@dataclass(frozen=True)
class NormResult:
    """The normalised rows of a section's tokens, with the numbers of their irrational values."""

    tokens: tuple[str, ...]
    norm: str  # "layer" or "rms"
    eps: Expr
    rows: tuple[NormRow, ...]
    numbers: Numbers

    @property
    def matrix(self) -> ImmutableMatrix:
        """The output rows, one per token."""
        return ImmutableMatrix([list(row.output) for row in self.rows])


def normalise_row(values: tuple[Expr, ...], norm: str, eps: Expr, gamma: tuple[Expr, ...],
                  beta: tuple[Expr, ...]) -> NormRow:
    """One row's LayerNorm (norm = "layer") or RMSNorm ("rms"), exactly."""
    d = Integer(len(values))
    mean = sum(values, S.Zero) / d if norm == "layer" else None
    centred = tuple(v - mean for v in values) if mean is not None else values
    variance = sum((c * c for c in centred), S.Zero) / d
    radicand = variance + eps
    std = sqrt(radicand)
    inverse = 1 / std  # c·√m for a rational radicand: each entry one product
    normalised = tuple(c * inverse for c in centred)
    output = tuple(g * n + b for g, n, b in zip(gamma, normalised, beta, strict=True))
    return NormRow(values, mean, centred, variance, radicand, std, normalised, output)


def normalise(tokens: tuple[str, ...], rows: tuple[tuple[Expr, ...], ...], norm: str, eps: Expr,
              gamma: tuple[Expr, ...], beta: tuple[Expr, ...]) -> NormResult:
    """Every row normalised, with the numbers of √(σ² + ε), the normalised entries and the outputs filed once."""
    numbers = Numbers()
    result = tuple(normalise_row(row, norm, eps, gamma, beta) for row in rows)
    with mpmath.workprec(PRECISION):
        for row in result:
            if row.std.is_Rational:
                continue  # a perfect square: everything after it is rational too
            std = mpmath.sqrt(numbers.number(row.radicand))
            numbers.file(row.std, std)
            for c, n, g, b, y in zip(row.centred, row.normalised, gamma, beta, row.output, strict=True):
                value = numbers.number(c) / std
                numbers.file(n, value)
                numbers.file(y, numbers.number(g) * value + numbers.number(b))
    return NormResult(tokens, norm, eps, result, numbers)
