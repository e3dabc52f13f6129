"""ALiBi's flow figure as data: X → Q, K, V → QKᵀ → the scaling → + B (the linear biases, future keys masked) →
softmax → the weighted sum of the values → the output. Drawn by every format from these boxes alone."""

from __future__ import annotations

from fractions import Fraction

from ...document.figures import GAP, LABELLED_GAP, Arrow, Box, Flow, math, text, words
from ...document.steps import FlowFigure
from .spec import AlibiSpec


def figure(spec: AlibiSpec) -> FlowFigure:
    row = Fraction(1)
    boxes = [Box("X", 0, row, (math("X"), text("embeddings"))),
             *(Box(c, 1, Fraction(r), (math(f"{c} = X W_{c}"),)) for r, c in enumerate("QKV")),
             Box("S", 2, row, (math(r"Q K^{\top}"), text("scores")))]
    chain = ["S"]
    if spec.scale.mode != "none":
        divisor = r"\sqrt{d_k}" if spec.scale.mode == "sqrt_d_k" else _number(spec.scale.number)
        boxes.append(Box("D", 2 + len(chain), row, (math(rf"\div {divisor}"), text("scaling"))))
        chain.append("D")
    boxes.append(Box("B", 2 + len(chain), row, (math(r"+\,B"), words("alibi.box_bias"), words("alibi.box_causal"))))
    chain.append("B")
    last = 2 + len(chain)
    boxes += [Box("A", last, row, (math(r"\mathrm{softmax}"), text("weights"))),
              Box("Z", last, row + 1, (math(r"\sum_j w_j v_j"), text("sum"))),
              Box("O", last, row + 2, (math("z"), text("output")), "output")]
    chain.append("A")
    steps = [Arrow("right", (a,), (b,)) for a, b in zip(chain, chain[1:], strict=False)]
    arrows = [Arrow("fork", ("X",), ("Q", "K", "V"), ("W_Q", "W_K", "W_V")), Arrow("elbow", ("Q",), ("S",)),
              Arrow("right", ("K",), ("S",)), *steps,
              Arrow("down", ("A",), ("Z",)), Arrow("right", ("V",), ("Z",)), Arrow("down", ("Z",), ("O",))]
    caption = "alibi.caption_heads" if spec.several else "alibi.caption"
    return FlowFigure("alibi", Flow(tuple(boxes), tuple(arrows), (LABELLED_GAP, *[GAP] * (last - 1))), caption)


def _number(value) -> str:
    """A given divisor c as LaTeX: an integer, or p/q."""
    return str(value) if value.is_Integer else rf"{value.p}/{value.q}"
