"""A class list (`--students class.csv`): one exam version per student, whose name and id the paper prints.

The file is CSV in UTF-8 (with or without a byte order mark) with a header row naming the columns `id` and
`name` (any others are ignored); every error names its row (the header is row 1) and column.
"""

from __future__ import annotations

import csv
import io
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from ..errors import SpecError
from ..infra.inputs import read_input

OPTION = "--students"
MAX_LENGTH = 80  # characters of a name or an id: more would not fit the paper's running head
COLUMNS = ("id", "name")


@dataclass(frozen=True)
class Student:
    """One row of the class list."""

    id: str
    name: str


def read_students(path: Path, max_count: int) -> tuple[Student, ...]:
    """The students of a class list, in its order; SpecError naming the row and column of the first problem."""
    data = read_input(path, OPTION)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        row = data[:exc.start].count(b"\n") + 1
        raise SpecError(OPTION, f"{path} row {row}: not UTF-8 (save the class list as UTF-8 CSV)") from None
    return parse_students(text, str(path), max_count)


def parse_students(text: str, source: str, max_count: int) -> tuple[Student, ...]:
    """The students of a class list's text (`source` names it in errors)."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[tuple[int, list[str]]] = []  # each row with the line it starts on (a quoted cell may span lines)
    while True:
        start = reader.line_num + 1
        try:
            rows.append((start, next(reader)))
        except StopIteration:
            break
        except csv.Error as exc:
            raise SpecError(OPTION, f"{source} row {start}: not valid CSV ({exc})") from None
    rows = [(number, row) for number, row in rows if any(cell.strip() for cell in row)]  # blank lines skipped
    if not rows:
        raise SpecError(OPTION, f"{source} is empty: expected a header row with the columns id and name")
    header_row, header = rows[0]
    names = [cell.strip().lower() for cell in header]
    missing = [column for column in COLUMNS if column not in names]
    if missing:
        raise SpecError(OPTION, f"{source} row {header_row}: no column {' or '.join(missing)} in the header "
                                f"(expected the columns id and name, got {', '.join(map(repr, header))})")
    for column in COLUMNS:  # which of two would be meant is anyone's guess
        found = [i + 1 for i, name in enumerate(names) if name == column]
        if len(found) > 1:
            raise SpecError(OPTION, f"{source} row {header_row}: the header names the column {column} "
                                    f"{len(found)} times (columns {', '.join(map(str, found))}); expected it once")
    where = {column: names.index(column) for column in COLUMNS}
    students: list[Student] = []
    seen: dict[str, int] = {}
    for number, row in rows[1:]:
        values = {column: cell(row, where[column], number, column, source) for column in COLUMNS}
        if values["id"] in seen:
            raise SpecError(OPTION, f"{source} row {number}, column id: {values['id']!r} is already the id of "
                                    f"row {seen[values['id']]} (every student needs an id of their own)")
        seen[values["id"]] = number
        students.append(Student(values["id"], values["name"]))
    if not students:
        raise SpecError(OPTION, f"{source} lists no students (only the header row)")
    if len(students) > max_count:
        raise SpecError(OPTION, f"{source} lists {len(students)} students: at most {max_count} versions")
    return tuple(students)


def cell(row: list[str], index: int, number: int, column: str, source: str) -> str:
    """One cell of a student's row, stripped and checked: present, one line, printable, not too long."""
    value = unicodedata.normalize("NFC", row[index].strip()) if index < len(row) else ""
    problem = name_problem(value)
    if problem:
        raise SpecError(OPTION, f"{source} row {number}, column {column}: {problem}")
    return value


# What a name or an id may not hold: it would print as nothing, reorder the text around it (U+202E), or end a line.
_UNPRINTABLE = {"Cc": "a control character", "Cf": "an invisible format character", "Cs": "a lone surrogate",
                "Co": "a private-use character", "Cn": "an unassigned character", "Zl": "a line break",
                "Zp": "a line break"}
_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85"


def name_problem(value: str) -> str | None:
    """Why a student's name or id (stripped, NFC) cannot be printed or matched, or None: the class list's rule,
    which `symattn grade` applies to the names of a responses sheet too."""
    if not value:
        return "empty (every student needs an id and a name)"
    for char in value:
        what = "a line break" if char in _BREAKS else _UNPRINTABLE.get(unicodedata.category(char))
        if what:
            return f"{what} (U+{ord(char):04X}) in {_shown(value)} (expected one line of printable text)"
    if len(value) > MAX_LENGTH:
        return f"{len(value)} characters, at most {MAX_LENGTH}"
    return None


def _shown(value: str) -> str:
    """A name as an error quotes it: escaped (control characters as \\x..), at most 40 characters."""
    text = ascii(value[:40]) if any(unicodedata.category(c)[0] == "C" for c in value) else repr(value[:40])
    return text if len(value) <= 40 else text[:-1] + "...'"


# Scripts the PDFs' fonts have (T1 Latin, upLaTeX's Japanese fonts with their Greek and Cyrillic): a letter of
# another (Arabic, Hebrew, Devanagari, Thai, Hangul, ...) prints as an empty box.
_PRINTED_SCRIPTS = ("LATIN", "GREEK", "CYRILLIC", "CJK", "HIRAGANA", "KATAKANA", "FULLWIDTH", "HALFWIDTH")


def unprinted(value: str) -> str | None:
    """The first letter of a name the PDFs cannot print (its Unicode name), or None."""
    for char in value:
        if unicodedata.category(char)[0] == "L" and not unicodedata.name(char, "").startswith(_PRINTED_SCRIPTS):
            return unicodedata.name(char, f"U+{ord(char):04X}")
    return None


def check_class(count: int, students: tuple[Student, ...]) -> None:
    """A class list gives one version per student: the count of versions must be the number of students."""
    if students and count != len(students):
        raise SpecError("--count", f"{count} versions, but the class list has {len(students)} students (with "
                                   f"{OPTION}, leave out --count: each student gets a version of their own)")


def unprinted_names(students: tuple[Student, ...], source: str) -> list[str]:
    """A warning for each student whose name the PDFs print with an empty box, naming the row and the letter."""
    out = []
    for student in students:
        letter = unprinted(student.name) or unprinted(student.id)
        if letter:
            out.append(f"{source}: {student.name!r} (id {student.id}): the PDFs print {letter} as an empty box "
                       "(TeX here has no font with it)")
    return out
