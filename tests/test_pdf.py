"""PDFs compiled for real (CI installs TeX Live): text, Japanese glyphs, errors, no half-written files.

These tests are never skipped: without latexmk/lualatex they fail, because a PDF feature that was not
compiled was not tested.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from symattn import build as build_module
from symattn.cli import main
from symattn.errors import LatexError
from symattn.render.pdf import compile_pdf, log_excerpt

pytestmark = pytest.mark.pdf


def pdf_text(path) -> str:
    assert shutil.which("pdftotext"), "pdftotext (poppler-utils) is needed by the PDF tests"
    text = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, check=True).stdout
    return " ".join(text.split())


@pytest.fixture(scope="module")
def pdfs(tmp_path_factory):
    out = tmp_path_factory.mktemp("pdf")
    for lang in ("ja", "en"):
        status = main(["render", "--example", "mt", "--lang", lang, "--format", "pdf", "--out", str(out / lang)])
        assert status == 0
    return {lang: out / lang / "mt.pdf" for lang in ("ja", "en")}


def test_japanese_pdf_has_the_article_text_and_numbers(pdfs):
    text = pdf_text(pdfs["ja"])
    for phrase in ("トークン埋め込み", "私は", "Step 7: 重み付き和", "最終射影", "love", "learning"):
        assert phrase in text, phrase
    for number in ("0.92", "1.6976", "0.8188", "0.3382", "0.8933", "0.8467", "0.8742", "0.9230", "0.6962"):
        assert number in text, number
    assert pdfs["ja"].read_bytes().startswith(b"%PDF")


def test_english_pdf(pdfs):
    text = pdf_text(pdfs["en"])
    for phrase in ("Token embeddings", "Weighted sum", "Final projection", "私は"):
        assert phrase in text, phrase
    assert "トークン埋め込み" not in text


def test_latex_failure_reports_log_lines():
    broken = "\\documentclass{article}\n\\begin{document}\n\\undefinedmacro\n\\end{document}\n"
    with pytest.raises(LatexError) as caught:
        compile_pdf(broken, jobname="broken")
    message = str(caught.value)
    assert "Undefined control sequence" in message and "\n" not in message


def test_latex_failure_leaves_no_pdf(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(build_module, "render_latex", lambda derivation: "\\documentclass{article}\\begin{document}"
                        "\\undefinedmacro\\end{document}")
    status = main(["render", "--example", "mt", "--format", "pdf", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert status == 2 and "Undefined control sequence" in err
    assert not any(p.suffix == ".pdf" or p.name.startswith(".") for p in tmp_path.iterdir())


def test_shell_escape_and_file_reading_are_off():
    # \write18 would run a shell command with shell escape on; \input of an absolute path needs openin_any=a.
    probe = ("\\documentclass{article}\\begin{document}\\immediate\\write18{touch pwned}"
             "\\input{/etc/hostname}\\end{document}")
    with pytest.raises(LatexError) as caught:
        compile_pdf(probe, jobname="probe")
    assert "hostname" in str(caught.value)


def test_log_excerpt_picks_error_lines():
    log = "This is LuaTeX\n(./a.tex\n! Undefined control sequence.\nl.3 \\foo\n\nmore\n"
    assert log_excerpt(log) == "! Undefined control sequence. | l.3 \\foo"
