"""Numbers for grading: exam.json's and the students' decimals read exactly (Decimal, never float), and the
working precision every carried value is computed to."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation, localcontext

PRECISION = 80  # significant digits of carried values: exact for answers of at most 30 figures (exam.json's)
MAX_FIGURES = 100  # significant digits a typed answer may have (more is "not a number"): exam.json gives 30
MAX_TEXT = 20_000  # characters of a typed answer (0. and 10,000 zeros and a 1 is a number, read exactly)
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


def exact(*values: Decimal) -> Context:
    """A context in which adding, subtracting and rounding `values` is exact (use as `with exact(a, b):`): as many
    digits as their widest span, from the highest digit to the lowest."""
    finite = [v for v in values if v.is_finite()]
    high = max((v.adjusted() for v in finite if v), default=0)
    low = min((v.as_tuple().exponent for v in finite), default=0)
    return localcontext(prec=max(PRECISION, high - min(int(low), 0) + 3), Emax=10**6, Emin=-10**6)


def within(value: Decimal, target: Decimal, tolerance: Decimal) -> bool:
    """|value − target| ≤ tolerance, exactly (whatever the numbers' sizes and decimals)."""
    with exact(value, target, tolerance):
        return abs(value - target) <= tolerance


def rounded(value: Decimal, decimals: int) -> Decimal:
    """value rounded half-up to `decimals` decimals, exactly (9e999 to 4 decimals is 9e999)."""
    step = Decimal(1).scaleb(-decimals)
    with exact(value, step):
        return value.quantize(step, rounding=ROUND_HALF_UP)


def parse_answer(text: str) -> Decimal | None:
    """A student's typed answer as an exact Decimal, or None if it is not a number. Spaces are ignored, a minus
    sign may be U+2212, and a comma is the decimal point in an answer that has no point (0,25)."""
    text = text.strip().replace(" ", "").replace("\u2212", "-")
    if "," in text and "." not in text and text.count(",") == 1:
        text = text.replace(",", ".")
    figures = re.sub(r"\D", "", text.split("e")[0].split("E")[0]).lstrip("0")  # significant: not the leading 0s
    if len(text) > MAX_TEXT or not _ANSWER.fullmatch(text) or len(figures) > MAX_FIGURES:
        return None
    try:
        return Decimal(text)
    except InvalidOperation:  # pragma: no cover - the pattern admits only what Decimal reads
        return None


def places(text: str) -> int:
    """The decimals a typed answer was written with ("0.250" -> 3)."""
    mantissa = text.strip().replace(",", ".").split("e")[0].split("E")[0]
    return len(mantissa.split(".", 1)[1]) if "." in mantissa else 0
