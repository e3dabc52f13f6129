"""The pieces of a flow figure: boxes on a grid (each line math or a language string), the arrows between them, and
the gaps between columns (figures/flow.py lays the figures out, render/figures/blocks.py the chains' block figures)."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

# Millimetres: the usual gap between columns, the gap where branches carry labels, how far a branch leaves its
# box, where a branch's label sits from the branch, and the space between rows.
GAP, LABELLED_GAP, STUB, LABEL_AT, ROW_SPACE = 7, 14, 4, 5, 4


@dataclass(frozen=True)
class Line:
    """One line of a box: math (LaTeX) or the language string `key` with its parameters."""

    kind: Literal["math", "text"]
    content: str
    params: dict[str, Any] = field(default_factory=dict)


def math(latex: str) -> Line:
    return Line("math", latex)


def text(key: str, **params: Any) -> Line:
    return Line("text", f"figure.{key}", params)


@dataclass(frozen=True)
class Box:
    name: str
    col: int
    row: Fraction
    lines: tuple[Line, ...]
    tint: Literal["step", "output", "none"] = "step"  # "none": no frame (the ⋮ between many heads)


@dataclass(frozen=True)
class Arrow:
    """right: same row, edge to edge; down: same column; elbow: right, then down into the target's top; fork: one
    source branching to several targets (labels on the branches); merge: several sources into one target."""

    how: Literal["right", "down", "elbow", "fork", "merge"]
    sources: tuple[str, ...]
    targets: tuple[str, ...]
    labels: tuple[str, ...] = ()  # math over each branch (fork) or over the arrow (right)


@dataclass(frozen=True)
class Flow:
    boxes: tuple[Box, ...]
    arrows: tuple[Arrow, ...]
    gaps: tuple[float, ...]  # mm after each column but the last
