"""The CSV files `symattn grade` writes: grades.csv (every student, graded or not, with a note), Moodle's grade
import CSV and Canvas's gradebook import CSV. Every cell of every file is neutralised against formula injection:
a spreadsheet runs a cell starting with =, +, -, @ (or a tab or carriage return) as a formula, so such a cell gets
a ' in front."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from ..render.escape import csv_cell
from .exam import Exam
from .feedback import points_text
from .mark import Graded
from .responses import Unread


def csv_text(rows: list[list[str]]) -> str:
    """CSV of rows, every cell neutralised (csv_cell)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerows([[csv_cell(str(cell)) for cell in row] for row in rows])
    return out.getvalue()


@dataclass(frozen=True)
class Row:
    """One student of the class as the exports list them: graded (`graded`) or not (`unread`), their class-list
    entry (id, name, version) if any, and the notes on them (not on the class list, ...)."""

    student: str
    graded: Graded | None
    unread: Unread | None
    entry: tuple[str, str, str] | None
    notes: tuple[str, ...]

    @property
    def row(self) -> int:
        return self.graded.response.row if self.graded else self.unread.row  # type: ignore[union-attr]

    @property
    def identity(self) -> tuple[str, str] | None:
        return self.graded.response.identity if self.graded else self.unread.identity  # type: ignore[union-attr]


def grades_csv(rows: list[Row], exam: Exam) -> str:
    """grades.csv: student, (id with a class list), version, the points of each part, total, note; points to two
    decimals at most. A row not graded has its reason as its note and no points."""
    letters = list(dict.fromkeys(p.letter for r in rows if r.graded for p in r.graded.version.parts))
    listed = bool(exam.students)
    table = [["student", *(["id"] if listed else []), "version", *letters, "total", "note"]]
    for r in rows:
        ids = [r.entry[0] if r.entry else ""] if listed else []
        if r.graded is None:
            table.append([r.student, *ids, r.unread.version, *([""] * len(letters)), "", "; ".join(r.notes)])
            continue
        g = r.graded
        points = {p.letter: points_text(g.points(p)) for p in g.version.parts}
        table.append([r.student, *ids, g.version.label, *(points.get(k, "") for k in letters), points_text(g.total),
                      "; ".join(r.notes)])
    return csv_text(table)


def possible(rows: list[Row]) -> int:
    """The points of the paper (the largest version total, should versions differ)."""
    return max((r.graded.version.points for r in rows if r.graded), default=0)


def moodle_csv(rows: list[Row], item: str) -> tuple[str, list[Row]]:
    """Moodle's grade import CSV (Grades > Import > CSV file): `ID number`, `Email address`, `Username` (the
    identities known), the student's name, and the grade item's column; and the graded rows left out because
    no identity is known (no class-list id, no Moodle identity)."""
    columns = ["ID number", "Email address", "Username"]
    found, left = [], []
    for r in rows:
        if r.graded is None:
            continue
        ident = dict([r.identity]) if r.identity else {}
        values = {"ID number": r.entry[0] if r.entry else ident.get("ID number", ""),
                  "Email address": ident.get("Email address", ""), "Username": ident.get("Username", "")}
        (found if any(values.values()) else left).append((r, values))
    used = [c for c in columns if any(values[c] for _, values in found)] or ["ID number"]
    table = [[*used, "Full name", item]]
    for r, values in found:
        name = r.entry[1] if r.entry else r.student
        table.append([*(values[c] for c in used), name, points_text(r.graded.total)])  # type: ignore[union-attr]
    return csv_text(table), [r for r, _ in left]


def canvas_csv(rows: list[Row], item: str) -> tuple[str, list[Row]]:
    """Canvas's gradebook import CSV (Grades > Import): Student, ID, SIS User ID, SIS Login ID, Section, then the
    assignment's column, its points possible on the second row as Canvas's own export writes them. Students are
    matched by SIS User ID, the class list's id; the graded rows without one are left out (and returned)."""
    table = [["Student", "ID", "SIS User ID", "SIS Login ID", "Section", item],
             ["    Points Possible", "", "", "", "", str(possible(rows))]]
    left = []
    for r in rows:
        if r.graded is None:
            continue
        if r.entry is None:
            left.append(r)
            continue
        table.append([r.entry[1], "", r.entry[0], "", "", points_text(r.graded.total)])
    return csv_text(table), left
