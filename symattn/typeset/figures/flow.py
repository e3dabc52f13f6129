"""The flow figures as boxes on a grid and the arrows between them, and their geometry, for every format that draws
them: LaTeX's picture mode measures in TeX, HTML's SVG in Python, both through the same `geometry`.

A box holds lines, each math (LaTeX of a small subset, see render/figures/svg.py) or a language string; rows run down
from 0 and may be halves (a box between two rows); columns run right with a gap after each.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from ...document.steps import FlowFigure, Name
from .blocks import block_flow
from .boxes import GAP, LABEL_AT, LABELLED_GAP, ROW_SPACE, STUB, Arrow, Box, Flow, Line, math, text


def layout(renderer, step: FlowFigure) -> Flow:
    """The boxes and arrows of one figure, with the renderer's notation for the encoder outputs and a divisor."""
    divisor = renderer.value(step.scale.number)[0] if step.scale.mode == "number" else ""
    return flow(step, divisor, renderer.name(Name("memory")))


def caption(renderer, step: FlowFigure) -> str:
    """The caption, numbered: what the figure shows, true for the document (given heads are said to be given)."""
    if step.drawing is not None:  # a kind's own figure names its caption
        return renderer.text(step.caption, {"number": step.number})
    if step.flavour == "grouped":  # with a KV cache, each K/V head's own
        key = "gqa.caption_cache" if step.cached else "gqa.caption"
    elif step.flavour == "block":  # a chain's stages; rows from outside it entering one of them
        key = "figure.caption_block_side" if step.side >= 0 else "figure.caption_block"
    elif step.cached:
        key = "figure.caption_cache"
    elif step.given is not None:
        key = _given_caption(step)
    elif step.flavour == "multi" and step.rows:  # every token at once: the heads' output matrices
        key = "multi_rows.caption"
    else:
        key = f"figure.caption_{step.flavour}" + ("_given" if step.flavour == "multi" and not step.computed else "")
    names = {"M": Name("M"), "H": Name("memory"), "W_O": Name("W_O")}
    # the note after the caption's sentences (its own leading space where the language spaces sentences)
    rope = renderer.text("figure.rope_note", {"Q": Name("Qh"), "K": Name("Kh")}) if step.rope else ""
    return renderer.text(key, {"number": step.number, **names}) + rope


def flow(step: FlowFigure, divisor: str, encoder: str = "H") -> Flow:
    """The boxes and arrows of one figure; `divisor`: the LaTeX of a given number the scores are divided by,
    `encoder`: the symbol of the encoder outputs."""
    if step.drawing is not None:  # a kind's own figure, as data
        return step.drawing
    if step.flavour == "block":  # a chain's stages
        return block_flow(step, encoder)
    if step.flavour == "multi":
        return _multi_head(step)
    if step.flavour == "grouped":
        return _grouped(step)
    if step.given is not None:
        return _given(step, divisor)
    cross = step.flavour == "cross"
    q, k = ("Q", "K") if not step.rope else (r"\hat{Q}", r"\hat{K}")  # RoPE: the rotated queries and keys score
    boxes = [Box("Q", 1, Fraction(0), (math(_rotated(step, f"{'Y' if cross else _source(step, encoder)} W_Q")),)),
             Box("K", 1, Fraction(1), (math(_rotated(step, f"{_source(step, encoder)} W_K")),)),
             Box("V", 1, Fraction(2), (math(f"V = {_source(step, encoder)} W_V"),)),
             Box("S", 2, Fraction(1), (math(rf"{q} {k}^{{\top}}"), text("scores")))]
    if cross:
        sources = [Box("X", 0, Fraction(0), (math("Y"), text("decoder"))),  # the decoder states Y, rows y_t
                   Box("H", 0, Fraction(3, 2), (math(encoder), text("encoder")))]
        arrows = [Arrow("right", ("X",), ("Q",), ("W_Q",)), Arrow("fork", ("H",), ("K", "V"), ("W_K", "W_V"))]
    else:
        sources = [Box("X", 0, Fraction(1), (math(r"\tilde{X} = X + P"), text("with_positions")) if step.positions
                       else (math("X"), text("embeddings")))]
        arrows = [Arrow("fork", ("X",), ("Q", "K", "V"), ("W_Q", "W_K", "W_V"))]
    # a KV cache: the new keys and values appended to the cached ones, a column before the scores
    first = 3 if step.cached else 2
    if step.cached:
        boxes[3] = replace(boxes[3], col=first)
        boxes += [Box("KC", 2, Fraction(1), (math(k), text("cache_keys"))),
                  Box("VC", 2, Fraction(2), (math(r"V"), text("cache_values")))]
    keys, values = ("KC", "VC") if step.cached else ("K", "V")
    chain, last = _scores_to_sum(step, divisor, boxes, first, 1, values)
    arrows += [Arrow("elbow", ("Q",), ("S",)), Arrow("right", (keys,), ("S",)), *chain]
    if step.cached:
        arrows += [Arrow("right", ("K",), ("KC",)), Arrow("right", ("V",), ("VC",))]
    return Flow((*sources, *boxes), tuple(arrows), (LABELLED_GAP, *[GAP] * (last - 1)))


def _scores_to_sum(step: FlowFigure, divisor: str, boxes: list[Box], col: int, row: int,
                   values: str = "V") -> tuple[list[Arrow], int]:
    """From the scores box S (at `col`, `row`): the scaling, the mask, the softmax, then (with values) the weighted
    sum of the values (box `values`: V, or the cache's) and the output below it. Adds the boxes after S; returns
    the arrows and the last column."""
    chain = ["S"]
    if step.scale.mode != "none":
        scaling = r"\div \sqrt{d_k}" if step.scale.mode == "sqrt_d_k" else rf"\div {divisor}"
        boxes.append(Box("D", col + len(chain), Fraction(row), (math(scaling), text("scaling"))))
        chain.append("D")
    if step.mask is not None:
        boxes.append(Box("M", col + len(chain), Fraction(row), (math(r"+\,M"), text(f"mask_{step.mask}"))))
        chain.append("M")
    last = col + len(chain)
    boxes.append(Box("A", last, Fraction(row), (math(r"\mathrm{softmax}"), text("weights")),
                     "step" if step.values else "output"))
    chain.append("A")
    arrows = [Arrow("right", (a,), (b,)) for a, b in zip(chain, chain[1:], strict=False)]
    if step.values:
        boxes += [Box("Z", last, Fraction(row + 1), (math(r"\sum_j w_j v_j"), text("sum"))),
                  Box("O", last, Fraction(row + 2), (math("z"), text("output")), "output")]
        arrows += [Arrow("down", ("A",), ("Z",)), Arrow("right", (values,), ("Z",)), Arrow("down", ("Z",), ("O",))]
    return arrows, last


def _given(step: FlowFigure, divisor: str) -> Flow:
    """The given forms: given Q, K, V → scores QKᵀ → …, or given scores S → … (V given beside the weighted sum)."""
    if step.given == "qkv":
        boxes = [*(Box(name, 0, Fraction(r), (math(name), text("given"))) for r, name in enumerate("QKV")),
                 Box("S", 1, Fraction(1), (math(r"Q K^{\top}"), text("scores")))]
        arrows, last = _scores_to_sum(step, divisor, boxes, 1, 1)
        arrows = [Arrow("elbow", ("Q",), ("S",)), Arrow("right", ("K",), ("S",)), *arrows]
    else:
        boxes = [Box("S", 0, Fraction(0), (math("S"), text("given_scores")))]
        if step.values:
            boxes.append(Box("V", 0, Fraction(1), (math("V"), text("given"))))
        arrows, last = _scores_to_sum(step, divisor, boxes, 0, 0)
    return Flow(tuple(boxes), tuple(arrows), tuple([GAP] * last))


def _given_caption(step: FlowFigure) -> str:
    """The caption of a given form's figure: of given Q, K and V (cross-attention's, or masked) or of given scores
    (with values or without: then the weights are the end; masked or not)."""
    if step.given == "qkv":
        form = "given_cross" if step.flavour == "cross" else "given_qkv"
    else:
        form = "given_scores" if step.values else "given_weights"
    return f"figure.caption_{form}" + ("_masked" if step.mask is not None else "")


def _rotated(step: FlowFigure, product: str) -> str:
    r"""Q = X W_Q, or with RoPE \hat{Q} = RoPE(X W_Q): the projection rotated for the tokens' positions."""
    letter = product[-1]
    return rf"\hat{{{letter}}} = \mathrm{{RoPE}}({product})" if step.rope else f"{letter} = {product}"


def _source(step: FlowFigure, encoder: str) -> str:
    """What the keys and values are computed from."""
    if step.flavour == "cross":
        return encoder
    return r"\tilde{X}" if step.positions else "X"


def _multi_head(step: FlowFigure) -> Flow:
    """Heads (from X, or given) → their concatenation → · W_O → the output; beyond four heads: 1, 2, ⋮, h."""
    h = step.heads
    shown = list(range(1, h + 1)) if h <= 4 else [1, 2, None, h]
    col = 1 if step.computed else 0
    z = "Z" if step.rows else "z"  # every token at once: matrices, one row per token
    heads = tuple(Box(f"h{i}", col, Fraction(r), (text("head", h=i), math(f"{z}^{{({i})}}"))) if i is not None
                  else Box("dots", col, Fraction(r), (math(r"\vdots"),), "none") for r, i in enumerate(shown))
    middle = Fraction(len(shown) - 1, 2)
    parts = [f"{z}^{{({i})}}" for i in shown if i is not None]
    joined = r" \,\|\, ".join(parts if h <= 4 else [parts[0], r"\cdots", parts[-1]])
    named = tuple(b.name for b in heads if b.tint != "none")
    boxes = [*heads, Box("C", col + 1, middle, (math(joined), text("concat"))),
             Box("O", col + 2, middle, (math(rf"{z}_{{\mathrm{{final}}}}"), text("output")), "output")]
    arrows = [Arrow("merge", named, ("C",)), Arrow("right", ("C",), ("O",), (r"\cdot W_O",))]
    gaps = [GAP + STUB, LABELLED_GAP]
    if step.computed:
        source = ((math(r"\tilde{X} = X + P"), text("with_positions")) if step.positions
                  else (math("X"), text("embeddings")))
        boxes.insert(0, Box("X", 0, middle, source))
        arrows.insert(0, Arrow("fork", ("X",), named, tuple(f"W^{{({i})}}" for i in shown if i is not None)))
        gaps.insert(0, LABELLED_GAP)
    return Flow(tuple(boxes), tuple(arrows), tuple(gaps))


def _shown(count: int, most: int) -> list[int | None]:
    """0 … count − 1, or beyond `most` the first, None (a ⋮) and the last."""
    return list(range(count)) if count <= most else [0, None, count - 1]


def _grouped(step: FlowFigure) -> Flow:
    """X → each K/V head's K and V (once) → the query heads of its group (each with its own Q) → their
    concatenation → · W_O → the output; beyond three K/V heads, or three query heads in a group: first, ⋮, last."""
    group = step.heads // step.kv_heads
    boxes: list[Box] = []
    arrows: list[Arrow] = []
    kv, queries, row = [], [], 0
    for g in _shown(step.kv_heads, 3):
        if g is None:
            boxes += [Box("kvdots", 1, Fraction(row), (math(r"\vdots"),), "none"),
                      Box("qdots", 2, Fraction(row), (math(r"\vdots"),), "none")]
            row += 1
            continue
        start, targets = row, []
        for h in _shown(group, 3):
            if h is None:
                boxes.append(Box(f"qdots{g}", 2, Fraction(row), (math(r"\vdots"),), "none"))
            else:
                n = g * group + h + 1
                lines = (Line("text", "gqa.figure_query", {"h": n}), math(f"Q^{{({n})}} = X W_Q^{{({n})}}"))
                boxes.append(Box(f"q{n}", 2, Fraction(row), lines))
                targets.append(f"q{n}")
            row += 1
        cached = (text("cache_both"),) if step.cached else ()  # a KV cache: each K/V head holds its own
        boxes.append(Box(f"kv{g}", 1, Fraction(start + row - 1, 2), (math(f"K^{{[{g + 1}]}},\\ V^{{[{g + 1}]}}"),
                                                                    Line("text", "gqa.figure_kv", {"g": g + 1}),
                                                                    *cached)))
        arrows.append(Arrow("fork", (f"kv{g}",), tuple(targets)))
        kv.append(f"kv{g}")
        queries += targets
    middle = Fraction(row - 1, 2)
    boxes += [Box("X", 0, middle, (math("X"), text("embeddings"))),
              Box("C", 3, middle, (math(r"z^{(1)} \,\|\, \cdots \,\|\, " + f"z^{{({step.heads})}}"), text("concat"))),
              Box("O", 4, middle, (math("z"), text("output")), "output")]
    arrows += [Arrow("fork", ("X",), tuple(kv), tuple(f"W_{{K,V}}^{{[{int(name[2:]) + 1}]}}" for name in kv)),
               Arrow("merge", tuple(queries), ("C",)), Arrow("right", ("C",), ("O",), (r"\cdot W_O",))]
    return Flow(tuple(boxes), tuple(arrows), (LABELLED_GAP + 4, GAP, GAP + STUB, LABELLED_GAP))


def grouped_chain(step: FlowFigure, words) -> tuple[str, str]:
    """The grouped-query figure as two lines of a chain (Markdown): X → each K/V head's K and V, then the query
    heads' outputs, grouped under the K/V head they share, → their concatenation → · W_O. `words(key, params)`:
    a language string as math text."""
    group = step.heads // step.kv_heads
    cached = rf"\text{{, {words('figure.cache_both', {})}}}" if step.cached else ""  # a KV cache per K/V head
    kv = [rf"\underbrace{{K^{{[{g}]}},\, V^{{[{g}]}}}}_{{\text{{{words('gqa.figure_kv', {'g': g})}}}{cached}}}"
          for g in range(1, step.kv_heads + 1)]
    first = r"X \xrightarrow{W_K^{[g]},\, W_V^{[g]}} " + r",\ ".join(kv)
    heads = [", ".join(f"z^{{({g * group + h})}}" for h in range(1, group + 1)) for g in range(step.kv_heads)]
    shared = [rf"\underbrace{{{z}}}_{{[{g}]}}" for g, z in enumerate(heads, start=1)]
    second = (r"\longrightarrow " + r",\ ".join(shared) + rf" \longrightarrow \underbrace{{z^{{(1)}} \,\|\, \cdots"
              rf" \,\|\, z^{{({step.heads})}}}}_{{\text{{{words('figure.concat', {})}}}}} \xrightarrow{{\cdot W_O}} z")
    return first, second


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
