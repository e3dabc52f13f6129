"""The preamble in two parts: preamble-common.tex, which every document class takes, and preamble-article.tex, what
the article classes add (page geometry, page breaks around headings, asides, page style). A Beamer document takes
the common part alone, compiled here for real in both languages as the handouts are."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from symattn import derive, render_latex
from symattn.errors import RenderError
from symattn.render import templates
from symattn.render.latex import shared_preamble
from symattn.render.pdf import compile_with_log
from symattn.render.templates import class_blocks, class_options, common_preamble

# What only an article's page needs: with any of them a beamer document stops (geometry and \note are beamer's own).
ARTICLE_ONLY = (r"{geometry}", r"\newcommand{\note}", r"\pagestyle{plain}", r"\headingroom", r"\keepwithnext",
                r"\raggedbottom")
# What every document's body may use.
SHARED = (r"\usepackage{amsmath,amssymb}", r"\usepackage[table]{xcolor}", r"\usepackage{lmodern}",
          r"\newcommand{\tok}", r"\newcommand{\cjksub}", r"\def\env@matrix", r"\newcommand{\heatscale}",
          r"\newcommand\flowcontent", r"\newcommand\flowfit", r"\newcommand\figurecaption")


def test_the_common_part_has_what_every_class_needs_and_nothing_of_the_article():
    common, article = common_preamble(None), common_preamble("article")
    for needed in SHARED:
        assert needed in common and needed in article, needed
    for page_only in ARTICLE_ONLY:
        assert page_only not in common and page_only in article, page_only
    assert not re.search(r"^@[A-Z]+@$", article + common, re.MULTILINE)  # no slot line left
    assert "@GEOMETRY@" in article and "@GEOMETRY@" not in common


def test_each_article_block_sits_where_the_common_preamble_names_it():
    blocks = class_blocks("article")
    assert list(blocks) == ["PAGE", "HEADINGS", "NOTES"]
    assert blocks["PAGE"] == "\\usepackage[@GEOMETRY@]{geometry}\n"
    article = common_preamble("article")
    # geometry before xcolor and graphicx, the page-break macros inside \makeatletter, the notes before the figures
    assert article.index("{geometry}") < article.index("{xcolor}")
    assert article.index(r"\def\env@matrix") < article.index(r"\headingroom") < article.index(r"\heatcells")
    at = article.index(r"\@clubpenalty")
    assert article.rfind(r"\makeatletter", 0, at) > article.rfind(r"\makeatother", 0, at)
    assert article.index(r"\newcommand{\note}") < article.index(r"\newlength\FlowH")
    assert "this comment, above the first name, is not copied" not in article  # the article file's own header


def test_a_block_without_its_line_in_the_common_preamble_is_refused(monkeypatch):
    read = templates.read_template
    monkeypatch.setattr(templates, "read_template", lambda name: "% header\n@NOWHERE@\n\\relax\n"
                        if name == "preamble-odd.tex" else read(name))
    with pytest.raises(RenderError, match="preamble-odd.tex: preamble-common.tex has no line @NOWHERE@"):
        common_preamble("odd")


def _first_display(latex: str) -> str:
    """The first derivation of a rendered document that shows a matrix."""
    displays = re.findall(r"\\\[\\begin\{aligned\}.*?\\end\{aligned\}\\\]", latex, re.DOTALL)
    return next(display for display in displays if r"\begin{bmatrix}" in display)


@pytest.mark.pdf
@pytest.mark.parametrize("lang", ["ja", "en"])
def test_a_beamer_document_compiles_with_the_common_part(lang):
    """\\documentclass{beamer} with the common preamble and the language's (as the handouts take them), one frame
    of the mt example's math and the shared macros: a PDF, and no error in TeX's log."""
    display = _first_display(render_latex(derive("mt", lang=lang)))
    token = "機械学習" if lang == "ja" else "learning"
    body = (f"\\begin{{frame}}{{Self-Attention}}\n\\tok{{{token}}}: ${{z}}_{{\\cjksub{{{token}}}}}$\n{display}\n"
            "\\heatcells{{0}{0.3382}}\\heatscale{60}{0.3382}\n"
            "\\begin{tabular}{lr}\\toprule \\tok{love} & \\cellcolor{blue!30}0.3382 \\\\\\bottomrule\\end{tabular}\n"
            "\\end{frame}\n")
    preamble = "\n".join(shared_preamble(lang, body, page=None))
    options = ",".join(["11pt", *class_options("beamer")])
    source = f"\\documentclass[{options}]{{beamer}}\n{preamble}\n\\begin{{document}}\n{body}\\end{{document}}\n"
    pdf, log = compile_with_log(source, jobname=f"slides-{lang}")
    assert pdf.startswith(b"%PDF") and "Error" not in log and "! " not in log
    assert shutil.which("pdftotext"), "pdftotext (poppler-utils) is needed by the PDF tests"
    text = subprocess.run(["pdftotext", "-", "-"], input=pdf, capture_output=True, check=True).stdout.decode()
    assert token in text and "Self-Attention" in text and "0.3382" in text
