"""Text blocks (kind = "text") and the headings a spec writes: every part parsed with one-line errors, inline math
from the safe subset only, user text escaped in every format, the document's language picking the text, and the
PDF compiled for real."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

import symattn
from symattn.cli import main
from symattn.spec.textmath import ARGUMENTS, COMMANDS

ATTENTION = {"kind": "self_attention", "tokens": ["A", "B"], "X": [[1, 0], [0, 1]], "W_Q": [[1, 0], [0, 1]],
             "W_K": [[1, 0], [0, 1]], "W_V": [[1, 0], [0, 1]], "focus": "A"}
# A payload in every part of a text section: LaTeX commands outside math, HTML, Markdown's specials.
PAYLOAD = r"\input{/etc/passwd} <script>alert(1)</script> *a* _b_ | c # 100% & ~ ^"
TEXT = {"kind": "text", "heading": {"ja": "はじめに " + PAYLOAD, "en": "Introduction " + PAYLOAD},
        "paragraphs": ["P1 " + PAYLOAD, {"ja": "日本語の段落 $a < b$。", "en": r"An English paragraph, $a < b$."}],
        "notes": ["N1 " + PAYLOAD + r" $\frac{1}{2}$"],
        "table": {"header": ["Task", "H " + PAYLOAD, r"Cross $x|y$"],
                  "rows": [["a*b|c", r"$\alpha_{ij}$", "<i>x</i>"], ["MT", "source", "R " + PAYLOAD]]},
        "references": ["Vaswani, A., et al. (2017). Attention Is All You Need. arXiv:1706.03762. " + PAYLOAD]}


def spec(*sections, lang="en"):
    return {"title": "Text blocks", "lang": lang, "sections": list(sections)}


def derive(*sections, lang="en"):
    return symattn.derive_spec(symattn.parse_spec(spec(*sections, lang=lang)))


def error(section) -> str:
    with pytest.raises(symattn.SpecError) as caught:
        symattn.parse_spec(spec(section))
    message = str(caught.value)
    assert "\n" not in message
    return message


# ------------------------------------------------------------ parse errors, each with its message

@pytest.mark.parametrize("section, message", [
    ({"kind": "text"}, "sections[0]: a text section needs one of heading, paragraphs, notes, table, references"),
    ({"kind": "text", "paragraphs": "one"}, "sections[0].paragraphs: expected a non-empty list of strings"),
    ({"kind": "text", "paragraphs": []}, "sections[0].paragraphs: expected a non-empty list of strings"),
    ({"kind": "text", "notes": ["  "]}, "sections[0].notes[0]: expected text (a non-empty string"),
    ({"kind": "text", "references": [3]}, "sections[0].references[0]: expected text (a non-empty string"),
    ({"kind": "text", "heading": {"ja": "見出し"}}, "sections[0].heading: no 'en' text (a table by language gives "
                                                 "every language: ja, en"),
    ({"kind": "text", "paragraphs": [{"ja": "あ", "en": "a", "fr": "à"}]},
     "sections[0].paragraphs[0].fr: unknown language (a table by language gives ja, en)"),
    ({"kind": "text", "paragraphs": ["a\x00b"]}, "sections[0].paragraphs[0]: expected text without control"),
    ({"kind": "text", "focus": "A", "paragraphs": ["a"]},
     "sections[0].focus: applies to self_attention, cross_attention, multi_head, grouped_query"),  # and later kinds
    ({"kind": "text", "paragraphs": ["ok", "fine", r"x $\input{/etc/passwd}$"]},
     r"sections[0].paragraphs[2]: unknown math command \input (allowed: Greek letters and "),
    ({"kind": "text", "paragraphs": [r"$\softmax(x)$"]},
     r"unknown math command \softmax (a function name: \operatorname{softmax}) (allowed: "),
    ({"kind": "text", "paragraphs": [r"$\frc{1}{2}$"]}, r"unknown math command \frc (did you mean \frac?) (allowed: "),
    ({"kind": "text", "paragraphs": [r"$\write18{rm -rf}$"]}, r"unknown math command \write (allowed: "),
    ({"kind": "text", "paragraphs": [r"$\def\x{1}$"]}, r"unknown math command \def (allowed: "),
    ({"kind": "text", "paragraphs": [r"$\catcode`\$=11$"]}, r"unknown math command \catcode (allowed: "),
    ({"kind": "text", "paragraphs": [r"$\url{http://x}$"]}, r"unknown math command \url (allowed: "),
    ({"kind": "text", "paragraphs": [r"$\immediate$"]}, r"unknown math command \immediate (allowed: "),
    ({"kind": "text", "paragraphs": [r"$a \\ b$"]}, r"unknown math command \\ (allowed control symbols: "),
    ({"kind": "text", "paragraphs": ["costs $5"]}, "sections[0].paragraphs[0]: a lone $ (math is written between "
                                                   r"two $; write \$ for a dollar sign)"),
    ({"kind": "text", "paragraphs": ["a $$ b"]}, "sections[0].paragraphs[0]: empty math $$"),
    ({"kind": "text", "paragraphs": ["$x^{2$"]}, "unbalanced braces in math: a { without its }"),
    ({"kind": "text", "paragraphs": ["$x}$"]}, "unbalanced braces in math: a } without its {"),
    ({"kind": "text", "paragraphs": ["$x^^5cinput$"]}, "^ needs something to set after it"),
    ({"kind": "text", "paragraphs": ["$x_$"]}, "_ needs something to set after it"),
    ({"kind": "text", "paragraphs": ["$50% of x$"]}, "unexpected character '%' in math"),
    ({"kind": "text", "paragraphs": ["$a & b$"]}, "unexpected character '&' in math"),
    ({"kind": "text", "paragraphs": ["$#1$"]}, "unexpected character '#' in math"),
    ({"kind": "text", "paragraphs": ["$a × b$"]}, "unexpected character '×' in math (write text as \\text{…}"),
    ({"kind": "text", "paragraphs": [r"$\frac 12$"]}, r"\frac needs 2 arguments in braces (\frac{…}{…})"),
    ({"kind": "text", "paragraphs": [r"$\frac{1} 2$"]}, r"\frac needs 2 arguments in braces"),
    ({"kind": "text", "paragraphs": [r"$\sqrt2$"]}, r"\sqrt needs 1 argument in braces"),
    ({"kind": "text", "paragraphs": [r"$\left( x$"]}, r"a \left without its \right"),
    ({"kind": "text", "paragraphs": [r"$x \right)$"]}, r"a \right without its \left"),
    ({"kind": "text", "paragraphs": [r"$\left x$"]}, r"\left needs a delimiter after it"),
    ({"kind": "text", "paragraphs": [r"$\text{\input{x}}$"]}, r"\text{…} holds plain text: no \ or braces inside"),
    ({"kind": "text", "paragraphs": [r"$\text x$"]}, r"\text needs its text in braces"),
    ({"kind": "text", "table": {"header": ["a", "b", "c"], "rows": [["1", "2", "3"], ["1", "2"]]}},
     "sections[0].table.rows[1]: 2 cells, but the header has 3"),
    ({"kind": "text", "table": {"header": ["a"], "rows": [["1", "2"]]}},
     "sections[0].table.rows[0]: 2 cells, but the header has 1"),
    ({"kind": "text", "table": {"header": ["a"]}}, "sections[0].table.rows: missing"),
    ({"kind": "text", "table": {"header": ["a"], "rows": [["1"]], "caption": "x"}},
     "sections[0].table.caption: unknown key"),
    ({"kind": "text", "table": ["a"]}, "sections[0].table: expected a table { header = [...], rows = [[...], ...] }"),
    ({"kind": "text", "table": {"header": ["a"], "rows": [[r"$\input x$"]]}},
     r"sections[0].table.rows[0][0]: unknown math command \input"),
    ({**ATTENTION, "heading": {"en": "Encoder"}}, "sections[0].heading: no 'ja' text"),
    ({**ATTENTION, "heading": r"$\input{x}$"}, r"sections[0].heading: unknown math command \input"),
])
def test_a_bad_text_is_one_line_naming_its_field(section, message):
    assert message in error(section)


def test_the_cli_refuses_bad_math_with_exit_2_and_writes_nothing(tmp_path, capsys):
    path = tmp_path / "bad.toml"
    path.write_text('[[sections]]\nkind = "text"\nparagraphs = ["ok", "fine", "x $\\\\input{/etc/passwd}$"]\n',
                    encoding="utf-8")
    out = tmp_path / "out"
    assert main(["render", str(path), "--format", "tex,md,html,json", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(r"symattn: error: sections[0].paragraphs[2]: unknown math command \input (allowed: ")
    assert "\n" not in err and not out.exists()


# ------------------------------------------------------------ escaping in every part and format

def test_latex_prints_user_text_literally_and_inlines_the_math():
    tex = symattn.render_latex(derive(TEXT, ATTENTION))
    assert r"\input{/etc/passwd}" not in tex
    assert tex.count(r"\textbackslash{}input\{/etc/passwd\}") == 6  # heading, paragraph, note, 2 cells, reference
    assert r"\section*{\headingwords \marksection{s1}{1}{Introduction \textbackslash{}input" in tex
    assert r"100\% \& \textasciitilde{} \textasciicircum{}" in tex
    assert r"An English paragraph, $a < b$." in tex and r"$\frac{1}{2}$" in tex and r"$\alpha_{ij}$" in tex
    assert r"\note{N1 " in tex and r"\item Vaswani, A." in tex and r"\toprule" in tex


def test_html_escapes_user_text_and_sets_the_math_as_mathml():
    html = symattn.render_html(derive(TEXT, ATTENTION))
    assert "<script>" not in html and "<i>x</i>" not in html
    assert html.count("&lt;script&gt;alert(1)&lt;/script&gt;") == 6
    assert "<h2>Introduction \\input{/etc/passwd}" in html
    assert "<mfrac><mrow><mn>1</mn></mrow><mrow><mn>2</mn></mrow></mfrac>" in html  # 1/2 as MathML
    assert "&#x003B1;" in html  # α
    assert "$" not in html.split("<body>")[1]
    assert '<ol class="references"><li>Vaswani, A.' in html


def test_markdown_escapes_its_specials_and_keeps_the_math_for_katex():
    md = symattn.render_markdown(derive(TEXT, ATTENTION))
    assert md.count(r"\\input\{/etc/passwd\} \<script\>alert(1)\</script\> \*a\* \_b\_ \| c \# 100% \& \~ ^") == 6
    rows = [line for line in md.splitlines() if line.startswith("| ")]
    assert rows[0] == (r"| Task | H \\input\{/etc/passwd\} \<script\>alert(1)\</script\> \*a\* \_b\_ \| c \# 100% "
                       r"\& \~ ^ | Cross $x\vert y$ |")  # no bare | inside a cell, not even in math
    assert rows[1] == r"| a\*b\|c | $\alpha_{ij}$ | \<i\>x\</i\> |"
    assert r"An English paragraph, $a \lt  b$." in md  # no < for a renderer that passes math through
    assert "> N1 " in md and "\n1. Vaswani, A." in md and "## Introduction" in md


def test_a_dollar_sign_is_written_as_backslash_dollar():
    section = {"kind": "text", "paragraphs": [r"It costs \$5, and $x$ is math."]}
    assert r"It costs \$5, and $x$ is math." in symattn.render_latex(derive(section))
    assert r"It costs \$5, and $x$ is math." in symattn.render_markdown(derive(section))
    assert "It costs $5, and <math" in symattn.render_html(derive(section))


def test_every_allowed_command_becomes_mathml():
    from latex2mathml.converter import convert

    for command in sorted(COMMANDS - {"left", "right", "text"}):
        mathml = convert(f"\\{command}" + "{a}" * ARGUMENTS.get(command, 0))
        assert "\\" not in mathml, command


# ------------------------------------------------------------ the language, headings, JSON

def test_the_documents_language_picks_the_text():
    ja = symattn.render_markdown(derive(TEXT, lang="ja"))
    assert "## はじめに" in ja and "日本語の段落 $a \\lt  b$。" in ja and "English paragraph" not in ja
    en = symattn.render_markdown(symattn.derive_spec(symattn.parse_spec(spec(TEXT, lang="ja")), lang="en"))
    assert "## Introduction" in en and "An English paragraph" in en and "日本語" not in en


@pytest.mark.parametrize("section, replaced", [
    (ATTENTION, "Self-Attention"),
    ({"kind": "cross_attention", "tokens": ["私は"], "X": [[1, 0]], "memory_tokens": ["A", "B"],
      "memory": [[1, 0], [0, 1]], "W_Q": [[1, 0], [0, 1]], "W_K": [[1, 0], [0, 1]], "W_V": [[1, 0], [0, 1]]},
     "Cross-Attention (decoder)"),
    ({"kind": "multi_head", "focus": "A", "heads": [{"output": [1, 2]}, {"output": [3, 4]}],
      "W_O": [[1, 0], [0, 1], [1, 0], [0, 1]]}, "Multi-head attention"),
])
def test_an_attention_section_may_write_its_own_heading(section, replaced):
    heading = {"ja": "自前の見出し $d_k$", "en": "My own heading $d_k$"}
    md = symattn.render_markdown(derive({**section, "heading": heading}))
    assert "## My own heading $d_k$" in md and f"## {replaced}\n" not in md
    assert f"## {replaced}\n" in symattn.render_markdown(derive(section))
    ja = symattn.render_latex(derive({**section, "heading": heading}, lang="ja"))
    assert r"{1}{自前の見出し $d_k$}}" in ja and r"\section*{\headingwords \marksection{s" in ja


def test_a_text_section_has_no_answers_and_json_leaves_it_out():
    derivation = derive(TEXT, ATTENTION, TEXT)
    sections = json.loads(symattn.render_json(derivation))["sections"]
    assert [section["kind"] for section in sections] == ["self_attention"]
    assert symattn.answers(derivation)["sections"] == sections
    assert json.loads(symattn.render_json(symattn.derive("mt")))["sections"][0]["kind"] == "self_attention"


def test_a_document_of_text_alone_renders():
    derivation = derive({"kind": "text", "heading": "Only a heading"})
    assert "## Only a heading" in symattn.render_markdown(derivation)
    assert json.loads(symattn.render_json(derivation))["sections"] == []


# ------------------------------------------------------------ the PDF

@pytest.mark.pdf
@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_pdf_of_all_five_parts_and_every_command_compiles(tmp_path, lang):
    every = " ".join(f"\\{c}" + "{a}" * ARGUMENTS.get(c, 0) for c in sorted(COMMANDS - {"left", "right", "text"}))
    section = {**TEXT, "paragraphs": [*TEXT["paragraphs"], f"${every} \\left( x \\right] \\text{{テキスト}}$"]}
    path = tmp_path / "text.json"
    path.write_text(json.dumps(spec(section, ATTENTION, lang=lang)), encoding="utf-8")
    assert main(["render", str(path), "--format", "pdf", "--out", str(tmp_path / "out")]) == 0
    pdf = tmp_path / "out" / "text.pdf"
    assert pdf.read_bytes().startswith(b"%PDF")
    if shutil.which("pdftotext"):
        text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True).stdout
        assert r"\input{/etc/passwd}" in text and "<script>alert(1)</script>" in text
        assert "Attention Is All You Need" in text and ("はじめに" if lang == "ja" else "Introduction") in text


def test_a_markdown_renderer_with_dollar_math_reads_the_text_back():
    """CommonMark with tables and $…$ math (markdown-it-py, as MkDocs and Jupyter read it): every cell stays in its
    column, the payloads are text, and the math reaches the math renderer whole."""
    markdown_it = pytest.importorskip("markdown_it")
    dollarmath = pytest.importorskip("mdit_py_plugins.dollarmath")
    parser = markdown_it.MarkdownIt("commonmark").enable("table").use(dollarmath.dollarmath_plugin)
    html = parser.render(symattn.render_markdown(derive(TEXT, ATTENTION)))
    payload = r"\input{/etc/passwd} &lt;script&gt;alert(1)&lt;/script&gt; *a* _b_ | c # 100% &amp; ~ ^"
    assert "<script>" not in html and html.count(payload) == 6
    assert ("<tr>\n<td>a*b|c</td>\n<td><span class=\"math inline\">\\alpha_{ij}</span></td>\n"
            "<td>&lt;i&gt;x&lt;/i&gt;</td>\n</tr>") in html
    assert '<th>Cross <span class="math inline">x\\vert y</span></th>' in html
    assert '<span class="math inline">\\frac{1}{2}</span>' in html


def test_a_markdown_line_that_would_start_a_list_or_a_rule_is_text():
    markdown_it = pytest.importorskip("markdown_it")
    section = {"kind": "text", "paragraphs": ["- not a list", "2. not a list", "---"], "references": ["- one"]}
    md = symattn.render_markdown(derive(section))
    assert "\n\\- not a list\n" in md and "\n2\\. not a list\n" in md and "\n\\---\n" in md and "1. \\- one" in md
    html = markdown_it.MarkdownIt("commonmark").render(md)
    assert "<ul>" not in html and "<hr" not in html and "<ol start" not in html
    assert "<p>- not a list</p>" in html and "<p>2. not a list</p>" in html and "<li>- one</li>" in html


def test_a_derivation_finds_its_sections_of_one_kind_past_the_text_blocks():
    derivation = symattn.derive("mt", lang="en")
    assert [s.kind for s in derivation.sections if s.kind != "text"] == ["self_attention", "cross_attention",
                                                                          "multi_head"]
    assert derivation.of_kind("self_attention")[0].result.queries[1].output.shape == (1, 3)
    assert derivation.of_kind("nothing") == ()
