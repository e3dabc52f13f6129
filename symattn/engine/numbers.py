"""Numbers of exact values: each result's table of the approximations the engine computed (Numbers), and exact
values turned into mpmath numbers.

A row's weights e^{a_j}/Z and outputs Σ_j e^{a_j} v_j / Z share one denominator Z: evaluated one by one, each would
evaluate Z again. The engine evaluates each row once with mpmath, at more digits than any display asks for, and
files the numbers in the result's Numbers, which its steps and answers carry to the number formatter.
"""

from __future__ import annotations

from decimal import Decimal

import mpmath
from sympy import Expr, S

from .fast import binary_precision, rational_number

WORKING_DIGITS = 90  # decimal digits: displays ask for at most 30 decimals or 30 significant digits
PRECISION = binary_precision(WORKING_DIGITS + 10)  # the bits every evaluation works with (10 guard digits)


class Numbers:
    """The approximations (WORKING_DIGITS correct digits) of one result's irrational values, by exact value.
    A result made of others (multi-head attention of its heads) sees their tables too. Hashed by identity."""

    __slots__ = ("_table", "_parents")

    def __init__(self, *parents: Numbers) -> None:
        self._table: dict[Expr, mpmath.mpf] = {}
        self._parents = parents

    def file(self, value: Expr, approximation: mpmath.mpf) -> None:
        """File the approximation of an exact value."""
        self._table[value] = approximation

    def get(self, value: Expr) -> mpmath.mpf | None:
        """The filed approximation of a value (here or in a part's table), or None."""
        found = self._table.get(value)
        if found is None:
            for parent in self._parents:
                found = parent.get(value)
                if found is not None:
                    break
        return found

    def number(self, value: Expr) -> mpmath.mpf:
        """The value as an mpmath number: the filed approximation if there is one, else evaluated."""
        if value.is_Rational:  # exact division: quicker than a lookup
            return to_mpf(value)
        found = self.get(value)
        return found if found is not None else to_mpf(value)

    def decimal(self, value: Expr, figures: int) -> Decimal | None:
        """The filed approximation as a Decimal of at least `figures` significant digits, or None."""
        found = self.get(value)
        return None if found is None else decimal(found, figures)


def decimal(approximation: mpmath.mpf, figures: int) -> Decimal | None:
    """An approximation (WORKING_DIGITS correct digits) as a Decimal with at least `figures` significant digits;
    None when it does not hold that many."""
    if figures > WORKING_DIGITS - 20:
        return None
    return Decimal(mpmath.nstr(approximation, decimal_digits(figures), strip_zeros=False))


def decimal_digits(figures: int) -> int:
    """How many significant digits decimal() writes when asked for `figures` (where its rounding happens)."""
    return figures + 10


def to_mpf(value: Expr) -> mpmath.mpf:
    """An exact expression (a rational, a scaled score such as a rational times a surd) as an mpmath number."""
    if value.is_Rational:  # exact division, no evalf
        return fraction_numbers([(int(value.p), int(value.q))])[0]
    surd = rational_times_root(value)
    if surd is not None:  # c·√m: a score scaled by √d_k
        coefficient, radicand = surd
        return fraction_numbers([(int(coefficient.p), int(coefficient.q))], radicand)[0]
    with mpmath.workdps(WORKING_DIGITS + 10):
        return mpmath.mpf(str(value.evalf(WORKING_DIGITS + 10)))


def fraction_numbers(coefficients: list[tuple[int, int] | None], radicand: int = 1) -> list[mpmath.mpf | None]:
    """The numbers (p/q)·√m of coefficients given as (p, q) pairs (None stays None); m = 1: the rationals p/q,
    each one division at PRECISION. The numbers to_mpf gives, which calls this."""
    if radicand == 1:
        return [None if c is None else rational_number(c[0], c[1], PRECISION + _size_bits(c)) for c in coefficients]
    # √m once for the row, at the bits its largest coefficient needs (each c times it: one product)
    prec = fraction_precision(coefficients, radicand)
    with mpmath.workprec(prec + 10):
        root = mpmath.sqrt(radicand)
        return [None if c is None else rational_number(c[0], c[1], prec + 10) * root for c in coefficients]


def fraction_precision(coefficients: list[tuple[int, int] | None], radicand: int = 1) -> int:
    """The bits that give WORKING_DIGITS correct digits of every (p/q)·√radicand of a row and of its e^{a}."""
    return PRECISION + max((_size_bits(c) for c in coefficients if c is not None), default=0) + radicand.bit_length()


def _size_bits(c: tuple[int, int]) -> int:
    """The bits of a logit p/q before its point, added to the working precision: e^{a} of a score of 10^60 needs a
    to 60 + WORKING_DIGITS digits for WORKING_DIGITS correct digits of e^{a}."""
    return max(0, abs(c[0]).bit_length() - c[1].bit_length() + 2)


def rational_times_root(value: Expr) -> tuple[Expr, int] | None:
    """(c, m) when value is c·√m with c rational and m an integer (a raw score divided by √d_k), else None."""
    coefficient, rest = value.as_coeff_Mul()
    if coefficient.is_Rational and rest.is_Pow and rest.base.is_Integer and rest.exp == S.Half:
        return coefficient, int(rest.base)
    return None
