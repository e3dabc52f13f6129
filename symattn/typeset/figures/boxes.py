"""The pieces of a flow figure: boxes on a grid (each line math or a language string), the arrows between them, the
gaps between columns, and the pieces of a Markdown chain built from a box's lines (the kinds and features build their
figures from these; figures/flow.py lays them out)."""

from __future__ import annotations

from ...document.figures import GAP, LABELLED_GAP, Arrow, Box, Flow, Line, math, text

__all__ = ["GAP", "LABELLED_GAP", "LABEL_AT", "ROW_SPACE", "STUB", "Arrow", "Box", "Flow", "Line", "math", "part",
           "text", "under"]

# Millimetres (beside document.figures' GAP and LABELLED_GAP between columns): how far a branch leaves its box,
# where a branch's label sits from the branch, and the space between rows.
STUB, LABEL_AT, ROW_SPACE = 4, 5, 4


def under(latex: str, words: Line) -> tuple[Line, ...]:
    r"""Chain pieces: math with a language string under it, \underbrace{latex}_{\text{words}}."""
    return math(rf"\underbrace{{{latex}}}_{{\text{{"), words, math("}}")


def part(box: Box) -> tuple[Line, ...]:
    """Chain pieces of a box: its first math line with its first language string under it, or its math alone."""
    first = next(line for line in box.lines if line.kind == "math")
    texts = [line for line in box.lines if line.kind == "text"]
    return (math(r"\underbrace{"), first, math(r"}_{\text{"), texts[0], math("}}")) if texts else (first,)
