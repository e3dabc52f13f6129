"""Both responses formats (symattn's CSV, Moodle's Responses report), the input errors, and the feedback files."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from decimal import Decimal

import pytest

from symattn.exam.build import exercise
from symattn.exam.drivers.base import Share
from symattn.exam.drivers.moodle import MoodleDriver
from symattn.exam.generate import generate
from symattn.exam.options import ExamOptions
from symattn.grade.responses import moodle_parts

from .exams import HAND, blanks, correct, generated, write_csv, write_exam

CLOZE_NUMERICAL = re.compile(r"\{(\d+):NUMERICAL:=([^:}]+):([^}]+)\}")  # Moodle's own pattern, weight and answer


def run(*args: str):
    return subprocess.run([sys.executable, "-m", "symattn", "grade", *args], capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope="module")
def exam(tmp_path_factory):
    folder = tmp_path_factory.mktemp("exam")
    return folder, generated(folder, 3, "self_attention", seed=5)


def graded_with_one_mistake(path, tmp_path, bob_version: str = "02") -> list[dict[str, str]]:
    """grades.csv of Ann, all right on version 01, and Bob, on version 02 (typed as `bob_version`) with its first
    blank 99; the feedback as Markdown in tmp_path/out."""
    wrong = correct(path, "02")
    wrong[blanks(path)["02"][0]["id"]] = "99"
    responses = write_csv(tmp_path / "r.csv", path, [("Ann", "01", correct(path, "01")), ("Bob", bob_version, wrong)])
    result = run(str(path), str(responses), "--out", str(tmp_path / "out"), "--format", "md")
    assert result.returncode == 0, result.stderr
    return list(csv.DictReader((tmp_path / "out" / "grades.csv").open(encoding="utf-8")))


def test_plain_csv_grades_full_marks_and_a_mistake(exam, tmp_path):
    folder, path = exam
    rows = graded_with_one_mistake(path, tmp_path, bob_version="2")
    assert [(r["student"], r["version"], r["total"]) for r in rows][0] == ("Ann", "01", "20")
    count = len([b for b in blanks(path)["02"] if b["id"].startswith("v02.a.")])
    points = {p["part"]: p["points"] for p in json.loads(path.read_text(encoding="utf-8"))["versions"][1]["parts"]}
    assert rows[1]["a"] == f"{round(points['a'] * (count - 1) / count, 2):g}" and rows[1]["b"] == str(points["b"])
    feedback = (tmp_path / "out" / "feedback" / "002-Bob.md").read_text(encoding="utf-8")
    assert "`99`" in feedback and "Worked line:" in feedback


def moodle_answers(xml_text: str) -> list[list[str]]:
    """Each question's NUMERICAL answers in the order Moodle numbers its subquestions (parsed from moodle.xml)."""
    root = ET.fromstring(xml_text)
    return [[m.group(2) for m in CLOZE_NUMERICAL.finditer(q.find("questiontext/text").text)]
            for q in root.iter("question") if q.get("type") == "cloze"]  # after the exam's category


@pytest.fixture(scope="module")
def cloze(exam):
    """The exam's moodle.xml, as the Moodle driver writes it for the same versions: each question's answers."""
    options = ExamOptions(3, 0, lang="en")
    driver = MoodleDriver(options)
    versions = generate(3, 5, "self_attention", "easy", "en")
    xml = driver.files([Share(v.label, 20, driver.version(exercise(v, options, steps=False))) for v in versions])
    return dict(zip(("01", "02", "03"), moodle_answers(xml["moodle.xml"]), strict=True))


def test_blank_ids_follow_moodles_cloze_order(exam, cloze):
    """The k-th blank of a version is Moodle's subquestion k: the same answers in the same order."""
    folder, path = exam
    for label, answers in cloze.items():
        ours = [float(b["answer"]) for b in blanks(path)[label]]
        assert [float(a) for a in answers] == pytest.approx(ours, abs=1e-11)


def moodle_csv(path, rows) -> None:
    """A Responses report as Moodle downloads it (dataformat csv: a UTF-8 byte order mark, then the table)."""
    header = ["Last name", "First name", "Email address", "Status", "Started", "Completed", "Duration",
              "Grade/20.00", "Response 1", "Right answer 1"]
    with path.open("w", newline="", encoding="utf-8-sig") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for row in rows:
            writer.writerow(row)


def summary(values: list[str]) -> str:
    """qtype_multianswer_question::summarise_response: 'part {i}: {response}' joined by '; '."""
    return "; ".join(f"part {i}: {v}" for i, v in enumerate(values, start=1))


def test_moodle_responses_report(exam, cloze, tmp_path):
    """Right answers as Moodle summarises them (the NUMERICAL answers of moodle.xml, in order) tell the versions."""
    folder, path = exam
    b = blanks(path)
    right = {label: summary(answers) for label, answers in cloze.items()}
    answers = correct(path, "03")
    ids = [entry["id"] for entry in b["03"]]
    typed = [answers[i] for i in ids]
    typed[1] = ""  # unanswered
    typed[2] = "abc"  # Moodle keeps what was typed
    full = summary(list(correct(path, "01").values()))
    rows = [["Lee", "Ann", "ann@example.org", "Finished", "", "", "", "20.00", full, right["01"]],
            ["Ode", "Bo", "bo@example.org", "Finished", "", "", "", "10.00", summary(typed), right["03"]],
            ["Nil", "Cy", "cy@example.org", "-", "", "", "", "-", "-", "-"]]
    moodle_csv(tmp_path / "m.csv", rows)
    result = run(str(path), str(tmp_path / "m.csv"), "--out", str(tmp_path / "out"), "--format", "md")
    assert result.returncode == 0, result.stderr
    assert "skipped 1 rows without an attempt (rows 4)" in result.stderr
    grades = list(csv.DictReader((tmp_path / "out" / "grades.csv").open(encoding="utf-8")))
    assert [(g["student"], g["version"]) for g in grades] == [("Ann Lee (ann@example.org)", "01"),
                                                             ("Bo Ode (bo@example.org)", "03")]
    assert grades[0]["total"] == "20" and grades[1]["total"] != "20"
    text = next((tmp_path / "out" / "feedback").glob("002-*.md")).read_text(encoding="utf-8")
    assert "not answered" in text and "`abc` is not a number" in text


def test_moodle_summary_parts():
    assert moodle_parts("part 1: 0.5; part 2: ; part 3: -1,5", "f") == ["0.5", "", "-1,5"]


@pytest.mark.parametrize(("edit", "message"), [
    (lambda rows: rows[0].__setitem__(2, rows[0][2][:-1] + "9"),
     "r.csv row 2: no column v01.a.Q.1.1 (version 01 has that blank; add the column, empty where not answered; is "
     "'v01.a.Q.1.9', which is no blank id, meant?)"),
    (lambda rows: rows.append(list(rows[1])), "row 3, column student: 'Ann' is on row 2 already"),
])
def test_bad_responses_are_one_line_errors(tmp_path, edit, message):
    path = write_exam(tmp_path, [HAND])
    responses = write_csv(tmp_path / "r.csv", path, [("Ann", "01", correct(path, "01"))])
    rows = list(csv.reader(responses.open(encoding="utf-8")))
    edit(rows)
    with responses.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    result = run(str(path), str(responses), "--out", str(tmp_path / "out"), "--format", "md")
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


def test_a_missing_column_names_the_row_and_the_column(tmp_path):
    path = write_exam(tmp_path, [HAND])
    responses = write_csv(tmp_path / "r.csv", path, [("Ann", "01", correct(path, "01"))])
    rows = list(csv.reader(responses.open(encoding="utf-8")))
    rows = [row[:-1] for row in rows]
    with responses.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    result = run(str(path), str(responses), "--out", str(tmp_path / "out"), "--format", "md")
    assert result.returncode == 2 and "r.csv row 2: no column v01.e.z.2" in result.stderr


def test_the_inputs_are_never_overwritten(tmp_path):
    path = write_exam(tmp_path, [HAND])
    responses = write_csv(tmp_path / "grades.csv", path, [("Ann", "01", correct(path, "01"))])
    result = run(str(path), str(responses), "--out", str(tmp_path), "--format", "md")
    assert result.returncode == 2 and "would overwrite the input" in result.stderr


def test_feedback_names_the_cause_and_escapes_the_name(tmp_path):
    """A student who did not divide by √d_k = 2: the scaled scores are the raw ones, 'no_scaling'."""
    path = write_exam(tmp_path, [HAND])
    answers = correct(path, "01")
    answers.update({"v01.c.a.1": "1", "v01.c.a.2": "4"})
    name = r"*Eve* \input{/etc/passwd} <b>"
    responses = write_csv(tmp_path / "r.csv", path, [(name, "01", answers)])
    formats = "md,pdf" if shutil.which("uplatex") else "md"
    result = run(str(path), str(responses), "--out", str(tmp_path / "out"), "--format", formats)
    assert result.returncode == 0, result.stderr
    md = next((tmp_path / "out" / "feedback").glob("*.md")).read_text(encoding="utf-8")
    assert "(`no_scaling`): the scores were not divided by √d\\_k" in md
    assert r"# Feedback: \*Eve\* \\input\{/etc/passwd\} \<b\>, version 01" in md
    assert "a\\[1\\] = 1 / √4 = 0.5" in md
    if shutil.which("uplatex") and shutil.which("pdftotext"):
        pdf = next((tmp_path / "out" / "feedback").glob("*.pdf"))
        text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True).stdout
        assert "no_scaling" in text and "input{/etc/passwd}" in text and "Eve" in text


def test_moodle_report_errors(exam, cloze, tmp_path):
    """A response with fewer parts than the version's blanks is that student's, not graded and listed (the others
    are graded); a report that cannot tell the versions is an error."""
    folder, path = exam
    short = summary(list(correct(path, "01").values())[:-1])
    moodle_csv(tmp_path / "m.csv", [["Lee", "Ann", "a@b", "Finished", "", "", "", "1", short, summary(cloze["01"])],
                                    ["Ode", "Bo", "b@c", "Finished", "", "", "", "1",
                                     summary(list(correct(path, "01").values())), summary(cloze["01"])]])
    result = run(str(path), str(tmp_path / "m.csv"), "--out", str(tmp_path / "out"), "--format", "md")
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader((tmp_path / "out" / "grades.csv").open(encoding="utf-8")))
    assert [(r["student"], r["total"]) for r in rows] == [("Ann Lee (a@b)", ""), ("Bo Ode (b@c)", "20")]
    assert rows[0]["note"] == (f"not graded: column Response 1: {len(cloze['01']) - 1} answers, but version 01 has "
                               f"{len(cloze['01'])} blanks")
    rows = [["Lee", "Ann", "a@b", "Finished", "", "", "", "1", summary(list(correct(path, "01").values()))]]
    with (tmp_path / "n.csv").open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([["Last name", "First name", "Email address", "Status", "Started",
                                       "Completed", "Duration", "Grade/20.00", "Response 1"], *rows])
    result = run(str(path), str(tmp_path / "n.csv"), "--out", str(tmp_path / "out"), "--format", "md")
    assert result.returncode == 2 and "needs a 'Right answer' column" in result.stderr


def test_an_answer_in_another_versions_column_is_set_aside_with_a_note(exam, tmp_path):
    """Ann answers version 01 and typed a number in a blank of version 02: graded on 01, the cell ignored and noted
    (it stopped the whole class)."""
    folder, path = exam
    answers = correct(path, "01")
    answers[blanks(path)["02"][0]["id"]] = "1"
    responses = write_csv(tmp_path / "r.csv", path, [("Ann", "01", answers)])
    result = run(str(path), str(responses), "--out", str(tmp_path / "out"), "--format", "md")
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader((tmp_path / "out" / "grades.csv").open(encoding="utf-8")))
    assert rows[0]["total"] == "20"
    assert rows[0]["note"] == "answers in 1 blanks of another version ignored (v02.a.Q.1.1)"
    assert "row 2: 'Ann': answers in 1 blanks of another version ignored" in result.stderr


def test_files_that_are_not_an_exam_or_a_csv_are_one_line_errors(tmp_path):
    path = write_exam(tmp_path, [HAND])
    responses = write_csv(tmp_path / "r.csv", path, [("Ann", "01", correct(path, "01"))])
    broken = tmp_path / "broken.json"
    broken.write_text('{"versions": [{"label": "01", "parts": []}]}', encoding="utf-8")
    result = run(str(broken), str(responses), "--out", str(tmp_path / "out"), "--format", "md")
    assert result.returncode == 2 and "broken.json: versions[0].spec: missing" in result.stderr
    (tmp_path / "nul.csv").write_bytes(b"student,version\nA\x00nn,01\n")
    result = run(str(path), str(tmp_path / "nul.csv"), "--out", str(tmp_path / "out"), "--format", "md")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr


@pytest.mark.parametrize("kind", ["feed_forward", "add_norm", "next_token", "grouped_query", "rope", "mixed"])
def test_every_exam_kind_grades(kind, tmp_path):
    """Every kind `symattn exam` draws is graded: right answers earn every point, a wrong one costs its share."""
    rows = graded_with_one_mistake(generated(tmp_path, 2, kind, seed=3), tmp_path)
    assert rows[0]["total"] == "20" and float(rows[1]["total"]) < 20


def test_a_class_list_gives_ids_and_flags_a_student_on_another_version(tmp_path):
    """With `exam --students`, grades.csv has each student's id (for an LMS upload by id), and a row graded on
    another version than the class list gives that student, or a student not on it, is a warning on stderr."""
    out = tmp_path / "exam"
    (tmp_path / "class.csv").write_text("id,name\ns1,Ann Lee\ns2,山田 太郎\n", encoding="utf-8")
    from symattn.cli import main

    assert main(["exam", "--students", str(tmp_path / "class.csv"), "--seed", "2", "--format", "json",
                 "--lang", "en", "--out", str(out)]) == 0
    from .exams import correct, write_csv

    path = out / "exam.json"
    responses = write_csv(tmp_path / "r.csv", path, [("Ann Lee", "01", correct(path, "01")),
                                                     ("s2", "01", correct(path, "01")),
                                                     ("Nobody", "02", correct(path, "02"))])
    result = run(str(path), str(responses), "--out", str(tmp_path / "out"), "--format", "md")
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader((tmp_path / "out" / "grades.csv").open(encoding="utf-8")))
    assert [(r["student"], r["id"], r["version"]) for r in rows] == [("Ann Lee", "s1", "01"), ("s2", "s2", "01"),
                                                                       ("Nobody", "", "02")]
    assert "row 3: 's2': sat version 02 by the class list, graded on version 01" in result.stderr
    assert "row 4: 'Nobody': not on the class list" in result.stderr


def test_exam_json_s_own_30_figure_answer_is_a_number():
    """An answer typed with every figure exam.json gives (30 significant digits after a leading 0) is read."""
    from symattn.grade.numbers import parse_answer

    assert parse_answer("0.500000000000000000000000000000") == Decimal("0.5")
    assert parse_answer("1" * 31) == Decimal("1" * 31)  # more than exam.json gives is still read exactly
    assert parse_answer("1" * 101) is None


def _tamper(key: str, value):
    """An edit of exam.json's first version (or its options): `key` a path of names and indices."""
    def edit(data):
        *path, last = key.split(".")
        target = data
        for name in path:
            target = target[int(name)] if name.isdigit() else target[name]
        if value is _DROP:
            del target[last]
        else:
            target[int(last) if last.isdigit() else last] = value
    return edit


_DROP = object()


@pytest.mark.parametrize(("key", "value", "message"), [
    ("versions.0.parts.0.tolerance", "-0.001", "versions[0].parts[0].tolerance: expected a tolerance of 0 or more"),
    ("versions.0.parts.0.points", 1e308, "versions[0].parts[0].points: expected the part's points (a whole number "
                                         "from 0 to 1000), got 1E+308"),
    ("versions.0.parts.0.points", 10**9, "versions[0].parts[0].points: expected the part's points"),
    ("versions.0.parts.0.points", "14", "versions[0].parts[0].points: expected the part's points"),
    ("versions.0.parts.0.blanks.0.answer", "NaN", "versions[0].parts[0].blanks[0].answer: expected the blank's "
                                                  "answer: a decimal or a fraction"),
    ("versions.0.parts.0.blanks.0.answer", 0.5, "versions[0].parts[0].blanks[0].answer: expected the blank's answer "
                                                "in quotes"),
    ("versions.0.parts.0.blanks.0.row", 0, "versions[0].parts[0].blanks[0].row: expected the blank's row"),
    ("versions.0.parts.0.blanks.0.id", _DROP, "versions[0].parts[0].blanks[0].id: missing: expected the blank's id"),
    ("versions.0.spec", _DROP, "versions[0].spec: missing: expected the version's spec"),
    ("versions.0.parts", "abc", "versions[0].parts: expected a list of parts"),
    ("options.digits", "abc", "options.digits: expected a whole number of decimals"),
    ("options.lang", "fr", "options.lang: expected ja or en"),
])
def test_a_tampered_exam_json_is_a_one_line_error(tmp_path, key, value, message):
    path = write_exam(tmp_path, [HAND])
    responses = write_csv(tmp_path / "r.csv", path, [("Ann", "01", correct(path, "01"))])
    data = json.loads(path.read_text(encoding="utf-8"))
    _tamper(key, value)(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    result = run(str(path), str(responses), "--out", str(tmp_path / "out"), "--format", "md")
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


def test_a_row_that_ends_early_leaves_its_last_blanks_unanswered(tmp_path):
    """A spreadsheet may write a row without its empty last cells: those blanks are unanswered, not an error."""
    path = write_exam(tmp_path, [HAND])
    responses = write_csv(tmp_path / "r.csv", path, [("Ann", "01", correct(path, "01")),
                                                     ("Bob", "01", correct(path, "01"))])
    rows = list(csv.reader(responses.open(encoding="utf-8")))
    rows[2] = rows[2][:-2]  # Bob's last two blanks (part e)
    with responses.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    result = run(str(path), str(responses), "--out", str(tmp_path / "out"), "--format", "md")
    assert result.returncode == 0, result.stderr
    grades = {g["student"]: g for g in csv.DictReader((tmp_path / "out" / "grades.csv").open(encoding="utf-8"))}
    assert grades["Ann"]["e"] != "0" and grades["Bob"]["e"] == "0"
    same = ("version", "a", "b", "c", "d")
    assert [grades["Bob"][k] for k in same] == [grades["Ann"][k] for k in same]
    feedback = next((tmp_path / "out" / "feedback").glob("002-*.md")).read_text(encoding="utf-8")
    assert feedback.count("not answered") == 2


def test_a_wrong_final_output_of_grouped_query_attention_is_marked(tmp_path):
    """Grouped-query versions have no `heads` table: the worked line of z_final is left out when the concatenation is
    not at hand (it raised a traceback)."""
    from .exams import generated

    path = generated(tmp_path, 2, "grouped_query")
    answers = correct(path, "01")
    final = next(i for i in answers if ".z_final." in i)
    answers[final] = "9"
    responses = write_csv(tmp_path / "r.csv", path, [("Ann", "01", answers)])
    result = run(str(path), str(responses), "--out", str(tmp_path / "out"), "--format", "md")
    assert result.returncode == 0, result.stderr
    feedback = next((tmp_path / "out" / "feedback").glob("001-*.md")).read_text(encoding="utf-8")
    line = next(item for item in feedback.split("\n- ") if "you wrote `9`" in item)
    answer = re.search(r"the answer is ≈ (\S+) ", line).group(1)
    assert re.search(r"Worked line: z\\_final\\\[\d\\\] = .+ ≈ " + re.escape(answer), line), line
