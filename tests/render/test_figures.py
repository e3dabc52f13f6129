"""The flow figures: one per kind present, numbered in order, captions true for the document, in every format."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sympy import Rational

from symattn import derive, render_markdown
from symattn.cli import main
from symattn.document.steps import FlowFigure
from symattn.render.html import render_html
from symattn.render.latex import render_latex

SPECS = Path(__file__).parent / "specs"
ALL_KINDS = SPECS / "every_figure.toml"  # cross, masked self (scale 2.5), computed multi-head, cross again


def figures(source, lang="en"):
    return [step for step in derive(source, lang=lang).steps if isinstance(step, FlowFigure)]


def test_one_figure_per_kind_numbered_where_its_section_begins():
    assert [(f.flavour, f.number) for f in figures("mt")] == [("self", 1), ("cross", 2), ("multi", 3)]
    (masked,) = figures("decoder")
    boxes = {box.name: box for box in masked.drawing.boxes}
    assert masked.flavour == "masked" and boxes["M"].lines[1].content == "figure.mask_causal"
    assert boxes["X"].lines[0].content == r"\tilde{X} = X + P"  # with positional encodings
    found = figures(ALL_KINDS)
    assert [(f.flavour, f.number) for f in found] == [("cross", 1), ("masked", 2), ("multi", 3)]  # cross once
    scaled = {box.name: box for box in found[1].drawing.boxes}["D"].lines[0]
    assert (scaled.content, scaled.params["value"]) == (r"\div ", Rational(5, 2))  # written by the renderer
    assert [box.name for box in found[2].drawing.boxes] == ["X", "h1", "h2", "C", "O"]  # computed from X
    for section in derive("mt").sections:  # right under each attention section's heading
        if section.kind != "text":
            assert isinstance(section.steps[1], FlowFigure)


def test_a_cross_attention_document_draws_cross_attention_only():
    for lang, word in (("en", "Figure"), ("ja", "図")):
        derivation = derive(ALL_KINDS, lang=lang)
        latex = render_latex(derivation)
        captions = re.findall(r"\\figurecaption\{(.*)\}", latex)
        numbers = [re.match(rf"{word} (\d)[:：]", c).group(1) for c in captions]
        assert numbers == ["1", "2", "3"]
        assert "Cross{-}attention" in captions[0] or "cross{-}attention" in captions[0]
        assert not any("Self{-}attention の流れ" in c or "flow of self{-}attention" in c for c in captions)
        assert r"\flowcontent{H}" in latex and r"\flowcontent{M}{$+\,M$" in latex and r"$\div 2.5$" in latex


def test_the_english_caption_has_one_colon_and_the_values_are_v_rows():
    latex = render_latex(derive("mt", lang="en"))
    for caption in re.findall(r"\\figurecaption\{(.*)\}", latex):
        assert caption.count(":") == 1
    assert r"$\sum_j w_j v_j$" in latex and "V_j" not in latex  # the rows v_j of V, as the text writes them
    assert r"$Q = Y W_Q$" in latex  # the decoder states Y, as the cross-attention text names them


def test_the_multi_head_caption_says_whether_heads_are_given():
    latex = render_latex(derive("mt", lang="en"))
    assert "(given here)" in latex
    assert "(given here)" not in render_latex(derive(ALL_KINDS, lang="en"))


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_figures_fit_the_page(lang, tmp_path):
    """Each picture is scaled to the line when wider (\\flowfit); the PDF builds, and no figure is overfull."""
    assert main(["render", str(ALL_KINDS), "--lang", lang, "--format", "tex,pdf", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "every_figure.pdf").stat().st_size > 10_000
    assert r"\flowfit" in (tmp_path / "every_figure.tex").read_text(encoding="utf-8")


def test_a_figure_is_set_in_place_under_its_heading_not_as_a_float():
    """A float would drift from its section's heading (to the next page's top), and cannot be in an exam's
    solution; the figure and its caption are one box right after the heading."""
    latex = render_latex(derive("mt", lang="en"))
    assert r"\begin{figure}" not in latex
    heading = r"\\section\*\{\\headingwords \\marksection\{s\d+\}\{1\}\{Self\{-\}Attention \(encoder\)\}\}"
    assert re.search(heading + r"\s*\\par\\noindent\\begin\{minipage\}", latex)


def test_markdown_draws_each_figure_as_math_renderers_set_it():
    md = render_markdown(derive(ALL_KINDS, lang="en"))
    assert "<svg" not in md  # GitHub strips SVG from Markdown
    assert md.count(r"\xrightarrow{W_Q}") == 1  # cross-attention: queries from the decoder
    assert r"\xrightarrow{+\,M}" in md and r"\xrightarrow{\div 2.5}" in md and r"\xrightarrow{\cdot W_O}" in md
    assert re.findall(r"^\*Figure (\d):", md, re.M) == ["1", "2", "3"]


def test_html_draws_each_figure_as_inline_svg():
    page = render_html(derive(ALL_KINDS, lang="ja"))
    assert page.count("<svg") == 3 and "<script" not in page and "http://www.w3.org/2000/svg" in page
    assert 'aria-labelledby="symattn-figure-1"' in page and 'id="symattn-figure-1"' in page
    assert "デコーダの状態" in page and "<tspan" in page
    assert page.count("<marker") == 3 and len(set(re.findall(r'<marker id="([^"]+)"', page))) == 3


def test_each_box_is_true_for_its_section():
    """No scaling box without scaling, ÷ c for a given scale (in the renderer's digits), X + P with positional
    encodings, ⋮ beyond four heads."""
    from types import SimpleNamespace

    from symattn.features.attention.figure import attention_flow
    from symattn.kinds.multi_head.figure import figure
    from symattn.spec.model import Scale

    def names(flow):
        return [box.name for box in flow.boxes]

    assert "D" not in names(attention_flow(Scale("none")))
    assert names(attention_flow(Scale("number", Rational(5, 2)), "causal")).index("D") < names(
        attention_flow(Scale(), "causal")).index("M")
    boxes = {b.name: b for b in attention_flow(Scale(), positions=True).boxes}
    assert boxes["D"].lines[0].content == r"\div \sqrt{d_k}" and boxes["X"].lines[0].content == r"\tilde{X} = X + P"
    assert boxes["K"].lines[0].content == r"K = \tilde{X} W_K"
    assert r"\xrightarrow{\div 2.5}" in render_markdown(derive(ALL_KINDS, lang="en"))  # the given scale's box
    heads = SimpleNamespace(heads=[None] * 8, X=None, matrix_form=False, positions=None)
    many = figure(heads).drawing.boxes
    assert [b.name for b in many][:4] == ["h1", "h2", "dots", "h8"] and many[2].tint == "none"
