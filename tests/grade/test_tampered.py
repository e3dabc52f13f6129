"""A tampered exam.json (issue 30, items 12 and 15): every value the grader reads or prints is checked on load, a
one-line error naming its JSON path, exit 2, nothing written; and every cell of grades.csv is neutralised."""

from __future__ import annotations

import csv
import json

import pytest

from symattn.cli import main
from symattn.render.escape import csv_cell

from .exams import HAND, correct, write_csv, write_exam


def _grade(tmp_path, capsys, edit=None, raw: str | None = None, label: str = "01"):
    """grade an exam.json of HAND (two versions, 01 and 02) after `edit`, or of `raw` text: status, stderr."""
    path = write_exam(tmp_path, [HAND, HAND])
    responses = write_csv(tmp_path / "r.csv", path, [("Ann", label, correct(path, "01"))])
    if raw is not None:
        path.write_text(raw, encoding="utf-8")
    elif edit is not None:
        data = json.loads(path.read_text(encoding="utf-8"))
        edit(data)
        path.write_text(json.dumps(data), encoding="utf-8")
    capsys.readouterr()
    status = main(["grade", str(path), str(responses), "--out", str(tmp_path / "out"), "--format", "md"])
    return status, capsys.readouterr().err


def _set(path: str, value):
    def edit(data):
        *head, last = path.split(".")
        target = data
        for name in head:
            target = target[int(name)] if name.isdigit() else target[name]
        target[int(last) if last.isdigit() else last] = value
    return edit


@pytest.mark.parametrize(("path", "value", "message"), [
    ("versions.0.label", 1, 'versions[0].label: expected the version\'s label (digits, such as "01"), got 1'),
    ("versions.0.label", None, "versions[0].label: expected the version's label"),
    ("versions.0.label", [1], "versions[0].label: expected the version's label"),
    ("versions.1.label", "01", "versions[1].label: version 01 is given twice"),
    ("versions.0.parts.0.blanks.0.answer", "1" * 29, "versions[0].parts[0].blanks[0].answer: expected the blank's "
                                                     "answer: a decimal or a fraction"),
    ("versions.0.answers.sections.0.d_k", 0, "versions[0].answers.sections[0].d_k: expected d_k (a whole number "
                                             "from 1 to 10000), got 0"),
    ("versions.0.answers.sections.0.scale", "0", "versions[0].answers.sections[0].scale: expected a scale above 0"),
    ("versions.0.answers.sections.0", "abc", 'versions[0].answers.sections[0]: expected a section (a JSON object), '
                                             'got "abc"'),
    ("versions.0.spec.sections.0.X", [[1, 0], [0, "a"]], "versions[0].spec.sections[0].X[1][1]: expected a number"),
    ("versions.0.spec.sections.0.W_Q", "abc", "versions[0].spec.sections[0].W_Q: expected a matrix"),
    ("versions.0.spec.sections.0.focus", ["A"], "versions[0].spec.sections[0].focus: expected one of the tokens"),
    ("versions.0.spec.sections.0.focus", "Z", 'versions[0].spec.sections[0].focus: expected one of the tokens, '
                                             'got "Z"'),
    ("versions.0.spec.sections.0.tokens", None, "versions[0].spec.sections[0].tokens: expected a list of token"),
    # item 15: a part letter and a label are validated on load (they reach TeX, Markdown and grades.csv)
    ("versions.0.parts.0.part", "\\def\\x{\\x}\\x", "versions[0].parts[0].part: expected the part's letter (one "
                                                     "of a-z)"),
    ("versions.0.parts.0.part", "\\input{/etc/passwd}", "versions[0].parts[0].part: expected the part's letter"),
    ("versions.0.parts.0.part", "<img src=x onerror=alert(1)>", "versions[0].parts[0].part: expected the part's"),
    ("versions.0.parts.0.part", "=cmd|' /C calc'!A0", "versions[0].parts[0].part: expected the part's letter"),
    ("versions.0.parts.1.part", "a", "versions[0].parts: a part letter is given twice"),
    ("versions.0.label", '=HYPERLINK("http://evil.example")', "versions[0].label: expected the version's label "
                                                              "(1 to 4 digits 0-9"),
    ("versions.0.label", "٠١", "versions[0].label: expected the version's label (1 to 4 digits 0-9"),
])
def test_a_tampered_exam_json_names_the_field(tmp_path, capsys, path, value, message):
    status, err = _grade(tmp_path, capsys, _set(path, value))
    assert status == 2 and message in err, err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


@pytest.mark.parametrize(("raw", "message"), [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"versions": [], "versions": []}', "key 'versions' given twice"),
    ('{"versions": []}', "versions: expected at least one version, got an empty list"),  # (fuzz: an IndexError)
    ('{"versions": [], "options": {"digits": ' + "9" * 5000 + "}}", "options.digits: an integer of 5000 digits is "
                                                                   "too long (at most 4300 digits)"),
])
def test_an_exam_json_that_is_no_exam_is_one_line(tmp_path, capsys, raw, message):
    status, err = _grade(tmp_path, capsys, raw=raw)
    assert status == 2 and message in err, err
    assert len(err.strip().splitlines()) == 1


def test_every_csv_cell_is_neutralised():
    for payload in ("=cmd|' /C calc'!A0", "+1", "-2+3", "@SUM(A1)", "\tx", "\rx", '=HYPERLINK("http://e.example")'):
        assert csv_cell(payload) == "'" + payload
    assert csv_cell("01") == "01" and csv_cell("13.5") == "13.5" and csv_cell("Ann") == "Ann"


def test_grades_csv_neutralises_a_class_list_id_and_keeps_its_numbers(tmp_path, capsys):
    """Every cell goes through one function: a class list's id that is a formula lands quoted."""
    def listed(data):
        data["students"] = [{"id": "=1+1", "name": "Ann", "version": "01"}]
    status, err = _grade(tmp_path, capsys, listed)
    assert status == 0, err
    rows = list(csv.reader((tmp_path / "out" / "grades.csv").open(encoding="utf-8")))
    assert rows[0] == ["student", "id", "version", "a", "b", "c", "d", "e", "total", "note"]
    assert rows[1][:3] == ["Ann", "'=1+1", "01"] and rows[1][-2:] == ["20", ""]
