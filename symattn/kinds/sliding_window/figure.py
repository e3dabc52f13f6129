"""The sliding window's flow figure, as data: masked self-attention's flow (render/figures/flow.py), its mask box
the window's, and with a KV cache its cache boxes the kept keys and values of the window."""

from __future__ import annotations

from dataclasses import replace

from ...document.figures import Box, Flow, math, words
from ...document.steps import FlowFigure
from ...numbers.exact_latex import exact_latex
from ...typeset.figures.flow import flow
from .spec import KIND, SlidingWindowSpec

# the boxes relabelled: the mask, and a cache's keys and values
LABELS = {"M": (r"+\,M", "box_mask"), "KC": ("K", "box_keys"), "VC": ("V", "box_values")}


def figure(section: SlidingWindowSpec) -> FlowFigure:
    cached = section.cache is not None
    plain = FlowFigure("masked", section.scale, False, "matrix", cached=cached)
    divisor = exact_latex(section.scale.number) if section.scale.mode == "number" else ""
    drawn = flow(plain, divisor)
    boxes = tuple(_relabelled(box) for box in drawn.boxes)
    caption = f"{KIND}.caption_cache" if cached else f"{KIND}.caption"
    return replace(plain, flavour=KIND, drawing=Flow(boxes, drawn.arrows, drawn.gaps), caption=caption)


def _relabelled(box: Box) -> Box:
    if box.name not in LABELS:
        return box
    symbol, key = LABELS[box.name]
    return replace(box, lines=(math(symbol), words(f"{KIND}.{key}")))
