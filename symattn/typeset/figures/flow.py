"""The flow figures' layout for every format that draws them: a figure's boxes and arrows (document.figures, built
by the kind whose flow it is) with its numbers written by the renderer, its caption, and its geometry: LaTeX's picture
mode measures in TeX, HTML's SVG in Python, both through the same `geometry`.

A box holds lines, each math (LaTeX of a small subset, see figures/svg.py) or a language string; rows run down from 0
and may be halves (a box between two rows); columns run right with a gap after each.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ...document.steps import FlowFigure
from .boxes import LABEL_AT, ROW_SPACE, STUB, Box, Flow, Line, math, part


def layout(renderer, step: FlowFigure) -> Flow:
    """The figure's boxes, arrows and chain, each number in a math line written in the renderer's digits."""
    figure = step.drawing
    boxes = tuple(replace(box, lines=tuple(_written(renderer, line) for line in box.lines)) for box in figure.boxes)
    chain = tuple(tuple(_written(renderer, piece) for piece in line) for line in figure.chain)
    return replace(figure, boxes=boxes, chain=chain)


def _written(renderer, line: Line) -> Line:
    if line.kind != "math" or "value" not in line.params:
        return line
    return math(line.content + renderer.value(line.params["value"])[0])


def caption(renderer, step: FlowFigure) -> str:
    """The caption, numbered, with its note after it (its own leading space where the language spaces sentences)."""
    names = dict(step.names)
    note = renderer.text(step.note, names) if step.note else ""
    return renderer.text(step.caption, {"number": step.number, **names}) + note


def columns(figure: Flow) -> tuple[Line, ...]:
    """A figure without a chain of its own as one: its columns in order, joined by arrows, the boxes of a column
    side by side (each its math with its first language string under it; ⋮ and boxes without math left out)."""
    by_column: dict[int, list[tuple[Line, ...]]] = {}
    for box in figure.boxes:
        if box.tint != "none" and any(line.kind == "math" for line in box.lines):
            by_column.setdefault(box.col, []).append(part(box))
    pieces: list[Line] = []
    for c, parts in enumerate(parts for _, parts in sorted(by_column.items())):
        pieces += [math(r" \longrightarrow ")] if c else []
        for i, one in enumerate(parts):
            pieces += [*([math(r",\ ")] if i else []), *one]
    return tuple(pieces)


# ---------------------------------------------------------------- geometry, in the units of a backend

@dataclass(frozen=True)
class Placed:
    box: Box
    x: Any  # centre
    y: Any
    width: Any


@dataclass(frozen=True)
class Segment:
    """From (x, y) in direction (dx, dy) (one of the four), `length` long; arrow: with a head at its end."""

    x: Any
    y: Any
    dx: int
    dy: int
    length: Any
    arrow: bool = True


@dataclass(frozen=True)
class Label:
    x: Any  # centre
    y: Any  # baseline, just above the line it labels
    math: str


@dataclass(frozen=True)
class Drawing:
    width: Any
    height: Any  # y runs up from -box_height/2 to height - box_height/2
    box_height: Any
    boxes: tuple[Placed, ...]
    segments: tuple[Segment, ...]
    labels: tuple[Label, ...]


def geometry(figure: Flow, dims) -> Drawing:
    """Where everything goes. `dims` does the arithmetic of one backend's lengths: mm(x), width(box), height (of
    every box), widest(name, values) and fix(name, value) (a value computed once, in a length of that name)."""
    boxes = {b.name: b for b in figure.boxes}
    cols = 1 + max(b.col for b in figure.boxes)
    widths = {b.name: dims.width(b) for b in figure.boxes}
    colw, left = [], [dims.mm(0)]
    for c in range(cols):
        colw.append(dims.widest(f"w{c}", [widths[b.name] for b in figure.boxes if b.col == c]))
        if c + 1 < cols:
            left.append(dims.fix(f"l{c + 1}", left[c] + colw[c] + dims.mm(figure.gaps[c])))
    pitch = dims.fix("p", dims.height + dims.mm(ROW_SPACE))
    top = max(b.row for b in figure.boxes)
    centre = {b.name: (dims.fix(f"x{b.name}", left[b.col] + colw[b.col] / 2), pitch * (top - b.row))
              for b in figure.boxes}
    half = dims.height / 2

    def x(n):
        return centre[n][0]

    def y(n):
        return centre[n][1]

    def right(n):
        return x(n) + widths[n] / 2

    def leftof(n):
        return x(n) - widths[n] / 2

    segments: list[Segment] = []
    labels: list[Label] = []
    for arrow in figure.arrows:
        s, t = arrow.sources[0], arrow.targets[0]
        if arrow.how == "right":
            segments.append(Segment(right(s), y(s), 1, 0, leftof(t) - right(s)))
            if arrow.labels:
                labels.append(Label((right(s) + leftof(t)) / 2, y(s), arrow.labels[0]))
        elif arrow.how == "down":
            segments.append(Segment(x(s), y(s) - half, 0, -1, y(s) - y(t) - dims.height))
        elif arrow.how == "elbow":
            segments += [Segment(right(s), y(s), 1, 0, x(t) - right(s), False),
                         Segment(x(t), y(s), 0, -1, y(s) - y(t) - half)]
        elif arrow.how == "fork":
            branch = left[boxes[s].col] + colw[boxes[s].col] + dims.mm(STUB)
            rows = sorted({boxes[n].row for n in (s, *arrow.targets)})
            low, high = pitch * (top - rows[-1]), pitch * (top - rows[0])
            segments += [Segment(right(s), y(s), 1, 0, branch - right(s), False),
                         Segment(branch, low, 0, 1, high - low, False)]
            for i, n in enumerate(arrow.targets):
                segments.append(Segment(branch, y(n), 1, 0, leftof(n) - branch))
                if i < len(arrow.labels):
                    labels.append(Label(branch + dims.mm(LABEL_AT), y(n), arrow.labels[i]))
        else:  # merge
            join = left[boxes[t].col] - dims.mm(STUB)
            rows = sorted({boxes[n].row for n in (t, *arrow.sources)})
            low, high = pitch * (top - rows[-1]), pitch * (top - rows[0])
            segments += [Segment(right(n), y(n), 1, 0, join - right(n), False) for n in arrow.sources]
            segments += [Segment(join, low, 0, 1, high - low, False), Segment(join, y(t), 1, 0, leftof(t) - join)]
    placed = tuple(Placed(b, x(b.name), y(b.name), widths[b.name]) for b in figure.boxes)
    return Drawing(left[-1] + colw[-1], pitch * top + dims.height, dims.height, placed, tuple(segments), tuple(labels))
