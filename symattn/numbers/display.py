"""The display rules of numbers on the page: exact when they fit the digit budget ("="), else rounded half-up
("≈"), huge ones as a mantissa times a power of ten, inputs as they were typed."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

import mpmath
from sympy import Expr, Rational, S, sympify

from ..engine import Numbers, is_symbolic
from ..infra.memo import ByIdentity, Memo
from .decimals import GUARD_DIGITS, context, decimal_places, evaluate, leading_digits, magnitude, plain, to_decimal
from .decimals import approximation as approximation_of
from .exact_latex import exact_latex

DEFAULT_DIGITS = 4
# A rounded number on the page of 10^15 or more (to 15 significant digits) is written as its mantissa times a power
# of ten: nobody reads the 54,884 digits of the e^{a} of a score of 126,373.
SCIENTIFIC_FROM = 15
# The most decimals an operand of a line is shown with beyond its stage's (render/lines.py): a line that does not
# check with that many is shown with them (only a value within 10^-(digits+GUARD_CAP) of a rounding boundary).
GUARD_CAP = 6


@dataclass(frozen=True)
class Number:
    """A number as shown: its decimal text and whether that text is the exact value (= rather than ≈)."""

    text: str
    exact: bool
    compound: bool = False  # a formula with several terms: parenthesised when it is a factor

    @property
    def needs_parentheses(self) -> bool:
        """As a factor of a product: negative numbers and sums get parentheses."""
        return self.compound or self.text.startswith("-")


# A document shows the same values in several steps (tables, products, vectors): their texts are kept, by value
# and format only (the numbers a value is computed from change how fast, not what, it prints).
_FORMATTED: Memo[Number] = Memo(1 << 16)


def format_number(value: Expr, digits: int = DEFAULT_DIGITS, min_decimals: int = 0,
                  fraction: bool = False, known: Numbers | None = None, exact_up_to: int = 0) -> Number:
    """Exact decimal text if it fits max(digits, min_decimals, exact_up_to) decimals, padded to min_decimals; else
    rounded to `digits`.

    With fraction=True a rational that does not fit is written as an exact fraction instead of being rounded.
    `known`: the numbers of the result the value belongs to (an irrational value not in it is evaluated).
    """
    key = (value, digits, min_decimals, fraction, exact_up_to)
    number = _FORMATTED.find(key)
    if number is None:
        number = _FORMATTED.keep(key, _format(sympify(value), digits, min_decimals, fraction, known, exact_up_to))
    return number


def _format(value: Expr, digits: int, min_decimals: int, fraction: bool, known: Numbers | None,
            exact_up_to: int) -> Number:
    """format_number() of a value not formatted before."""
    if is_symbolic(value):
        return Number(exact_latex(value), exact=True, compound=value.is_Add)
    if _infinite(value):  # a masked score
        return Number(r"-\infty" if value is S.NegativeInfinity else r"\infty", exact=True)
    budget = max(digits, min_decimals, exact_up_to)
    places = decimal_places(value)
    if places is not None and places <= budget:
        return Number(plain(to_decimal(value, max(places, min_decimals))), exact=True)
    if fraction and value.is_Rational:
        return _fraction(value)
    size = magnitude(value, known)
    if size >= SCIENTIFIC_FROM:
        mantissa, exponent = _scientific(value, digits, known)
        return Number(rf"{plain(mantissa)} \times 10^{{{exponent}}}", exact=False, compound=True)
    return Number(plain(to_decimal(value, digits, size, known)), exact=False)


def _scientific(value: Expr, digits: int, known: Numbers | None) -> tuple[Decimal, int]:
    """(mantissa rounded half-up to `digits` decimals, exponent) of a number, from `digits` + GUARD_DIGITS
    significant digits whatever its size."""
    try:
        approximation = evaluate(value, digits + GUARD_DIGITS, known)
    except InvalidOperation:  # beyond a Decimal's exponents: from the logarithm
        return _from_logarithm(approximation_of(value, known), digits)
    exponent = approximation.adjusted()
    with context(digits + GUARD_DIGITS + 10):
        quantum = Decimal(1).scaleb(-digits)
        mantissa = approximation.scaleb(-exponent).quantize(quantum, rounding=ROUND_HALF_UP)
        if abs(mantissa) >= 10:  # 9.99996 rounded up
            mantissa, exponent = (mantissa / 10).quantize(quantum, rounding=ROUND_HALF_UP), exponent + 1
    return mantissa, exponent


def _from_logarithm(x: mpmath.mpf, digits: int) -> tuple[Decimal, int]:
    """_scientific() of a number of any size (mantissa with `digits` decimals), from its logarithm."""
    whole, exponent = leading_digits(x, digits + 1)
    mantissa = Decimal(whole).scaleb(-digits)
    return (-mantissa if x < 0 else mantissa), exponent


def _infinite(value: Expr) -> bool:
    """±∞ (a masked score), by identity: `in (S.Infinity, ...)` compares by value, building a Float(±inf) each time."""
    return value is S.Infinity or value is S.NegativeInfinity


def _fraction(value: Rational) -> Number:
    """-\\tfrac{1}{4}: an exact rational as a (text-size) fraction; integers stay integers."""
    if value.is_Integer:
        return Number(str(int(value)), exact=True)
    sign = "-" if value < 0 else ""
    return Number(rf"{sign}\tfrac{{{abs(int(value.p))}}}{{{int(value.q)}}}", exact=True)


def format_numbers(
    values: Iterable[Expr], digits: int = DEFAULT_DIGITS, min_decimals: int = 0, uniform: bool = False,
    fractions: bool = False, written: tuple[int | None, ...] = (), whole: Iterable[Expr] | None = None,
    known: Numbers | None = None, exact_up_to: int = 0,
) -> list[Number]:
    """Format a row of numbers; with uniform=True all share one count of decimals, as a table column would.

    `written` (an input's entries as typed) overrides both: each entry is shown as it was written, a fraction
    as a fraction. `whole` (a matrix this row belongs to) sets the shared decimals instead of the row itself.
    `known`: the numbers of the result the values belong to.
    """
    values = [sympify(v) for v in values]
    if written:
        return [_fraction(v) if places is None and v.is_Rational
                else format_number(v, digits, places or 0, fractions, known, exact_up_to)
                for v, places in zip(values, written, strict=True)]
    if uniform and isinstance(whole, tuple):  # every row of a matrix asks for the matrix's decimals
        min_decimals = _WHOLE_DECIMALS.get(whole, (digits, min_decimals, fractions, exact_up_to), lambda: (
            _shared_decimals([sympify(w) for w in whole], digits, min_decimals, fractions, exact_up_to)))
    elif uniform:
        min_decimals = _shared_decimals(values if whole is None else [sympify(w) for w in whole], digits,
                                        min_decimals, fractions, exact_up_to)
    return [format_number(v, digits, min_decimals, fractions, known, exact_up_to) for v in values]


# format_numbers' shared decimals of each `whole` tuple, by the tuple's identity
_WHOLE_DECIMALS: ByIdentity[int] = ByIdentity(64)


def _shared_decimals(values: list[Expr], digits: int, min_decimals: int, fractions: bool, exact_up_to: int) -> int:
    """The decimals uniform values share: the most any of them needs to be exact within the budget, else
    `digits`."""
    needed = [min_decimals]
    for v in values:
        if _infinite(v):
            continue
        places = decimal_places(v)
        if places is not None and places <= max(digits, min_decimals, exact_up_to):
            needed.append(places)
        elif not (fractions and v.is_Rational):  # a fraction sets no decimals for the others
            needed.append(digits)
    return max(needed)


def shades(values: Iterable[Expr], scale: int = 100, known: Numbers | None = None) -> list[int]:
    """round(value / largest × scale) for each value, from their decimals (heatmap shades: the largest gets
    `scale`). Compared as decimals: SymPy cannot always order two exact softmax weights."""
    decimals = [to_decimal(v, 12, known=known) for v in values]
    largest = max(decimals, default=Decimal(0))
    if largest == 0:
        return [0 for _ in decimals]
    return [int((d / largest * scale).quantize(Decimal(1), rounding=ROUND_HALF_UP)) for d in decimals]
