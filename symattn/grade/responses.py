"""Students' answers from a responses CSV: symattn's own (student, version, one column per blank id) or Moodle's
quiz Responses report downloaded as CSV (one cloze question per student; each response summarised as
"part 1: 0.92; part 2: 1.24; ..."). Every problem is a one-line error naming the row and the column."""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from ..errors import SpecError
from ..exam.students import name_problem
from ..infra.inputs import read_input_text
from .exam import Exam, GradedVersion
from .numbers import parse_answer, rounded

MAX_ROWS = 100_000
_MOODLE_RESPONSE = re.compile(r"Response \S+")
_MOODLE_RIGHT = re.compile(r"Right answer \S+")
_DIGITS = re.compile(r"[0-9]{1,9}")
_IDENTITY = ("ID number", "Email address", "Username")  # Moodle's identity columns, the first one present is used


@dataclass(frozen=True)
class Response:
    """One student's answers: the CSV row (from 1, the header is row 1), name, version label, each blank's text by
    id (None: left blank), the identity Moodle gave them (its column and value, e.g. ("Email address", "a@b")),
    and what was set aside on the row (a cell of another version's blank)."""

    row: int
    student: str
    version: str
    answers: dict[str, str | None]
    identity: tuple[str, str] | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Unread:
    """A row that could not be graded (its version unreadable, its answers of no version): the student is listed
    in grades.csv and the report with the reason, every other row is graded."""

    row: int
    student: str
    version: str
    reason: str
    identity: tuple[str, str] | None = None


@dataclass(frozen=True)
class Responses:
    responses: tuple[Response, ...]
    skipped: tuple[int, ...] = ()  # rows of a Moodle report without an attempt ("-")
    unread: tuple[Unread, ...] = ()
    warnings: tuple[str, ...] = ()  # columns or cells ignored, once each


class _Unreadable(Exception):
    """A row's problem that is that student's alone (the row is listed, not graded)."""


def read_responses(path: Path, exam: Exam) -> Responses:
    """The responses of a CSV file, in either format (Moodle's when it has a `Response N` column)."""
    return parse_responses(read_responses_text(path), path.name, exam)


def read_responses_text(path: Path) -> str:
    """The text of a responses CSV (infra/inputs.py: a regular file of bounded size), read before exam.json so
    that a file over the limit is refused at once, not after a 1,000-version exam.json is loaded."""
    return read_input_text(path, str(path))


def parse_responses(text: str, name: str, exam: Exam) -> Responses:
    """The responses of a CSV text (`name`: the file's, in errors)."""
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
        _plain(name, header, rows[1:], exam)
    _no_duplicates(name, (*result.responses, *result.unread))
    return result


# ---------------------------------------------------------------- symattn's format


def _plain(name: str, header: list[str], rows: list[list[str]], exam: Exam) -> Responses:
    for required in ("student", "version"):
        if required not in header:
            raise SpecError(f"{name} row 1", f"no column {required!r} (expected student, version and one column "
                                             "per blank id of exam.json)")
    owner = {b.id: v.label for v in exam.versions.values() for b in v.blanks}
    warnings = []
    unknown = [column for column in header if column not in ("student", "version") and column not in owner]
    if unknown:
        warnings.append(f"{name}: {len(unknown)} columns that are no blank id of exam.json are ignored: "
                        f"{_listed(unknown)}")
    if len(set(header)) != len(header):
        twice = next(h for h in header if header.count(h) > 1 and h not in unknown)
        raise SpecError(f"{name} row 1", f"column {twice!r} appears twice")
    index = {column: k for k, column in enumerate(header) if column not in unknown}
    out, unread, longer = [], [], []
    for number, cells in enumerate(rows, start=2):
        if len(cells) > len(header):
            longer.append(number)
        cells = cells[:len(header)] + [""] * (len(header) - len(cells))
        student = _student(name, number, "student", cells[index["student"]])
        typed = cells[index["version"]].strip()
        try:
            version = _version(typed, exam)
        except _Unreadable as exc:
            unread.append(Unread(number, student, typed, f"column version: {exc}"))
            continue
        missing = [b.id for b in version.blanks if b.id not in index]
        if missing:
            typo = f"; is {unknown[0]!r}, which is no blank id, meant?" if unknown else ""
            raise SpecError(f"{name} row {number}", f"no column {missing[0]} (version {version.label} has that "
                                                    f"blank; add the column, empty where not answered{typo})")
        answers = {b.id: cells[index[b.id]].strip() or None for b in version.blanks}  # not a number: marked so
        notes: list[str] = []
        # a cell of another version's blank: counted at C speed (most cells are empty), found only if there is one
        if len(cells) - cells.count("") > 2 + sum(1 for b in version.blanks if cells[index[b.id]]):
            foreign = [column for column, text in zip(header, cells, strict=True)
                       if text.strip() and column in owner and owner[column] != version.label]
            if foreign:
                notes.append(f"answers in {len(foreign)} blanks of another version ignored ({_listed(foreign)})")
        out.append(Response(number, student, version.label, answers, None, tuple(notes)))
    if longer:
        warnings.append(f"{name}: the cells past the header's {len(header)} columns are ignored (rows "
                        f"{_listed(list(map(str, longer)))})")
    return Responses(tuple(out), (), tuple(unread), tuple(warnings))


def _listed(items: list[str], most: int = 5) -> str:
    shown = ", ".join(items[:most])
    return shown if len(items) <= most else f"{shown}, ... ({len(items)} in all)"


def _student(name: str, number: int, column: str, text: str) -> str:
    """A row's student (NFC, so that é and e + U+0301 are one student), checked as a class list's names are."""
    value = unicodedata.normalize("NFC", text.strip())
    if not value:
        raise SpecError(f"{name} row {number}, column {column}", "empty: every row needs the student's name")
    problem = name_problem(value)
    if problem:
        raise SpecError(f"{name} row {number}, column {column}", problem)
    return value


def _version(text: str, exam: Exam) -> GradedVersion:
    """The version a row names: its label as exam.json has it ("07"), or "7", "v07", "Version 07"."""
    key = re.sub(r"^(version\s*|v)", "", text.strip(), flags=re.IGNORECASE)
    if key in exam.versions:
        return exam.versions[key]
    if _DIGITS.fullmatch(key):  # ASCII digits only ("²" and "٤" are not a version), and few of them
        for label, version in exam.versions.items():
            if _DIGITS.fullmatch(label) and int(label) == int(key):
                return version
    labels = list(exam.versions)
    shown = repr(text.strip()) if len(text.strip()) <= 20 else repr(text.strip()[:20] + "...")
    raise _Unreadable(f"no version {shown} in exam.json (it has {labels[0]} to {labels[-1]})")


def _no_duplicates(name: str, responses) -> None:
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
    empty summary; a last one left empty ends the summary in "part 3: ", whose space a CSV reader may strip)."""
    if re.search(r"(^|; )part \d+:$", summary):
        summary += " "
    if not summary.startswith("part 1: "):
        raise SpecError(field, f"expected a cloze response summary ('part 1: ...; part 2: ...'), got {summary[:40]!r}")
    out, at, k = [], len("part 1: "), 1
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
    identity = next((h for h in _IDENTITY if h in header), None)
    index = _answer_index(exam)
    out, skipped, unread = [], [], []
    for number, cells in enumerate(rows, start=2):
        cells = cells + [""] * (len(header) - len(cells))
        summary = cells[column].strip()
        if summary in ("", "-"):
            skipped.append(number)
            continue
        parts = [_student(name, number, h, cells[header.index(h)]) for h in ("First name", "Last name")
                 if h in header and cells[header.index(h)].strip()]
        who = _student(name, number, identity, cells[header.index(identity)]) if identity is not None and \
            cells[header.index(identity)].strip() else None
        student = f"{' '.join(parts)} ({who})".strip() if who else " ".join(parts)
        if not student:
            raise SpecError(f"{name} row {number}, column First name", "empty: every row needs the student's name")
        ident = (identity, who) if identity is not None and who else None
        step = header[chosen] if chosen is not None else header[right] if right is not None else header[column]
        try:
            if chosen is not None:
                version = _version(cells[chosen], exam)
            elif right is not None:
                version = _by_right_answer(cells[right], index, exam)
            else:
                version = next(iter(exam.versions.values()))
            step = header[column]
            texts = _parts(summary)
            if len(texts) != len(version.blanks):
                raise _Unreadable(f"{len(texts)} answers, but version {version.label} has {len(version.blanks)} "
                                  "blanks")
        except _Unreadable as exc:
            typed = cells[chosen].strip() if chosen is not None else ""
            unread.append(Unread(number, student, typed, f"column {step}: {exc}", ident))
            continue
        answers = {b.id: (t.strip() or None) for b, t in zip(version.blanks, texts, strict=True)}
        out.append(Response(number, student, version.label, answers, ident))
    return Responses(tuple(out), tuple(skipped), tuple(unread))


def _parts(summary: str) -> list[str]:
    try:
        return moodle_parts(summary, "")
    except SpecError as exc:
        raise _Unreadable(exc.problem) from None


def _key(values) -> tuple[str, ...]:
    return tuple(format(rounded(v, 8), "f") for v in values)  # exact at any size (1e20 and more)


def _answer_index(exam: Exam) -> dict[tuple[str, ...], str]:
    """Each version by its answers (to 8 decimals: Moodle's right answers are written to 12)."""
    return {_key(b.answer for b in v.blanks): v.label for v in exam.versions.values()}


def _by_right_answer(summary: str, index: dict[tuple[str, ...], str], exam: Exam) -> GradedVersion:
    values = [parse_answer(t) for t in _parts(summary.strip())]
    label = index.get(_key(values)) if None not in values else None
    if label is None:
        raise _Unreadable("these right answers are those of no version of exam.json (a different exam?)")
    return exam.versions[label]
