"""What `symattn grade` writes for an LMS and the examiner (issue 32 item 7): Moodle's grade import CSV, Canvas's
gradebook import CSV, the class report (Markdown, PDF); every CSV cell neutralised against formula injection
(issue 30 item 15's rule for the files grading writes)."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys

import pytest

from .exams import blanks, correct, write_csv

UPLATEX = shutil.which("uplatex") is not None and shutil.which("pdftotext") is not None


def run(*args: str):
    return subprocess.run([sys.executable, "-m", "symattn", "grade", *args], capture_output=True, text=True,
                          timeout=300)


def table(path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A 3-student class (s1 Ann Lee, s2 Bo Ode, s3 Cy Nil) and their responses: Ann all right, Bo forgot √d_k
    in part (c), Cy answered nothing; and one row of a student not on the list."""
    from symattn.cli import main

    folder = tmp_path_factory.mktemp("course")
    (folder / "class.csv").write_text("id,name\ns1,Ann Lee\ns2,Bo Ode\ns3,Cy Nil\ns4,Di Absent\n",
                                      encoding="utf-8")
    assert main(["exam", "--students", str(folder / "class.csv"), "--seed", "4", "--format", "json", "--lang",
                 "en", "--title", "=HYPERLINK(\"http://x\")", "--out", str(folder / "exam")]) == 0
    path = folder / "exam" / "exam.json"
    bo = correct(path, "02")
    for b in blanks(path)["02"]:
        if b["id"].startswith("v02.c."):  # the raw scores again: not divided by √d_k
            bo[b["id"]] = correct(path, "02")[b["id"].replace(".c.a.", ".b.s.")]
    rows = [("Ann Lee", "01", correct(path, "01")), ("s2", "02", bo), ("Cy Nil", "03", {}),
            ("=cmd|' /C calc'!A0", "01", correct(path, "01"))]
    responses = write_csv(folder / "r.csv", path, rows)
    formats = "md,pdf" if UPLATEX else "md"
    result = run(str(path), str(responses), "--out", str(folder / "out"), "--format", formats, "--below", "19")
    assert result.returncode == 0, result.stderr
    return folder / "out", json.loads(path.read_text(encoding="utf-8"))


def totals(out) -> dict[str, str]:
    return {r["student"]: r["total"] for r in csv.DictReader((out / "grades.csv").open(encoding="utf-8"))}


def test_moodle_grade_import_csv(course):
    """Grades > Import > CSV file: map from 'ID number' to the user's ID number; one column for the grade item."""
    out, _ = course
    rows = table(out / "moodle-grades.csv")
    assert rows[0] == ["ID number", "Full name", "'=HYPERLINK(\"http://x\")"]
    t = totals(out)
    assert rows[1:] == [["s1", "Ann Lee", t["Ann Lee"]], ["s2", "Bo Ode", t["s2"]], ["s3", "Cy Nil", "0"]]


def test_canvas_gradebook_import_csv(course):
    """Canvas's columns, the Points Possible row under the header, students matched by SIS User ID."""
    out, data = course
    rows = table(out / "canvas-grades.csv")
    total = sum(p["points"] for p in data["versions"][0]["parts"])
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "'=HYPERLINK(\"http://x\")"]
    assert rows[1] == ["    Points Possible", "", "", "", "", str(total)]
    assert [(r[0], r[2]) for r in rows[2:]] == [("Ann Lee", "s1"), ("Bo Ode", "s2"), ("Cy Nil", "s3")]


def test_every_csv_cell_is_neutralised(course):
    out, _ = course
    for name in ("grades.csv", "moodle-grades.csv", "canvas-grades.csv"):
        for row in table(out / name):
            assert not any(cell.startswith(("=", "+", "-", "@")) for cell in row), (name, row)
    assert "'=cmd|' /C calc'!A0" in totals(out)


def test_the_class_report(course):
    """Mean and spread per part and per version, the causes, the students below --below, those to look at."""
    out, data = course
    report = (out / "report.md").read_text(encoding="utf-8")
    t = totals(out)
    assert report.startswith("# Class report: 4 of 4 students graded\n")
    scores = sorted(float(t[k]) for k in t)
    mean = sum(scores) / 4
    spread = (sum((s - mean) ** 2 for s in scores) / 4) ** 0.5
    total = sum(p["points"] for p in data["versions"][0]["parts"])
    assert f"| Total | {total} | {round(mean, 2):g} | {round(spread, 2):g} | 4 |" in report
    assert "| 01 | 20 | 0 | 2 |" in report  # version 01: Ann and the intruder, both full marks
    assert "| `no_scaling` |" in report
    below = report.split("## Students below 19 points")[1].split("##")[0]
    assert "| Cy Nil | s3 | 03 | 0 |" in below and "Ann Lee" not in below
    look = report.split("## Students to look at")[1]
    assert "not on the class list" in look and "| Di Absent |  | on the class list (version 04), no response |" \
        in look


@pytest.mark.skipif(not UPLATEX, reason="needs upLaTeX and pdftotext")
def test_the_class_report_pdf(course):
    out, _ = course
    text = subprocess.run(["pdftotext", "-layout", str(out / "report.pdf"), "-"], capture_output=True,
                          text=True).stdout
    assert "Class report: 4 of 4 students graded" in text and "no_scaling" in text and "Di Absent" in text


def test_below_must_be_points(tmp_path, course):
    out, _ = course
    result = run(str(out.parent / "exam" / "exam.json"), str(out.parent / "r.csv"), "--out", str(tmp_path / "o"),
                 "--below", "ten")
    assert result.returncode == 2 and "--below: expected points, a number such as 10 or 12.5, got 'ten'" \
        in result.stderr


def test_moodle_import_by_email_without_a_class_list(tmp_path):
    """From Moodle's Responses report with emails as the identity: moodle-grades.csv maps by Email address;
    Canvas has no SIS id to match by, so its file lists no student and the report says so once."""
    from .exams import HAND, write_exam

    path = write_exam(tmp_path, [HAND])
    values = "; ".join(f"part {i}: {v}" for i, v in enumerate(correct(path, "01").values(), start=1))
    with (tmp_path / "m.csv").open("w", newline="", encoding="utf-8-sig") as handle:
        csv.writer(handle).writerows([["Last name", "First name", "Email address", "Response 1"],
                                      ["Lee", "Ann", "ann@example.org", values]])
    result = run(str(path), str(tmp_path / "m.csv"), "--out", str(tmp_path / "out"), "--format", "md")
    assert result.returncode == 0, result.stderr
    assert table(tmp_path / "out" / "moodle-grades.csv") == [["Email address", "Full name", "symattn exam"],
                                                             ["ann@example.org", "Ann Lee (ann@example.org)", "20"]]
    assert len(table(tmp_path / "out" / "canvas-grades.csv")) == 2
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "| every student |  | not in canvas-grades.csv: no id to match the student by |" in report
