"""The only place where numbers become text: exact when they fit the digit budget, else rounded half-up."""

from __future__ import annotations

import math
from collections.abc import Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from decimal import MAX_EMAX, MIN_EMIN, ROUND_HALF_UP, Decimal, localcontext
from functools import cache, lru_cache
from itertools import compress
from operator import add, and_

import mpmath
from sympy import Add, Expr, N, Pow, Rational, S, Symbol, exp, latex, sympify

from .engine import Numbers, exponential, is_symbolic
from .engine import decimal as approx_decimal
from .engine import decimal_digits as approx_decimal_digits

DEFAULT_DIGITS = 4
_GUARD_DIGITS = 40
# A rounded number on the page of 10^15 or more (to 15 significant digits) is written as its mantissa times a power
# of ten (the e^{a} of a score of 126,373 has 54,884 digits, and computing them all took a minute).
SCIENTIFIC_FROM = 15
# A decimal string of the answers below 10^-99 or from 10^100 on (its exponent 100 or more in size) is written with
# an exponent: 1.23…E-122269 rather than 122,269 characters.
EXPONENT_FROM = 100
_LOG10_2 = math.log10(2)


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


def decimal_places(value: Expr) -> int | None:
    """Decimals needed to write a rational exactly (1/8 -> 3); None when it does not terminate."""
    value = sympify(value)
    return _places(int(value.q)) if value.is_Rational else None


@lru_cache(maxsize=1 << 12)  # the same few denominators again and again
def _places(q: int) -> int | None:
    """Decimals needed to write 1/q exactly (q > 0); None when it does not terminate."""
    twos = fives = 0
    while q % 2 == 0:
        q //= 2
        twos += 1
    while q % 5 == 0:
        q //= 5
        fives += 1
    return max(twos, fives) if q == 1 else None


def to_decimal(value: Expr, digits: int, size: int | None = None, known: Numbers | None = None) -> Decimal:
    """The value rounded half-up (away from zero on ties) to `digits` decimals; exact arithmetic for rationals.
    `size`: an irrational value's decimal exponent (_estimate), when the caller has it already; `known`: the
    numbers of the result the value belongs to (else it is evaluated)."""
    value = sympify(value)
    if value.is_Rational:
        p, q = int(value.p), int(value.q)
        whole, rest = divmod(abs(p) * 10**digits, q)
        if 2 * rest >= q:
            whole += 1
        return Decimal(f"{'-' if p < 0 and whole else ''}{whole}E-{digits}")  # exact: no context rounding
    figures = max(0, _estimate(value, known).adjusted() if size is None else size) + digits + _GUARD_DIGITS
    approx = _evaluate(value, figures, known)
    with _context(figures + 10):
        result = approx.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return result.copy_abs() if result.is_zero() else result


@lru_cache(maxsize=1 << 16)  # a document shows the same values in several steps (tables, products, vectors)
def format_number(value: Expr, digits: int = DEFAULT_DIGITS, min_decimals: int = 0,
                  fraction: bool = False, known: Numbers | None = None) -> Number:
    """Exact decimal text if it fits max(digits, min_decimals) decimals, padded to min_decimals; else rounded.

    With fraction=True a rational that does not fit is written as an exact fraction instead of being rounded.
    `known`: the numbers of the result the value belongs to (an irrational value not in it is evaluated).
    """
    value = sympify(value)
    if is_symbolic(value):
        return Number(exact_latex(value), exact=True, compound=value.is_Add)
    if _infinite(value):  # a masked score
        return Number(r"-\infty" if value is S.NegativeInfinity else r"\infty", exact=True)
    budget = max(digits, min_decimals)
    places = decimal_places(value)
    if places is not None and places <= budget:
        return Number(_plain(to_decimal(value, max(places, min_decimals))), exact=True)
    if fraction and value.is_Rational:
        return _fraction(value)
    size = _estimate(value, known).adjusted()
    if size >= SCIENTIFIC_FROM:
        mantissa, exponent = _scientific(value, digits, known)
        return Number(rf"{_plain(mantissa)} \times 10^{{{exponent}}}", exact=False, compound=True)
    return Number(_plain(to_decimal(value, digits, size, known)), exact=False)


def _scientific(value: Expr, digits: int, known: Numbers | None) -> tuple[Decimal, int]:
    """(mantissa rounded half-up to `digits` decimals, exponent) of a number, from `digits` + 40 significant
    digits whatever its size."""
    approximation = _evaluate(value, digits + _GUARD_DIGITS, known)
    exponent = approximation.adjusted()
    with _context(digits + _GUARD_DIGITS + 10):
        quantum = Decimal(1).scaleb(-digits)
        mantissa = approximation.scaleb(-exponent).quantize(quantum, rounding=ROUND_HALF_UP)
        if abs(mantissa) >= 10:  # 9.99996 rounded up
            mantissa, exponent = (mantissa / 10).quantize(quantum, rounding=ROUND_HALF_UP), exponent + 1
    return mantissa, exponent


def _estimate(value: Expr, known: Numbers | None = None) -> Decimal:
    """The value to 15 significant digits, for its size."""
    if value.is_Rational:
        with _context(15):
            return Decimal(int(value.p)) / Decimal(int(value.q))
    return _evaluate(value, 15, known)


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
    known: Numbers | None = None,
) -> list[Number]:
    """Format a row of numbers; with uniform=True all share one count of decimals, as a table column would.

    `written` (an input's entries as typed) overrides both: each entry is shown as it was written, a fraction
    as a fraction. `whole` (a matrix this row belongs to) sets the shared decimals instead of the row itself.
    `known`: the numbers of the result the values belong to.
    """
    values = [sympify(v) for v in values]
    if written:
        return [_fraction(v) if places is None and v.is_Rational
                else format_number(v, digits, places or 0, fractions, known)
                for v, places in zip(values, written, strict=True)]
    if uniform:
        needed = [min_decimals]
        for v in (values if whole is None else [sympify(w) for w in whole]):
            if _infinite(v):
                continue
            places = decimal_places(v)
            if places is not None and places <= max(digits, min_decimals):
                needed.append(places)
            elif not (fractions and v.is_Rational):  # a fraction sets no decimals for the others
                needed.append(digits)
        min_decimals = max(needed)
    return [format_number(v, digits, min_decimals, fractions, known) for v in values]


def shades(values: Iterable[Expr], scale: int = 100, known: Numbers | None = None) -> list[int]:
    """round(value / largest × scale) for each value, from their decimals (heatmap shades: the largest gets
    `scale`). Compared as decimals: SymPy cannot always order two exact softmax weights."""
    decimals = [to_decimal(v, 12, known=known) for v in values]
    largest = max(decimals, default=Decimal(0))
    if largest == 0:
        return [0 for _ in decimals]
    return [int((d / largest * scale).quantize(Decimal(1), rounding=ROUND_HALF_UP)) for d in decimals]


def significant(value: Expr, figures: int = 30, known: Numbers | None = None) -> str:
    """The value rounded half-up to `figures` significant digits (more when an exact decimal needs them)."""
    value = value if isinstance(value, Expr) else sympify(value)
    if not value.is_Rational:
        if value == 0:
            return "0." + "0" * (figures - 1)
        return _rounded(_evaluate(value, figures + _GUARD_DIGITS, known), figures)
    return significant_fraction(int(value.p), int(value.q), figures)


def significant_fraction(p: int, q: int, figures: int = 30) -> str:
    """significant() of the rational p/q (q > 0, in lowest terms), from its integers."""
    if p == 0:
        return "0." + "0" * (figures - 1)
    places = _places(q)
    if places is not None:  # an exact decimal: all its digits, padded with zeros to `figures` (integers only)
        scaled = abs(p) * (10**places // q)  # the value × 10^places, exactly
        decimals = places + max(0, figures - len(str(scaled)))
        text = str(scaled * 10 ** (decimals - places)).rjust(decimals + 1, "0")
        whole = f"{text[:len(text) - decimals]}.{text[len(text) - decimals:]}" if decimals else text
        return ("-" if p < 0 else "") + whole
    with _context(figures + _GUARD_DIGITS):
        return _rounded(Decimal(p) / Decimal(q), figures)


def significant_approximation(approximation: mpmath.mpf, figures: int = 30) -> str:
    """significant() of an irrational value, from the engine's approximation of it (approx.WORKING_DIGITS).

    The same text as the Decimal route (approx.decimal's digits, then quantize), computed in integers from the
    binary value m·2^e: the Decimal route costs ~10 µs a number, and an answer key for 64 tokens has 8,192.
    """
    sign, mantissa, exponent, bits = approximation._mpf_
    if not mantissa:  # zero: the Decimal route's own spelling
        return _rounded(approx_decimal(approximation, figures + _GUARD_DIGITS), figures)
    magnitude = math.floor((exponent + bits - 1) * _LOG10_2)  # floor(log10 |x|), or one less
    whole, rest, denominator = _scaled(mantissa, exponent, figures - 1 - magnitude)
    while whole >= _ten(figures):
        magnitude += 1
        whole, rest, denominator = _scaled(mantissa, exponent, figures - 1 - magnitude)
    if whole == _ten(figures) - 1:  # 99…9: the Decimal route's digits may have rounded up to the next power of 10
        carry = approx_decimal_digits(figures + _GUARD_DIGITS)
        top, remainder, below = _scaled(mantissa, exponent, carry - 1 - magnitude)
        if top == _ten(carry) - 1 and 2 * remainder >= below:
            magnitude += 1
            whole, rest, denominator = _scaled(mantissa, exponent, figures - 1 - magnitude)
    if 2 * rest >= denominator:  # half-up: away from zero on a tie
        whole += 1
    shift, digits = figures - 1 - magnitude, str(whole)
    rounded_magnitude = magnitude + len(digits) - figures  # 99…9 rounded up to 10…0 (one digit more): one more
    if abs(rounded_magnitude) >= EXPONENT_FROM:
        text = f"{digits[0]}.{digits[1:]}E{rounded_magnitude:+d}"
    elif shift <= 0:
        text = digits + "0" * -shift
    elif shift < len(digits):
        text = f"{digits[:len(digits) - shift]}.{digits[len(digits) - shift:]}"
    else:
        text = "0." + digits.rjust(shift, "0")
    return ("-" if sign else "") + text


def _scaled(mantissa: int, exponent: int, shift: int) -> tuple[int, int, int]:
    """m·2^e·10^shift as (whole part, remainder, denominator), exactly."""
    numerator = mantissa * _ten(max(shift, 0)) << max(exponent, 0)
    denominator = _ten(max(-shift, 0)) << max(-exponent, 0)
    return *divmod(numerator, denominator), denominator


@cache
def _ten(k: int) -> int:
    """10^k (the same few powers, again and again)."""
    return 10**k


def _rounded(number: Decimal, figures: int) -> str:
    """A nonzero number rounded half-up to `figures` significant digits, written out in full."""
    with _context(figures + _GUARD_DIGITS):
        quantum = Decimal(1).scaleb(number.adjusted() - figures + 1)
        rounded = number.quantize(quantum, rounding=ROUND_HALF_UP)
        return format(rounded, "E") if abs(rounded.adjusted()) >= EXPONENT_FROM else _plain(rounded)


def _context(prec: int) -> AbstractContextManager:
    """A decimal context of `prec` digits with unbounded exponents: e^{a} of a score of 10^7 has millions of digits
    before the point, beyond the default context's exponent limit."""
    return localcontext(prec=prec, Emax=MAX_EMAX, Emin=MIN_EMIN)


def _evaluate(value: Expr, figures: int, known: Numbers | None = None) -> Decimal:
    """`figures` significant digits of an irrational value: the engine's approximation in `known`, else evalf."""
    found = None if known is None else known.decimal(value, figures)
    return found if found is not None else Decimal(str(N(value, figures)))


def exact_latex(value: Expr, decimals: bool = True) -> str:
    """The exact value as LaTeX (579√2/1000 as \\frac{579 \\sqrt{2}}{1000}); with decimals=True, terminating
    rational coefficients are written as decimals (0.1 x_{11} rather than x_{11}/10)."""
    value = value if isinstance(value, Expr) else sympify(value)
    if not decimals:
        quick = _quick_latex(value)
        if quick is not None:
            return quick
        if not is_symbolic(value):  # a number: its terms in SymPy's own order (sorting them evaluates each one)
            return latex(value, order="none")
    return latex(_decimal_coefficients(value) if decimals else value, order="none" if decimals else None)


def _quick_latex(value: Expr) -> str | None:
    """SymPy's LaTeX of a rational or of e^{rational}, written directly (SymPy's printer costs ~20 µs a call,
    and a large answer key prints hundreds of thousands of them); None for anything else."""
    if value.is_Rational:
        return fraction_latex(int(value.p), int(value.q))
    if isinstance(value, exp) and value.args[0].is_Rational:
        return fraction_exponential_latex(int(value.args[0].p), int(value.args[0].q))
    return None


def fraction_latex(p: int, q: int) -> str:
    """SymPy's LaTeX of the rational p/q (q > 0, in lowest terms): 3, - \\frac{3}{4}."""
    return str(p) if q == 1 else rf"{'- ' if p < 0 else ''}\frac{{{abs(p)}}}{{{q}}}"


class Coefficients:
    """A value matrix's columns as coefficients of e^{a_j} in the outputs' exact forms: "" for 1, None for 0, else
    the exact value and a space. Made once per value matrix, read by every query's softmax_latex.

    `signed` holds each coefficient as it stands after the first term of a sum: " + 3 ", or " -  \\frac{1}{2} " for
    "- \\frac{1}{2} " (what _joined makes of " + - "), "" for 0; None when a coefficient holds a "+" of its own.
    """

    def __init__(self, columns: list[list[str | None]]) -> None:
        self.columns = columns
        self.present = [[f is not None for f in column] for column in columns]
        plain = not any("+" in f for column in columns for f in column if f)
        self.signed = [[_signed(f) for f in column] for column in columns] if plain else None


def _signed(factor: str | None) -> str:
    """A coefficient after the first term: " + " before it, or " - " for its own minus sign; "" for None."""
    if factor is None:
        return ""
    return f" - {factor[1:]}" if factor.startswith("-") else f" + {factor}"


def coefficients_latex(columns: Iterable[Iterable[Expr]]) -> Coefficients:
    """Each value as a coefficient of e^{a_j} in an output's exact form (a sum in parentheses)."""
    return Coefficients([[None if v == 0 else "" if v == 1 else f"{_factor(v)} " for v in column]
                         for column in columns])


def fraction_coefficients_latex(columns: Iterable[Iterable[tuple[int, int]]]) -> Coefficients:
    """coefficients_latex() of rational values given as (numerator, denominator) pairs in lowest terms."""
    return Coefficients([[None if p == 0 else "" if p == q == 1 else f"{fraction_latex(p, q)} " for p, q in column]
                         for column in columns])


def softmax_latex(terms: list[str | None], coefficients: Coefficients) -> tuple[str, list[str], list[str]]:
    """The exact softmax forms of one row, in token order, from its terms e^{a_k} (exponential_latex; None: a
    masked key, adding 0): Z = Σ_k e^{a_k}, each weight e^{a_j} / Z, and each output entry (Σ_j v_j e^{a_j}) / Z.
    Z is named, not repeated: each form stays n terms long, not 2n."""
    total = _joined([term for term in terms if term is not None]) or "0"
    weights = ["0" if term is None else rf"\frac{{{term}}}{{Z}}" for term in terms]
    if coefficients.signed is None or any("+" in term or term.startswith("-") for term in terms if term):
        numerators = [_joined([factor + term for factor, term in zip(column, terms, strict=True)
                               if factor is not None and term is not None]) for column in coefficients.columns]
    else:
        visible, filled = [term is not None for term in terms], [term or "" for term in terms]
        numerators = [_signed_sum(signed, present, filled, visible)
                      for signed, present in zip(coefficients.signed, coefficients.present, strict=True)]
    return total, weights, [rf"\frac{{{numerator or '0'}}}{{Z}}" for numerator in numerators]


def _signed_sum(signed: list[str], present: list[bool], terms: list[str], visible: list[bool]) -> str:
    """The sum of the coefficients' and terms' products as _joined writes it, from the signed coefficients: with
    no "+" in any coefficient or term and no term starting with "-", _joined's "+ -" stands only where a
    coefficient's own minus sign follows " + ", which the signed coefficients have already written as " - "."""
    text = "".join(compress(map(add, signed, terms), map(and_, present, visible)))
    return f"-{text[3:]}" if text.startswith(" - ") else text[3:]


def surd_latex(p: int, q: int, m: int = 1) -> str:
    """SymPy's LaTeX of (p/q)·√m (q > 0, in lowest terms; m without square factors): \\frac{579 \\sqrt{2}}{1000},
    - 3 \\sqrt{2}, \\frac{\\sqrt{2}}{8}, 0; for m = 1 the rational's (fraction_latex)."""
    if m == 1:
        return fraction_latex(p, q)
    if p == 0:
        return "0"
    top = rf"\sqrt{{{m}}}" if abs(p) == 1 else rf"{abs(p)} \sqrt{{{m}}}"
    return ("- " if p < 0 else "") + (top if q == 1 else rf"\frac{{{top}}}{{{q}}}")


def surd_exponential_latex(p: int, q: int, m: int = 1) -> str:
    """exponential_latex() of (p/q)·√m: 1, e^{\\frac{\\sqrt{2}}{8}}; for m = 1 the rational's."""
    if m == 1:
        return fraction_exponential_latex(p, q)
    return "1" if p == 0 else f"e^{{{surd_latex(p, q, m)}}}"


def exponential_latex(a: Expr) -> str | None:
    """SymPy's LaTeX of e^a (e^{\\frac{3}{4}}, e, 1), written from the exponent; None for e^{−∞} = 0."""
    if a is S.NegativeInfinity:
        return None
    if a.is_Rational:
        return fraction_exponential_latex(int(a.p), int(a.q))
    return exact_latex(exponential(a), decimals=False)


def fraction_exponential_latex(p: int, q: int) -> str:
    """exponential_latex() of the rational p/q (q > 0, in lowest terms): 1, e, e^{- \\frac{3}{4}}."""
    return "1" if p == 0 else "e" if p == q == 1 else f"e^{{{fraction_latex(p, q)}}}"


def _factor(value: Expr) -> str:
    """An exact coefficient, in parentheses when it is a sum (1.2 + sin 1)."""
    text = exact_latex(value, decimals=False)
    return rf"\left({text}\right)" if value.is_Add else text


def _joined(terms: list[str]) -> str:
    """a + b - c: terms added in the order given."""
    return " + ".join(terms).replace("+ -", "- ")


def _decimal_coefficients(value: Expr) -> Expr:
    """Terminating rationals replaced by opaque symbols named by their decimals (exponents left alone)."""
    if value.is_Rational:
        places = decimal_places(value)
        if value.is_Integer or places is None:
            return value
        text = _plain(to_decimal(abs(value), places))
        return Symbol(text) if value > 0 else -Symbol(text)
    if value.is_Pow:
        return Pow(_decimal_coefficients(value.base), value.exp)
    if not value.args:
        return value
    args = [_decimal_coefficients(arg) for arg in value.args]
    if value.is_Add:  # terms in the order of their variables: x_{21} + 0.1 x_{22}
        return Add(*sorted(args, key=_variables), evaluate=False)
    return value.func(*args)


def _variables(term: Expr) -> tuple[str, ...]:
    """The names of a term's variables, decimal coefficients left out (a sort key for printing)."""
    return tuple(sorted(str(s) for s in term.free_symbols if not str(s)[0].isdigit()))


def _plain(number: Decimal) -> str:
    return format(number, "f")
