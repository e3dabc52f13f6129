"""Exam papers: one version per student of a class list, the heading options, each version a paper of its own
(numbered "Page i of n" from 1, started on an odd page, version and student on every page), both languages."""

from __future__ import annotations

import csv
import io
import json
import random
import re
import subprocess

import pytest

from symattn import ExamOptions, build_exam
from symattn.cli import main
from symattn.exam.students import Student, parse_students

# Every LaTeX special, an apostrophe and Japanese: each must print as typed.
STUDENTS = [("A&1", "Tom & Jerry 100% $5 #1"), ("_b2", "{Ann} ~Smith^ \\ O'Neil_x"), ("c3", "山田 太郎")]
HEADING = ["--title", "Midterm #2: 50% & {more}", "--course", "CS_101 ~ Deep $Learning$", "--date", "2026-07-15"]
FOOT = {"en": re.compile(r"Version (\d+)\s.*?Page (\d+) of (\d+)", re.S),
        "ja": re.compile(r"バージョン (\d+)\s.*?(\d+) / (\d+) ページ", re.S)}


def class_list(rows, bom: bool = True, header=("id", "name", "email")) -> bytes:
    """A class list as a spreadsheet saves it: CSV, an extra column, UTF-8 with a byte order mark."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    for number, name in rows:
        writer.writerow([number, name, f"{number}@example.org"][:len(header)])
    return ("\ufeff" if bom else "").encode() + out.getvalue().encode("utf-8")


def pages(pdf) -> list[str]:
    """The text of each page of a PDF (pdftotext's pages end with a form feed)."""
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    return text.split("\f")[:-1]


def check_paper(texts: list[str], lang: str, students: list[tuple[str, str]]) -> None:
    """Every version numbered from 1 to its own page count, starting on an odd page after nothing but blank
    pages; the version and its student on every page."""
    seen: list[tuple[str, int, int]] = []
    for index, text in enumerate(texts):
        if not text.strip():  # a blank page: only to make the next version start on an odd page
            assert index % 2 == 1 and index + 1 < len(texts) and FOOT[lang].search(texts[index + 1])[2] == "1"
            continue
        label, page, count = FOOT[lang].search(text).groups()
        if page == "1":
            assert index % 2 == 0, f"version {label} starts on page {index + 1}"
        seen.append((label, int(page), int(count)))
        number, name = students[int(label) - 1]
        flat = "".join(text.split())  # upLaTeX spaces Japanese from Latin letters and digits (学生 0)
        assert "".join(name.split()) in flat and number in flat, f"page {index + 1}: no {name!r} / {number!r}"
    labels = list(dict.fromkeys(label for label, _, _ in seen))
    assert labels == [f"{i:02d}" for i in range(1, len(students) + 1)]
    for label in labels:
        numbers = [(page, count) for own, page, count in seen if own == label]
        assert numbers == [(i, len(numbers)) for i in range(1, len(numbers) + 1)]


@pytest.mark.pdf
def test_class_list_papers_in_both_languages(tmp_path):
    (tmp_path / "class.csv").write_bytes(class_list(STUDENTS))
    out = tmp_path / "out"
    assert main(["exam", "--students", str(tmp_path / "class.csv"), "--seed", "4", "--kind", "self_attention",
                 "--lang", "ja,en", "--time-allowed", "90", *HEADING, "--out", str(out)]) == 0
    assert sorted(path.name for path in out.iterdir() if path.name != ".symattn-sets.json") == sorted(
        f"{stem}-{lang}.{ext}" for lang in ("ja", "en")
        for stem, ext in [("exam", "pdf"), ("key", "pdf"), ("exam", "tex"), ("key", "tex"), ("exam", "json"),
                          ("moodle", "xml"), ("solutions", "pdf"), ("solutions", "tex")])
    specs = [[v["spec"]["sections"][0] for v in json.loads((out / f"exam-{lang}.json").read_text("utf-8"))["versions"]]
             for lang in ("ja", "en")]
    for ja, en in zip(*specs, strict=True):  # the same exam in both languages: the same numbers, words translated
        assert {k: v for k, v in ja.items() if k not in ("tokens", "focus")} == \
               {k: v for k, v in en.items() if k not in ("tokens", "focus")}
        assert len(ja["tokens"]) == len(en["tokens"]) and ja["tokens"] != en["tokens"]
    for lang in ("ja", "en"):
        for doc in ("exam", "key"):
            texts = pages(out / f"{doc}-{lang}.pdf")
            check_paper(texts, lang, STUDENTS)
            first = texts[0]
            for shown in ("Midterm #2: 50% & {more}", "CS_101 ~ Deep $Learning$", "2026-07-15"):
                assert shown in first
            assert ("Time allowed: 90 minutes." if lang == "en" else "試験時間：90 分。") in first
            assert all("Midterm #2" in text for text in texts[1:] if text.strip())  # the running head
        assert json.loads((out / f"exam-{lang}.json").read_text(encoding="utf-8"))["students"] == [
            {"id": number, "name": name, "version": f"{i:02d}"} for i, (number, name) in enumerate(STUDENTS, 1)]


@pytest.mark.pdf
def test_papers_without_a_class_list_have_a_name_line_on_every_page(tmp_path):
    build_exam(ExamOptions(2, 9, "multi_head", "easy", "en"), tmp_path, ("pdf",), split=True)
    for doc in ("exam", "key"):
        texts = pages(tmp_path / f"{doc}.pdf")
        check_paper(texts, "en", [("Name:", "Name:")] * 2)
        # a one-version PDF has its version's pages, numbered as in the whole paper
        whole = [FOOT["en"].search(text).groups() for text in texts if "Version 02" in text]
        assert [FOOT["en"].search(text).groups() for text in pages(tmp_path / f"{doc}-02.pdf")] == whole
    first = pages(tmp_path / "exam.pdf")[0]
    assert first.count("Attention: exam") == 1  # the title, not repeated by a running head
    assert "ID:" in first and "Time allowed" not in first and "2026" not in first


def test_heading_options_are_stored_and_escaped(tmp_path):
    assert main(["exam", "--count", "2", "--seed", "1", "--lang", "en", "--time-allowed", "1 h 30 min", *HEADING,
                 "--format", "tex,json", "--out", str(tmp_path)]) == 0
    options = json.loads((tmp_path / "exam.json").read_text(encoding="utf-8"))["options"]
    assert {key: options[key] for key in ("title", "course", "date", "time_allowed")} == {
        "title": "Midterm #2: 50% & {more}", "course": "CS_101 ~ Deep $Learning$", "date": "2026-07-15",
        "time_allowed": "1 h 30 min"}
    exam = (tmp_path / "exam.tex").read_text(encoding="utf-8")
    assert r"\newcommand{\examtitle}{Midterm \#2: 50\% \& \{more\}}" in exam
    assert r"\newcommand{\examcourse}{CS\_101 \textasciitilde{} Deep \$Learning\$}" in exam
    assert r"Time allowed: 1 h 30 min." in exam
    key = (tmp_path / "key.tex").read_text(encoding="utf-8")
    assert r"\newcommand{\examtitle}{Midterm \#2: 50\% \& \{more\}: answer key}" in key
    assert json.loads((tmp_path / "exam.json").read_text(encoding="utf-8"))["students"] == []


def test_default_heading(tmp_path):
    assert main(["exam", "--count", "1", "--lang", "ja", "--format", "tex,json", "--out", str(tmp_path)]) == 0
    options = json.loads((tmp_path / "exam.json").read_text(encoding="utf-8"))["options"]
    assert [options[key] for key in ("title", "course", "date", "time_allowed")] == [None] * 4
    exam = (tmp_path / "exam.tex").read_text(encoding="utf-8")
    assert r"\newcommand{\examtitle}{Attention：試験問題}" in exam and "試験時間" not in exam
    assert r"\newcommand{\examdate}{}" in exam and r"\newcommand{\examcourse}{}" in exam


def test_both_languages_write_each_file_named_with_its_language(tmp_path):
    assert main(["exam", "--count", "2", "--lang", "ja,en", "--format", "tex,json,moodle",
                 "--out", str(tmp_path)]) == 0
    names = {path.name for path in tmp_path.iterdir()} - {".symattn-sets.json"}  # the exam's manifest aside
    assert names == {f"{stem}-{lang}.{ext}" for lang in ("ja", "en")
                     for stem, ext in [("exam", "tex"), ("key", "tex"), ("exam", "json"), ("moodle", "xml")]}
    for lang in ("ja", "en"):
        data = json.loads((tmp_path / f"exam-{lang}.json").read_text(encoding="utf-8"))
        assert data["options"]["lang"] == lang and len(data["versions"]) == 2
    assert "バージョン 01" in (tmp_path / "exam-ja.tex").read_text(encoding="utf-8")
    assert "Version 01" in (tmp_path / "exam-en.tex").read_text(encoding="utf-8")


def test_a_class_list_read_back_as_a_csv_writer_wrote_it():
    """Random names and ids (quotes, commas, specials, Japanese, spaces around them), written by Python's csv
    writer with or without a byte order mark and in any column order, are read back as written (stripped)."""
    rng = random.Random(19)
    letters = "aZ &%$#_{}~^\\,\"'山田太郎é-"
    for _ in range(50):
        rows = []
        for i in range(rng.randint(1, 12)):
            name = "".join(rng.choice(letters) for _ in range(rng.randint(1, 20))).strip() or "x"
            rows.append((f" {i}-{rng.randint(0, 99)} ", f"  {name} "))
        header = rng.choice([("id", "name", "email"), ("Name", "ID", "email")])
        ordered = [row if header[0].lower() == "id" else (row[1], row[0]) for row in rows]
        data = class_list(ordered, bom=rng.random() < 0.5, header=header)
        students = parse_students(data.decode("utf-8-sig"), "class.csv", 1000)
        assert students == tuple(Student(number.strip(), name.strip()) for number, name in rows)


BAD = [
    (b"id,email\n1,a@b\n", "--students: {} row 1: no column name in the header"),
    (b"id,name,ID\n1,Ann,2\n", "--students: {} row 1: the header names the column id 2 times (columns 1, 3)"),
    (b"id,name\n1,Ann\n2,\n", "--students: {} row 3, column name: empty"),
    (b"id,name\n1,Ann\n\n1,Bob\n", "--students: {} row 4, column id: '1' is already the id of row 2"),
    (b"id,name\n1,Ann\n2,Bj\xf6rn\n", "--students: {} row 3: not UTF-8"),
    (b'id,name\n1,"Ann\nLee"\n', "--students: {} row 2, column name: a line break"),
    (b'id,name\n1,"Ann\n', "--students: {} row 2: not valid CSV"),
    (b"id,name\n", "--students: {} lists no students"),
    (b"", "--students: {} is empty"),
    (b"id,name\n1," + b"x" * 81 + b"\n", "--students: {} row 2, column name: 81 characters, at most 80"),
]


@pytest.mark.parametrize(("data", "message"), BAD)
def test_a_bad_class_list_is_one_line_naming_the_row(tmp_path, capsys, data, message):
    path = tmp_path / "class.csv"
    path.write_bytes(data)
    out = tmp_path / "out"
    assert main(["exam", "--students", str(path), "--format", "tex,json", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("symattn: error: " + message.format(path)) and err.count("\n") == 1
    assert not out.exists()


@pytest.mark.parametrize(("argv", "message"), [
    (["--count", "5"], "--count: 5 versions, but the class list has 3 students"),
    (["--title", ""], "--title: expected some text"),
    (["--date", "1\n2"], "--date: expected one line of text"),
    (["--course", "x" * 81], "--course: expected at most 80 characters, got 81"),
    (["--lang", "ja,fr"], "--lang: unknown value 'fr' (expected ja, en)"),
])
def test_bad_paper_options_are_one_line(tmp_path, capsys, argv, message):
    (tmp_path / "class.csv").write_bytes(class_list(STUDENTS))
    out = tmp_path / "out"
    assert main(["exam", "--students", str(tmp_path / "class.csv"), *argv, "--format", "tex,json",
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("symattn: error: " + message) and err.count("\n") == 1
    assert not out.exists()


def test_part_spaces_are_sized_to_what_is_asked(tmp_path):
    """Part (a)'s space: 12 mm, 2.5 mm per number asked (Q, K, V of every token, per head) and 0.5 mm per
    operation its work takes (exam.json's workload), so a version that asks more vectors gets more room."""
    build_exam(ExamOptions(3, 2, "mixed", "easy", "en"), tmp_path, ("tex", "json"))  # self, cross, multi-head
    exam = (tmp_path / "exam.tex").read_text(encoding="utf-8")
    versions = json.loads((tmp_path / "exam.json").read_text(encoding="utf-8"))["versions"]
    spaces = [float(mm) for mm in re.findall(r"\\begin\{solution\}\[([\d.]+)mm plus [\d.]+fill\]", exam)]
    assert len(spaces) == 5 * len(versions)
    for i, version in enumerate(versions):
        section = version["spec"]["sections"][0]
        tokens = len(section["tokens"])
        rows = {"self_attention": 3 * tokens, "multi_head": 6 * tokens,
                "cross_attention": 1 + 2 * len(section.get("memory", []))}[section["kind"]]
        a = version["parts"][0]
        assert len({(b["symbol"], b.get("head"), b["row"]) for b in a["blanks"]}) == rows  # the vectors asked
        operations = version["workload"]["parts"][a["key"]]["operations"]
        assert spaces[5 * i] == min(170, 12 + 2.5 * len(a["blanks"]) + 0.5 * operations)
    assert spaces[10] > spaces[0]  # multi-head asks Q, K, V twice


@pytest.mark.pdf
def test_a_part_starts_where_its_space_fits(tmp_path):
    """On the paper every part's writing space is on its prompt's page, below it: a part whose space does not fit
    under what precedes it (the e^x table) moves to the next page with its space, rather than its prompt standing
    at the page's foot with its space overleaf. Measured with pdftotext's line boxes: below each prompt, down
    to the next prompt or the page's foot, at least the part's space (exam.tex's solution environments)."""
    build_exam(ExamOptions(3, 1, "self_attention", "easy", "en"), tmp_path, ("pdf", "tex"))
    spaces = [float(mm) for mm in re.findall(r"\\begin\{solution\}\[([\d.]+)mm plus [\d.]+fill\]",
                                           (tmp_path / "exam.tex").read_text(encoding="utf-8"))]
    layout = subprocess.run(["pdftotext", "-bbox-layout", str(tmp_path / "exam.pdf"), "-"], capture_output=True,
                            text=True, check=True).stdout
    room = []  # pt below each prompt, in order
    for page in re.findall(r"<page [^>]*>(.*?)</page>", layout, re.S):
        lines = [(float(y), " ".join(re.findall(r">([^<]*)</word>", body)))
                 for y, body in re.findall(r'<line xMin="[\d.]+" yMin="([\d.]+)"[^>]*>(.*?)</line>', page, re.S)]
        marks = [y for y, words in lines if re.match(r"\([a-e]\) \[\d+ points?\]", words)]
        foot = max(y for y, words in lines if re.search(r"Page \d+ of \d+", words))
        room += [below - y for y, below in zip(marks, [*marks[1:], foot], strict=False)]
    assert len(room) == len(spaces) == 5 * 3
    assert all(pt >= mm / 25.4 * 72 for pt, mm in zip(room, spaces, strict=True)), (room, spaces)


def test_one_dimensional_keys_have_one_entry(tmp_path):
    build_exam(ExamOptions(4, 1, "self_attention", "easy", "en", d_k=1), tmp_path, ("tex", "json"))  # 1 when asked
    key = (tmp_path / "key.tex").read_text(encoding="utf-8")
    versions = json.loads((tmp_path / "exam.json").read_text(encoding="utf-8"))["versions"]
    ones = sum(len(version["spec"]["sections"][0]["W_K"][0]) == 1 for version in versions)
    assert ones == len(versions)
    assert key.count("have one entry each, so") == ones and "1 entries" not in key


def test_the_concatenation_z_is_math(tmp_path):
    build_exam(ExamOptions(1, 1, "multi_head", "easy", "en"), tmp_path, ("tex",))
    exam = (tmp_path / "exam.tex").read_text(encoding="utf-8")
    assert "the final output $z$ · $W_O$, where $z$ is their concatenation" in exam


def test_a_missing_class_list_and_a_count_that_agrees(tmp_path, capsys):
    missing = tmp_path / "none.csv"
    assert main(["exam", "--students", str(missing), "--format", "json", "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.startswith(f"symattn: error: --students: cannot read {missing}: ")
    (tmp_path / "class.csv").write_bytes(class_list(STUDENTS, bom=False))
    assert main(["exam", "--students", str(tmp_path / "class.csv"), "--count", "3", "--format", "json",
                 "--out", str(tmp_path / "out")]) == 0
    data = json.loads((tmp_path / "out" / "exam.json").read_text(encoding="utf-8"))
    assert [s["version"] for s in data["students"]] == [v["label"] for v in data["versions"]] == ["01", "02", "03"]


def test_the_key_s_grading_notes_are_true_for_the_version(tmp_path):
    """The key's rounding conventions say √2 only with an irrational √d_k, the e^x table only on a paper that has
    one, and a newer kind's parts by their own class (ranks as whole numbers)."""
    build_exam(ExamOptions(2, 1, "self_attention", "easy", "en"), tmp_path / "easy", ("tex",))
    build_exam(ExamOptions(2, 1, "self_attention", "standard", "en"), tmp_path / "standard", ("tex",))
    build_exam(ExamOptions(2, 1, "next_token", "standard", "en"), tmp_path / "next", ("tex",))
    easy, standard, nxt = ((tmp_path / d / "key.tex").read_text(encoding="utf-8") for d in ("easy", "standard", "next"))
    notes = [re.findall(r"Grading: accepted answers.*?\\end\{tabular\}", key, re.S) for key in (easy, standard, nxt)]
    assert all(notes)
    assert "1.414" not in "".join(notes[0]) and "table" in "".join(notes[0])
    assert "1.414" in "".join(notes[1]) and "table" not in "".join(notes[1])
    assert "whole numbers" in "".join(notes[2]) and "weights as rounded" not in "".join(notes[2])
