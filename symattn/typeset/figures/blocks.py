"""The block figure of chained sections (pipeline.blocks) as boxes and arrows on figures/flow.py's grid: the stages
top to bottom, the current one highlighted, an encoder's output entering from the side; and its Markdown chain."""

from __future__ import annotations

from fractions import Fraction

from ...document.steps import FlowFigure
from .boxes import GAP, Arrow, Box, Flow, math, text


def block_flow(step: FlowFigure, encoder: str) -> Flow:
    """A chain's stages top to bottom, the current one highlighted; with `side`, the rows from outside the chain (an
    encoder's output) enter that stage from the left."""
    col = 1 if step.side >= 0 else 0
    boxes = [Box(f"b{n}", col, Fraction(n), (math(r"\vdots"),), "none") if stage == "dots" else
             Box(f"b{n}", col, Fraction(n), (text(f"block_{stage}"),), "output" if n == step.current else "step")
             for n, stage in enumerate(step.stages)]
    arrows = [Arrow("down", (f"b{n}",), (f"b{n + 1}",)) for n in range(len(step.stages) - 1)]
    if not col:
        return Flow(tuple(boxes), tuple(arrows), ())
    source = Box("H", 0, Fraction(step.side), (math(encoder), text("block_from_encoder")))
    return Flow((source, *boxes), (*arrows, Arrow("right", ("H",), (f"b{step.side}",))), (GAP,))


def block_chain(step: FlowFigure, words) -> str:
    """The block figure as one chain (Markdown): the stages joined by arrows, the current one boxed, the rows from
    outside the chain named under the stage they enter. `words(key, params)`: a language string as math text."""
    parts = []
    for n, stage in enumerate(step.stages):
        if stage == "dots":  # stages of a long chain left out
            parts.append(r"\cdots")
            continue
        name = rf"\text{{{words(f'figure.block_{stage}', {})}}}"
        if n == step.side:
            name = rf"\underbrace{{{name}}}_{{\leftarrow\, \text{{{words('figure.block_from_encoder', {})}}}}}"
        parts.append(rf"\boxed{{{name}}}" if n == step.current else name)
    return r" \rightarrow ".join(parts)
