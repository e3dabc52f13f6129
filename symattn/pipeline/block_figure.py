"""The block figure of chained sections (pipeline.blocks) as data: the stages top to bottom, the current one
highlighted, an encoder's output entering from the side; and its Markdown chain, the stages joined by arrows."""

from __future__ import annotations

from fractions import Fraction

from ..document.steps import FlowFigure, Name
from ..typeset.figures.boxes import GAP, Arrow, Box, Flow, Line, math, text
from ..typeset.math import NOTATION


def block_figure(stages: tuple[str, ...], current: int, side: int) -> FlowFigure:
    """A chain's `stages` (each a kind's Kind.stage, or "dots" for those left out), the one at `current`
    highlighted; with `side` (-1: none), the rows from outside the chain (an encoder's output) enter that stage from
    the left."""
    col = 1 if side >= 0 else 0
    boxes = [Box(f"b{n}", col, Fraction(n), (math(r"\vdots"),), "none") if stage == "dots" else
             Box(f"b{n}", col, Fraction(n), (text(f"block_{stage}"),), "output" if n == current else "step")
             for n, stage in enumerate(stages)]
    arrows = [Arrow("down", (f"b{n}",), (f"b{n + 1}",)) for n in range(len(stages) - 1)]
    chain = (_chain(stages, current, side),)
    if col:
        source = Box("H", 0, Fraction(side), (math(NOTATION["memory"]), text("block_from_encoder")))
        drawing = Flow((source, *boxes), (*arrows, Arrow("right", ("H",), (f"b{side}",))), (GAP,), chain)
    else:
        drawing = Flow(tuple(boxes), tuple(arrows), (), chain)
    caption = "figure.caption_block_side" if side >= 0 else "figure.caption_block"
    return FlowFigure("block", drawing, caption, names=(("H", Name("memory")),))


def _chain(stages: tuple[str, ...], current: int, side: int) -> tuple[Line, ...]:
    """The stages joined by arrows, the current one boxed, the rows from outside the chain named under the stage
    they enter."""
    pieces: list[Line] = []
    for n, stage in enumerate(stages):
        pieces += [math(r" \rightarrow ")] if n else []
        if stage == "dots":  # stages of a long chain left out
            pieces.append(math(r"\cdots"))
            continue
        name = [math(r"\text{"), text(f"block_{stage}"), math("}")]
        if n == side:
            name = [math(r"\underbrace{"), *name, math(r"}_{\leftarrow\, \text{"), text("block_from_encoder"),
                    math("}}")]
        pieces += [math(r"\boxed{"), *name, math("}")] if n == current else name
    return tuple(pieces)
