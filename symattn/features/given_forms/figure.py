"""The given forms' flow figure as data: from given Q, K and V → the scores QKᵀ → …, or from given scores S → …
(V given beside the weighted sum, or none: the weights are the end), captioned for the form."""

from __future__ import annotations

from fractions import Fraction

from ...document.steps import FlowFigure
from ...features.attention import figure as attention
from ...spec.model import Section
from ...typeset.figures.boxes import GAP, Arrow, Box, Flow, math, part, text, under


def figure(section: Section) -> FlowFigure:
    """The figure of a given form (its GivenSpec)."""
    mask = None if section.mask is None else section.mask.mode
    values = section.V is not None
    if section.scores is None:  # given Q, K and V
        boxes = [*(Box(name, 0, Fraction(r), (math(name), text("given"))) for r, name in enumerate("QKV")),
                 Box("S", 1, Fraction(1), (math(r"Q K^{\top}"), text("scores")))]
        arrows, last, second = attention.scores_to_sum(section.scale, mask, values, boxes, 1, 1)
        arrows = [Arrow("elbow", ("Q",), ("S",)), Arrow("right", ("K",), ("S",)), *arrows]
        first = (*under(r"Q,\ K,\ V", text("given")), math(r" \longrightarrow "), *part(boxes[3]))
        form = "given_cross" if section.cross else "given_qkv"
    else:
        boxes = [Box("S", 0, Fraction(0), (math("S"), text("given_scores")))]
        if values:
            boxes.append(Box("V", 0, Fraction(1), (math("V"), text("given"))))
        arrows, last, second = attention.scores_to_sum(section.scale, mask, values, boxes, 0, 0)
        first = (*part(boxes[0]), *((math(r",\quad "), *part(boxes[1])) if values else ()))
        form = "given_scores" if values else "given_weights"
    flavour = "cross" if section.cross else "masked" if mask else "self"
    drawing = Flow(tuple(boxes), tuple(arrows), tuple([GAP] * last), (first, second))
    return attention.figure(flavour, f"figure.caption_{form}" + ("_masked" if mask is not None else ""), drawing)
