"""Exact parsing of numbers from their text: '0.1' is 1/10, never a float."""

from __future__ import annotations

import re
from decimal import Decimal

from sympy import QQ, Expr, ImmutableMatrix, Integer, Rational
from sympy.polys.matrices import DomainMatrix

from ..engine.fast import sparse, with_storage
from ..errors import SpecError

_DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
_FRACTION = re.compile(r"[+-]?[0-9]+\s*/\s*[+-]?[0-9]+")

# The limits of an input number (README, "Spec files"): every later step stays fast and every printed digit right.
# A nonzero number is of size 10^-MIN_EXPONENT or more and below 10^(MAX_EXPONENT + 1); a decimal has at most
# MAX_DIGITS significant digits (a zero: at most MAX_DECIMALS decimals), a fraction at most MAX_DIGITS digits in its
# numerator and in its denominator. Scores can still be huge (e^{a} of a score of 10^60): the engine and the
# answers work through logarithms there, never with an integer of that size. Tiny numbers cost exact arithmetic
# nothing (1e-300 solves at once); the floor is where the error bounds' floats (certify, a product of up to four
# inputs, as X·W_Q·(X·W_K)ᵀ) stay above float's 1e-308.
MAX_DIGITS = 50
MAX_EXPONENT = 30
MIN_EXPONENT = 60
MAX_DECIMALS = MAX_DIGITS + MAX_EXPONENT


def written_decimals(text: str) -> int:
    """How many digits follow the decimal point as written ('0.800' -> 3, '2' -> 0, '1e-3' -> 3)."""
    value = Decimal(text)
    exponent = value.as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def parse_number(raw: object, field: str) -> tuple[Rational, int | None]:
    """Parse a number (str, int, Decimal) exactly; return it with the decimals it was written with
    (None for a fraction such as '1/3', which is shown as a fraction).

    Floats are refused: their text is already lost. Spec readers parse with ``parse_float=Decimal``.
    """
    if isinstance(raw, bool):
        raise SpecError(field, f"expected a number, got {str(raw).lower()}")
    if isinstance(raw, int):
        if raw.bit_length() > 4 * (MAX_DIGITS + MAX_EXPONENT):  # no decimal string of a huge integer is made
            raise SpecError(field, _too_large(f"an integer of about {int(raw.bit_length() * 0.30103)} digits"))
        return _checked_decimal(Decimal(raw), str(raw), field), 0
    if isinstance(raw, Decimal):
        if not raw.is_finite():
            raise SpecError(field, f"expected a finite number, got {raw}")
        text = str(raw)
    elif isinstance(raw, str):
        text = raw.strip()
    elif isinstance(raw, float):
        raise SpecError(field, "got a binary float; pass numbers as text or Decimal so they stay exact")
    else:
        raise SpecError(field, f"expected a number, got {type(raw).__name__} {raw!r}")
    if not text.isascii():
        raise SpecError(field, f"expected a number written with ASCII digits 0-9, got {_shown(text)}")
    if _DECIMAL.fullmatch(text):
        value = Decimal(text)  # no digits expanded: Decimal("1e1000000000") keeps the exponent as a number
        return _checked_decimal(value, text, field), written_decimals(text)
    if _FRACTION.fullmatch(text):
        parts = [part.strip().lstrip("+-").lstrip("0") for part in text.split("/")]
        if any(len(part) > MAX_DIGITS for part in parts):
            raise SpecError(field, f"expected at most {MAX_DIGITS} digits in a fraction's numerator and "
                                   f"denominator, got {_shown(text)}")
        numerator, denominator = (int(part) for part in text.split("/"))
        if denominator == 0:
            raise SpecError(field, f"division by zero in {text!r}")
        value = Rational(numerator, denominator)
        if value and not Rational(1, 10**MIN_EXPONENT) <= abs(value) < 10 ** (MAX_EXPONENT + 1):
            raise SpecError(field, _too_large(_shown(text)))
        return value, None
    raise SpecError(field, f"expected a number such as 0.8, -1.25 or 1/3, got {_shown(text)}")


def _checked_decimal(value: Decimal, text: str, field: str) -> Rational:
    """A finite Decimal within the limits as an exact Rational, from its digits and exponent (no text parsed)."""
    sign, digits, exponent = value.as_tuple()
    if value.is_zero():
        if exponent < -MAX_DECIMALS:
            raise SpecError(field, f"expected at most {MAX_DECIMALS} decimals, got {_shown(text)}")
        return Integer(0)
    if len(digits) > MAX_DIGITS:
        raise SpecError(field, f"expected at most {MAX_DIGITS} significant digits, got {len(digits)} in "
                               f"{_shown(text)}")
    if not -MIN_EXPONENT <= value.adjusted() <= MAX_EXPONENT:
        raise SpecError(field, _too_large(_shown(text)))
    mantissa = int("".join(map(str, digits))) * (-1 if sign else 1)
    return Rational(mantissa * 10**exponent) if exponent >= 0 else Rational(mantissa, 10**-exponent)


def _too_large(what: str) -> str:
    return f"expected a number of size 1e-{MIN_EXPONENT} or more and below 1e{MAX_EXPONENT + 1}, got {what}"


def _shown(text: str) -> str:
    """The input as an error message quotes it: at most 40 characters."""
    return repr(text if len(text) <= 40 else f"{text[:20]}…{text[-10:]}")


def matrix_of(rows: list[list[Expr]]) -> ImmutableMatrix:
    """An ImmutableMatrix of parsed entries. All rational: its sparse storage over QQ built from the entries at
    hand, without SymPy's search for a domain through every entry (the costliest part of parsing a large matrix)
    and without converting each entry out of the storage again."""
    if all(v.is_Rational for row in rows for v in row):
        nonzero = {i: entries for i, row in enumerate(rows)
                   if (entries := {j: QQ(int(v.p), int(v.q)) for j, v in enumerate(row) if v})}
        storage = DomainMatrix.from_rep(sparse(nonzero, (len(rows), len(rows[0])), QQ))
        return with_storage(storage, tuple(v for row in rows for v in row))
    return ImmutableMatrix(rows)
