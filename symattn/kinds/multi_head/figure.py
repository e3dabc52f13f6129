"""Multi-head attention's flow figure as data: the heads (from X, or given) → their concatenation → · W_O → the
output; beyond four heads 1, 2, ⋮, h. Every token at once: the heads' output matrices Z^(h)."""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from ...document.steps import FlowFigure, Name
from ...features.attention.figure import source
from ...typeset.figures.boxes import GAP, LABELLED_GAP, STUB, Arrow, Box, Flow, math, part, text, under

if TYPE_CHECKING:
    from .spec import MultiHeadSpec


def figure(section: MultiHeadSpec) -> FlowFigure:
    h, computed, rows = len(section.heads), section.X is not None, section.matrix_form
    shown = list(range(1, h + 1)) if h <= 4 else [1, 2, None, h]
    col = 1 if computed else 0
    z = "Z" if rows else "z"  # every token at once: matrices, one row per token
    heads = tuple(Box(f"h{i}", col, Fraction(r), (text("head", h=i), math(f"{z}^{{({i})}}"))) if i is not None
                  else Box("dots", col, Fraction(r), (math(r"\vdots"),), "none") for r, i in enumerate(shown))
    middle = Fraction(len(shown) - 1, 2)
    parts = [f"{z}^{{({i})}}" for i in shown if i is not None]
    joined = r" \,\|\, ".join(parts if h <= 4 else [parts[0], r"\cdots", parts[-1]])
    named = tuple(b.name for b in heads if b.tint != "none")
    concat = Box("C", col + 1, middle, (math(joined), text("concat")))
    output = Box("O", col + 2, middle, (math(rf"{z}_{{\mathrm{{final}}}}"), text("output")), "output")
    boxes = [*heads, concat, output]
    arrows = [Arrow("merge", named, ("C",)), Arrow("right", ("C",), ("O",), (r"\cdot W_O",))]
    gaps = [GAP + STUB, LABELLED_GAP]
    chain = (*under(r",\ ".join(parts), text("heads")), math(r" \longrightarrow "), *part(concat),
             math(r" \xrightarrow{\cdot W_O} "), *part(output))
    if computed:
        x = Box("X", 0, middle, source(section.positions is not None))
        boxes.insert(0, x)
        arrows.insert(0, Arrow("fork", ("X",), named, tuple(f"W^{{({i})}}" for i in shown if i is not None)))
        gaps.insert(0, LABELLED_GAP)
        chain = (*part(x), math(r" \longrightarrow "), *chain)
    if rows:  # every token at once: the heads' output matrices
        caption = "multi_rows.caption"
    else:
        caption = "figure.caption_multi" + ("" if computed else "_given")
    return FlowFigure("multi", Flow(tuple(boxes), tuple(arrows), tuple(gaps), (chain,)), caption,
                      names=(("W_O", Name("W_O")),))
