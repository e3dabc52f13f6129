"""Hostile user text in every text field (title, tokens, memory tokens), rendered to every format: inert in each,
and read back as typed where it can be (the PDF through pdftotext, the HTML through Chromium's DOM, Markdown
through a CommonMark reading of its code spans)."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from symattn import compile_pdf, derive_spec, parse_spec, render_html, render_latex, render_markdown
from symattn.render.escape import safe

PAYLOADS = [
    r"\input{/etc/passwd}", r"\write18{touch pwned}", r"\directlua{os.exit(1)}", "^^5cinput", "}{{a}", "100%",
    "#1", "a~b", "$x$", "p&q", "`tick`", "``two``", "*em*", "_u_", "[x](javascript:alert(1))",
    "<script>alert(1)</script>", "a|b", "<img src=x onerror=alert(1)>", "&amp;", "\"'", "``q''", "a--b",
    "a---b", "?`!`", "x^2", "<<g>>", ",,z", "gr\u00fc\u00dfe \U0001F600",
]
# What no font of the PDF has (an emoji prints as an empty box), left out of the read-back.
UNPRINTABLE = "\U0001F600"
# (Line breaks in names and titles are refused when the spec is read; Markdown turns any into spaces all the same.)
TITLE = "Title <script>alert(1)</script> " + " ".join(PAYLOADS[:8])


def spec():
    n = len(PAYLOADS)
    rows = [[str(i % 3), str((i * 2) % 5)] for i in range(n)]
    identity = [["1", "0"], ["0", "1"]]
    return parse_spec({"title": TITLE, "sections": [
        {"kind": "self_attention", "tokens": PAYLOADS, "X": rows, "W_Q": identity, "W_K": identity,
         "W_V": identity, "focus": "<img src=x onerror=alert(1)>"},
        {"kind": "cross_attention", "tokens": PAYLOADS[:2], "X": rows[:2], "memory_tokens": PAYLOADS,
         "memory": rows, "W_Q": identity, "W_K": identity, "W_V": identity, "focus": PAYLOADS[1]}]})


@pytest.fixture(scope="module")
def derivation():
    return derive_spec(spec(), lang="en")


# ------------------------------------------------------------ LaTeX and PDF


def test_latex_runs_no_user_command(derivation):
    tex = render_latex(derivation)
    for command in (r"\input{", r"\write18", r"\directlua", "^^", r"\^{}", "`", "''", "--", "<<", ">>", ",,"):
        assert command not in tex.split(r"\begin{document}")[1], command


def flat(text: str) -> str:
    return "".join(text.split())


@pytest.mark.pdf
def test_pdf_prints_every_payload_as_typed(derivation):
    assert shutil.which("pdftotext"), "pdftotext (poppler-utils) is needed by the PDF tests"
    pdf = compile_pdf(render_latex(derivation), jobname="payloads")
    text = subprocess.run(["pdftotext", "-", "-"], input=pdf, capture_output=True, check=True).stdout.decode()
    printed = flat(text)
    for payload in [*PAYLOADS, TITLE]:
        assert flat(payload.replace(UNPRINTABLE, "")) in printed, payload
    for ligature in "‘’“”¿¡ˆ–—«»„":
        assert ligature not in text, ligature


# ------------------------------------------------------------ Markdown


def code_span_end(line: str, start: int) -> tuple[int, str] | None:
    """CommonMark's code span at `start` (a backtick run): (end, content), or None when no run of the same length
    closes it."""
    fence = re.match("`+", line[start:]).group(0)
    for m in re.finditer("`+", line[start + len(fence):]):
        if m.group(0) == fence:
            content = line[start + len(fence):start + len(fence) + m.start()]
            if content.startswith(" ") and content.endswith(" ") and content.strip(" "):
                content = content[1:-1]
            return start + len(fence) + m.end(), content
    return None


def read_markdown(md: str) -> tuple[str, list[str]]:
    """(the text outside code spans and math, backslash escapes resolved; the code spans' contents), after
    checking that no math holds a < (a renderer that leaves math to the page would pass it on as HTML)."""
    displays = re.findall(r"^\$\$\n(.*?)\n\$\$$", md, flags=re.M | re.S)
    assert not any("<" in math for math in displays)
    md = re.sub(r"^\$\$\n.*?\n\$\$$", "", md, flags=re.M | re.S)
    outside, spans = [], []
    for line in md.split("\n"):
        i = 0
        while i < len(line):
            ch = line[i]
            if ch == "\\" and i + 1 < len(line):
                outside.append(line[i + 1])
                i += 2
            elif ch == "`":
                found = code_span_end(line, i)
                if found is None:
                    run = re.match("`+", line[i:]).group(0)
                    outside.append(run)
                    i += len(run)
                else:
                    i, content = found
                    spans.append(content.replace("\\|", "|") if line.startswith("|") else content)
            elif ch == "$":
                end = line.index("$", i + 1)
                assert "<" not in line[i:end], line
                i = end + 1
            else:
                assert ch not in "<&", (ch, line)  # no tag, no entity
                outside.append(ch)
                i += 1
        outside.append("\n")
    return "".join(outside), spans


def test_markdown_is_inert_and_literal(derivation):
    md = render_markdown(derivation)
    outside, spans = read_markdown(md)
    for payload in PAYLOADS:
        assert payload in spans, payload
    assert outside.startswith("# Attention, worked out: " + " ".join(TITLE.split("\n")) + "\n")
    assert not re.search(r"^\s*<", md, flags=re.M)  # no HTML block
    for table in re.findall(r"(?:^\|.*\n)+", md, flags=re.M):  # every row has as many cells as the header
        assert len({len(re.findall(r"(?<!\\)\|", row)) for row in table.splitlines()}) == 1, table


def test_markdown_through_a_math_aware_commonmark_renderer(derivation):
    markdown_it = pytest.importorskip("markdown_it")
    dollarmath = pytest.importorskip("mdit_py_plugins.dollarmath")
    page = (markdown_it.MarkdownIt("commonmark").enable("table").use(dollarmath.dollarmath_plugin)
            .render(render_markdown(derivation)))
    tags = Tags()
    tags.feed(page)
    assert not {"script", "img", "a"} & set(tags.names), set(tags.names)
    for payload in PAYLOADS:
        assert payload in tags.code, payload


def test_markdown_code_spans_fit_any_backticks():
    identity = [["1", "0"], ["0", "1"]]
    for token in ["`", "a``b", "`x", "x`", "```", "a\u00a0`"]:  # (a name with spaces at its ends is refused)
        md = render_markdown(derive_spec(parse_spec({"sections": [
            {"kind": "self_attention", "tokens": [token, "b"], "X": identity, "W_Q": identity, "W_K": identity,
             "W_V": identity, "focus": "b"}]}), lang="en"))
        assert token in read_markdown(md)[1], token


# ------------------------------------------------------------ HTML


class Tags(HTMLParser):
    """Every element's name, and the text inside <code> and <mtext>."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.names: list[str] = []
        self.code: list[str] = []
        self.mtext: list[str] = []
        self._open: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.names.append(tag)
        self._open.append(tag)

    def handle_endtag(self, tag):
        while self._open and self._open.pop() != tag:
            pass

    def handle_data(self, data):
        if self._open and self._open[-1] == "code":
            self.code.append(data)
        if self._open and self._open[-1] == "mtext":
            self.mtext.append(data)


def test_html_shows_every_payload_as_text_in_chromium(derivation, tmp_path):
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    assert binary, "Chromium is needed by the HTML tests (scripts/setup.sh installs Debian's chromium)"
    page = tmp_path / "payloads.html"
    page.write_text(render_html(derivation), encoding="utf-8")
    dom = subprocess.run([binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                          f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    tags = Tags()
    tags.feed(dom)
    assert "math" in tags.names and not {"script", "img", "a"} & set(tags.names), set(tags.names)
    for payload in PAYLOADS:
        assert payload in tags.code, payload
        assert payload in tags.mtext, payload  # x_{<img ...>} in the MathML, as text
    assert "<script>alert(1)</script>" in html.unescape(re.search("<h1>(.*?)</h1>", dom, re.S).group(1))


def test_moodle_text_is_inert_and_reads_back():
    for payload in PAYLOADS:
        text = safe(payload)
        assert not set("<>{}\"'") & set(text), text
        assert html.unescape(text) == payload
