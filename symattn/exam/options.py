"""What makes an exam: the options that, with the seed, always give the same files."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ExamOptions:
    """Everything that makes an exam; the same options always give the same files."""

    count: int
    seed: int
    kind: str = "self_attention"
    difficulty: str = "easy"
    lang: str = "en"
    digits: int = 4


@dataclass(frozen=True)
class Share:
    """One version's part of a driver's files: the text the driver wrote for it (in a worker), with the label and
    points the files list."""

    label: str
    points: int
    text: str
