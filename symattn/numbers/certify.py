"""Certified digits for the sections a full carry reaches: a proven bound on how far each value such a section
prints may be from the true, unrounded chain's, and the digits that bound leaves certain.

A full carry hands a section 90-digit approximations of irrational values: each carried entry is within ε of the
true chain's. Every value v the section prints is then within `absolute + relative·|v|` of the true chain's value
(Kind.error_bound, built from the primitives here: linear maps, dot products, softmax, weighted sums). The bounds
are computed in floats and doubled (SAFETY): a float operation errs by at most 2^-53 relatively, and a bound takes
fewer than 10^6 of them, so the doubled bound is an upper bound. Answers give only the figures it leaves certain,
and a document whose rounding it cannot certify is refused (never a wrong digit)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, localcontext
from functools import partial
from typing import Any

from sympy import Expr

from ..engine import WORKING_DIGITS, Numbers
from ..errors import SpecError
from ..spec.model import GivenMatrix
from .display import SCIENTIFIC_FROM  # from 10^15 on, a page writes a mantissa
from .significant import FIGURES, cut

SAFETY = 2.0
CARRY_ROUNDING = 10.0 ** (1 - WORKING_DIGITS)  # a full carry's relative rounding: WORKING_DIGITS significant digits
EXTRA_FIGURES = 10  # answers of a bounded section are computed with this many more figures, then cut
MOST_PLACES = 30  # the most decimals a page writes a computed value with


@dataclass(frozen=True)
class Bound:
    """|true − computed| ≤ absolute + relative·|computed| for every value a section prints."""

    absolute: float = 0.0
    relative: float = 0.0

    def at(self, size: float) -> float:
        return SAFETY * (self.absolute + self.relative * size)

    def __or__(self, other: Bound) -> Bound:
        return Bound(max(self.absolute, other.absolute), max(self.relative, other.relative))


# ---------------------------------------------------------------- primitives: errors and sizes of matrices


def largest(matrix: Any, known: Numbers | None = None) -> float:
    """The largest |entry| of a matrix (a GivenMatrix, a SymPy matrix) or of a list of values; 0 for None."""
    if matrix is None:
        return 0.0
    values = _matrix(matrix)
    numbers = known or Numbers()
    return max((abs(float(numbers.number(v))) for v in _entries(values)), default=0.0) * (1 + 1e-12)


def spread(matrix: Any) -> float:
    """How much x·W moves when every entry of x moves by at most 1: the largest column sum of |W|."""
    values = _matrix(matrix)
    rows, columns = values.shape
    return max((sum(abs(float(values[i, j])) for i in range(rows)) for j in range(columns)), default=0.0)


def products(error_a: float, size_a: float, error_b: float, size_b: float, length: int) -> float:
    """The error of a dot product of `length` terms, each factor within its error of the true one."""
    return length * (error_a * size_b + size_a * error_b + error_a * error_b)


def softmax(logit_error: float) -> float:
    """The relative error of softmax weights (and of each e^{a}, and their sum) when every logit is within
    logit_error: each weight changes by a factor within e^{±2·logit_error}; no bound (inf) past a float's range
    (a long chain of full carries), which certifies no digit."""
    return math.expm1(2 * logit_error) if 2 * logit_error < 700 else math.inf


def weighted(logit_error: float, value_size: float, value_error: float) -> float:
    """The error of Σ_j w_j v_j: Σ_j |Δw_j| ≤ softmax(logit_error), times the values, plus the values' error."""
    spread = value_size + value_error
    return softmax(logit_error) * spread + value_error if spread else value_error  # inf · 0 is no number


@dataclass(frozen=True)
class Head:
    """One attention head's bound: what it prints, and its output rows' error and size."""

    printed: Bound
    error: float
    size: float


def attention(query: tuple[float, float], source: tuple[float, float], W_Q: Any, W_K: Any, W_V: Any,
              divisor: float, keys: int, rotated: bool = False, cached: tuple[float, float] = (0.0, 0.0),
              online: bool = False) -> Head:
    """The bound of one head from its inputs' (error, size): q = x·W_Q, k, v from the source rows (the same rows in
    self-attention), RoPE's rotation (each entry a·cos + b·sin: at most √2 times larger), cached keys and values
    of the given sizes (exact), scores divided by `divisor`, the softmax, the weighted sum, and with the online
    softmax its running maxima, ℓ and o over `keys` keys."""
    turn = 1.5 if rotated else 1.0  # ≥ √2
    eq, sq = turn * query[0] * spread(W_Q), turn * query[1] * spread(W_Q)
    ek, sk = turn * source[0] * spread(W_K), max(turn * source[1] * spread(W_K), cached[0])
    ev, sv = source[0] * spread(W_V), max(source[1] * spread(W_V), cached[1])
    raw = products(eq, sq, ek, sk, _matrix(W_Q).shape[1])
    logit = raw / divisor
    output = weighted(logit, sv, ev)
    running = keys * (ev + (sv + ev) * softmax(logit)) if online else 0.0  # o⁽ᵇ⁾ = Σ_j e^{a_j − m} v_j
    printed = Bound(max(query[0], source[0], eq, ek, ev, raw, logit, output, running), softmax(logit))
    return Head(printed, output, sv + output)


def combined(heads: Sequence[Head], W_O: Any) -> Head:
    """Heads concatenated and projected by W_O."""
    error = max(h.error for h in heads) * spread(W_O)
    printed = Bound(error)
    for head in heads:
        printed = printed | head.printed
    return Head(printed, error, max(h.size for h in heads) * spread(W_O))


def normalisation(error: float, size: float, radicand: float, centred: bool, scale: float) -> Bound:
    """LayerNorm (centred: minus the mean) or RMSNorm of rows within `error` of the true ones, entries at most
    `size`, the smallest radicand (σ² + ε, or the mean square + ε) `radicand`, the largest |γ| `scale`: the
    centred entries, the mean of squares, its square root and inverse, the normalised entries, the output."""
    ec, sc = (2 * error, 2 * size) if centred else (error, size)
    square = ec * (2 * sc + ec)  # |c'² − c²| = |c' − c|·|c' + c|
    low = radicand - square
    if low <= 0:
        return Bound(math.inf)
    inverse = square / (2 * low ** 1.5)  # |a^{-1/2} − b^{-1/2}| ≤ |a − b| / (2 min^{3/2})
    normalised = ec / math.sqrt(low) + (sc + ec) * inverse
    return Bound(max(error, ec, square, square / math.sqrt(low), inverse, normalised, scale * normalised))


SMOOTH_ACTIVATION = 1.2  # ≥ the largest slope of GELU (1.129), its tanh form (1.129) and SiLU (1.100); ReLU's is 1


def divisor_of(scale: Any, d_k: int) -> float:
    """What the scores are divided by, as a float no larger than the exact divisor's size (a smaller divisor
    only enlarges the bound)."""
    return abs(float(scale.divisor(d_k))) * (1 - 1e-12)


# ---------------------------------------------------------------- the chain's bounds, section by section


def bounds(sections: Sequence[Any], results: Sequence[Any], kind_of: Callable[[str], Any]) -> list[Bound | None]:
    """Each section's bound (None: nothing it prints depends on an approximation): its carried inputs' errors
    from their sources' bounds (and a full carry's own rounding), then its kind's error_bound (`kind_of`: the
    registry's lookup)."""
    index = {s.name: i for i, s in enumerate(sections) if s.name is not None}
    out: list[Bound | None] = []
    inputs: list[dict[str, float]] = []
    for section, result in zip(sections, results, strict=True):
        errors: dict[str, float] = {}
        for carry in section.carried:
            j = index[carry.source]
            error = _carried_error(carry, out[j], inputs[j])
            errors[carry.field] = max(errors.get(carry.field, 0.0), error)
        inputs.append(errors)
        try:
            out.append(kind_of(section.kind).error_bound(section, result, errors) if any(errors.values()) else None)
        except SpecError as error:
            raise SpecError(f"sections[{len(out)}].{error.field}", error.problem) from None
        bound = out[-1]
        if bound is not None and not math.isfinite(bound.at(1.0)):
            raise SpecError(f"sections[{len(out) - 1}]", 'with carry = "full", the bound of the unrounded chain '
                                                         "grows past any number here: no digit of this section can "
                                                         'be certified; use carry = "shown" for this section')
    return out


def full_carry(sections: Sequence[Any]) -> bool:
    """Whether any section is carried at the working precision (else no section has a bound)."""
    return any(carry.mode == "full" and not carry.exact for s in sections for carry in s.carried)


def check_section(answer: Any, bound: Bound, places: range, index: int) -> None:
    """SpecError unless every value a bounded section's page shows (its answers, computed with EXTRA_FIGURES more
    figures) rounds the same for the true chain: see check_page."""
    map_decimals(answer, lambda text: check_page(text, bound, places, f"sections[{index}]") or text)


def _carried_error(carry: Any, bound: Bound | None, source_inputs: dict[str, float]) -> float:
    """How far a carried entry may be from the true chain's: an input reference passes its source's input error on;
    an output reference its source's bound, plus a full carry's rounding of irrational values (at the size of the
    rows' largest entry, which the chain measured when it carried them: Carry.size)."""
    if carry.what == "input":
        return max(source_inputs.values(), default=0.0)
    full = carry.mode == "full" and not carry.exact
    if bound is None and not full:
        return 0.0
    return (bound.at(carry.size) if bound is not None else 0.0) + (CARRY_ROUNDING * carry.size if full else 0.0)


# ---------------------------------------------------------------- certified figures of the answers


# Answer keys whose strings are names or LaTeX, which may look like decimals (a token "2024"), not decimals.
NOT_DECIMALS = {"name", "tokens", "memory_tokens", "past_tokens", "vocabulary", "ranking", "predicted", "ties",
                "focus", "exact"}


# Answer keys of a section's given inputs (exact, whatever carry brought the rows): not bounded.
GIVEN = {"eps", "gamma", "beta", "temperature", "d_k", "scale"}


def map_decimals(value: Any, change: Callable[[str], str], given: Callable[[str], str] | None = None,
                 key: str | None = None) -> Any:
    """A section's answers with `change` applied to every computed decimal string and `given` (if any) to those
    of its given inputs (GIVEN); names and LaTeX stay as they are."""
    if key in NOT_DECIMALS or (key in GIVEN and given is None):
        return value
    if key in GIVEN:
        change = given
    if isinstance(value, dict):
        return {k: map_decimals(v, change, given, k) for k, v in value.items()}
    if isinstance(value, list):
        return [map_decimals(v, change, given, key) for v in value]
    if isinstance(value, str) and _DECIMAL.fullmatch(value):
        return change(value)
    return value


def certified_answers(answer: Any, bound: Bound) -> Any:
    """A bounded section's answers (computed with EXTRA_FIGURES more figures): each computed decimal cut to the
    figures its bound certifies, each given input's to FIGURES."""
    return map_decimals(answer, partial(certified, bound=bound), partial(cut, figures=FIGURES))


_DECIMAL = re.compile(r"-?[0-9]+(\.[0-9]+)?(E[+-][0-9]+)?")


def certified(text: str, bound: Bound) -> str:
    """A decimal of a bounded section (computed with EXTRA_FIGURES more figures) cut to the significant figures the
    bound leaves certain, at most FIGURES; a value whose every figure is uncertain (within the bound of 0) is
    written 0E-k, 0 to k places."""
    low, high, reach = _interval(text, bound)
    for figures in range(FIGURES, 0, -1):
        shown = cut(text, figures)
        if Decimal(cut(_plain(low), figures)) == Decimal(shown) == Decimal(cut(_plain(high), figures)):
            return shown
    return f"0E{math.ceil(math.log10(float(reach)))}"


def check_page(text: str, bound: Bound, places: range, field: str) -> None:
    """SpecError when the value's rounding on a page (to the decimals `places` a page may write it with, or a
    mantissa of those + 1 figures from 10^15 on) is not certain: it lies closer to a rounding boundary than the
    bound. (A page never rounds a computed value to fewer decimals than its stage's.)"""
    low, high, reach = _interval(text, bound)
    with localcontext() as c:
        c.prec = 400
        if abs(Decimal(text)) >= Decimal(10) ** SCIENTIFIC_FROM:
            steps = [(p + 1, True) for p in places]
        else:
            steps = [(p, False) for p in places if p <= MOST_PLACES]
        for p, significant in steps:
            if _round(low, p, significant) != _round(high, p, significant):
                shown = format(Decimal(cut(text, 12)).normalize(), "f")
                raise SpecError(field, f'with carry = "full", {shown} is within {float(reach):.1e} (the bound of the '
                                       f"unrounded chain) of a rounding boundary: it cannot be certified to {p} "
                                       f"{'figures' if significant else 'decimals'}; use carry = \"shown\" for this "
                                       "section")


def _round(value: Decimal, p: int, significant: bool) -> Decimal:
    if significant:
        if value == 0:
            return value
        p -= value.adjusted() + 1
    return value.quantize(Decimal(1).scaleb(-p), rounding=ROUND_HALF_UP)


def _interval(text: str, bound: Bound) -> tuple[Decimal, Decimal, Decimal]:
    """Where the true chain's value of a decimal string may lie, (low, high), and how far that is from it: the
    bound, plus half a unit of its last figure when the string is rounded (it has FIGURES + EXTRA_FIGURES)."""
    value = Decimal(text)
    sign, digits, exponent = value.as_tuple()
    with localcontext() as c:
        c.prec = 400
        reach = Decimal(repr(bound.at(float(abs(value)))))
        if len(digits) >= FIGURES + EXTRA_FIGURES:
            reach += Decimal(5).scaleb(exponent - 1)
        return value - reach, value + reach, reach


def _plain(value: Decimal) -> str:
    return format(value, "f") if -100 < value.adjusted() < 100 else format(value, "E")


def _matrix(matrix: Any) -> Any:
    """A GivenMatrix's exact values, or the matrix itself."""
    return matrix.values if isinstance(matrix, GivenMatrix) else matrix


def _entries(values: Any) -> list[Expr]:
    if hasattr(values, "shape"):
        return list(values)
    return [v for row in values for v in (row if isinstance(row, (list, tuple)) else (row,))]
