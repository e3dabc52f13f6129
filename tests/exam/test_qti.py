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

from .test_moodle import flat_expected

pytest.importorskip("text2qti")
QTI = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    out = tmp_path_factory.mktemp("qti")
    build_exam(ExamOptions(8, 3, "mixed", "standard", "en"), out, ("json", "qti"))  # every kind once
    return out


def members(path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {info.filename: zf.read(info) for info in zf.infolist()}


def assessment(path) -> ET.Element:
    return ET.fromstring(next(data for name, data in members(path).items()
                              if name.endswith(".xml") and "/" in name and not name.endswith("meta.xml")))


def numerical(root: ET.Element) -> list[ET.Element]:
    return [item for item in root.iter(f"{QTI}item")
            if any(f.text == "numerical_question" for f in item.iter(f"{QTI}fieldentry"))]


def points_of(item: ET.Element) -> Fraction:
    fields = list(item.iter(f"{QTI}qtimetadatafield"))
    return next(Fraction(f.find(f"{QTI}fieldentry").text) for f in fields
                if f.find(f"{QTI}fieldlabel").text == "points_possible")


def test_the_package_is_text2qtis_of_its_quiz_text_with_the_papers_points(package, tmp_path):
    """text2qti run on the .txt makes the same questions (whole points, 4-decimal ranges); the zip has each
    question's share of the paper's points and its exact range."""
    source = tmp_path / "quiz.txt"
    source.write_bytes((package / "canvas-qti-02.txt").read_bytes())
    command = "import sys; from text2qti.cmdline import main; sys.argv = ['text2qti', sys.argv[1]]; main()"
    env = {**os.environ, "HOME": str(tmp_path)}  # text2qti's command line writes its config file there
    subprocess.run([sys.executable, "-c", command, str(source)], check=True, capture_output=True, cwd=tmp_path,
                   env=env)
    ours, theirs = assessment(package / "canvas-qti-02.zip"), assessment(tmp_path / "quiz.zip")
    assert [i.get("title") for i in ours.iter(f"{QTI}item")] == [i.get("title") for i in theirs.iter(f"{QTI}item")]
    assert [m.text for m in ours.iter(f"{QTI}mattext")] == [m.text for m in theirs.iter(f"{QTI}mattext")]


def test_points_are_the_papers_and_each_part_its_share(package):
    """assessment_meta.xml's points_possible is the paper's total (text2qti's counted a group twice: 58 for 29
    blanks) and each part's questions add up to its points on the paper."""
    data = json.loads((package / "exam.json").read_text(encoding="utf-8"))
    for version in data["versions"]:
        zipped = members(package / f"canvas-qti-{version['label']}.zip")
        meta = ET.fromstring(next(v for k, v in zipped.items() if k.endswith("assessment_meta.xml")))
        total = sum(p["points"] for p in version["parts"])
        found = [Fraction(e.text) for e in meta.iter("{http://canvas.instructure.com/xsd/cccv1p0}points_possible")]
        assert found == [total, total]
        items = iter(numerical(assessment(package / f"canvas-qti-{version['label']}.zip")))
        for part in version["parts"]:
            shares = [points_of(next(items)) for _ in part["blanks"]]
            assert sum(shares) == part["points"] and max(shares) - min(shares) <= Fraction(1, 100)
        assert next(items, None) is None


def test_exact_answers_and_their_roundings_are_accepted(package):
    """Each range is exact value ± the part's tolerance, written in full: σ² = 0.481875 is accepted as typed and as
    0.4819 (text2qti alone wrote [0.4819, 0.4819])."""
    data = json.loads((package / "exam.json").read_text(encoding="utf-8"))
    longer = 0  # exact answers with more decimals than the 4 asked (σ² = 0.481875 of add_norm)
    for version in data["versions"]:
        items = iter(numerical(assessment(package / f"canvas-qti-{version['label']}.zip")))
        for part in version["parts"]:
            tol = Fraction(part["tolerance"])
            for blank in part["blanks"]:
                item = next(items)
                low, high = (Fraction(item.find(f".//{QTI}{tag}").text) for tag in ("vargte", "varlte"))
                exact = Fraction(blank["answer"])  # 30 significant digits
                longer += (exact * 10 ** 4).denominator != 1 and (exact * 10 ** 12).denominator == 1
                rounded = Fraction(round(exact * 10 ** 4), 10 ** 4)
                assert low <= exact <= high and (low <= rounded <= high or abs(rounded - exact) > tol)
                assert abs((high - low) - 2 * tol) <= Fraction(1, 10 ** 19)
    assert longer >= 1


def test_the_ranges_hold_the_independently_computed_answers(package):
    """Each question's range holds the answer a float implementation computes from the version's spec
    (tests/exam/test_moodle.py's flat_expected), not only exam.json's own."""
    data = json.loads((package / "exam.json").read_text(encoding="utf-8"))
    checked = 0
    for version in data["versions"]:
        expected = flat_expected(version["spec"])
        if expected is None:  # a kind flat_expected does not compute (tests/exam/test_new_kinds.py)
            continue
        items = numerical(assessment(package / f"canvas-qti-{version['label']}.zip"))
        assert len(items) == len(expected) == sum(len(p["blanks"]) for p in version["parts"])
        for item, value in zip(items, expected, strict=True):
            low, high = (float(item.find(f".//{QTI}{tag}").text) for tag in ("vargte", "varlte"))
            assert low - 1e-9 <= value <= high + 1e-9
        checked += 1
    assert checked >= 2


def test_the_same_bytes_on_another_day(package, tmp_path, monkeypatch):
    """No date of the day in the package: the manifest's is fixed, as the zip members' are."""
    import datetime

    import text2qti.xml_imsmanifest as manifest

    class Later(datetime.date):
        @classmethod
        def today(cls):
            return cls(2031, 5, 6)

    monkeypatch.setattr(manifest, "datetime", type("clock", (), {"date": Later}))
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1999999999")
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")
    build_exam(ExamOptions(8, 3, "mixed", "standard", "en"), tmp_path, ("qti",))
    for name in ("canvas-qti-01.zip", "canvas-qti-04.zip"):
        assert (tmp_path / name).read_bytes() == (package / name).read_bytes()
    assert b"1980-01-01" in members(tmp_path / "canvas-qti-01.zip")["imsmanifest.xml"]


def test_without_text2qti_the_error_says_how_to_install_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "text2qti", None)
    assert main(["exam", "--count", "2", "--format", "qti", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == ("symattn: error: --format: qti needs the text2qti package: pip install "
                                       "'symattn[qti]' (or pip install text2qti)\n")
    assert list(tmp_path.iterdir()) == []


def test_the_same_options_give_the_same_package(package, tmp_path):
    build_exam(ExamOptions(8, 3, "mixed", "standard", "en"), tmp_path, ("qti",))
    assert (tmp_path / "canvas-qti-03.zip").read_bytes() == (package / "canvas-qti-03.zip").read_bytes()


def test_more_decimals_than_text2qti_writes_are_refused(tmp_path, capsys):
    assert main(["exam", "--count", "2", "--digits", "5", "--format", "qti", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == ("symattn: error: --digits: --format qti takes at most 4 decimals (text2qti "
                                       "writes numerical answers to 4), got 5\n")
    assert list(tmp_path.iterdir()) == []
