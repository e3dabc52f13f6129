"""Exact values rounded to decimals: the core every text of a number is made from. Rationals are rounded in exact
arithmetic; an irrational value from its result's numbers (engine.Numbers) or, if they lack it, from evalf."""

from __future__ import annotations

import math
from contextlib import AbstractContextManager
from decimal import MAX_EMAX, MIN_EMIN, ROUND_HALF_UP, Decimal, InvalidOperation, localcontext
from functools import cache, lru_cache

import mpmath
from sympy import Basic, Expr, N, sympify

from ..engine import Numbers, binary_parts

GUARD_DIGITS = 40  # digits evaluated beyond those shown, so that rounding them is right
LOG10_2 = math.log10(2)
# From a binary exponent of this size on (10^±1233), a decimal comes from the logarithm or the Decimal route, not
# from exact integers (figures, rounded_approximation, binary_magnitude).
EXACT_BITS = 4096


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
    value = value if isinstance(value, Basic) else sympify(value)  # (sympify's own checks: most of the cost)
    return terminating_places(int(value.q)) if value.is_Rational else None


def to_decimal(value: Expr, digits: int, size: int | None = None, known: Numbers | None = None) -> Decimal:
    """The value rounded half-up (away from zero on ties) to `digits` decimals; exact arithmetic for rationals.
    `size`: an irrational value's decimal exponent (estimate), when the caller has it already; `known`: the
    numbers of the result the value belongs to (else it is evaluated)."""
    value = value if isinstance(value, Basic) else sympify(value)
    if value.is_Rational:
        return rational_decimal(int(value.p), int(value.q), digits)
    if size is None or size >= -digits - 1:  # (a size given too small asks for 0, below)
        found = None if known is None else known.get(value)
        rounded = None if found is None else rounded_approximation(found, digits)
        if rounded is not None:
            return rounded
    size = magnitude(value, known) if size is None else size
    if size < -digits - 1:  # below half a unit of the last decimal: 0 (and no Decimal of a huge exponent is built)
        return Decimal(0).scaleb(-digits)
    figures = max(0, size) + digits + GUARD_DIGITS
    approx = evaluate(value, figures, known)
    with context(figures + 10):
        result = approx.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return result.copy_abs() if result.is_zero() else result


@lru_cache(maxsize=1 << 14)  # an exam's few halves and quarters, in every version's blanks and key
def rational_decimal(p: int, q: int, digits: int) -> Decimal:
    """to_decimal() of the rational p/q (q > 0), in integers."""
    whole, rest = divmod(abs(p) * 10**digits, q)
    if 2 * rest >= q:
        whole += 1
    return Decimal(f"{'-' if p < 0 and whole else ''}{whole}E-{digits}")  # exact: no context rounding


def rounded_approximation(x: mpmath.mpf, digits: int) -> Decimal | None:
    """to_decimal() of a value from its result's approximation x = ±m·2^e (e < 0), in integers: the Decimal route
    rounds x to at least digits + 49 decimals, then half-up to `digits`, which is x rounded half-up at once unless
    x lies within 10^-40 of a unit of a tie (then None, and the Decimal route decides); None also for a value
    whose Decimal route would not read x (from 10^(29 - digits) on: figures beyond engine.decimal's)."""
    sign, mantissa, exponent, bits = binary_parts(x)
    if not mantissa or not -EXACT_BITS <= exponent < 0 or (exponent + bits) * LOG10_2 >= 29 - digits:
        return None
    shift = -exponent
    whole, rest = divmod(mantissa * ten(digits), 1 << shift)
    gap = (rest << 1) - (1 << shift)  # (2·fraction - 1)·2^shift: negative below the tie, positive above
    if abs(gap) * ten(40) <= 1 << shift:
        return None
    if gap > 0:
        whole += 1
    return Decimal(f"{'-' if sign and whole else ''}{whole}E-{digits}")


def binary_magnitude(x: mpmath.mpf) -> int | None:
    """magnitude() of a value from its result's approximation x = ±m·2^e (e < 0), in integers: floor(log10 |x|),
    which the estimate's rounding (engine.decimal's 25 digits) keeps unless x is within 10^-20 of the next power
    of ten (then None, and the estimate decides)."""
    _, mantissa, exponent, bits = binary_parts(x)
    if not mantissa or not -EXACT_BITS <= exponent < 0:
        return None
    size = math.floor((exponent + bits - 1) * LOG10_2)  # floor(log10 |x|), or one less
    if _at_least(mantissa, exponent, size + 1):
        size += 1
    # |x| ≥ 10^(size+1)·(1 − 10^-20): m·10^20 ≥ (10^20 − 1)·10^(size+1)·2^-e
    top = size + 1
    left, right = mantissa * ten(20) * ten(max(-top, 0)), (ten(20) - 1) * ten(max(top, 0)) << -exponent
    return None if left >= right else size


def _at_least(mantissa: int, exponent: int, k: int) -> bool:
    """m·2^e ≥ 10^k (e < 0)."""
    return mantissa * ten(max(-k, 0)) >= ten(max(k, 0)) << -exponent


@cache
def ten(k: int) -> int:
    """10^k (the same few powers, again and again)."""
    return 10**k


def estimate(value: Expr, known: Numbers | None = None) -> Decimal:
    """The value to 15 significant digits, for its size."""
    if value.is_Rational:
        with context(15):
            return Decimal(int(value.p)) / Decimal(int(value.q))
    return evaluate(value, 15, known)


def magnitude(value: Expr, known: Numbers | None = None) -> int:
    """floor(log10 |value|) of a nonzero value (as estimate() rounds it), at any size: a Decimal's exponent ends
    near 10^18, and e^{a} of a score of 10^20 has 10^19 digits, so beyond it the size comes from the logarithm."""
    found = None if known is None or value.is_Rational else known.get(value)
    size = None if found is None else binary_magnitude(found)
    if size is not None:
        return size
    try:
        return estimate(value, known).adjusted()
    except InvalidOperation:
        return logarithm_size(approximation(value, known))


def approximation(value: Expr, known: Numbers | None = None) -> mpmath.mpf:
    """The value as an mpmath number: its result's (known), else evaluated (30 digits)."""
    found = None if known is None else known.get(value)
    return found if found is not None else mpmath.mpf(str(N(value, 30)))


def logarithm_size(x: mpmath.mpf) -> int:
    """magnitude() of a nonzero number of any size: its decimal exponent once rounded to 15 digits."""
    return leading_digits(x, 15)[1]


def leading_digits(x: mpmath.mpf, figures: int) -> tuple[int, int]:
    """(the first `figures` significant digits of |x|, rounded half-up, as an integer; the decimal exponent of the
    first) of a nonzero number of any size, from log10 |x| to figures + GUARD_DIGITS digits after the point."""
    with mpmath.workdps(len(str(abs(mpmath.mag(x)))) + figures + GUARD_DIGITS):
        logarithm = mpmath.log10(abs(x))
        exponent = int(mpmath.floor(logarithm))
        scaled = mpmath.power(10, logarithm - exponent + figures - 1)  # in [10^(figures-1), 10^figures)
        whole = int(mpmath.floor(scaled))
        if 2 * (scaled - whole) >= 1:  # half-up
            whole += 1
    if whole >= 10**figures:  # 99…9 rounded up, or log10 just below an integer
        whole, exponent = whole // 10, exponent + 1
    return whole, exponent


def evaluate(value: Expr, figures: int, known: Numbers | None = None) -> Decimal:
    """`figures` significant digits of an irrational value: the engine's approximation in `known`, else evalf."""
    found = None if known is None else known.decimal(value, figures)
    return found if found is not None else evaluated(value, figures)


@lru_cache(maxsize=1 << 12)  # a value no result's numbers hold (c·√d_k of a scaled score) is shown by the paper,
def evaluated(value: Expr, figures: int) -> Decimal:  # the Moodle question and exam.json: evalf once, not each time
    """`figures` significant digits of an irrational value by SymPy's evalf."""
    return Decimal(str(N(value, figures)))


def evaluated_number(value: Expr, figures: int) -> mpmath.mpf:
    """`figures` significant digits of an irrational value by SymPy's evalf, as an mpmath number: one of any size
    (a Decimal's exponent stops near 10^18; e^{-10^30·√2·sin 1} of a rotated score is far smaller)."""
    with mpmath.workdps(figures + 10):
        return mpmath.mpf(N(value, figures)._mpf_)


def context(prec: int) -> AbstractContextManager:
    """A decimal context of `prec` digits with unbounded exponents: e^{a} of a score of 10^7 has millions of digits
    before the point, beyond the default context's exponent limit."""
    return localcontext(prec=prec, Emax=MAX_EMAX, Emin=MIN_EMIN)


def plain(number: Decimal) -> str:
    return format(number, "f")
