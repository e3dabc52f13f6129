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
from fractions import Fraction
from math import isqrt

import mpmath
from sympy import Add, Expr, ImmutableMatrix, Integer, Mul, Pow, Rational, S, sqrt

from ...engine.numbers import PRECISION, Numbers, rational_times_root

LARGEST_FACTORED = 4096  # bits of a radicand's p·q beyond which its square factors are not searched for


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
    # with rational inputs: the normalised entries are a_i·√m and the outputs β_i + γ_i a_i·√m; `root` is m, and
    # `coefficients` the a_i and the γ_i a_i (exact forms and decimals come from these integers). None otherwise.
    root: int | None = None
    coefficients: tuple[tuple[Rational, ...], tuple[Rational, ...]] | None = None


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
    if all(v.is_Rational for v in (*values, eps, *gamma, *beta)):
        return _rational_row(values, norm, eps, gamma, beta)
    d = Integer(len(values))
    mean = sum(values, S.Zero) / d if norm == "layer" else None
    centred = tuple(v - mean for v in values) if mean is not None else values
    variance = sum((c * c for c in centred), S.Zero) / d
    radicand = variance + eps
    std = sqrt(radicand)
    inverse = 1 / std
    normalised = tuple(c * inverse for c in centred)
    output = tuple(g * n + b for g, n, b in zip(gamma, normalised, beta, strict=True))
    return NormRow(values, mean, centred, variance, radicand, std, normalised, output)


def _fraction(value: Expr) -> Fraction:
    return Fraction(int(value.p), int(value.q))


def _rational(value: Fraction) -> Rational:
    return Rational(value.numerator, value.denominator)


def _rational_row(values: tuple[Expr, ...], norm: str, eps: Expr, gamma: tuple[Expr, ...],
                  beta: tuple[Expr, ...]) -> NormRow:
    """normalise_row() of rational inputs in Fractions: one SymPy square root a row, and each entry built as
    a·√m (β + γa·√m) directly, in the form SymPy's own arithmetic gives (its arithmetic costs ~1 ms an entry)."""
    x = [_fraction(v) for v in values]
    d = len(x)
    mean = sum(x, Fraction(0)) / d if norm == "layer" else None
    centred = [v - mean for v in x] if mean is not None else x
    variance = sum(c * c for c in centred) / d
    radicand = variance + _fraction(eps)
    std, coefficient, m = _square_root(radicand)
    root = S.One if m == 1 else Pow(Integer(m), S.Half, evaluate=False)
    scale = _fraction(coefficient) * m  # 1/std = √m / (c·m)
    a = [c / scale for c in centred]
    scaled = [_fraction(g) * ai for g, ai in zip(gamma, a, strict=True)]
    normalised = tuple(_surd(ai, root) for ai in a)
    output = tuple(_shifted(_fraction(b), ga, root) for b, ga in zip(beta, scaled, strict=True))
    return NormRow(values, None if mean is None else _rational(mean), tuple(_rational(c) for c in centred)
                   if mean is not None else values, _rational(variance), _rational(radicand), std, normalised, output,
                   m, (tuple(_rational(ai) for ai in a), tuple(_rational(ga) for ga in scaled)))


def _square_root(radicand: Fraction) -> tuple[Expr, Expr, int]:
    """(√radicand, c, m) with √radicand = c·√m. SymPy's sqrt takes the square factors out of m (by trial
    division); a radicand whose integers pass LARGEST_FACTORED bits (a full carry of e^{-700000}: integers of
    300,000 digits, which took it minutes) is only checked for a perfect square: √(p/q) = (1/q)·√(p·q)."""
    p, q = radicand.numerator, radicand.denominator
    if (p * q).bit_length() <= LARGEST_FACTORED:
        std = sqrt(_rational(radicand))
        coefficient, m = (std, 1) if std.is_Rational else rational_times_root(std)
        return std, coefficient, m
    n = p * q
    root = isqrt(n)
    if root * root == n:
        return Rational(root, q), Rational(root, q), 1
    return Mul(Rational(1, q), Pow(Integer(n), S.Half, evaluate=False), evaluate=False), Rational(1, q), n


def _surd(a: Fraction, root: Expr) -> Expr:
    """a·√m as SymPy writes it (0, a rational, √m, or the product)."""
    if a == 0 or root is S.One:
        return _rational(a)
    return root if a == 1 else Mul(_rational(a), root, evaluate=False)


def _shifted(b: Fraction, a: Fraction, root: Expr) -> Expr:
    """b + a·√m as SymPy writes it."""
    if root is S.One:
        return _rational(a + b)
    if a == 0 or b == 0:
        return _rational(b) if a == 0 else _surd(a, root)
    return Add(_rational(b), _surd(a, root), evaluate=False)


def normalise(tokens: tuple[str, ...], rows: tuple[tuple[Expr, ...], ...], norm: str, eps: Expr,
              gamma: tuple[Expr, ...], beta: tuple[Expr, ...]) -> NormResult:
    """Every row normalised, with the numbers of √(σ² + ε), the normalised entries and the outputs filed once."""
    numbers = Numbers()
    result = tuple(normalise_row(row, norm, eps, gamma, beta) for row in rows)
    with mpmath.workprec(PRECISION):
        for row in result:
            if row.std.is_Rational:
                continue  # a perfect square: everything after it is rational too
            if row.root is not None:  # each entry from its coefficients and √m (several hundred bits: exact enough)
                std = mpmath.sqrt(row.root) * _mpf(rational_times_root(row.std)[0])
            else:
                std = mpmath.sqrt(numbers.number(row.radicand))
            numbers.file(row.std, std)
            for c, n, g, b, y in zip(row.centred, row.normalised, gamma, beta, row.output, strict=True):
                value = _mpf(c) / std if c.is_Rational else numbers.number(c) / std
                numbers.file(n, value)
                numbers.file(y, numbers.number(g) * value + numbers.number(b))
    return NormResult(tokens, norm, eps, result, numbers)


def _mpf(value: Rational) -> mpmath.mpf:
    return mpmath.mpf(int(value.p)) / int(value.q)
