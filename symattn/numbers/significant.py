"""The answers' decimals: every number to 30 significant digits (an exact decimal keeps all its digits), from an
exact value, a fraction's integers or the engine's binary approximation, the same text whichever it comes from."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from functools import lru_cache

import mpmath
from sympy import Expr, sympify

from ..engine import WORKING_DIGITS, Numbers, binary_parts
from ..engine import decimal as approx_decimal
from ..engine import decimal_digits as approx_decimal_digits
from .decimals import (
    EXACT_BITS,
    GUARD_DIGITS,
    LOG10_2,
    context,
    evaluate,
    evaluated_number,
    leading_digits,
    plain,
    ten,
    terminating_places,
)

# A decimal string of the answers below 10^-99 or from 10^100 on (its exponent 100 or more in size) is written with
# an exponent: 1.23…E-122269 rather than 122,269 characters.
EXPONENT_FROM = 100
FIGURES = 30  # significant digits of every decimal in the answers
_ASKED: ContextVar[int] = ContextVar("figures", default=FIGURES)  # what the kinds' answers are computed with


def asked() -> int:
    """The significant digits the kinds' answers are computed with: FIGURES, more inside more_figures()."""
    return _ASKED.get()


@contextmanager
def more_figures(extra: int) -> Iterator[None]:
    """Answers computed with `extra` more figures (a bounded section's, then cut to those certain: certify)."""
    token = _ASKED.set(FIGURES + extra)
    try:
        yield
    finally:
        _ASKED.reset(token)


def significant(value: Expr, figures: int = 30, known: Numbers | None = None) -> str:
    """The value rounded half-up to `figures` significant digits (more when an exact decimal needs them)."""
    value = value if isinstance(value, Expr) else sympify(value)
    if not value.is_Rational:
        if value == 0:
            return "0." + "0" * (figures - 1)
        found = None if known is None else known.get(value)
        # the Decimal route below (engine.decimal's digits, where they are enough: WORKING_DIGITS - 20), in integers
        if found is not None and figures + GUARD_DIGITS <= WORKING_DIGITS - 20:
            return significant_approximation(found, figures)
        try:
            return _rounded(evaluate(value, figures + GUARD_DIGITS, known), figures)
        except InvalidOperation:  # beyond a Decimal's exponents: the same digits from an mpmath number
            return significant_approximation(evaluated_number(value, figures + GUARD_DIGITS), figures)
    return significant_fraction(int(value.p), int(value.q), figures)


@lru_cache(maxsize=1 << 14)  # the same few fractions (an easy exam's halves and quarters) in every version's answers
def significant_fraction(p: int, q: int, figures: int = 30) -> str:
    """significant() of the rational p/q (q > 0, in lowest terms), from its integers."""
    if p == 0:
        return "0." + "0" * (figures - 1)
    places = terminating_places(q)
    if places is not None:  # an exact decimal: all its digits, padded with zeros to `figures` (integers only)
        digits = str(abs(p) * (ten(places) // q))  # the value × 10^places, exactly
        pad = max(0, figures - len(digits))
        decimals = places + pad
        text = (digits + "0" * pad).rjust(decimals + 1, "0")
        whole = f"{text[:len(text) - decimals]}.{text[len(text) - decimals:]}" if decimals else text
        return ("-" if p < 0 else "") + whole
    with context(figures + GUARD_DIGITS):
        return _rounded(Decimal(p) / Decimal(q), figures)


def significant_approximation(approximation: mpmath.mpf, figures: int = 30) -> str:
    """significant() of an irrational value, from the engine's approximation of it (engine.WORKING_DIGITS).

    The same text as the Decimal route (engine.decimal's digits, then quantize), computed in integers from the
    binary value m·2^e: the Decimal route is slow per number, and a large answer key holds thousands of them.
    """
    sign, mantissa, exponent, bits = binary_parts(approximation)
    if mantissa and -EXACT_BITS <= exponent < 0:  # the common case (a weight, an output): shifts, no division
        magnitude = math.floor((exponent + bits - 1) * LOG10_2)  # floor(log10 |x|), or one less
        shift = figures - 1 - magnitude
        if shift > 0 and mantissa * ten(shift) >> -exponent >= ten(figures):  # one less: figures + 1 digits
            magnitude, shift = magnitude + 1, shift - 1
        if shift > 0:
            rounded = ((mantissa * ten(shift) >> (-exponent - 1)) + 1) >> 1  # half-up: half a unit added, floor
            if rounded < ten(figures) - 1:  # not 99…9, which may round up to the next power of 10 (below)
                return _written(sign, rounded, magnitude, figures)
    if not mantissa:  # zero: the Decimal route's own spelling
        return _rounded(approx_decimal(approximation, figures + GUARD_DIGITS), figures)
    if abs(exponent) > EXACT_BITS:  # e^{a} of a huge score: 2^exponent is never built
        whole, magnitude = leading_digits(approximation, figures)
        digits = str(whole)
        return f"{'-' if sign else ''}{digits[0]}.{digits[1:]}E{magnitude:+d}"
    magnitude = math.floor((exponent + bits - 1) * LOG10_2)  # floor(log10 |x|), or one less
    whole, rest, denominator = _scaled(mantissa, exponent, figures - 1 - magnitude)
    while whole >= ten(figures):
        magnitude += 1
        whole, rest, denominator = _scaled(mantissa, exponent, figures - 1 - magnitude)
    if whole == ten(figures) - 1:  # 99…9: the Decimal route's digits may have rounded up to the next power of 10
        carry = approx_decimal_digits(figures + GUARD_DIGITS)
        top, remainder, below = _scaled(mantissa, exponent, carry - 1 - magnitude)
        if top == ten(carry) - 1 and 2 * remainder >= below:
            magnitude += 1
            whole, rest, denominator = _scaled(mantissa, exponent, figures - 1 - magnitude)
    if 2 * rest >= denominator:  # half-up: away from zero on a tie
        whole += 1
    return _written(sign, whole, magnitude, figures)


def significant_surd(p: int, q: int, radicand: int, figures: int = 30) -> str:
    """significant() of (p/q)·√radicand (q > 0, radicand not a square, p ≠ 0: irrational, so never a tie), exactly
    from integers: floor(2·|p|·√radicand·10^k / q) is isqrt(4p²·radicand·10^2k) // q."""
    magnitude = math.floor(math.log10(abs(p)) + math.log10(radicand) / 2 - math.log10(q))  # or one off
    while True:
        k = figures - 1 - magnitude
        scaled = 4 * p * p * radicand * ten(2 * k) if k >= 0 else 4 * p * p * radicand
        twice = math.isqrt(scaled) // (q if k >= 0 else q * ten(-k))
        whole = (twice + 1) // 2  # nearest
        if whole >= ten(figures):
            magnitude += 1
        elif whole < ten(figures - 1):
            magnitude -= 1
        else:
            return _written(p < 0, whole, magnitude, figures)


def cut(text: str, figures: int = 30) -> str:
    """A decimal string rounded half-up to `figures` significant digits when it has more (an exact decimal of a
    value computed from approximations, whose digits beyond them are not the true value's); else as it is."""
    number = Decimal(text)
    if not number.is_finite() or len(number.as_tuple().digits) <= figures:
        return text
    return _rounded(number, figures)


def _written(negative: bool, whole: int, magnitude: int, figures: int) -> str:
    """The text of ±whole·10^(magnitude − figures + 1), `whole` the rounded significant digits."""
    shift, digits = figures - 1 - magnitude, str(whole)
    rounded_magnitude = magnitude + len(digits) - figures  # 99…9 rounded up to 10…0 (one digit more): one more
    if abs(rounded_magnitude) >= EXPONENT_FROM:
        text = f"{digits[0]}.{digits[1:]}E{rounded_magnitude:+d}"
    elif shift > 0:
        return _pointed(negative, digits, shift)
    else:
        text = digits + "0" * -shift
    return "-" + text if negative else text


def _pointed(negative: bool, digits: str, shift: int) -> str:
    """The text of ±digits·10^-shift (shift > 0): the point among the digits, or 0. and zeros before them."""
    if shift < len(digits):
        text = f"{digits[:len(digits) - shift]}.{digits[len(digits) - shift:]}"
    else:
        text = "0." + digits.rjust(shift, "0")
    return "-" + text if negative else text


def _scaled(mantissa: int, exponent: int, shift: int) -> tuple[int, int, int]:
    """m·2^e·10^shift as (whole part, remainder, denominator), exactly."""
    numerator = mantissa * ten(max(shift, 0)) << max(exponent, 0)
    denominator = ten(max(-shift, 0)) << max(-exponent, 0)
    return *divmod(numerator, denominator), denominator


def _rounded(number: Decimal, figures: int) -> str:
    """A nonzero number rounded half-up to `figures` significant digits, written out in full."""
    with context(figures + GUARD_DIGITS):
        quantum = Decimal(1).scaleb(number.adjusted() - figures + 1)
        rounded = number.quantize(quantum, rounding=ROUND_HALF_UP)
        return format(rounded, "E") if abs(rounded.adjusted()) >= EXPONENT_FROM else plain(rounded)
