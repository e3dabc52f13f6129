"""--points a=4,b=2,...: the examiner's points per part, checked (one line naming the part, exit 2, nothing
written) and used everywhere a part's points are: the paper and the key, exam.json, Moodle and Canvas."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
import zipfile
from fractions import Fraction

import pytest

from symattn.cli import main

from .moodle_cloze import extract


def test_points_are_used_on_paper_in_json_and_in_moodle(tmp_path):
    assert main(["exam", "--count", "3", "--seed", "2", "--kind", "self_attention", "--lang", "en",
                 "--points", "a=4,b=4,c=4,d=4,e=5", "--format", "tex,json,moodle", "--out", str(tmp_path)]) == 0
    wanted = {"a": 4, "b": 4, "c": 4, "d": 4, "e": 5}
    exam = json.loads((tmp_path / "exam.json").read_text(encoding="utf-8"))
    assert exam["options"]["points"] == wanted
    for version in exam["versions"]:
        assert {p["part"]: p["points"] for p in version["parts"]} == wanted
        assert {k: v["points"] for k, v in version["workload"]["parts"].items()} == dict(
            zip(("qkv", "scores", "scaled", "weights", "output"), wanted.values(), strict=True))
    for name in ("exam.tex", "key.tex"):
        paper = (tmp_path / name).read_text(encoding="utf-8")
        assert re.findall(r"\\part\[(\d+)\]", paper) == ["4", "4", "4", "4", "5"] * 3
        assert paper.count("Total: 21 points") == 3
    root = ET.parse(tmp_path / "moodle.xml").getroot()
    for question in root.findall("question")[1:]:
        text = question.find("questiontext/text").text
        mark = extract(text)[1]
        factor = mark / 21
        assert [extract(part)[1] / factor for part in text.split("<li>")[1:]] == list(wanted.values())


def test_points_are_used_in_canvas(tmp_path):
    pytest.importorskip("text2qti")
    assert main(["exam", "--count", "2", "--seed", "2", "--kind", "feed_forward", "--lang", "en",
                 "--points", "a=6,b=1,c=3", "--format", "qti,json", "--out", str(tmp_path)]) == 0
    with zipfile.ZipFile(tmp_path / "canvas-qti-01.zip") as zf:
        meta = next(zf.read(n) for n in zf.namelist() if n.endswith("assessment_meta.xml")).decode()
    assert re.findall(r"<points_possible>([^<]*)</points_possible>", meta) == ["10.00", "10.00"]
    points = [Fraction(p) for p in re.findall(r"% symattn: points (\S+),",
                                              (tmp_path / "canvas-qti-01.txt").read_text(encoding="utf-8"))]
    exam = json.loads((tmp_path / "exam.json").read_text(encoding="utf-8"))
    counts = [len(p["blanks"]) for p in exam["versions"][0]["parts"]]
    sums = [sum(points[sum(counts[:i]):sum(counts[:i + 1])]) for i in range(len(counts))]
    assert sums == [6, 1, 3]


@pytest.mark.parametrize(("given", "extra", "message"), [
    ("a=4,b=x", [], "--points: part b: expected a whole number of points from 1 to 100, got 'x'"),
    ("a=0", [], "--points: part a: expected a whole number of points from 1 to 100, got '0'"),
    ("a=1,a=2", [], "--points: part a is given twice"),
    ("a=1,f=2", [], "--points: expected part=points for parts among a, b, c, d, e separated by commas (a=4,b=2), "
                    "got 'f=2'"),
    ("a=1,c=1", ["--parts", "a,b"], "--points: part c is not asked (--parts a,b)"),
    ("a=1,b=1,c=1", [], "--points: part d has no points: give every asked part its own (a=…,b=…,c=…,d=…,e=…)"),
])
def test_bad_points_are_one_line_naming_the_part(tmp_path, capsys, given, extra, message):
    out = tmp_path / "out"
    assert main(["exam", "--count", "2", "--format", "json", "--out", str(out), "--points", given, *extra]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"symattn: error: {message}"
    assert not out.exists()
