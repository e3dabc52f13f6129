"""Students' answers from a responses CSV: symattn's own (student, version, one column per blank id) or Moodle's
quiz Responses report downloaded as CSV (one cloze question per student; each response summarised as
"part 1: 0.92; part 2: 1.24; ..."). Every problem is a one-line error naming the row and the column."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from ..errors import SpecError
from ..infra.inputs import read_input_text
from .exam import Exam, GradedVersion
from .numbers import MAX_FIGURES, parse_answer

MAX_ROWS = 100_000
_MOODLE_RESPONSE = re.compile(r"Response \S+")
_MOODLE_RIGHT = re.compile(r"Right answer \S+")
_IDENTITY = ("ID number", "Email address", "Username")  # Moodle's identity columns, the first one present is used


@dataclass(frozen=True)
class Response:
    """One student's answers: the CSV row (from 1, the header is row 1), name, version label, and each blank's
    text by id (None: left blank)."""

    row: int
    student: str
    version: str
    answers: dict[str, str | None]


@dataclass(frozen=True)
class Responses:
    responses: tuple[Response, ...]
    skipped: tuple[int, ...] = ()  # rows of a Moodle report without an attempt ("-")


def read_responses(path: Path, exam: Exam) -> Responses:
    """The responses of a CSV file, in either format (Moodle's when it has a `Response N` column)."""
    name = path.name
    text = read_input_text(path, str(path))
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise SpecError(name, f"not a CSV file: {exc}") from None
    rows = [r for r in rows if any(cell.strip() for cell in r)]
    if not rows:
        raise SpecError(name, "empty: expected a header row and one row per student")
    if len(rows) > MAX_ROWS:
        raise SpecError(name, f"{len(rows)} rows, at most {MAX_ROWS} are read")
    header = [h.strip() for h in rows[0]]
    moodle = [h for h in header if _MOODLE_RESPONSE.fullmatch(h)]
    result = _moodle(name, header, rows[1:], exam, moodle) if moodle and "student" not in header else \
        Responses(tuple(_plain(name, header, rows[1:], exam)))
    _no_duplicates(name, result.responses)
    return result


# ---------------------------------------------------------------- symattn's format


def _plain(name: str, header: list[str], rows: list[list[str]], exam: Exam) -> list[Response]:
    for required in ("student", "version"):
        if required not in header:
            raise SpecError(f"{name} row 1", f"no column {required!r} (expected student, version and one column "
                                             "per blank id of exam.json)")
    owner = {b.id: v.label for v in exam.versions.values() for b in v.blanks}
    for k, column in enumerate(header, start=1):
        if column not in ("student", "version") and column not in owner:
            raise SpecError(f"{name} row 1, column {k}", f"{column!r} is not a blank id of exam.json "
                                                         "(ids look like v01.b.s.3)")
    if len(set(header)) != len(header):
        twice = next(h for h in header if header.count(h) > 1)
        raise SpecError(f"{name} row 1", f"column {twice!r} appears twice")
    index = {column: k for k, column in enumerate(header)}
    out = []
    for number, cells in enumerate(rows, start=2):
        if len(cells) > len(header):
            raise SpecError(f"{name} row {number}", f"{len(cells)} cells, but the header has {len(header)} columns")
        cells = cells + [""] * (len(header) - len(cells))
        student = _student(name, number, cells[index["student"]])
        version = _version(name, number, "version", cells[index["version"]], exam)
        answers: dict[str, str | None] = {}
        for blank in version.blanks:
            if blank.id not in index:
                raise SpecError(f"{name} row {number}", f"no column {blank.id} (version {version.label} has that "
                                                        "blank; add the column, empty where not answered)")
            typed = cells[index[blank.id]].strip()
            if typed and parse_answer(typed) is None:
                raise SpecError(f"{name} row {number}, column {blank.id}",
                                f"expected a number (of at most {MAX_FIGURES} significant digits), got {typed!r}")
            answers[blank.id] = typed or None
        # a cell of another version's blank: counted at C speed (most cells are empty), found only if there is one
        if len(cells) - cells.count("") > 2 + sum(1 for b in version.blanks if cells[index[b.id]]):
            for column, typed in zip(header, cells, strict=True):
                if typed.strip() and column in owner and owner[column] != version.label:
                    raise SpecError(f"{name} row {number}, column {column}", f"a blank of version {owner[column]}, "
                                                                             f"but {student!r} answers version "
                                                                             f"{version.label}")
        out.append(Response(number, student, version.label, answers))
    return out


def _student(name: str, number: int, text: str) -> str:
    if not text.strip():
        raise SpecError(f"{name} row {number}, column student", "empty: every row needs the student's name")
    return text.strip()


def _version(name: str, number: int, column: str, text: str, exam: Exam) -> GradedVersion:
    """The version a row names: its label as exam.json has it ("07"), or "7", "v07", "Version 07"."""
    key = re.sub(r"^(version\s*|v)", "", text.strip(), flags=re.IGNORECASE)
    if key in exam.versions:
        return exam.versions[key]
    if key.isdigit():
        for label, version in exam.versions.items():
            if label.isdigit() and int(label) == int(key):
                return version
    labels = list(exam.versions)
    raise SpecError(f"{name} row {number}, column {column}",
                    f"no version {text.strip()!r} in exam.json (it has {labels[0]} to {labels[-1]})")


def _no_duplicates(name: str, responses: tuple[Response, ...]) -> None:
    seen: dict[str, int] = {}
    for response in responses:
        if response.student in seen:
            raise SpecError(f"{name} row {response.row}, column student",
                            f"{response.student!r} is on row {seen[response.student]} already (one row per student)")
        seen[response.student] = response.row


# ---------------------------------------------------------------- Moodle's Responses report


def moodle_parts(summary: str, field: str) -> list[str]:
    """The blanks' answers of a cloze response summary, in order: Moodle's multianswer question joins its
    subquestions' summaries as "part 1: 0.92; part 2: ; part 3: 1.5" (an unanswered numerical blank has an
    empty summary)."""
    out, at = [], 0
    k = 1
    if not summary.startswith("part 1: "):
        raise SpecError(field, f"expected a cloze response summary ('part 1: ...; part 2: ...'), got {summary[:40]!r}")
    at = len("part 1: ")
    while True:
        marker = f"; part {k + 1}: "
        end = summary.find(marker, at)
        if end < 0:
            out.append(summary[at:])
            return out
        out.append(summary[at:end])
        at, k = end + len(marker), k + 1


def _moodle(name: str, header: list[str], rows: list[list[str]], exam: Exam, responses: list[str]) -> Responses:
    if len(responses) > 1:
        raise SpecError(f"{name} row 1", f"{len(responses)} Response columns ({', '.join(responses)}): expected "
                                         "one, the exam's cloze question")
    column = header.index(responses[0])
    right = next((k for k, h in enumerate(header) if _MOODLE_RIGHT.fullmatch(h)), None)
    chosen = next((k for k, h in enumerate(header) if h.lower() == "version"), None)
    if chosen is None and right is None and len(exam.versions) > 1:
        raise SpecError(f"{name} row 1", "a Moodle report needs a 'Right answer' column (tick 'Right answer' in the "
                                         "report's options) or a 'version' column to tell the versions apart")
    identity = next((header.index(h) for h in _IDENTITY if h in header), None)
    index = _answer_index(exam)
    out, skipped = [], []
    for number, cells in enumerate(rows, start=2):
        cells = cells + [""] * (len(header) - len(cells))
        summary = cells[column].strip()
        if summary in ("", "-"):
            skipped.append(number)
            continue
        where = f"{name} row {number}, column {header[column]!r}"
        student = " ".join(cells[header.index(h)].strip() for h in ("First name", "Last name") if h in header)
        if identity is not None and cells[identity].strip():
            student = f"{student} ({cells[identity].strip()})".strip()
        student = _student(name, number, student)
        if chosen is not None:
            version = _version(name, number, header[chosen], cells[chosen], exam)
        elif right is not None:
            version = _by_right_answer(f"{name} row {number}, column {header[right]!r}", cells[right], index, exam)
        else:
            version = next(iter(exam.versions.values()))
        texts = moodle_parts(summary, where)
        if len(texts) != len(version.blanks):
            raise SpecError(where, f"{len(texts)} answers, but version {version.label} has {len(version.blanks)} "
                                   "blanks")
        answers = {b.id: (t.strip() or None) for b, t in zip(version.blanks, texts, strict=True)}
        out.append(Response(number, student, version.label, answers))
    return Responses(tuple(out), tuple(skipped))


def _key(values) -> tuple[str, ...]:
    return tuple(format(v.quantize(Decimal("1e-8")), "f") for v in values)


def _answer_index(exam: Exam) -> dict[tuple[str, ...], str]:
    """Each version by its answers (to 8 decimals: Moodle's right answers are written to 12)."""
    return {_key(b.answer for b in v.blanks): v.label for v in exam.versions.values()}


def _by_right_answer(where: str, summary: str, index: dict[tuple[str, ...], str], exam: Exam) -> GradedVersion:
    values = [parse_answer(t) for t in moodle_parts(summary.strip(), where)]
    label = index.get(_key(values)) if None not in values else None
    if label is None:
        raise SpecError(where, "these right answers are those of no version of exam.json (a different exam?)")
    return exam.versions[label]
