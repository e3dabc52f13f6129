"""Exact values rounded to decimals: the core every text of a number is made from. Rationals are rounded in exact
arithmetic; an irrational value from its result's numbers (engine.Numbers) or, if they lack it, from evalf."""

from __future__ import annotations

from contextlib import AbstractContextManager
from decimal import MAX_EMAX, MIN_EMIN, ROUND_HALF_UP, Decimal, localcontext
from functools import lru_cache

from sympy import Expr, N, sympify

from .engine import Numbers

GUARD_DIGITS = 40  # digits evaluated beyond those shown, so that rounding them is right


@lru_cache(maxsize=1 << 12)  # the same few denominators again and again
def terminating_places(q: int) -> int | None:
    """Decimals needed to write 1/q exactly (q > 0); None when it does not terminate."""
    twos = fives = 0
    while q % 2 == 0:
        q //= 2
        twos += 1
    while q % 5 == 0:
        q //= 5
        fives += 1
    return max(twos, fives) if q == 1 else None


def decimal_places(value: Expr) -> int | None:
    """Decimals needed to write a rational exactly (1/8 -> 3); None when it does not terminate."""
    value = sympify(value)
    return terminating_places(int(value.q)) if value.is_Rational else None


def to_decimal(value: Expr, digits: int, size: int | None = None, known: Numbers | None = None) -> Decimal:
    """The value rounded half-up (away from zero on ties) to `digits` decimals; exact arithmetic for rationals.
    `size`: an irrational value's decimal exponent (estimate), when the caller has it already; `known`: the
    numbers of the result the value belongs to (else it is evaluated)."""
    value = sympify(value)
    if value.is_Rational:
        p, q = int(value.p), int(value.q)
        whole, rest = divmod(abs(p) * 10**digits, q)
        if 2 * rest >= q:
            whole += 1
        return Decimal(f"{'-' if p < 0 and whole else ''}{whole}E-{digits}")  # exact: no context rounding
    figures = max(0, estimate(value, known).adjusted() if size is None else size) + digits + GUARD_DIGITS
    approx = evaluate(value, figures, known)
    with context(figures + 10):
        result = approx.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return result.copy_abs() if result.is_zero() else result


def estimate(value: Expr, known: Numbers | None = None) -> Decimal:
    """The value to 15 significant digits, for its size."""
    if value.is_Rational:
        with context(15):
            return Decimal(int(value.p)) / Decimal(int(value.q))
    return evaluate(value, 15, known)


def evaluate(value: Expr, figures: int, known: Numbers | None = None) -> Decimal:
    """`figures` significant digits of an irrational value: the engine's approximation in `known`, else evalf."""
    found = None if known is None else known.decimal(value, figures)
    return found if found is not None else Decimal(str(N(value, figures)))


def context(prec: int) -> AbstractContextManager:
    """A decimal context of `prec` digits with unbounded exponents: e^{a} of a score of 10^7 has millions of digits
    before the point, beyond the default context's exponent limit."""
    return localcontext(prec=prec, Emax=MAX_EMAX, Emin=MIN_EMIN)


def plain(number: Decimal) -> str:
    return format(number, "f")
