"""Every answer blank of an exam version with a stable id, in the order the paper and the Moodle cloze ask them.

Id scheme (exam.json's `parts[].blanks[].id`, the column names of a grading CSV):
`v<label>.<part>.<symbol>.<column>` for an entry of a vector and `v<label>.<part>.<symbol>.<row>.<column>` for an
entry of a table column: `v01.b.s.3` is the third raw score of version 01, `v01.a.K.2.1` the first entry of the
second token's key. <part> is the part's letter (a, b, ... in the order the paper asks them); <symbol> is the
answer's name without its token: the base letter, then the head (`Q1`, `w2`; a K/V group as `g1`), then `_` and
a fixed label (`z_concat`, `z_final`); rows and columns count from 1. Derived from the Exercise's parts and
answers alone, for any kind. Order: part by part, answer by answer; a vector entry by entry, a table row by row
(each token's columns in the header's order), as the Moodle driver writes its blanks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from string import ascii_lowercase

from sympy import Expr

from ..document.phrases import Name
from ..engine import Numbers
from ..engine import entries as rows_of
from ..exercises.exercise import AnswerTable, Exercise, Part


@dataclass(frozen=True)
class Blank:
    """One answer blank: its id, its part (index into the Exercise's parts and letter), what it is an entry of
    (symbol, name's base, head and label) and where (row, column from 1), and its exact value."""

    id: str
    part: int
    letter: str
    symbol: str
    base: str
    head: int | None
    label: str | None
    row: int
    column: int
    value: Expr
    known: Numbers | None = None


def letter(index: int) -> str:
    """The letter of the part at `index` (0 -> a)."""
    return ascii_lowercase[index]


def symbol(name: Name | str, position: int) -> str:
    """The id's symbol of an answer named `name`: ASCII letters and digits of its base (else m<position>), the
    head, and `_label`; a column named by a language key (a kind's "<kind>.rank"), its last word."""
    if isinstance(name, str):
        return re.sub(r"[^A-Za-z0-9]", "", name.rsplit(".", 1)[-1]) or f"m{position}"
    base = re.sub(r"[^A-Za-z0-9]", "", name.base) or f"m{position}"
    head = "" if name.head is None else str(name.head)
    head += "" if name.group is None else f"g{name.group}"  # grouped-query's K/V head
    label = "" if name.label is None else "_" + re.sub(r"[^A-Za-z0-9]", "", name.label)
    return base + head + label


def part_blanks(label: str, index: int, part: Part) -> list[Blank]:
    """A part's blanks in order."""
    out: list[Blank] = []
    seen: set[str] = set()
    for position, answer in enumerate(part.answers, start=1):
        if isinstance(answer, AnswerTable):
            columns = [(_Entries(label, index, _unique(symbol(name, position), seen, position), name, column.known),
                        rows_of(column.values)) for name, column in zip(answer.header[1:], answer.columns, strict=True)]
            for i in range(len(answer.tokens)):
                for entries, matrix in columns:
                    out += [entries.blank(i + 1, j + 1, v, True) for j, v in enumerate(matrix[i])]
            continue
        entries = _Entries(label, index, _unique(symbol(answer.name, position), seen, position), answer.name,
                           answer.values.known)
        matrix = rows_of(answer.values.values)
        out += [entries.blank(i + 1, j + 1, v, len(matrix) > 1) for i, values in enumerate(matrix)
                for j, v in enumerate(values)]
    return out


def blanks(exercise: Exercise) -> list[Blank]:
    """Every blank of a version, part by part."""
    return [blank for index, part in enumerate(exercise.parts) for blank in part_blanks(exercise.label, index, part)]


def _unique(sym: str, seen: set[str], position: int) -> str:
    """A symbol not used yet in the part (two answers of one name: the later one gets its position)."""
    if sym in seen:
        sym = f"{sym}_{position}"
    seen.add(sym)
    return sym


class _Entries:
    """The blanks of one answer (a vector, or a table's column): what they share, worked out once."""

    def __init__(self, label: str, index: int, sym: str, name: Name | str, known: Numbers | None) -> None:
        if isinstance(name, str):  # a column named by a language key: no head, no label
            name = Name(sym)
        self.prefix = f"v{label}.{letter(index)}.{sym}."
        self.shared = (index, letter(index), sym, name.base, name.head, name.label)
        self.known = known

    def blank(self, row: int, column: int, value: Expr, table: bool) -> Blank:
        where = f"{row}.{column}" if table else str(column)
        return Blank(self.prefix + where, *self.shared, row, column, value, self.known)
