"""What an exam driver is: one output of an exam, written from the versions' Exercises."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Protocol

from ...exercises.exercise import Exercise
from ...infra.memo import ByIdentity
from ..options import ExamOptions


@dataclass(frozen=True)
class Share:
    """One version's share of a driver's files, as the driver wrote it, with what the files list of it."""

    label: str
    points: int
    text: str


class Driver(Protocol):
    """An exam output: `version` runs once per version (in the worker processes), `files` once with every share."""

    name: ClassVar[str]  # the --format name

    def __init__(self, options: ExamOptions) -> None: ...

    def version(self, exercise: Exercise) -> str:
        """One version's share of the files."""
        ...

    def files(self, shares: list[Share]) -> dict[str, str | bytes]:
        """The files, by name, from every version's share, in order (text, or bytes: a zip)."""
        ...


class ByTable:
    """Each version's e^x table instruction, written once per table: exptable's table is one object for every
    version of an exam, so a text made from it is the same on each (kept by the table's identity: hashing its
    SymPy numbers would cost more than a look-up saves)."""

    def __init__(self, write: Callable[[tuple | None, str], str]) -> None:
        self.write = write
        self.texts: ByIdentity[str] = ByIdentity(16)  # tables made anew per version: a few kept

    def __call__(self, values: tuple | None, strings: str) -> str:
        return self.texts.get(values, strings, lambda: self.write(values, strings))


EXP_TABLE_COLUMNS = 4  # the e^x table's pairs of columns side by side (49 rows of easy: 13 lines)


def in_columns(items: list, count: int = EXP_TABLE_COLUMNS) -> list[list]:
    """Items read down `count` columns, as the rows of the table (None where the last column ends short)."""
    height = -(-len(items) // count)
    return [[items[c * height + r] if c * height + r < len(items) else None for c in range(count)]
            for r in range(height)]
