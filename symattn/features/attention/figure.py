"""The attention flow figure as data, shared by the kinds that attend and by the given forms: X → Q, K, V → scores
→ scaling → mask → softmax → weighted sum → output, with its Markdown chain. Each kind picks the flow's options and
its caption; typeset/figures/flow.py lays any figure out."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from ...document.steps import FlowFigure, Name
from ...spec.model import Scale
from ...typeset.figures.boxes import GAP, LABELLED_GAP, Arrow, Box, Flow, Line, math, part, text, under
from ...typeset.math import NOTATION

ENCODER = NOTATION["memory"]  # the encoder outputs' symbol, H
# The names the captions take: the mask, the encoder outputs, the output projection; RoPE's note: the rotated Q, K.
NAMES = (("M", Name("M")), ("H", Name("memory")), ("W_O", Name("W_O")))
ROTATED = (("Q", Name("Qh")), ("K", Name("Kh")))


def figure(flavour: str, caption: str, drawing: Flow, rope: bool = False) -> FlowFigure:
    """The figure of an attention flow, its caption (with RoPE, the note on the rotation after it)."""
    return FlowFigure(flavour, drawing=drawing, caption=caption, note="figure.rope_note" if rope else "",
                      names=NAMES + (ROTATED if rope else ()))


def source(positions: bool) -> tuple[Line, ...]:
    """The box of the embeddings, with the positional encodings added or not."""
    return (math(r"\tilde{X} = X + P"), text("with_positions")) if positions else (math("X"), text("embeddings"))


def attention_flow(scale: Scale, mask: str | None = None, *, cross: bool = False, positions: bool = False,
                   rope: bool = False, cached: bool = False) -> Flow:
    """X (or, cross, the decoder's Y and the encoder's H) → Q, K, V (RoPE: Q and K rotated) → the scores → …; with
    a KV cache, the new keys and values appended to the cached ones, a column before the scores."""
    x = r"\tilde{X}" if positions else "X"
    kv = ENCODER if cross else x
    q, k = ("Q", "K") if not rope else (r"\hat{Q}", r"\hat{K}")  # RoPE: the rotated queries and keys score
    first = 3 if cached else 2
    boxes = [Box("Q", 1, Fraction(0), (math(_rotated(rope, f"{'Y' if cross else x} W_Q")),)),
             Box("K", 1, Fraction(1), (math(_rotated(rope, f"{kv} W_K")),)),
             Box("V", 1, Fraction(2), (math(f"V = {kv} W_V"),)),
             Box("S", first, Fraction(1), (math(rf"{q} {k}^{{\top}}"), text("scores")))]
    if cross:
        sources = [Box("X", 0, Fraction(0), (math("Y"), text("decoder"))),  # the decoder states Y, rows y_t
                   Box("H", 0, Fraction(3, 2), (math(ENCODER), text("encoder")))]
        arrows = [Arrow("right", ("X",), ("Q",), ("W_Q",)), Arrow("fork", ("H",), ("K", "V"), ("W_K", "W_V"))]
        start = (*part(sources[0]), math(r" \xrightarrow{W_Q} Q,\quad "), *part(sources[1]),
                 math(r" \xrightarrow{W_K,\, W_V} K,\ V"))
    else:
        sources = [Box("X", 0, Fraction(1), source(positions))]
        arrows = [Arrow("fork", ("X",), ("Q", "K", "V"), ("W_Q", "W_K", "W_V"))]
        start = (*part(sources[0]), math(r" \xrightarrow{W_Q,\, W_K,\, W_V} Q,\ K,\ V"))
        if rope:  # q and k rotated for their positions before the scores
            start += (math(r" \xrightarrow{\mathrm{RoPE}} \hat{Q},\ \hat{K}"),)
    if cached:
        boxes += [Box("KC", 2, Fraction(1), (math(k), text("cache_keys"))),
                  Box("VC", 2, Fraction(2), (math(r"V"), text("cache_values")))]
        start += (math(r" \longrightarrow "), *under(rf"{k},\ V", text("cache_both")))
    keys, values = ("KC", "VC") if cached else ("K", "V")
    chain, last, second = scores_to_sum(scale, mask, True, boxes, first, 1, values)
    arrows += [Arrow("elbow", ("Q",), ("S",)), Arrow("right", (keys,), ("S",)), *chain]
    if cached:
        arrows += [Arrow("right", ("K",), ("KC",)), Arrow("right", ("V",), ("VC",))]
    lines = ((*start, math(r" \longrightarrow "), *part(boxes[3])), second)
    return Flow((*sources, *boxes), tuple(arrows), (LABELLED_GAP, *[GAP] * (last - 1)), lines)


def scores_to_sum(scale: Scale, mask: str | None, values: bool, boxes: list[Box], col: int, row: int,
                  kept: str = "V") -> tuple[list[Arrow], int, tuple[Line, ...]]:
    """From the scores box S (at `col`, `row`): the scaling, the mask, the softmax, then (with values) the weighted
    sum of the values (box `kept`: V, or the cache's) and the output below it. Adds the boxes after S; returns
    the arrows, the last column and the chain's line from the scores on (the scaling and the mask over arrows)."""
    chain = ["S"]
    if scale.mode != "none":
        scaling = math(r"\div \sqrt{d_k}") if scale.mode == "sqrt_d_k" else math(r"\div ", scale.number)
        boxes.append(Box("D", col + len(chain), Fraction(row), (scaling, text("scaling"))))
        chain.append("D")
    if mask is not None:
        boxes.append(Box("M", col + len(chain), Fraction(row), (math(r"+\,M"), text(f"mask_{mask}"))))
        chain.append("M")
    last = col + len(chain)
    weights = Box("A", last, Fraction(row), (math(r"\mathrm{softmax}"), text("weights")),
                  "step" if values else "output")
    boxes.append(weights)
    steps = [piece for box in boxes[-len(chain):-1] for piece in (math(r"\xrightarrow{"), box.lines[0], math("} "))]
    line = (*(steps or [math(r"\longrightarrow ")]), *part(weights))
    chain.append("A")
    arrows = [Arrow("right", (a,), (b,)) for a, b in zip(chain, chain[1:], strict=False)]
    if values:
        total, output = (Box("Z", last, Fraction(row + 1), (math(r"\sum_j w_j v_j"), text("sum"))),
                         Box("O", last, Fraction(row + 2), (math("z"), text("output")), "output"))
        boxes += [total, output]
        arrows += [Arrow("down", ("A",), ("Z",)), Arrow("right", (kept,), ("Z",)), Arrow("down", ("Z",), ("O",))]
        line += (math(r" \longrightarrow "), *part(total), math(" = "), output.lines[0])
    return arrows, last, line


def _rotated(rope: bool, product: str) -> str:
    r"""Q = X W_Q, or with RoPE \hat{Q} = RoPE(X W_Q): the projection rotated for the tokens' positions."""
    letter = product[-1]
    return rf"\hat{{{letter}}} = \mathrm{{RoPE}}({product})" if rope else f"{letter} = {product}"


def relabelled(flow: Flow, lines: dict[str, tuple[Line, ...]]) -> Flow:
    """The flow with some boxes' lines replaced (a variant's mask or cache), drawn without the chain, whose pieces
    would still say the old lines: Markdown then sets the boxes column by column."""
    boxes = tuple(replace(box, lines=lines[box.name]) if box.name in lines else box for box in flow.boxes)
    return replace(flow, boxes=boxes, chain=())
