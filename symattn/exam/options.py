"""What makes an exam: the options that, with the seed, always give the same files."""

from __future__ import annotations

from dataclasses import dataclass

from ..kinds import EXAM_DEFAULT
from ..numbers.display import DEFAULT_DIGITS
from .students import Student


@dataclass(frozen=True)
class ExamOptions:
    """Everything that makes an exam; the same options always give the same files."""

    count: int
    seed: int
    kind: str = EXAM_DEFAULT
    difficulty: str = "easy"
    lang: str = "en"
    digits: int = DEFAULT_DIGITS
    # fair versions (exam/fair.py, exam/points.py): the shape every version shares (None: drawn once from the
    # seed) and the parts asked, as letters a-e (None: all)
    tokens: int | None = None
    d_k: int | None = None
    parts: tuple[str, ...] | None = None
    # The paper's heading (drivers/paper_head.py), as typed; None: not printed (title: the language's own).
    # time_allowed: a whole number of minutes, or any text printed as it is. students: one version each, in order.
    title: str | None = None
    course: str | None = None
    date: str | None = None
    time_allowed: str | None = None
    students: tuple[Student, ...] = ()
    points: tuple[tuple[str, int], ...] | None = None  # --points: each asked part's (letter, points); None: by work
    paper: str = "a4"  # --paper: a4 or letter (typeset.layout.PAPERS)
