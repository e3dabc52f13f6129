"""canvas-qti-07.zip: a quiz per version, text2qti's own output for the quiz text beside it, one group of a
numerical question per blank whose range holds the independently computed answer and matches the tolerance."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from fractions import Fraction

import pytest

from symattn import ExamOptions, build_exam
from symattn.cli import main
from symattn.exercises.exercise import tolerance

from .test_moodle import PARTS, flat_expected

pytest.importorskip("text2qti")
QTI = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    out = tmp_path_factory.mktemp("qti")
    build_exam(ExamOptions(4, 3, "mixed", "standard", "en"), out, ("json", "qti"))
    return out


def members(path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {info.filename: zf.read(info) for info in zf.infolist()}


def test_the_package_is_what_text2qti_makes_of_its_quiz_text(package, tmp_path):
    source = tmp_path / "quiz.txt"
    source.write_bytes((package / "canvas-qti-02.txt").read_bytes())
    command = "import sys; from text2qti.cmdline import main; sys.argv = ['text2qti', sys.argv[1]]; main()"
    env = {**os.environ, "HOME": str(tmp_path)}  # text2qti's command line writes its config file there
    subprocess.run([sys.executable, "-c", command, str(source)], check=True, capture_output=True, cwd=tmp_path,
                   env=env)
    assert members(package / "canvas-qti-02.zip") == members(tmp_path / "quiz.zip")


def test_one_group_per_version_and_the_ranges_hold_the_answers(package):
    data = json.loads((package / "exam.json").read_text(encoding="utf-8"))
    assert sorted(p.name for p in package.glob("canvas-qti-*.zip")) == [
        f"canvas-qti-{v['label']}.zip" for v in data["versions"]]  # one quiz per version
    groups = []
    for version in data["versions"]:
        assessment = next(data for name, data in members(package / f"canvas-qti-{version['label']}.zip").items()
                          if name.endswith(".xml") and "/" in name and not name.endswith("meta.xml"))
        found = [s for s in ET.fromstring(assessment).iter(f"{QTI}section") if s.get("ident") != "root_section"]
        assert len(found) == 1
        groups += found
    for group, version in zip(groups, data["versions"], strict=True):
        items = group.findall(f"{QTI}item")
        assert group.find(f".//{QTI}selection_number").text == str(len(items))  # every question picked
        expected = flat_expected(version["spec"])
        if expected is None:  # a newer kind's version (tests/exam/test_new_kinds.py)
            continue
        assert len(items) == len(expected)
        section = version["spec"]["sections"][0]
        d_k = len((section["heads"][0] if "heads" in section else section)["W_K"][0])
        for item, value in zip(items, expected, strict=True):
            low = float(item.find(f".//{QTI}vargte").text)
            high = float(item.find(f".//{QTI}varlte").text)
            part = PARTS["abcde".index(item.get("title").split("(")[1][0])]
            tol = float(Fraction(tolerance(4, part, d_k)))
            assert low - 1e-9 <= value <= high + 1e-9
            assert high - low <= 2 * tol + 1e-9 or max(abs(low), abs(high)) <= 0.0001 + 1e-9


def test_without_text2qti_the_error_says_how_to_install_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "text2qti", None)
    assert main(["exam", "--count", "2", "--format", "qti", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == ("symattn: error: --format: qti needs the text2qti package: pip install "
                                       "'symattn[qti]' (or pip install text2qti)\n")
    assert list(tmp_path.iterdir()) == []


def test_the_same_options_give_the_same_package(package, tmp_path):
    build_exam(ExamOptions(4, 3, "mixed", "standard", "en"), tmp_path, ("qti",))
    assert (tmp_path / "canvas-qti-03.zip").read_bytes() == (package / "canvas-qti-03.zip").read_bytes()


def test_more_decimals_than_text2qti_writes_are_refused(tmp_path, capsys):
    assert main(["exam", "--count", "2", "--digits", "5", "--format", "qti", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == ("symattn: error: --digits: --format qti takes at most 4 decimals (text2qti "
                                       "writes numerical answers to 4), got 5\n")
    assert list(tmp_path.iterdir()) == []
