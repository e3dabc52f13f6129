"""What an exam driver is: one output of an exam, written from the versions' Exercises."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol

from ..exercise import Exercise
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
