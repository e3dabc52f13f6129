"""The comparison rule: a printed number holds when it is the exact value rounded to its number of decimals, or
within half a unit of its last digit. The exact values are solve's answers (30 significant digits, an exact
decimal with all its digits), far finer than any printed place."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, localcontext
from functools import lru_cache
from typing import Any

from ..errors import SpecError
from .claims import Claim, Path_, path_text


def truth(answers: dict[str, Any], at: Path_) -> Decimal:
    """The exact value at a claim's path in solve's answers; a SpecError naming the path when there is none
    (an unknown key, an index out of range, a vector where a number is claimed)."""
    value: Any = answers
    for depth, step in enumerate(at):
        where = path_text(at[:depth + 1])
        if isinstance(step, int):
            if not isinstance(value, list):
                raise SpecError(path_text(at), f"{path_text(at[:depth]) or 'the answers'} is not a list")
            if not 0 <= step < len(value):
                raise SpecError(path_text(at), f"{where}: no such entry ({path_text(at[:depth])} has "
                                               f"{len(value)})")
        elif not isinstance(value, dict) or step not in value:
            keys = ", ".join(map(str, value)) if isinstance(value, dict) else "none: it is not a table"
            raise SpecError(path_text(at), f"no such quantity {step!r} (keys here: {keys})")
        value = value[step]
    if isinstance(value, (list, dict)):
        raise SpecError(path_text(at), "the shape differs: a number is claimed where the answer is a "
                                       f"{'vector or matrix' if isinstance(value, list) else 'table'}")
    if value is None:
        raise SpecError(path_text(at), "this answer has no decimal value (symbolic)")
    try:
        return Decimal(value)  # "-inf" too: a masked score
    except (ArithmeticError, TypeError, ValueError):
        raise SpecError(path_text(at), f"this answer is not a number ({value!r}): claim a decimal answer") from None


def holds(claim: Claim, exact: Decimal) -> bool:
    """The rule: rounded half-up to the claim's places, or within half a unit of its last digit."""
    return holds_number(claim.value, claim.places, exact)


def holds_number(value: Decimal, places: int, exact: Decimal) -> bool:
    """holds() of a number printed with its last digit at `places`, before it is made a claim."""
    if exact.is_infinite() or value.is_infinite():  # −∞ holds for a masked score only
        return value == exact
    unit, off = _unit(places), abs(value - exact)
    if off > unit:  # far off (even with the difference rounded to 28 digits): no rounding needed (a document's
        return False  # groups meet most quantities and miss them)
    return rounded(exact, places) == value or off <= unit / 2


@lru_cache(maxsize=None)
def _unit(places: int) -> Decimal:
    return Decimal(1).scaleb(-places)  # (places are bounded: claims.MOST_PLACES)


def rounded(exact: Decimal, places: int) -> Decimal:
    with localcontext() as context:  # a claim of 40 decimals: more digits than Decimal's default 28
        context.prec = 200
        return exact.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def correct_text(claim: Claim, exact: Decimal) -> str:
    """The exact value printed as the claim is: the same places, the same exponent when it has one."""
    if exact.is_infinite():
        return "-inf" if exact < 0 else "inf"
    value = rounded(exact, claim.places)
    if "e" in claim.printed.lower():
        exponent = int(claim.printed.lower().split("e")[1])
        mantissa = value.scaleb(-exponent)
        return f"{mantissa:f}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    return f"{value:f}"
