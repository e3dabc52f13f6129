"""Marking one student: each blank right (against the true value), carried (against the value recomputed from
their own earlier answers), wrong (with its likely cause), missing or not a number; each part worth its points
times the share of its blanks credited, exactly."""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal
from fractions import Fraction

from .carry import carry
from .causes import Cause, cause_of, diagnosed
from .exam import GradedBlank, GradedPart, GradedVersion
from .numbers import parse_answer, within
from .responses import Response

CREDITED = ("right", "carried")


@dataclass(frozen=True)
class Mark:
    """One blank's verdict: right, carried, wrong, missing or invalid (not a number, from a Moodle report)."""

    blank: GradedBlank
    text: str | None
    verdict: str
    tolerance: Decimal
    carried: Decimal | None = None  # the value carried forward (for carried, and for a wrong answer that had one)
    refused: str | None = None  # the guard's reason (a language key) when nothing was carried
    cause: Cause | None = None


@dataclass(frozen=True)
class Graded:
    """A student's marks and points per part."""

    response: Response
    version: GradedVersion
    marks: tuple[Mark, ...]

    def part_marks(self, part: GradedPart) -> list[Mark]:
        return [m for m in self.marks if m.blank.part == part.letter]

    def points(self, part: GradedPart) -> Fraction:
        marks = self.part_marks(part)
        credited = sum(1 for m in marks if m.verdict in CREDITED)
        return Fraction(part.points * credited, len(marks)) if marks else Fraction(0)

    @property
    def total(self) -> Fraction:
        return sum((self.points(p) for p in self.version.parts), Fraction(0))


def grade(response: Response, version: GradedVersion) -> Graded:
    """Mark every blank of the student's version."""
    answers = {k: (parse_answer(t) if t is not None else None) for k, t in response.answers.items()}
    carried = carry(version, answers)
    marks = []
    for part in version.parts:
        for blank in part.blanks:
            marks.append(_mark(version, blank, part.tolerance, response.answers.get(blank.id), answers, carried))
    if any(m.verdict == "wrong" for m in marks):  # check's diagnosis, once for all the student's answers
        graded = {m.blank.id: max(0, -(m.tolerance * 2).normalize().as_tuple().exponent) for m in marks}
        causes = diagnosed(version, response.answers, graded)
        marks = [m if m.verdict != "wrong" else replace(m, cause=causes.get(m.blank.id) or cause_of(
            version, m.blank, m.text, answers, m.tolerance)) for m in marks]  # a slip of one entry: cause_of
    return Graded(response, version, tuple(marks))


def _mark(version: GradedVersion, blank: GradedBlank, tol: Decimal, text: str | None,
          answers: dict[str, Decimal | None], carried) -> Mark:
    value, alt, refused = answers.get(blank.id), carried.values.get(blank.id), carried.refused.get(blank.id)
    if text is None:
        return Mark(blank, None, "missing", tol, alt, refused)
    if value is None:
        return Mark(blank, text, "invalid", tol, alt, refused)
    if within(value, blank.answer, tol):
        return Mark(blank, text, "right", tol)
    if alt is not None and within(value, alt, tol):
        return Mark(blank, text, "carried", tol, alt)
    return Mark(blank, text, "wrong", tol, alt, refused)  # its cause: grade()
