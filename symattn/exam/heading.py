"""The options of an exam's heading (--title, --course, --date, --time-allowed): one line of text each, checked
before any work; the paper prints them escaped (drivers/paper_head.py), exam.json stores them as typed."""

from __future__ import annotations

import unicodedata

from ..errors import SpecError
from .options import ExamOptions

MAX_LENGTH = 80  # characters: a longer title would run into the running head's name field
HEADING = {"title": "--title", "course": "--course", "date": "--date", "time_allowed": "--time-allowed"}


def heading(options: ExamOptions) -> dict[str, str | None]:
    """The heading options by their exam.json key (None: not given)."""
    return {key: getattr(options, key) for key in HEADING}


def check_heading(options: ExamOptions) -> None:
    """Each given heading option is one non-empty line of at most MAX_LENGTH characters."""
    for key, value in heading(options).items():
        if value is None:
            continue
        option = HEADING[key]
        if not value.strip():
            raise SpecError(option, "expected some text, got an empty string (leave the option out instead)")
        if any(unicodedata.category(ch) in ("Cc", "Zl", "Zp") for ch in value):
            raise SpecError(option, f"expected one line of text, got a line break or control character in "
                                    f"{value!r}")
        if len(value) > MAX_LENGTH:
            raise SpecError(option, f"expected at most {MAX_LENGTH} characters, got {len(value)}")


def minutes(time_allowed: str) -> int | None:
    """--time-allowed as a whole number of minutes ("90"), or None for text printed as it is ("1 h 30 min")."""
    text = time_allowed.strip()
    return int(text) if text.isascii() and text.isdigit() else None
