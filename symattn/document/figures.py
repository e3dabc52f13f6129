"""A flow figure as data: boxes on a grid (each line math or a language string), the arrows between them, and the
gaps between columns (mm). The package's flow figures are laid out from these by render/figures/flow.py; a kind may
draw its own (FlowFigure.drawing), and every format draws it from this data alone."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

# Millimetres between two columns of boxes: the usual gap, and the gap where branches carry labels (W_Q, W_K, W_V)
GAP, LABELLED_GAP = 7, 14


@dataclass(frozen=True)
class Line:
    """One line of a box: math (LaTeX) or the language string `key` with its parameters."""

    kind: Literal["math", "text"]
    content: str
    params: dict[str, Any] = field(default_factory=dict, hash=False)  # (a figure is hashed: memo of its drawing)


def math(latex: str) -> Line:
    return Line("math", latex)


def text(key: str, **params: Any) -> Line:
    """A line of the package's figure strings (figure.<key>)."""
    return Line("text", f"figure.{key}", params)


def words(key: str, **params: Any) -> Line:
    """A line of any language string, by its whole key (a kind's own: "<kind>.box_score")."""
    return Line("text", key, params)


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
