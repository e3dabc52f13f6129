"""Handouts a lecturer hands out unedited (issue 31): the built-in examples a lecturer tried (mt, layer, modern), in
both languages, read back from the LaTeX, the HTML and the compiled pages (pdftotext)."""

from __future__ import annotations

import re
import subprocess
from html import unescape
from html.parser import HTMLParser

import pytest

from symattn import derive, derive_spec, parse_spec, render_html, render_latex, render_markdown
from symattn.typeset.layout import LINE_CHARACTERS, row_width
from symattn.cli import main

HANDOUTS = ("mt", "layer", "modern")


def one(section: dict, lang: str = "en"):
    """The derivation of a spec of one section."""
    return derive_spec(parse_spec({"title": "Handout", "lang": lang, "sections": [section]}))
LANGS = ("ja", "en")
# a bracket of plain numbers left open at a line's end: a row vector split mid-vector
NUMBER = r"(?:\{?-\}?|-)?\d+(?:\.\d+)?"
SPLIT_ROW = re.compile(rf"\[{NUMBER}(?:,\\ +{NUMBER})*,\\ *(?:\\\\)?$")


@pytest.fixture(scope="module")
def tex():
    return {(e, lang): render_latex(derive(e, lang=lang)) for e in HANDOUTS for lang in LANGS}


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("example", HANDOUTS)
def test_no_row_vector_is_split_mid_vector(tex, example, lang):
    """Item 14: [0.8, 1.2, 0.0, 0.4] · W_Q stays on one line ("[0.8, 1.2, 0.0," / "0.4] ·" on layer en p.3)."""
    assert not split_rows(tex[(example, lang)], LINE_CHARACTERS - 16)
    assert r"[0.8,\  1.2,\  0.0,\  0.4] \cdot" in tex[("layer", lang)]


def split_rows(tex: str, room: float) -> list[str]:
    """The row vectors of plain numbers split across lines of an align that would have fitted `room` whole."""
    lines = tex.split(r"\begin{document}")[1].splitlines()
    found = []
    for i, line in enumerate(lines):
        if SPLIT_ROW.search(line.rstrip()):
            text = line[line.rindex("["):].rstrip(" \\")
            for after in lines[i + 1:]:
                text += " " + after.replace(r"&\qquad", "").strip()
                if "]" in after:
                    break
            entries = [e.strip(" \\") for e in text[1:text.index("]")].split(",")]
            if row_width(entries) <= room:
                found.append(text)
    return found


def test_a_row_wider_than_the_line_still_wraps():
    """A vector that cannot fit one line (24 entries) is the one exception: it wraps after a comma."""
    spec = {"kind": "norm", "tokens": ["A"], "X": [[str(i + 0.5) for i in range(24)]], "eps": "0"}
    tex = render_latex(one(spec))
    assert not split_rows(tex, LINE_CHARACTERS - 16) and split_rows(tex, 1000)


class Cells(HTMLParser):
    """The text of each aligned line's right-hand cell (<td class="right">) of an HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[str] = []
        self.depth = 0

    def handle_starttag(self, tag, attrs):
        if tag == "td" and ("class", "right") in attrs:
            self.cells.append("")
            self.depth = 1
        elif self.depth and tag == "td":
            self.depth += 1

    def handle_endtag(self, tag):
        if self.depth and tag == "td":
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.cells[-1] += data


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("example", HANDOUTS)
def test_the_html_keeps_each_row_vector_on_one_line(example, lang):
    """Item 14 in the HTML DOM: no aligned line ends inside a bracket of numbers (mt's [0.8, 1.2] was split)."""
    cells = Cells()
    cells.feed(render_html(derive(example, lang=lang)))
    assert len(cells.cells) > 20
    open_row = re.compile(r"\[(?:\u2212?\d+(?:\.\d+)?,[\s\u00a0]*)+$")
    assert not [c for c in cells.cells if open_row.search(c)]


@pytest.mark.parametrize("lang", LANGS)
def test_layer_norm_shows_decimals_to_students_and_surds_under_exact(tex, lang):
    """Item 12: layer's LayerNorm has no 10-digit surds or fractions unless --exact is asked (it had
    −1754465√34878140143683/34878140143683 and 1291321339/1600000000 on layer en p.39)."""
    default = tex[("layer", lang)]
    assert r"\sqrt{1291337339}" not in default and "1291321339" not in default
    assert r"\sigma^{2}_{\mathrm{love}} + \varepsilon &\approx 0.8071 + 0.00001 \approx 0.8071" in default
    assert r"\sqrt{\sigma^{2}_{\mathrm{love}} + \varepsilon} &\approx \sqrt{0.8071} \approx 0.8984" in default
    # the normalised row: its quotients and its decimals, each entry beside the others (not one a line)
    assert r"&\approx [\frac{1.408475}{0.89838},\  \frac{-0.445025}{0.89838},\  \frac{0.057875}{0.89838},\  " \
           r"\frac{-1.021325}{0.89838}] \\" in default
    assert r"&\approx [1.5678,\  -0.4954,\  0.0644,\  -1.1369]" in default
    exact = render_latex(derive("layer", lang=lang), exact=True)
    assert r"\frac{\sqrt{1291337339}}{40000}" in exact and r"\tfrac{1291321339}{1600000000}" in exact


def test_a_short_exact_form_is_still_shown():
    """13/6 is as short as its decimal: a student's display keeps it (σ² + ε's long fraction goes)."""
    spec = {"kind": "add_norm", "tokens": ["A"], "X": [["1", "2", "4"]], "Y": [["0.5", "0", "-1"]]}
    text = render_latex(one(spec))
    assert r"\tfrac{13}{6} \approx 2.1667" in text and "350009" not in text


# ------------------------------------------------------------ the compiled pages


def pages(path) -> list[list[str]]:
    """The text lines of each page, without empty lines and the page number."""
    text = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, check=True).stdout
    result = []
    for page in text.split("\f"):
        lines = [line.strip() for line in page.splitlines() if line.strip()]
        if lines and lines[-1].isdigit():
            lines.pop()
        result.append(lines)
    return [p for p in result if p]


def plain(text: str) -> str:
    return re.sub(r"[\s「」`]", "", text)


def labels(example: str, lang: str) -> set[str]:
    """The labels of the Markdown ("Query of `love`"): a line of text with no full stop or colon directly above a
    display or its note."""
    lines = render_markdown(derive(example, lang=lang)).splitlines()
    found = set()
    for i, line in enumerate(lines[:-2]):
        if (line and not line.startswith(("#", ">", "|", "$", "!", "-", "<")) and not line.endswith((".", "。", ":", "："))
                and not lines[i + 1] and lines[i + 2].startswith(("$$", "> "))):
            found.add(plain(line))
    return found


@pytest.fixture(scope="module")
def pdfs(tmp_path_factory):
    out = tmp_path_factory.mktemp("handouts")
    for example in HANDOUTS:
        for lang in LANGS:
            assert main(["render", "--example", example, "--lang", lang, "--format", "pdf", "--out",
                         str(out / lang)]) == 0
    return {(e, lang): out / lang / f"{e}.pdf" for e in HANDOUTS for lang in LANGS}


@pytest.mark.pdf
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("example", HANDOUTS)
def test_a_label_stays_with_its_display(pdfs, example, lang):
    """Item 15: no page ends with a label whose display is overleaf (mt en p.3: "Value of love" at the foot)."""
    names = labels(example, lang)
    assert names or example == "modern"  # (whose labels all end in a colon)
    feet = [(n, p[-1]) for n, p in enumerate(pages(pdfs[(example, lang)])[:-1], 1) if plain(p[-1]) in names]
    assert not feet


def headings(example: str, lang: str) -> list[str]:
    md = render_markdown(derive(example, lang=lang))
    return [plain(line.lstrip("#")) for line in md.splitlines() if line.startswith(("## ", "### "))]


@pytest.mark.pdf
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("example", HANDOUTS)
def test_no_heading_at_a_page_foot(pdfs, example, lang):
    """Item 15: neither of a page's last two lines is a heading or its end (layer ja p.12 had one)."""
    titles = headings(example, lang)
    for number, lines in enumerate(pages(pdfs[(example, lang)])[:-1], 1):
        for line in lines[-2:]:
            text = plain(line)
            assert not any(t == text or (len(text) > 3 and t.endswith(text)) for t in titles), (number, line)


def outline(path) -> list[tuple[int, str]]:
    """The PDF's bookmarks as (depth, title), read by poppler's pdftohtml."""
    xml = subprocess.run(["pdftohtml", "-xml", "-i", "-stdout", "-q", str(path)], capture_output=True, text=True,
                         check=True).stdout
    found, depth = [], 0
    for tag in re.finditer(r"<(/?)outline>|<item page=\"\d+\">(.*?)</item>", xml):
        if tag.group(2) is not None:
            found.append((depth, unescape(tag.group(2))))
        else:
            depth += -1 if tag.group(1) else 1
    return found


@pytest.mark.pdf
@pytest.mark.parametrize("lang", LANGS)
def test_sections_are_bookmarked_and_listed(pdfs, tex, lang):
    """Item 18: every heading is a PDF bookmark (the steps under their section, Japanese ones readable), and a
    document of many sections opens with their list, each a link to its section."""
    marks = outline(pdfs[("layer", lang)])
    section = {"ja": "エンコーダ：Self-Attention", "en": "Encoder: self-attention"}[lang]
    step = {"ja": "Step 4: Softmax", "en": "Step 4: Softmax"}[lang]
    assert (1, section) in marks and (2, step) in marks
    assert marks.index((1, section)) < marks.index((2, step))
    assert len(marks) == tex[("layer", lang)].split(r"\begin{document}")[1].count(r"\marksection{") == 65
    contents = tex[("layer", lang)].split(r"\maketitle")[1].split(r"\end{itemize}")[0]
    assert {"ja": "目次", "en": "Contents"}[lang] in contents
    assert contents.count(r"\hyperlink{s") == 15  # layer's 15 sections
    assert r"\hyperlink" not in tex[("modern", lang)]  # two sections: no list
