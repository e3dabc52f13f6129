"""`--format slides`: Beamer frames with every derivation line on its own overlay, `--handout` without overlays,
and a slide-sized layout: no overfull box in any built-in example's deck, ja and en (compiled in handout mode,
whose frames are the overlays' last, of the same size, in a few pages)."""

from __future__ import annotations

import re
import subprocess

import pytest

from symattn import derive
from symattn.cli import main
from symattn.examples import names
from symattn.render.formats import format_of
from symattn.render.pdf import compile_with_log, overfull_boxes
from symattn.render.slides import numbered, render_slides, revealed, top_level_cells


def pdf_pages(pdf: bytes) -> int:
    info = subprocess.run(["pdfinfo", "-"], input=pdf, capture_output=True, check=True).stdout.decode()
    return int(re.search(r"Pages:\s+(\d+)", info).group(1))


def page_texts(pdf: bytes) -> list[str]:
    """Each page's text (pdftotext ends every page with a form feed)."""
    return subprocess.run(["pdftotext", "-", "-"], input=pdf, capture_output=True, check=True).stdout.decode(
        ).split("\f")[:-1]


@pytest.fixture(scope="session")
def mt_deck():
    """The mt example's slides in English, with overlays and as a handout: (tex, pdf) of each."""
    derivation = derive("mt", lang="en")
    decks = {}
    for handout in (False, True):
        tex = render_slides(derivation, handout=handout)
        decks[handout] = (tex, compile_with_log(tex, jobname="mt-slides")[0])
    return decks


def test_slides_are_a_format_compiled_from_their_latex():
    assert format_of("slides").compiled_from == "slides-tex"
    assert format_of("slides").suffix == "slides.pdf" and format_of("slides-tex").suffix == "slides.tex"
    assert format_of("slides-tex").options == ("handout", "theme")


def test_a_line_is_cut_into_cells_at_its_own_ampersands_only():
    line = r"q &= [1,\ 2] \cdot \begin{bmatrix} 1 & 2 \\ 3 & 4 \end{bmatrix} + \{a\&b\}"
    assert top_level_cells(line) == ["q ", r"= [1,\ 2] \cdot \begin{bmatrix} 1 & 2 \\ 3 & 4 \end{bmatrix} + \{a\&b\}"]
    assert top_level_cells(r"\frac{a & b}{c}") == [r"\frac{a & b}{c}"]  # (a brace group's & is not the line's)
    assert numbered(revealed("a &= 1") + r" \\ " + revealed("&= 2")) == (
        r"\uncover<1->{a } & \uncover<1->{= 1} \\ \uncover<2->{} & \uncover<2->{= 2}")


def test_every_line_of_the_dot_products_gets_an_overlay_of_its_own(mt_deck):
    tex = mt_deck[False][0]
    frame = next(f for f in tex.split(r"\begin{frame}") if r"{q}_{\mathrm{love}} \cdot {k}_{\mathrm{I}}" in f)
    products = re.findall(r"\\uncover<(\d+)->\{\{q\}_\{\\mathrm\{love\}\} \\cdot \{k\}_\{\\mathrm\{(\w+)\}\} \}", frame)
    assert [key for _, key in products] == ["I", "love", "machine", "learning"]
    numbers = [int(n) for n, _ in products]
    assert numbers == list(range(numbers[0], numbers[0] + 4))  # one click each, in order
    assert r"\pause" not in tex and "<+" not in tex  # counted here, not by Beamer (alignments are set twice)


@pytest.mark.pdf
def test_the_deck_reveals_step_by_step_and_the_handout_prints_each_frame_once(mt_deck):
    tex, pdf = mt_deck[False]
    handout_tex, handout = mt_deck[True]
    frames = tex.count(r"\begin{frame}")
    assert r"\documentclass[11pt,aspectratio=169,dvipdfmx,xcolor=table]{beamer}" in tex
    assert "handout" in handout_tex.split("\n", 1)[0] and "handout" not in tex.split("\n", 1)[0]
    assert pdf_pages(handout) == frames  # one page a frame
    assert pdf_pages(pdf) > 2 * frames  # overlays: 200 pages or so
    # the overlays of the four dot products, one after the other: each page shows one line more
    shown = [text.count("0.92 ·") for text in page_texts(pdf) if "Step 3: Attention scores" in text]
    first = shown[:shown.index(4) + 1]
    assert first == sorted(first) and set(first) == {0, 1, 2, 3, 4}, shown
    titles = [text.split("\n", 1)[0] for text in page_texts(handout)]
    assert titles.count("Step 2: Compute Q, K , V for all tokens") >= 2  # a long step continues, same title


@pytest.mark.pdf
@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("example", names())
def test_no_overfull_box_on_any_slide(example, lang):
    tex = render_slides(derive(example, lang=lang), handout=True)
    pdf, log = compile_with_log(tex, jobname=f"{example}-slides")
    assert pdf.startswith(b"%PDF")
    assert overfull_boxes(log, tolerance_pt=0.5) == []


def test_handout_and_theme_without_slides_are_refused(tmp_path, capsys):
    assert main(["render", "--example", "mt", "--format", "tex", "--handout", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == ("symattn: error: --handout: only the slides take it: add "
                                               "--format slides")
    assert main(["render", "--example", "mt", "--format", "slides-tex", "--theme", "x}\\input{y",
                 "--out", str(tmp_path)]) == 2
    assert "--theme: expected a Beamer theme's name" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.pdf
def test_handout_is_taken_with_the_slides_pdf_alone(tmp_path):
    assert main(["render", "--example", "symbolic", "--format", "slides", "--handout", "--out", str(tmp_path)]) == 0
    pdf = (tmp_path / "symbolic.slides.pdf").read_bytes()
    assert pdf_pages(pdf) == len(page_texts(pdf)) and "Step 1" in page_texts(pdf)[3]


def test_theme_and_handout_reach_the_slides_latex(tmp_path):
    assert main(["render", "--example", "symbolic", "--format", "slides-tex", "--theme", "Madrid", "--handout",
                 "--out", str(tmp_path)]) == 0
    tex = (tmp_path / "symbolic.slides.tex").read_text(encoding="utf-8")
    assert r"\usetheme{Madrid}" in tex and tex.startswith(r"\documentclass[11pt,aspectratio=169,dvipdfmx,"
                                                          r"xcolor=table,handout]{beamer}")
