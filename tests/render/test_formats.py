"""Markdown, HTML (opened in headless Chromium) and the notebook display of a Derivation."""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from symattn import derive, render_markdown
from symattn.cli import main
from symattn.render.html import render_html, split_alignment


def test_markdown_reads_like_the_article():
    md = render_markdown(derive("mt"))
    assert md.startswith("# Attention の計算：I love machine learning")
    for heading in ("## Self-Attention", "### Step 1: トークン埋め込み",
                    "### Step 7: 重み付き和", "### Step 3: 最終射影"):
        assert heading in md, heading
    assert "| `love` | $[0.8,\\ 1.2]$ |" in md  # the embedding table as a Markdown table
    assert r"[0.8 \cdot 1.0 + 1.2 \cdot 0.1,\quad 0.8 \cdot 0.2 + 1.2 \cdot 0.9]" in md
    assert "$$\n\\begin{aligned}" in md and "\\begin{align*}" not in md and r"\tok{" not in md
    # the heatmap: each weight beside its shade of the largest (the darker, the larger), the largest of a row in bold,
    # every weight cell of one width; under it the scale of the shades
    assert "| `love` | 0.1688 ▒     | 0.2472 ▓     | 0.2457 ▓     | **0.3382** █ |" in md
    assert "\n\n0 ░▒▓█ 0.3382\n" in md
    assert md.count("$$") % 2 == 0


def test_markdown_escapes_user_text():
    from symattn.pipeline.derive import derive_spec
    from symattn.pipeline.parse import parse_spec

    spec = parse_spec({"title": "*bold* <b>x</b> $5", "sections": [{
        "kind": "self_attention", "tokens": ["a|b", "c"], "X": [["1", "0"], ["0", "1"]],
        "W_Q": [["1", "0"], ["0", "1"]], "W_K": [["1", "0"], ["0", "1"]], "W_V": [["1"], ["2"]]}]})
    md = render_markdown(derive_spec(spec, lang="en"))
    assert r"\*bold\* \<b\>x\</b\> \$5" in md
    assert "`a\\|b`" in md


class _Checker(HTMLParser):
    """Collects tags and refuses scripts and outside references."""

    def __init__(self):
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        assert tag not in ("script", "link", "iframe", "img")
        for name, value in attrs:
            if name != "xmlns":  # the MathML namespace is a name, not a download
                assert not (value or "").startswith(("http:", "https:", "//")), (tag, name, value)


@pytest.fixture(scope="module")
def mt_html(tmp_path_factory):
    folder = tmp_path_factory.mktemp("html")
    assert main(["render", "--example", "mt", "--format", "html", "--out", str(folder)]) == 0
    return folder / "mt.html"


def test_html_is_self_contained_mathml(mt_html):
    page = mt_html.read_text(encoding="utf-8")
    checker = _Checker()
    checker.feed(page)
    assert checker.tags.count("math") > 100 and "table" in checker.tags
    assert page.startswith("<!DOCTYPE html>") and '<html lang="ja">' in page
    assert "<mtext>私は</mtext>" in page  # user text inside math is HTML text, not LaTeX
    assert "0.3382" in page and "<mn>0.3382</mn>" in page
    # the heatmap: weight columns of one width, the largest weight darkest, the colour scale from 0 to it under it
    heatmap = page.split('<table class="data heatmap">')[1].split("</table>")[0]
    assert heatmap.startswith('<colgroup><col>' + '<col style="width: 10ch">' * 4 + "</colgroup>")
    assert '<td style="background: rgba(40, 90, 200, 0.6)">0.3382</td>' in heatmap
    assert '</table><p class="heatscale">0 <span class="heatbar"></span> 0.3382</p>' in page


def test_html_alignment_splits_outside_matrices():
    left, right = split_alignment(r"{Q}_{\text{a}} &= [1] \cdot \begin{bmatrix} 1 & 2 \\ 3 & 4 \end{bmatrix}")
    assert left == r"{Q}_{\text{a}} " and right.startswith("= [1]") and right.endswith(r"\end{bmatrix}")
    assert split_alignment(r"&\approx 0.5") == ("", r"\approx 0.5")
    assert split_alignment(r"a \& b &= c") == (r"a \& b ", "= c")


def chromium(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    assert binary, "Chromium is needed by the HTML tests (scripts/setup.sh installs Debian's chromium)"
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync"]
    return subprocess.run([binary, *flags, *args], capture_output=True, text=True, timeout=120, env=env)


def test_html_renders_in_chromium(mt_html, tmp_path):
    dom = chromium(f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", mt_html.as_uri()).stdout
    assert dom.count("<math") > 100  # the browser kept the MathML
    assert re.search(r"<mn>0\.8933</mn>", dom)
    shot = tmp_path / "page.png"
    chromium(f"--user-data-dir={tmp_path / 'profile2'}", f"--screenshot={shot}", "--window-size=1000,1600",
             mt_html.as_uri())
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


def test_every_format_of_a_masked_encoded_spec_in_both_languages(tmp_path):
    for lang in ("ja", "en"):
        out = tmp_path / lang
        assert main(["render", "--example", "decoder", "--lang", lang, "--format", "tex,md,html,json",
                     "--out", str(out)]) == 0
        assert r"-\infty" in (out / "decoder.md").read_text(encoding="utf-8")
        assert "<mo>&#x02212;</mo><mo>&#x0221E;</mo>" in (out / "decoder.html").read_text(encoding="utf-8")


def test_notebook_display():
    derivation = derive("mt", lang="en")
    assert "<math" in derivation._repr_html_() and "<h2>Self-Attention (encoder)</h2>" in derivation._repr_html_()
    assert derivation._repr_markdown_().startswith("# Attention, worked out")
    latex = derivation._repr_latex_()
    assert r"{z}_{\text{love}} &\approx [0.893,\  0.930,\  0.818]" in latex
    assert latex.count("$$") == 2 * 3  # self-attention, cross-attention and the multi-head output
    assert render_html(derivation) != derivation._repr_html_()  # the notebook gets a fragment, not a page


def test_the_renderers_are_siblings_under_one_base():
    from symattn.render.html import HtmlRenderer
    from symattn.render.latex import LatexRenderer
    from symattn.render.markdown import MarkdownRenderer
    from symattn.render.printers import DerivationRenderer

    formats = (LatexRenderer, MarkdownRenderer, HtmlRenderer)
    assert all(issubclass(cls, DerivationRenderer) for cls in formats)
    assert not any(issubclass(a, b) for a in formats for b in formats if a is not b)


def test_the_model_imports_no_renderer():
    import ast
    from pathlib import Path

    import symattn.document.steps

    tree = ast.parse(Path(symattn.document.steps.__file__).read_text(encoding="utf-8"))
    modules = [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert not any("render" in module for module in modules)
