"""Formulas in sentences are math in every format: the PE formula and e^{-∞} = 0 are typeset, never raw text with
a caret (the PDFs are compiled for real and read back with pdftotext)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from symattn import examples
from symattn.cli import main

pytestmark = pytest.mark.pdf

EXAMPLES = tuple(examples.names())


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    out = tmp_path_factory.mktemp("formulas")
    for name in EXAMPLES:
        for lang in ("ja", "en"):
            status = main(["render", "--example", name, "--lang", lang, "--format", "pdf,md,html",
                           "--out", str(out / f"{name}-{lang}")])
            assert status == 0
    return out


def pdf_text(path) -> str:
    assert shutil.which("pdftotext"), "pdftotext (poppler-utils) is needed by the PDF tests"
    return subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("name", EXAMPLES)
@pytest.mark.parametrize("lang", ["ja", "en"])
def test_no_pdf_has_a_raw_caret(outputs, name, lang):
    text = pdf_text(outputs / f"{name}-{lang}" / f"{name}.pdf")
    assert "ˆ" not in text and "^" not in text


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_markdown_and_html_set_the_formulas_as_math(outputs, lang):
    md = (outputs / f"decoder-{lang}" / "decoder.md").read_text(encoding="utf-8")
    assert r"$\mathit{PE}(\mathit{pos},\, 2i) = \sin(\mathit{pos} / 10000^{2i/d})$" in md
    assert r"$e^{-\infty} = 0$" in md
    assert "10000^(" not in md and "e^(" not in md
    html = (outputs / f"decoder-{lang}" / "decoder.html").read_text(encoding="utf-8")
    assert "10000^(" not in html and "e^(" not in html
    assert "<msup><mn>10000</mn>" in html  # the exponent 2i/d is a MathML superscript
