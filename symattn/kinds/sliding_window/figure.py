"""The sliding window's flow figure, as data: masked self-attention's flow (features/attention/figure.py), its mask
box the window's, and with a KV cache its cache boxes the kept keys and values of the window."""

from __future__ import annotations

from ...document.figures import math, words
from ...document.steps import FlowFigure
from ...features.attention.figure import attention_flow, relabelled
from .spec import KIND, SlidingWindowSpec

# the boxes relabelled: the mask, and a cache's keys and values
LABELS = {"M": (r"+\,M", "box_mask"), "KC": ("K", "box_keys"), "VC": ("V", "box_values")}


def figure(section: SlidingWindowSpec) -> FlowFigure:
    cached = section.cache is not None
    drawn = attention_flow(section.scale, "matrix", cached=cached)
    lines = {name: (math(symbol), words(f"{KIND}.{key}")) for name, (symbol, key) in LABELS.items()}
    caption = f"{KIND}.caption_cache" if cached else f"{KIND}.caption"
    return FlowFigure(KIND, relabelled(drawn, lines), caption)
