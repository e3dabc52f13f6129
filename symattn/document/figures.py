"""A flow figure as data: boxes on a grid (each line math or a language string), the arrows between them, the gaps
between columns (mm) and, for Markdown, the figure as a chain of math. The kind (or feature) whose flow it is builds
it (FlowFigure.drawing); every format draws it from this data alone (typeset/figures/flow.py: the geometry)."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

# Millimetres between two columns of boxes: the usual gap, and the gap where branches carry labels (W_Q, W_K, W_V)
GAP, LABELLED_GAP = 7, 14


@dataclass(frozen=True)
class Line:
    """One line of a box: math (LaTeX; with a number `value` in params, followed by that number as the renderer
    writes it) or the language string `key` with its parameters."""

    kind: Literal["math", "text"]
    content: str
    params: dict[str, Any] = field(default_factory=dict, hash=False)  # (a figure is hashed: memo of its drawing)


def math(latex: str, value: Any = None) -> Line:
    """LaTeX; `value`: a number written after it in the renderer's digits (a given divisor: ÷ 2.5)."""
    return Line("math", latex, {} if value is None else {"value": value})


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
    # Markdown (which draws no boxes) sets the figure as these lines of math, each of pieces: math Lines (LaTeX as
    # is) and text Lines (the language string as math text); none: the boxes column by column, joined by arrows.
    chain: tuple[tuple[Line, ...], ...] = ()
    tex_relax: bool = False  # LaTeX ends each length statement with \relax (render/latex.py says why)
