"""Checkable lines: each computation a derivation displays (a sum of products, a quotient), as a small structure
of its operands as shown, the shown result and its relations, from which the printers write it. The operands get
the guard decimals the line needs: a student recomputing it from the numbers shown gets its result to the last
digit, and every digit shown is still the correctly rounded value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from math import isqrt
from typing import Any

import mpmath
from sympy import Expr

from ..engine import Numbers
from ..infra.memo import ByIdentity, Memo
from ..numbers.display import GUARD_CAP as GUARD_CAP
from ..numbers.display import Number, format_number



def exact_zeros(numbers: Iterable[Number], values: Iterable[Expr]) -> list[Number]:
    """A row as shown, its exact zeros written 0 beside rounded entries (ReLU's [0, 0, 0, 0.8660], not a
    rounded-looking 0.0000), so that the eye sees which entries are exactly 0."""
    numbers = list(numbers)
    if all(n.exact for n in numbers):
        return numbers
    return [Number("0", True) if v == 0 else n for n, v in zip(numbers, values, strict=True)]


_NUMBER = re.compile(r"-?\d+(?:\.(\d+))?")
_PLAIN = re.compile(r"(-?)([0-9]+)(?:\.([0-9]+))?")  # what plain_decimal reads (groups: sign, whole, fraction)
# Line.checks by the line's numbers, and exponent_shown by its arguments: found once however many formats write
# the line (an exam's paper and its Moodle feedback)
_JUDGED: Memo[bool] = Memo(1 << 14)
_EXPONENTS: Memo[Number | None] = Memo(1 << 12)


@dataclass(frozen=True)
class Operand:
    """A number as a line shows it: its text (`number`) and the exact value it stands for."""

    number: Number
    value: Expr

    def __init__(self, number: Number, value: Expr) -> None:
        # dataclass's, without a frozen class's object.__setattr__ for each field (an exam writes ~170 a version)
        self.__dict__.update(number=number, value=value)

    @property
    def text(self) -> str:
        return self.number.text

    @property
    def exact(self) -> bool:
        return self.number.exact


@dataclass(frozen=True)
class Line:
    """`what` (lead) Σ_i Π_j terms[i][j] [/ divisor] (relation) result. No terms: a value, exact or rounded, shown
    without operands (w = e^{a}/Z = 1/2). `lead` is "=" when every operand is shown exactly; `relation` is "="
    when the result is, too (then the operands give it exactly)."""

    what: str
    result: Operand
    terms: tuple[tuple[Operand, ...], ...] = ()
    divisor: Operand | None = None

    def __init__(self, what: str, result: Operand, terms: tuple[tuple[Operand, ...], ...] = (),
                 divisor: Operand | None = None) -> None:
        self.__dict__.update(what=what, result=result, terms=terms, divisor=divisor)  # (as Operand's)

    @property
    def operands(self) -> tuple[Operand, ...]:
        return (*(o for term in self.terms for o in term), *((self.divisor,) if self.divisor else ()))

    @property
    def lead(self) -> str:
        return "=" if all(o.exact for o in self.operands) else "≈"

    @property
    def relation(self) -> str:
        if not self.result.exact:
            return "≈"
        if self.lead == "=":
            return "="
        recomputed = self.recomputed()  # rounded operands may still give the result exactly: 1·v + 0·u
        return "=" if recomputed is not None and recomputed == shown_value(self.result) else "≈"

    def recomputed(self) -> Fraction | None:
        """The result of the operands as shown, exactly; None for a quotient by a surd or texts that are not plain
        numbers."""
        total = Fraction(0)
        for term in self.terms:
            product = Fraction(1)
            for o in term:
                shown = shown_value(o)
                if shown is None:
                    return None
                product *= shown
            total += product
        if self.divisor is None:
            return total
        divisor = shown_value(self.divisor)
        return None if not divisor else total / divisor

    def checks(self) -> bool:
        """Whether the operands as shown give the result as shown: exactly when it is exact, else once rounded
        half-up to its decimals. A line whose texts are not plain decimals (10^{n}, fractions) is not judged."""
        # keyed by texts and exactness (what the judgement reads), whose tuples hash in C
        divisor = None if self.divisor is None else (self.divisor.text, self.divisor.exact, self.divisor.value)
        terms = tuple(tuple([(o.number.text, o.number.exact) for o in term]) for term in self.terms)
        return _JUDGED.get((terms, divisor, self.result.number.text, self.result.number.exact), self._judge)

    def _judge(self) -> bool:
        judged = self._judged_in_integers()
        if judged is not None:
            return judged
        result = shown_value(self.result)
        if not self.terms or result is None:
            return True
        places = decimals_shown(self.result.text)
        recomputed = self.recomputed()
        if recomputed is None:
            radicand = None if self.divisor is None else surd_radicand(self.divisor.value)
            if radicand is None:
                return True
            total = self.recomputed_numerator()
            if total is None:
                return True
            return round_over_root(total, radicand, places) == result
        if self.result.exact and self.lead == "=":
            return recomputed == result
        # rounded operands (an exact result among them, as RoPE's score at m = n from rotated vectors): the result
        # is what they give rounded half-up to its decimals
        return round_half_up(recomputed, places) == result

    def _judged_in_integers(self) -> bool | None:
        """_judge() of a line whose texts are all plain decimals, in integers (its Fractions cost ~20 µs a line,
        judged once a line per process); None for any other line."""
        result, total = plain_decimal(self.result.text), decimal_sum(self.terms)
        if result is None or total is None or not self.terms:
            return None
        numerator, denominator = total[0], 10 ** total[1]
        if self.divisor is not None:
            divisor = plain_decimal(self.divisor.text)
            if divisor is None or divisor[0] == 0:
                return None
            numerator *= 10 ** divisor[1] * (-1 if divisor[0] < 0 else 1)
            denominator *= abs(divisor[0])
        shown, places = result
        if self.result.exact and self.lead == "=":
            return numerator * 10**places == shown * denominator
        # round_half_up: floor(|x|·10^places + 1/2), with x's sign
        whole = (2 * abs(numerator) * 10**places + denominator) // (2 * denominator)
        return (-whole if numerator < 0 else whole) == shown

    def recomputed_numerator(self) -> Fraction | None:
        """recomputed() of the terms alone (a quotient's numerator)."""
        return Line(self.what, self.result, self.terms).recomputed()


def exponent_shown(logit: Expr, power: str, start: int, known: Numbers | None) -> Number | None:
    """The logit a of a line e^{a} ≈ power, with the fewest decimals from `start` (up to GUARD_CAP + 4 more) such
    that e to the shown logit, rounded half-up to the power's decimals, is the power as shown: a student checks
    e^{a_I} ≈ e^{0.81883} ≈ 2.26784 with a calculator, where e^{0.8188} gives 2.26778. None when the power is not
    a plain decimal (×10^n) or no such count exists."""
    return _EXPONENTS.get((logit, power, start), lambda: _exponent_shown(logit, power, start, known))


def _exponent_shown(logit: Expr, power: str, start: int, known: Numbers | None) -> Number | None:
    target = shown_value(Operand(Number(power, False), logit))
    if target is None:
        return None
    places = decimals_shown(power)
    half = Fraction(1, 2 * 10**places)  # e^{a} rounds half-up to the power when it lies in [power - half, power + half)
    low, high = target - half, target + half  # (e^{a} > 0: half-up is half-away from zero)
    for decimals in range(start, start + GUARD_CAP + 5):
        shown = format_number(logit, decimals, decimals, known=known)
        a = shown_value(Operand(shown, logit))
        if a is not None and _exp_within(a, low, high, places):
            return shown
    return None


def _exp_within(a: Fraction, low: Fraction, high: Fraction, places: int) -> bool:
    """low ≤ e^a < high, certified by interval arithmetic (mpmath.iv rounds outward) at a precision chosen from the
    decimals shown and the digits of a, raised while the interval straddles a bound: the cost is bounded for any a
    (e^{-2000000} is decided at once; a precision of |a|/2 digits took minutes). Not decided within the cap: False,
    so no logit is shown that is not certified."""
    start = places + 30 + len(str(abs(a.numerator) // a.denominator))
    saved = mpmath.iv.prec
    try:
        for dps in (start, 2 * start, 4 * start):
            mpmath.iv.dps = dps
            value = mpmath.iv.exp(mpmath.iv.mpf(a.numerator) / a.denominator)
            lo = mpmath.iv.mpf(low.numerator) / low.denominator
            hi = mpmath.iv.mpf(high.numerator) / high.denominator
            if value.a >= lo.b and value.b < hi.a:
                return True
            if value.b < lo.a or value.a >= hi.b:
                return False
        return False
    finally:
        mpmath.iv.prec = saved


def shown_value(operand: Operand) -> Fraction | None:
    """The exact value of an operand's text: a plain decimal or integer, or \\tfrac{p}{q}; else None."""
    text = operand.text
    if text.startswith(r"\tfrac") or text.startswith(r"-\tfrac"):
        sign = -1 if text.startswith("-") else 1
        p, q = text[text.index("{") + 1:-1].split("}{")
        return sign * Fraction(int(p), int(q))
    try:
        return Fraction(Decimal(text))
    except (InvalidOperation, ValueError):
        return None


def plain_decimal(text: str) -> tuple[int, int] | None:
    """(m, p) of a plain decimal or integer text (m / 10^p, what shown_value gives it), else None."""
    match = _PLAIN.fullmatch(text)
    if match is None:
        return None
    sign, whole, fraction = match.groups(default="")
    mantissa = int(whole + fraction)
    return (-mantissa if sign else mantissa), len(fraction)


def decimal_sum(terms: tuple[tuple[Operand, ...], ...]) -> tuple[int, int] | None:
    """(m, p) of the sum of the products of the operands as shown (m / 10^p), when every one is a plain decimal;
    else None."""
    total, places = 0, 0
    for term in terms:
        product, shift = 1, 0
        for o in term:
            decimal = plain_decimal(o.number.text)
            if decimal is None:
                return None
            product *= decimal[0]
            shift += decimal[1]
        if shift > places:
            total, places = total * 10 ** (shift - places), shift
        total += product * 10 ** (places - shift)
    return total, places


def surd_radicand(value: Expr) -> int | None:
    """m when the value is √m (an integer m), else None."""
    if value.is_Pow and value.base.is_Integer and value.exp == Fraction(1, 2):
        return int(value.base)
    return None


def decimals_shown(text: str) -> int:
    """The decimals of a number's text (of its mantissa: 1.2447 \\times 10^{30} has 4)."""
    match = _NUMBER.match(text)
    return len(match[1] or "") if match else 0


def round_half_up(x: Fraction, places: int) -> Fraction:
    """x rounded half-up (ties away from zero) to `places` decimals, exactly."""
    scale = 10**places
    whole = int(abs(x) * scale + Fraction(1, 2))
    return Fraction(-whole if x < 0 else whole, scale)


def round_over_root(x: Fraction, radicand: int, places: int) -> Fraction:
    """x/√m rounded half-up to `places` decimals, exactly (from squares: no irrational number is evaluated)."""
    square = (abs(x) * 10**places) ** 2 / radicand  # (|x|·10^places/√m)², whose root y rounds to floor(y + 1/2)
    whole = isqrt(square.numerator // square.denominator)
    if square >= (whole + Fraction(1, 2)) ** 2:
        whole += 1
    return Fraction(-whole if x < 0 else whole, 10**places)


def operand(value: Expr, default: Number, places: int, known: Numbers | None = None) -> Operand:
    """An operand shown as `default` (its text elsewhere on the page) when that is exact, else rounded to
    `places` decimals (exact when it fits them)."""
    if default.exact:
        return Operand(default, value)
    return Operand(format_number(value, places, known=known), value)


# settled()'s lines by the step and what decides their numbers: an exam's paper and its Moodle feedback write the
# same lines, each with names of its own
_SETTLED: ByIdentity[tuple[list[Line], Any]] = ByIdentity(1 << 6)


def settled(step: Any, settings: Hashable, whats: Callable[[], list[str]],
            compute: Callable[[], tuple[list[Line], Any]]) -> tuple[list[Line], Any]:
    """compute()'s lines of a step and what it found beside them, computed once for every renderer whose
    `settings` (all that its lines' numbers depend on beside the step) are the same; each renderer's lines carry its
    own `whats()`, in order."""
    found = _SETTLED.find(step, settings)
    if found is None:
        return _SETTLED.keep(step, settings, compute())
    lines, beside = found
    return [line if line.what == what else Line(what, line.result, line.terms, line.divisor)
            for line, what in zip(lines, whats(), strict=True)], beside


def settle(candidates: Iterable[Callable[[], list[Line]]]) -> list[Line]:
    """The first candidate's lines that all check (the candidates come with ever more guard decimals); the last
    candidate's when none does."""
    lines: list[Line] = []
    for candidate in candidates:
        lines = candidate()
        if all(line.checks() for line in lines):
            return lines
    return lines


def guarded(lines_at: Callable[[int], list[Line]], digits: int) -> list[Line]:
    """settle() over operands with digits, digits + 1, ... digits + GUARD_CAP decimals."""
    return settle(lambda p=p: lines_at(p) for p in range(digits, digits + GUARD_CAP + 1))
