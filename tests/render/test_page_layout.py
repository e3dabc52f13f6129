"""The page layout of every built-in example's PDF, in both languages, read back from the compiled pages (pdftotext):
where pages break, how headings, tokens, subscripts, matrices and heatmaps are set."""

from __future__ import annotations

import re
import subprocess
import xml.etree.ElementTree as ET
from statistics import pstdev

import pytest

from symattn import derive, render_markdown
from symattn.cli import main

pytestmark = pytest.mark.pdf

EXAMPLES = ("mt", "matrix", "symbolic", "decoder")
KATAKANA = re.compile("[\u30a1-\u30fa\u30fc]")
LATIN = re.compile("[A-Za-z]")


@pytest.fixture(scope="module")
def pdfs(tmp_path_factory):
    out = tmp_path_factory.mktemp("layout")
    for example in EXAMPLES:
        for lang in ("ja", "en"):
            args = ["render", "--example", example, "--lang", lang, "--format", "pdf", "--out", str(out / lang)]
            assert main(args) == 0
    return {(example, lang): out / lang / f"{example}.pdf" for example in EXAMPLES for lang in ("ja", "en")}


def pages(path) -> list[list[str]]:
    """The text lines of each page, without empty lines and without the page number at the foot."""
    text = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, check=True).stdout
    result = []
    for page in text.split("\f"):
        lines = [line.strip() for line in page.splitlines() if line.strip()]
        if lines and lines[-1].isdigit():
            lines.pop()
        if lines:
            result.append(lines)
    return result


def plain(text: str) -> str:
    """Text compared without spaces, quotes and code marks (pdftotext spaces Japanese and math its own way)."""
    return re.sub(r"[\s「」`]", "", text)


def headings(example: str, lang: str) -> list[str]:
    """The document's section headings, as its Markdown writes them."""
    md = render_markdown(derive(example, lang=lang))
    return [plain(line.lstrip("#")) for line in md.splitlines() if line.startswith("## ") or line.startswith("### ")]


@pytest.fixture(scope="module")
def documents(pdfs):
    return {key: (pages(path), headings(*key)) for key, path in pdfs.items()}


@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("example", EXAMPLES)
def test_no_heading_at_a_page_foot(documents, example, lang):
    """Neither of a page's last two lines is a heading, nor the end of one: a heading keeps at least two lines of
    what it introduces on its page."""
    document, titles = documents[(example, lang)]
    for number, lines in enumerate(document[:-1], 1):
        for line in lines[-2:]:
            text = plain(line)
            assert not any(title == text or (len(text) > 3 and title.endswith(text)) for title in titles), \
                (example, lang, number, line)


@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("example", EXAMPLES)
def test_no_word_stranded_at_a_page_top(documents, example, lang):
    """A page does not begin with the lone last word of a paragraph (「表す。」, "follow.")."""
    document, _ = documents[(example, lang)]
    for number, lines in enumerate(document[1:], 2):
        first = plain(re.split(r"\s{2,}", lines[0])[0])  # its text, not a display set beside it on the line
        assert not (len(first) <= 8 and first.endswith(("。", "."))), (example, lang, number, lines[0])


@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("example", EXAMPLES)
def test_headings_break_between_words(documents, example, lang):
    """A heading set on two lines breaks between words: never inside a katakana word (スコ/ア) or a Latin one."""
    document, titles = documents[(example, lang)]
    wrapped = 0
    for lines in document:
        for first, second in zip(lines, lines[1:], strict=False):
            joined = plain(first) + plain(second)
            if plain(first) not in titles and any(title.startswith(joined) for title in titles):
                wrapped += 1
                end, start = plain(first)[-1], plain(second)[0]
                assert not (KATAKANA.match(end) and KATAKANA.match(start)), (first, second)
                assert not (LATIN.match(end) and LATIN.match(start)), (first, second)
    if (example, lang) == ("mt", "ja"):
        assert wrapped, "the Step 3 heading of the Japanese article takes two lines"


@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("example", ["mt", "matrix", "decoder"])  # the symbolic one ends without softmax([...])
def test_each_softmax_block_stays_on_one_page(documents, example, lang):
    """From its first line (w_j = softmax(a)_j = ...) to its last (softmax([...]) ≈ [...]), on one page."""
    document, _ = documents[(example, lang)]
    blocks = 0
    for lines in document:
        text = "\n".join(lines)
        opened, closed = text.count("softmax(a)"), len(re.findall(r"softmax\s*\(?\[", text))
        assert opened == closed, (example, lang, lines[0])
        blocks += opened
    assert blocks >= 1


def words(path, page: int) -> list[tuple[str, float, float, float, float]]:
    """(text, xMin, yMin, xMax, yMax) of every word on a page."""
    xml = subprocess.run(["pdftotext", "-bbox", "-f", str(page), "-l", str(page), str(path), "-"],
                         capture_output=True, text=True, check=True).stdout
    root = ET.fromstring(re.sub(r"<!DOCTYPE[^>]*>", "", xml).replace('xmlns="http://www.w3.org/1999/xhtml"', ""))
    return [(w.text or "", *(float(w.get(k)) for k in ("xMin", "yMin", "xMax", "yMax"))) for w in root.iter("word")]


def find_page(path, phrase: str) -> int:
    return next(n for n, lines in enumerate(pages(path), 1) if any(phrase in line for line in lines))


def test_japanese_subscripts_are_readable(pdfs):
    """A Japanese token in a subscript has kanji of 9 pt (math's script size would make them 7 pt), and of 8 pt in
    a subscript's subscript (e^{a_機械学習}, 5 pt at math's size); main text has 10 pt kanji."""
    path = pdfs[("decoder", "ja")]
    sizes = sorted({round((x1 - x0) / len(text), 1) for text, x0, _, x1, _ in words(path, find_page(path, "Softmax"))
                    if text == "機械学習"})
    assert sizes[0] >= 8 and sizes[-1] >= 9, sizes


def test_japanese_text_quotes_its_tokens(pdfs):
    """A token in Japanese text is in 「」, so that the token が is not read as the particle; English text does not
    quote tokens."""
    ja = re.sub(r"\s", "", " ".join(" ".join(lines) for lines in pages(pdfs[("decoder", "ja")])))
    assert "トークン「が」についても" in ja and "「機械学習」が最も大きい" in ja
    assert "「好き」には（マスクにより）まったく" in ja
    assert "「" not in " ".join(" ".join(lines) for lines in pages(pdfs[("mt", "en")]))


def test_matrix_columns_are_right_aligned(pdfs):
    """W_K = [[0.6, 0.1], [-0.3, 1.0]]: the entries of each column end at the same x."""
    path = pdfs[("mt", "en")]
    page = words(path, find_page(path, "Key of love"))
    lower = next(w for w in page if w[0] == "−0.3")  # a matrix entry: in the products it is "(−0.3)"
    upper = next(w for w in page if w[0] == "0.6" and 0 < lower[2] - w[2] < 20 and abs(w[3] - lower[3]) < 10)
    right = [w for w in page if w[0] in ("0.1", "1.0") and abs(w[2] - upper[2]) + abs(w[2] - lower[2]) < 20]
    assert abs(upper[3] - lower[3]) < 0.5, (upper, lower)  # the entries of the first column end at the same x
    assert lower[1] < upper[1] - 3  # and the wider one reaches further left
    assert len(right) == 2 and abs(right[0][3] - right[1][3]) < 0.5, right


def test_heatmap_cells_are_equal_and_have_a_scale(pdfs):
    """The key names' columns are equally wide whatever the names (I, love, machine, learning): their centres are
    equally spaced; the colour scale under the table runs from 0 to the largest weight."""
    path = pdfs[("mt", "en")]
    number = find_page(path, "Heatmap of the attention weights")
    page = words(path, number)
    top = next(y0 for text, _, y0, _, _ in page if text == "Heatmap")
    row = next(y0 for text, _, y0, _, _ in page if text == "machine" and y0 > top)
    header = sorted(((x0 + x1) / 2, text) for text, x0, y0, x1, _ in page if abs(y0 - row) < 1)
    assert [text for _, text in header] == ["I", "love", "machine", "learning"], header
    header = [(text, x) for x, text in header]
    gaps = [b - a for (_, a), (_, b) in zip(header, header[1:], strict=False)]
    assert pstdev(gaps) < 0.5, gaps
    lines = pages(path)[number - 1]
    table = next(i for i, line in enumerate(lines) if line.split()[:2] == ["love", "0.1688"])
    assert lines[table + 1].split() == ["0", "0.3382"]
