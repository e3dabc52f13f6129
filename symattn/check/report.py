"""The findings as a reader sees them: a plain-text table for the terminal and the --json object."""

from __future__ import annotations

import json
import unicodedata

from . import Checked

HEADER = ("at", "printed", "correct", "cause", "explanation")


def summary(checked: Checked) -> str:
    """One line: how many numbers were claimed, how many hold and how many are wrong."""
    wrong = len(checked.wrong)
    return (f"{checked.claims} numbers claimed, {checked.holding} hold, {wrong} wrong" if wrong
            else f"{checked.claims} numbers claimed, all hold")


def table(checked: Checked) -> str:
    """The findings as an aligned table (where, printed, correct at the same precision, cause, explanation) after
    the summary line; the summary alone when every claim holds."""
    rows = [HEADER, *((f.at, f.claim.printed, f.correct, f.cause, f.explanation) for f in checked.wrong)]
    lines = [summary(checked)]
    if checked.wrong:
        widths = [max(_width(row[c]) for row in rows) for c in range(len(HEADER) - 1)]
        for row in rows:
            cells = [cell + " " * (w - _width(cell)) for cell, w in zip(row, widths, strict=False)]
            lines.append("  ".join([*cells, row[-1]]).rstrip())
    return "\n".join(lines) + "\n"


def _width(text: str) -> int:
    """Terminal columns: East Asian wide characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def as_json(checked: Checked) -> str:
    return json.dumps(checked.as_json(), ensure_ascii=False, indent=2) + "\n"
