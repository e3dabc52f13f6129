"""Exact values as LaTeX (the JSON answers' `exact` strings, --exact on the page): fractions, surds, e^{a}, and a
row's softmax forms with its denominator named Z."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from itertools import compress
from operator import and_

from sympy import Add, Expr, Pow, S, Symbol, cos, exp, latex, sin, sympify

from ..engine import exponential, is_symbolic
from ..spec.model import WRITTEN_NAME
from .decimals import decimal_places, plain, to_decimal


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
    return latex(_decimal_coefficients(value) if decimals else value, order="none" if decimals else None,
                 symbol_names=_written_names(value))


def _written_names(value: Expr) -> dict[Symbol, str]:
    """The LaTeX of each name in the value that a spec wrote (SymPy's printer would make pi π, xddot ẍ)."""
    return {s: name_latex(s.name) for s in value.free_symbols if WRITTEN_NAME.fullmatch(s.name)}


@lru_cache(maxsize=1 << 12)
def name_latex(name: str) -> str:
    """A written name as it is written (a, b_{1}, x_{2} as SymPy prints them): a name of several letters in
    \\mathit{} (\\mathit{pi}, not π), digits that end it as its subscript (\\mathit{theta}_{1}, b_{1}), and the
    part after _ as a subscript of plain letters (\\mathit{beta}_{k}, x_{pi}; b1_k is b_{1,k})."""
    stem, digits, sub = WRITTEN_NAME.fullmatch(name).groups()
    base = stem if len(stem) == 1 else rf"\mathit{{{stem}}}"
    index = ",".join(part for part in (digits, sub) if part)
    return f"{base}_{{{index}}}" if index else base


def _quick_latex(value: Expr) -> str | None:
    """SymPy's LaTeX of a rational or of e^{rational}, written directly (SymPy's printer is slow per call, and a
    large answer key prints one for nearly every entry); None for anything else."""
    if value.is_Rational:
        return fraction_latex(int(value.p), int(value.q))
    if isinstance(value, exp) and value.args[0].is_Rational:
        return fraction_exponential_latex(int(value.args[0].p), int(value.args[0].q))
    if value.is_Add or value.is_Mul or isinstance(value, (cos, sin)):
        return trig_sum_latex(value)
    return None


def trig_sum_latex(value: Expr) -> str | None:
    """SymPy's LaTeX (order="none") of a sum of rationals times cos or sin of an angle, written directly: RoPE's
    rotated entries and scores (SymPy's printer took most of a 16-token RoPE answer key); None for anything else."""
    terms = value.args if value.is_Add else (value,)
    out = []
    for i, term in enumerate(terms):
        text = _trig_term_latex(term)
        if text is None:
            return None
        if i and text.startswith("- "):
            out.append(" - " + text[2:])
        else:
            out.append((" + " if i else "") + text)
    return "".join(out)


def _trig_term_latex(term: Expr) -> str | None:
    """One term of trig_sum_latex: a rational, or c·cos(r) / c·sin(r) with a rational c (r > 0, as SymPy keeps
    it)."""
    if term.is_Rational:
        return fraction_latex(int(term.p), int(term.q))
    coefficient, function = term.as_coeff_Mul()
    if not (coefficient.is_Rational and isinstance(function, (cos, sin))):
        return None
    argument = function.args[0]  # a rational, or an irrational angle such as m·10000^(−1/3), printed by SymPy
    inner = fraction_latex(int(argument.p), int(argument.q)) if argument.is_Rational else latex(argument, order="none")
    name = rf"\{type(function).__name__}{{\left({inner} \right)}}"
    p, q = abs(int(coefficient.p)), int(coefficient.q)
    sign = "- " if coefficient < 0 else ""
    numerator = name if p == 1 else f"{p} {name}"
    return sign + (numerator if q == 1 else rf"\frac{{{numerator}}}{{{q}}}")


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
    total, weights = normaliser_latex(terms)
    return total, weights, [rf"\frac{{{numerator or '0'}}}{{Z}}" for numerator in numerators_latex(terms, coefficients)]


def numerators_latex(terms: list[str | None], coefficients: Coefficients) -> list[str]:
    """Each value column's Σ_j v_j e^{a_j} from the terms e^{a_j} (None: adding 0), "" for an empty sum."""
    if coefficients.signed is None or any("+" in term or term.startswith("-") for term in terms if term):
        numerators = [_joined([_times(factor, term) for factor, term in zip(column, terms, strict=True)
                               if factor is not None and term is not None]) for column in coefficients.columns]
    else:
        visible, filled = [term is not None for term in terms], [term or "" for term in terms]
        numerators = [_signed_sum(signed, present, filled, visible)
                      for signed, present in zip(coefficients.signed, coefficients.present, strict=True)]
    return numerators


def normaliser_latex(terms: list[str | None]) -> tuple[str, list[str]]:
    """Z = Σ_k e^{a_k} and each weight e^{a_j} / Z of one row, from its terms (None: a masked key, weight 0)."""
    total = _joined([term for term in terms if term is not None]) or "0"
    return total, ["0" if term is None else rf"\frac{{{term}}}{{Z}}" for term in terms]


def output_reference_latex(column: int, count: int) -> str:
    """An output entry's exact form by reference, one term long whatever the count of keys:
    (1/Z) Σ_{j=1..n} V_{j,c} e^{a_j}, where a_j are the row's scaled scores and V the value matrix,
    both given once beside it (column counted from 1)."""
    return rf"\frac{{1}}{{Z}} \sum_{{j=1}}^{{{count}}} V_{{j,{column}}} e^{{a_j}}"


def _signed_sum(signed: list[str], present: list[bool], terms: list[str], visible: list[bool]) -> str:
    """The sum of the coefficients' and terms' products as _joined writes it, from the signed coefficients: with
    no "+" in any coefficient or term and no term starting with "-", _joined's "+ -" stands only where a
    coefficient's own minus sign follows " + ", which the signed coefficients have already written as " - "."""
    text = "".join(compress(map(_times, signed, terms), map(and_, present, visible)))
    return f"-{text[3:]}" if text.startswith(" - ") else text[3:]


def _times(factor: str, term: str) -> str:
    """A coefficient (with its trailing space; "" or " + " for 1) times a term e^{a_j}: the coefficient alone when
    the term is e^0 = 1 ("20", not "20 1"), the term alone for the coefficient 1."""
    if term == "1" and factor.strip() not in ("", "+"):
        return factor.rstrip()
    return factor + term


def surd_latex(p: int, q: int, m: int = 1) -> str:
    """SymPy's LaTeX of (p/q)·√m (q > 0, in lowest terms; m without square factors): \\frac{579 \\sqrt{2}}{1000},
    - 3 \\sqrt{2}, \\frac{\\sqrt{2}}{8}, 0; for m = 1 the rational's (fraction_latex)."""
    if m == 1:
        return fraction_latex(p, q)
    if p == 0:
        return "0"
    top = rf"\sqrt{{{m}}}" if abs(p) == 1 else rf"{abs(p)} \sqrt{{{m}}}"
    return ("- " if p < 0 else "") + (top if q == 1 else rf"\frac{{{top}}}{{{q}}}")


def shifted_surd_latex(b: Expr, a: Expr, m: int) -> str:
    """SymPy's LaTeX of b + a·√m for rationals b and a (m without square factors), a normalised entry scaled and
    shifted (kinds/norm/kind.py): \\frac{1}{10} - \\frac{3 \\sqrt{5}}{7}."""
    if m == 1 or a == 0:
        total = b + a if m == 1 else b
        return fraction_latex(int(total.p), int(total.q))
    surd = surd_latex(int(abs(a).p), int(a.q), m)
    if b == 0:
        return ("- " if a < 0 else "") + surd
    return f"{fraction_latex(int(b.p), int(b.q))} {'-' if a < 0 else '+'} {surd}"


def surd_exponential_latex(p: int, q: int, m: int = 1) -> str:
    """exponential_latex() of (p/q)·√m: 1, e^{\\frac{\\sqrt{2}}{8}}; for m = 1 the rational's."""
    return exponent_latex(surd_latex(p, q, m))


def exponent_latex(exponent: str) -> str:
    """e^{a} from the LaTeX of a rational or surd a, as surd_exponential_latex writes it: 1 for 0, e for 1."""
    return "1" if exponent == "0" else "e" if exponent == "1" else f"e^{{{exponent}}}"


def exponential_latex(a: Expr) -> str | None:
    """SymPy's LaTeX of e^a (e^{\\frac{3}{4}}, e, 1), written from the exponent; None for e^{−∞} = 0."""
    if a is S.NegativeInfinity:
        return None
    if a.is_Rational:
        return fraction_exponential_latex(int(a.p), int(a.q))
    trig = trig_sum_latex(a) if a.is_Add or a.is_Mul else None  # a RoPE logit
    return f"e^{{{trig}}}" if trig is not None else exact_latex(exponential(a), decimals=False)


def fraction_exponential_latex(p: int, q: int) -> str:
    """exponential_latex() of the rational p/q (q > 0, in lowest terms): 1, e, e^{- \\frac{3}{4}}."""
    return exponent_latex(fraction_latex(p, q))


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
        text = plain(to_decimal(abs(value), places))
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
