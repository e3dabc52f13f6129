"""The paper's fixed e^x table: the same on every paper of a difficulty (easy: x = −3 … 3 in steps of 0.125),
since every scaled score is a multiple of the step within ±MAX_LOGIT. It gives no answer away and lets a
student whose earlier answer was wrong continue."""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

from sympy import Expr, Rational, exp

from ..exercises.levels import LEVELS, MAX_LOGIT
from ..numbers.display import format_number


@lru_cache(maxsize=16)
def exp_table(difficulty: str, digits: int) -> tuple[tuple[Expr, str], ...] | None:
    """(x, e^x to digits + 2 decimals) for every multiple of the level's step within ±MAX_LOGIT; None for a level
    whose scaled scores need a calculator."""
    step = LEVELS[difficulty].exp_step
    if step is None:
        return None
    unit = Rational(step)
    count = int(MAX_LOGIT / unit)
    return tuple((k * unit, format_number(exp(k * unit), digits + 2).text) for k in range(-count, count + 1))


def on_table(difficulty: str, values: tuple[Expr, ...]) -> bool:
    """Whether every value is an x of the difficulty's table (True when there is no table)."""
    step = LEVELS[difficulty].exp_step
    if step is None:
        return True
    unit = Fraction(step)  # in fractions: SymPy's division and comparisons cost more than the whole check
    return all(v.is_Rational and ((x := Fraction(int(v.p), int(v.q))) / unit).denominator == 1
               and abs(x) <= MAX_LOGIT for v in values)
