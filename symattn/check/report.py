"""The findings as a reader sees them: a plain-text table for the terminal and the --json object."""

from __future__ import annotations

import json
import unicodedata

from . import Checked

HEADER = ("at", "printed", "correct", "cause", "explanation")


def coverage_line(checked: Checked) -> str | None:
    """A document's coverage: the numbers read, how they were matched, and how many match nothing."""
    c = checked.coverage
    if c is None:
        return None
    return (f"{c.numbers()} numbers read in {len(c.reads)} groups: {c.numbers('label')} matched by label, "
            f"{c.numbers('value')} by value, {c.numbers('given')} given inputs, {c.numbers('operands')} operands of "
            f"arithmetic written out, {c.numbers('indices')} indices, {c.numbers('unmatched')} unmatched")


def summary(checked: Checked) -> str:
    """One line: how many numbers were claimed, how many hold and how many are wrong; "all hold" only when
    something was checked and (unless partial) every number read was matched."""
    wrong = len(checked.wrong)
    if checked.claims == 0:
        return "nothing was checked: no number matches a quantity of the derivation"
    if wrong:
        return f"{checked.claims} numbers claimed, {checked.holding} hold, {wrong} wrong"
    if checked.unmatched:
        left = sum(len(r.numbers) for r in checked.unmatched)
        return (f"{checked.claims} numbers claimed, all hold; {left} numbers read match nothing"
                + (" (--partial)" if checked.partial else "") + _unchecked(checked))
    return f"{checked.claims} numbers claimed, all hold" + _unchecked(checked)


def _unchecked(checked: Checked) -> str:
    """What "all hold" does not cover: the numbers of arithmetic written out, which are not recomputed."""
    operands = 0 if checked.coverage is None else checked.coverage.numbers("operands")
    return f" (the {operands} numbers of arithmetic written out are not checked)" if operands else ""


def unmatched_lines(checked: Checked) -> list[str]:
    """The groups of numbers that match nothing, with their place."""
    return [f"unmatched: line {r.line}, column {r.column}: {', '.join(r.numbers)} ({r.reason}) in «{r.around}»"
            for r in checked.unmatched]


def table(checked: Checked) -> str:
    """The coverage (for a document), the summary line, the findings as an aligned table (where, printed, correct
    at the same precision, cause, explanation), then the numbers that match nothing with their place."""
    rows = [HEADER, *((_where(checked, f), f.claim.printed, f.correct, f.cause, f.explanation)
                      for f in checked.wrong)]
    lines = [line for line in (coverage_line(checked), summary(checked)) if line]
    if checked.wrong:
        widths = [max(_width(row[c]) for row in rows) for c in range(len(HEADER) - 1)]
        for row in rows:
            cells = [cell + " " * (w - _width(cell)) for cell, w in zip(row, widths, strict=False)]
            lines.append("  ".join([*cells, row[-1]]).rstrip())
    lines += unmatched_lines(checked)
    return "\n".join(lines) + "\n"


def _where(checked: Checked, finding) -> str:
    """The claim's path, and for a document the line and column it was read at: `…weights[3] (line 12:7)`."""
    place = checked.place(finding)
    return finding.at if place is None else f"{finding.at} (line {place[0]}:{place[1]})"


def _width(text: str) -> int:
    """Terminal columns: East Asian wide characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def as_json(checked: Checked) -> str:
    return json.dumps(checked.as_json(), ensure_ascii=False, indent=2) + "\n"
