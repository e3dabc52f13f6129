"""A corpus of hostile class lists, response sheets, text blocks and documents (issue 30), read back from every
output as its reader sees it: the PDF's text (pdftotext), every cell of every CSV written (a spreadsheet runs a cell
starting = + - @), the HTML's DOM after Chromium parsed it, and the Markdown as a CommonMark renderer without a
math extension shows it. What a user typed comes back as typed, and never as markup, a link, an image, a script
or a formula."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from symattn.cli import main

# Names a class list or a response sheet may hold (each printable: one line, no control characters)
NAMES = ['=HYPERLINK("http://evil.example")', "+SUM(A1)", "@cmd", "-2+3", "<img src=x onerror=alert(1)>",
         "<script>alert(1)</script>", "\\def\\x{\\x}\\x", "\\input{/etc/passwd}", "$x^2$ [a](http://evil.example)",
         "![p](http://evil.example/p.png)", "O'Brien & Co. 100% #1 _x_ ~y^z {}", "José Ñúñez", "山田 太郎"]
# Text-block payloads: markup of every target, in running text (the math stays in the safe subset)
TEXTS = ["<script>alert(1)</script> and <img src=x onerror=alert(1)>", "[click](http://evil.example) and "
         "![p](http://evil.example/p.png) and <http://evil.example>", "\\input{/etc/passwd} \\def\\x{\\x}\\x %, & # _ ^ ~",
         "=cmd|' /C calc'!A0 and | a | b |", "math $x^2 + [a](http://evil.example)$ and $![i](http://evil.example)$"]
FORMULA = re.compile(r"^[=+\-@\t\r]")
LIVE = {"a", "img", "script", "iframe", "object", "embed", "link", "form", "input", "base", "meta"}


class _Elements(HTMLParser):
    """The elements an HTML text makes, with their attributes: what a browser would act on."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, attrs))


def _live(html: str, allowed: set[str] = frozenset()) -> list:
    """The elements of html that run, link or load something (a tag of LIVE, an on... handler, a remote URL)."""
    parser = _Elements()
    parser.feed(html)
    return [(tag, attrs) for tag, attrs in parser.found
            if (tag in LIVE and tag not in allowed) or any(name.startswith("on") or "evil.example" in (value or "")
                                                           for name, value in attrs)]

def _pdf_text(path: Path) -> str:
    text = subprocess.run(["pdftotext", "-enc", "UTF-8", str(path), "-"], capture_output=True, text=True,
                          check=True).stdout
    return re.sub(r"\s+", " ", text)


def _every_csv_cell(folder: Path) -> list[str]:
    """Every cell of every CSV in folder, each asserted never to read as a formula."""
    cells = []
    for path in sorted(folder.rglob("*.csv")):
        for row in csv.reader(path.open(encoding="utf-8-sig", newline="")):
            for cell in row:
                assert not FORMULA.match(cell), (path.name, cell)
                cells.append(cell)
    return cells


def _markdown_html(path: Path) -> str:
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark").enable("table").render(path.read_text(encoding="utf-8"))
    assert not _live(html), (path.name, _live(html))
    return html


def _dom(path: Path, tmp_path: Path) -> str:
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    dom = subprocess.run([binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          "--disable-background-networking", f"--user-data-dir={tmp_path / 'profile'}",
                          "--dump-dom", path.as_uri()], capture_output=True, text=True, timeout=120).stdout
    assert "<body" in dom and not _live(dom.split("<body", 1)[-1]), _live(dom.split("<body", 1)[-1])
    return dom


def _class_list(path: Path) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "name"])
        writer.writerows([f"=s{k}" if k % 3 == 0 else f"s{k}", name] for k, name in enumerate(NAMES))
    return path


@pytest.mark.pdf
def test_hostile_class_list_and_response_sheet_read_back_from_every_output(tmp_path):
    """exam --students with the corpus as names, then grade a response sheet of those students: the exam's PDF
    prints each name as typed, exam.json holds it, every CSV cell is inert, the feedback's Markdown shows no
    live link or image and its PDF the name as typed."""
    exam = tmp_path / "exam"
    assert main(["exam", "--students", str(_class_list(tmp_path / "class.csv")), "--lang", "en",
                 "--format", "pdf,json,moodle", "--out", str(exam)]) == 0
    printed = _pdf_text(exam / "exam.pdf")
    data = json.loads((exam / "exam.json").read_text(encoding="utf-8"))
    assert [s["name"] for s in data["students"]] == NAMES
    for name in NAMES:
        assert name in printed, name
    assert "evil.example" not in (exam / "moodle.xml").read_text(encoding="utf-8").replace("&quot;", '"').split(
        "<question", 1)[0]
    ids = [b["id"] for v in data["versions"] for p in v["parts"] for b in p["blanks"]]
    answers = {b["id"]: b["answer"][:6] for v in data["versions"] for p in v["parts"] for b in p["blanks"]}
    with (tmp_path / "r.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "version", *ids])
        for version, name in zip(data["versions"], NAMES, strict=True):
            mine = {b["id"] for p in version["parts"] for b in p["blanks"]}
            writer.writerow([name, version["label"], *(answers[i] if i in mine else "" for i in ids)])
    grades = tmp_path / "grades"
    assert main(["grade", str(exam / "exam.json"), str(tmp_path / "r.csv"), "--format", "md,pdf",
                 "--out", str(grades)]) == 0
    cells = _every_csv_cell(grades)
    for name in NAMES:
        assert name in cells or "'" + name in cells, name
    feedback = sorted((grades / "feedback").glob("*.md"))
    assert len(feedback) == len(NAMES)
    for md in feedback:
        _markdown_html(md)
    shown = " ".join(_pdf_text(pdf) for pdf in sorted((grades / "feedback").glob("*.pdf")))
    for name in NAMES:
        assert name in shown, name


@pytest.mark.pdf
def test_hostile_text_blocks_read_back_from_every_format(tmp_path):
    """A text section of every target's markup: the PDF prints it as typed, Chromium's DOM has no element it
    made, a CommonMark renderer without math shows no link or image, the JSON keeps it."""
    spec = {"lang": "en", "title": "<b>t</b> \\relax", "sections": [
        {"kind": "text", "heading": "<i>h</i> [x](http://evil.example)", "paragraphs": TEXTS,
         "table": {"header": ["<u>a</u>", "=1+1"], "rows": [[TEXTS[1], "@cmd"]]}}]}
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["render", str(path), "--format", "md,html,json,pdf", "--out", str(out)]) == 0
    _markdown_html(out / "spec.md")
    dom = _dom(out / "spec.html", tmp_path)
    assert "<script>alert(1)</script>" not in dom and "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    printed = _pdf_text(out / "spec.pdf")
    for piece in ("<script>alert(1)</script>", "\\input{/etc/passwd}", "\\def\\x{\\x}\\x", "=cmd|' /C calc'!A0",
                  "[click](http://evil.example)"):
        assert piece in printed, piece
    assert json.loads((out / "spec.json").read_text(encoding="utf-8"))["title"] == "<b>t</b> \\relax"


@pytest.mark.pdf
def test_a_hostile_document_checked_gives_inert_reports(tmp_path, capsys):
    """check --from a document of markup, links and TeX around one wrong number: the report in every format is
    inert, and the terminal gets no control character."""
    document = tmp_path / "doc.md"
    document.write_text("<script>alert(1)</script> \\input{/etc/passwd} [x](http://evil.example) \x1b[2J\n\n"
                        "The weights of love are [0.1238, 0.2497, 0.3383, 0.2883] =HYPERLINK(\"x\")\n",
                        encoding="utf-8")
    out = tmp_path / "out"
    status = main(["check", "--example", "mt", "--from", str(document), "--partial", "--format", "md,html,pdf",
                   "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 1 and "\x1b" not in err, err
    _markdown_html(out / "mt-check.md")
    _dom(out / "mt-check.html", tmp_path)
    assert "0.3383" in _pdf_text(out / "mt-check.pdf")
