"""Numbers for grading: exam.json's and the students' decimals read exactly (Decimal, never float), and the
working precision every carried value is computed to."""

from __future__ import annotations

import re
from decimal import Context, Decimal, InvalidOperation, localcontext

PRECISION = 80  # significant digits of carried values; a typed answer has at most MAX_FIGURES, so sums are exact
MAX_FIGURES = 30
_ANSWER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d{1,3})?")


def working() -> Context:
    """The context of every grading computation (use as `with working():`)."""
    return localcontext(prec=PRECISION)


def exact_decimal(text: str) -> Decimal:
    """A decimal from exam.json (`"0.92"`, `"1/3"`: a fraction to PRECISION digits)."""
    text = str(text).strip()
    if "/" in text:
        p, q = text.split("/", 1)
        with working():
            return Decimal(p) / Decimal(q)
    return Decimal(text)


def parse_answer(text: str) -> Decimal | None:
    """A student's typed answer as an exact Decimal, or None if it is not a number. Spaces are ignored, a minus
    sign may be U+2212, and a comma is the decimal point in an answer that has no point (0,25)."""
    text = text.strip().replace(" ", "").replace("\u2212", "-")
    if "," in text and "." not in text and text.count(",") == 1:
        text = text.replace(",", ".")
    figures = re.sub(r"\D", "", text.split("e")[0].split("E")[0]).lstrip("0")  # significant: not the leading 0s
    if not _ANSWER.fullmatch(text) or len(figures) > MAX_FIGURES:
        return None
    try:
        return Decimal(text)
    except InvalidOperation:  # pragma: no cover - the pattern admits only what Decimal reads
        return None


def places(text: str) -> int:
    """The decimals a typed answer was written with ("0.250" -> 3)."""
    mantissa = text.strip().replace(",", ".").split("e")[0].split("E")[0]
    return len(mantissa.split(".", 1)[1]) if "." in mantissa else 0
