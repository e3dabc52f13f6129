"""Exact parsing of numbers from their text: '0.1' is 1/10, never a float."""

from __future__ import annotations

import re
from decimal import Decimal

from sympy import QQ, Expr, ImmutableMatrix, Integer, Rational
from sympy.polys.matrices import DomainMatrix

from ..errors import SpecError

_DECIMAL = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_FRACTION = re.compile(r"[+-]?\d+\s*/\s*[+-]?\d+")


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
        return Integer(raw), 0
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
    if _DECIMAL.fullmatch(text):
        return Rational(text), written_decimals(text)
    if _FRACTION.fullmatch(text):
        numerator, denominator = (int(part) for part in text.split("/"))
        if denominator == 0:
            raise SpecError(field, f"division by zero in {text!r}")
        return Rational(numerator, denominator), None
    raise SpecError(field, f"expected a number such as 0.8, -1.25 or 1/3, got {text!r}")


def matrix_of(rows: list[list[Expr]]) -> ImmutableMatrix:
    """An ImmutableMatrix of parsed entries. All rational: built from a DomainMatrix over QQ, the storage SymPy
    would choose, without its search for a domain through every entry (the costliest part of parsing a large
    matrix)."""
    if all(v.is_Rational for row in rows for v in row):
        entries = [[QQ(int(v.p), int(v.q)) for v in row] for row in rows]
        return DomainMatrix(entries, (len(rows), len(rows[0])), QQ).to_Matrix().as_immutable()
    return ImmutableMatrix(rows)
