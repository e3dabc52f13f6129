"""Grouped-query attention's flow figure as data: X → each K/V head's K and V (once) → the query heads of its group
(each with its own Q) → their concatenation → · W_O → the output; beyond three K/V heads, or three query heads in a
group: first, ⋮, last. Its Markdown chain names every head, grouped under the K/V head it shares."""

from __future__ import annotations

from fractions import Fraction

from ...document.steps import FlowFigure, Name
from ...spec.model import Section
from ...typeset.figures.boxes import GAP, LABELLED_GAP, STUB, Arrow, Box, Flow, Line, math, text, under


def figure(section: Section) -> FlowFigure:
    """The figure of a grouped-query section (its GroupedQuerySpec)."""
    heads, kv_heads, cached = len(section.W_Q), len(section.kv_heads), section.cache is not None
    group = heads // kv_heads
    boxes: list[Box] = []
    arrows: list[Arrow] = []
    kv, queries, row = [], [], 0
    for g in _shown(kv_heads, 3):
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
        both = (text("cache_both"),) if cached else ()  # a KV cache: each K/V head holds its own
        boxes.append(Box(f"kv{g}", 1, Fraction(start + row - 1, 2), (math(f"K^{{[{g + 1}]}},\\ V^{{[{g + 1}]}}"),
                                                                    Line("text", "gqa.figure_kv", {"g": g + 1}),
                                                                    *both)))
        arrows.append(Arrow("fork", (f"kv{g}",), tuple(targets)))
        kv.append(f"kv{g}")
        queries += targets
    middle = Fraction(row - 1, 2)
    boxes += [Box("X", 0, middle, (math("X"), text("embeddings"))),
              Box("C", 3, middle, (math(r"z^{(1)} \,\|\, \cdots \,\|\, " + f"z^{{({heads})}}"), text("concat"))),
              Box("O", 4, middle, (math("z"), text("output")), "output")]
    arrows += [Arrow("fork", ("X",), tuple(kv), tuple(f"W_{{K,V}}^{{[{int(name[2:]) + 1}]}}" for name in kv)),
               Arrow("merge", tuple(queries), ("C",)), Arrow("right", ("C",), ("O",), (r"\cdot W_O",))]
    drawing = Flow(tuple(boxes), tuple(arrows), (LABELLED_GAP + 4, GAP, GAP + STUB, LABELLED_GAP),
                   _chain(heads, kv_heads, cached), tex_relax=True)
    return FlowFigure("grouped", drawing, "gqa.caption_cache" if cached else "gqa.caption",
                      names=(("M", Name("M")), ("W_O", Name("W_O"))))


def _shown(count: int, most: int) -> list[int | None]:
    """0 … count − 1, or beyond `most` the first, None (a ⋮) and the last."""
    return list(range(count)) if count <= most else [0, None, count - 1]


def _chain(heads: int, kv_heads: int, cached: bool) -> tuple[tuple[Line, ...], ...]:
    """Two lines: X → each K/V head's K and V, then the query heads' outputs, grouped under the K/V head they
    share, → their concatenation → · W_O."""
    group = heads // kv_heads
    both = (math(r"\text{, "), text("cache_both"), math("}")) if cached else ()  # a KV cache per K/V head
    first: list[Line] = [math(r"X \xrightarrow{W_K^{[g]},\, W_V^{[g]}} ")]
    for g in range(1, kv_heads + 1):
        first += [*([math(r",\ ")] if g > 1 else []), math(rf"\underbrace{{K^{{[{g}]}},\, V^{{[{g}]}}}}_{{\text{{"),
                  Line("text", "gqa.figure_kv", {"g": g}), math("}"), *both, math("}")]
    shared = [rf"\underbrace{{{', '.join(f'z^{{({g * group + h})}}' for h in range(1, group + 1))}}}_{{[{g + 1}]}}"
              for g in range(kv_heads)]
    second = (math(r"\longrightarrow " + r",\ ".join(shared) + r" \longrightarrow "),
              *under(rf"z^{{(1)}} \,\|\, \cdots \,\|\, z^{{({heads})}}", text("concat")),
              math(r" \xrightarrow{\cdot W_O} z"))
    return tuple(first), second
