"""Grading never stops the class, never gives a traceback (issue 30 items 11, 17, 18; issue 32 items 4-6): a bad
cell is that student's invalid answer, a row that cannot be read is listed and not graded, every other student is
graded; names are checked as a class list's are; ids are matched before names."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from decimal import Decimal

import pytest

from .exams import HAND, blanks, correct, write_csv, write_exam

UPLATEX = shutil.which("uplatex") is not None


def run(*args: str):
    return subprocess.run([sys.executable, "-m", "symattn", "grade", *args], capture_output=True, text=True,
                          timeout=300)


def grades(folder) -> list[dict[str, str]]:
    return list(csv.DictReader((folder / "grades.csv").open(encoding="utf-8")))


def rewrite(path, edit) -> None:
    rows = list(csv.reader(path.open(encoding="utf-8")))
    edit(rows)
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)


@pytest.mark.parametrize("typed", ["0.12345678901234567890123456789", "3.00000000000000000000000000000",
                                   "0." + "0" * 10_000 + "1", "9e999", "-9e999"])
def test_wrong_answers_of_any_size_are_marked_wrong(tmp_path, typed):
    """29 or more decimals crashed the class (decimal.InvalidOperation at precision 28 in causes.py)."""
    path = write_exam(tmp_path, [HAND])
    answers = correct(path, "01")
    answers["v01.e.z.1"] = typed
    responses = write_csv(tmp_path / "r.csv", path, [("Ann", "01", answers), ("Bob", "01", correct(path, "01"))])
    formats = "md,pdf" if UPLATEX and typed.startswith("0.000") else "md"
    result = run(str(path), str(responses), "--out", str(tmp_path / "out"), "--format", formats)
    assert result.returncode == 0, result.stderr
    assert [(g["student"], g["e"], g["total"]) for g in grades(tmp_path / "out")] == [("Ann", "0.5", "19.5"),
                                                                                       ("Bob", "1", "20")]
    feedback = (tmp_path / "out" / "feedback" / "001-Ann.md").read_text(encoding="utf-8")
    assert "z\\[1\\]" in feedback and len(feedback) < 5_000  # a 10,002-character answer quoted by its ends


def test_a_correct_value_with_more_than_30_figures_is_right(tmp_path):
    path = write_exam(tmp_path, [HAND])
    answers = correct(path, "01")
    answer = next(b["answer"] for b in blanks(path)["01"] if b["id"] == "v01.e.z.1")
    answers["v01.e.z.1"] = answer + "1234567"  # 30 figures of exam.json, and 7 more
    responses = write_csv(tmp_path / "r.csv", path, [("Ann", "01", answers)])
    result = run(str(path), str(responses), "--out", str(tmp_path / "out"), "--format", "md")
    assert result.returncode == 0, result.stderr
    assert grades(tmp_path / "out")[0]["total"] == "20"


def test_a_huge_weight_in_exam_json_is_one_line_and_a_huge_typed_output_grades(tmp_path):
    """A weight 9e999 in exam.json's spec (worked.py's rounding raised) is refused in one line naming it, as numbers
    exam does not write are (tests/grade/test_tampered.py); an output -9e999 typed is that student's wrong answer."""
    path = write_exam(tmp_path, [HAND])
    answers = correct(path, "01")
    answers.update({"v01.a.V.1.1": "-9e999", "v01.e.z.1": "-9e999"})
    responses = write_csv(tmp_path / "r.csv", path, [("Ann", "01", answers)])
    result = run(str(path), str(responses), "--out", str(tmp_path / "out"), "--format", "md")
    assert result.returncode == 0, result.stderr
    ann, = grades(tmp_path / "out")
    assert ann["total"] != "20"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["versions"][0]["spec"]["sections"][0]["W_V"][0][0] = "9e999"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = run(str(path), str(responses), "--out", str(tmp_path / "out2"), "--format", "md")
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "versions[0].spec.sections[0].W_V[0][0]" in result.stderr and not (tmp_path / "out2").exists()


@pytest.mark.parametrize(("version", "shown"), [("²", "'²'"), ("٤", "'٤'"), ("9" * 5000, "'" + "9" * 20 + "...'"),
                                                ("7", "'7'")])
def test_an_unreadable_version_is_that_students_row(tmp_path, version, shown):
    """A version cell `²` (int() raised) or of 5,000 digits (Python's digit limit): the row is listed in
    grades.csv with the reason and not graded; the others are."""
    path = write_exam(tmp_path, [HAND])
    responses = write_csv(tmp_path / "r.csv", path, [("Ann", version, correct(path, "01")),
                                                     ("Bob", "01", correct(path, "01"))])
    result = run(str(path), str(responses), "--out", str(tmp_path / "out"), "--format", "md")
    assert result.returncode == 0, result.stderr
    ann, bob = grades(tmp_path / "out")
    assert ann["total"] == "" and ann["note"] == f"not graded: column version: no version {shown} in exam.json " \
                                                 "(it has 01 to 01)"
    assert bob["total"] == "20"
    assert "1 not graded" in result.stdout and "row 2: 'Ann': not graded" in result.stderr
    assert "not graded" in (tmp_path / "out" / "report.md").read_text(encoding="utf-8")


def test_bad_cells_and_unknown_columns_grade_everyone(tmp_path):
    """A `comments` column, a row with one cell more than the header, a cell `n/a`: every student graded, the
    bad cell is that student's answer that is not a number, one warning per kind of thing ignored."""
    path = write_exam(tmp_path, [HAND])
    bad = correct(path, "01")
    bad["v01.b.s.1"] = "n/a"
    responses = write_csv(tmp_path / "r.csv", path, [("Ann", "01", bad), ("Bob", "01", correct(path, "01")),
                                                     ("Cy", "01", correct(path, "01"))])
    rewrite(responses, lambda rows: ([r.append(c) for r, c in zip(rows, ["comments", "late", "", ""], strict=True)],
                                     rows[2].append("stray")))
    result = run(str(path), str(responses), "--out", str(tmp_path / "out"), "--format", "md")
    assert result.returncode == 0, result.stderr
    assert [(g["student"], g["b"], g["total"]) for g in grades(tmp_path / "out")] == [
        ("Ann", "1.5", "18.5"), ("Bob", "3", "20"), ("Cy", "3", "20")]
    assert result.stderr.count("warning:") == 2
    assert "1 columns that are no blank id of exam.json are ignored: comments" in result.stderr
    assert "the cells past the header's 31 columns are ignored (rows 3)" in result.stderr
    feedback = (tmp_path / "out" / "feedback" / "001-Ann.md").read_text(encoding="utf-8")
    assert "`n/a` is not a number" in feedback


def moodle_report(path, rows, right: bool = False) -> None:
    """A Moodle Responses report (ID number as the identity), with a Right answer column or not."""
    with path.open("w", newline="", encoding="utf-8-sig") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Last name", "First name", "ID number", "Status", "Response 1",
                         *(["Right answer 1"] if right else [])])
        writer.writerows(rows)


def parts(values) -> str:
    return "; ".join(f"part {i}: {v}" for i, v in enumerate(values, start=1))


def test_a_moodle_response_whose_last_box_is_empty_is_unanswered(tmp_path):
    """'...; part 28: ' (the last box empty) was refused as 27 answers."""
    path = write_exam(tmp_path, [HAND])
    values = list(correct(path, "01").values())
    moodle_report(tmp_path / "m.csv", [["Lee", "Ann", "s1", "Finished", parts(values[:-1] + [""])],
                                       ["Ode", "Bo", "s2", "Finished", parts([""] + values[1:])]])
    result = run(str(path), str(tmp_path / "m.csv"), "--out", str(tmp_path / "out"), "--format", "md")
    assert result.returncode == 0, result.stderr
    ann, bo = grades(tmp_path / "out")
    assert (ann["e"], ann["total"]) == ("0.5", "19.5") and bo["a"] != "14" and bo["e"] == "1"
    assert "not answered" in (tmp_path / "out" / "feedback" / "001-Ann-Lee-s1.md").read_text(encoding="utf-8")


def test_moodle_right_answers_of_1e20_are_no_version(tmp_path):
    """Right answers of 1e20 or more crashed (quantize at precision 28): that row matches no version."""
    path = write_exam(tmp_path, [HAND])
    values = list(correct(path, "01").values())
    right = [b["answer"] for b in blanks(path)["01"]]
    moodle_report(tmp_path / "m.csv", [["Lee", "Ann", "s1", "Finished", parts(["1e20"] * len(values)),
                                        parts(["1e20"] * len(values))],
                                       ["Ode", "Bo", "s2", "Finished", parts(values), parts(right)]], right=True)
    result = run(str(path), str(tmp_path / "m.csv"), "--out", str(tmp_path / "out"), "--format", "md")
    assert result.returncode == 0, result.stderr
    ann, bo = grades(tmp_path / "out")
    assert ann["note"] == "not graded: column Right answer 1: these right answers are those of no version of " \
                          "exam.json (a different exam?)"
    assert bo["total"] == "20"


@pytest.mark.parametrize(("name", "problem"), [
    *((f"A{c}nn", f"a control character (U+{ord(c):04X})") for c in "\x07\x08\x1b\x7f"),
    ("A\x0bnn", "a line break (U+000B)"),
    ("\u200b\u200b", "an invisible format character (U+200B)"),
    ("Ann \u202eeeL", "an invisible format character (U+202E)"),
    ("x" * 100_000, "100000 characters, at most 80"),
])
def test_a_name_that_cannot_be_printed_is_an_error_naming_the_row(tmp_path, name, problem):
    """Control characters made 'LaTeX failed' for the whole class; invisible names printed as nothing."""
    path = write_exam(tmp_path, [HAND])
    responses = write_csv(tmp_path / "r.csv", path, [("Bob", "01", correct(path, "01")),
                                                     (name, "01", correct(path, "01"))])
    result = run(str(path), str(responses), "--out", str(tmp_path / "out"), "--format", "md")
    assert result.returncode == 2 and "r.csv row 3, column student: " + problem in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


def test_a_moodle_first_name_with_a_control_character_names_the_row_and_column(tmp_path):
    path = write_exam(tmp_path, [HAND])
    values = list(correct(path, "01").values())
    moodle_report(tmp_path / "m.csv", [["Lee", "An\x00n", "s1", "Finished", parts(values)]])
    result = run(str(path), str(tmp_path / "m.csv"), "--out", str(tmp_path / "out"), "--format", "md")
    assert result.returncode == 2, result.stderr
    assert "m.csv row 2, column First name: a control character (U+0000)" in result.stderr


def test_a_composed_and_a_decomposed_name_are_one_student(tmp_path):
    path = write_exam(tmp_path, [HAND])
    responses = write_csv(tmp_path / "r.csv", path, [("Ren\u00e9", "01", correct(path, "01")),
                                                     ("Rene\u0301", "01", correct(path, "01"))])
    result = run(str(path), str(responses), "--out", str(tmp_path / "out"), "--format", "md")
    assert result.returncode == 2 and "row 3, column student: 'René' is on row 2 already" in result.stderr


@pytest.fixture
def class_exam(tmp_path):
    """An exam for a class list with two students of one name, an accented name written composed, and one whose
    name TeX has no font for."""
    from symattn.cli import main

    (tmp_path / "class.csv").write_text("id,name\ns1,Wei Wang\ns2,Wei Wang\ns3,Ren\u00e9 Roy\n", encoding="utf-8")
    assert main(["exam", "--students", str(tmp_path / "class.csv"), "--seed", "2", "--format", "json",
                 "--lang", "en", "--out", str(tmp_path / "exam")]) == 0
    return tmp_path / "exam" / "exam.json"


def test_students_of_one_name_are_matched_by_id(class_exam, tmp_path):
    """Moodle's 'Wei Wang (s2)' got s1's id, so s2's points would upload to s1; a decomposed é is the class list's
    é; a student not on the list is listed in grades.csv and the report."""
    path = class_exam
    rows = [("Wei Wang (s1)", "01", correct(path, "01")), ("Wei Wang (s2)", "02", correct(path, "02")),
            ("Rene\u0301 Roy", "03", correct(path, "03")), ("Wei Wang", "01", correct(path, "01")),
            ("Nobody", "01", correct(path, "01"))]
    responses = write_csv(tmp_path / "r.csv", path, rows)
    result = run(str(path), str(responses), "--out", str(tmp_path / "out"), "--format", "md")
    assert result.returncode == 0, result.stderr
    assert [(g["student"], g["id"], g["note"]) for g in grades(tmp_path / "out")] == [
        ("Wei Wang (s1)", "s1", ""), ("Wei Wang (s2)", "s2", ""), ("René Roy", "s3", ""),
        ("Wei Wang", "", "2 students of the class list have this name: give the id"),
        ("Nobody", "", "not on the class list")]
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "| Nobody | 6 | not on the class list |" in report


def test_a_class_list_refuses_invisible_names_and_ids(tmp_path, capsys):
    from symattn.cli import main

    for row, problem in [("\u200b,Ann", "row 2, column id: an invisible format character (U+200B)"),
                         ("s1,Ann \u202eeeL", "row 2, column name: an invisible format character (U+202E)"),
                         ("s1,A\x1bnn", "row 2, column name: a control character (U+001B)")]:
        (tmp_path / "class.csv").write_text(f"id,name\n{row}\n", encoding="utf-8")
        assert main(["exam", "--students", str(tmp_path / "class.csv"), "--format", "json",
                     "--out", str(tmp_path / "o")]) == 2
        err = capsys.readouterr().err
        assert problem in err and err.count("\n") == 1


@pytest.mark.skipif(not UPLATEX, reason="needs upLaTeX")
def test_a_name_the_pdf_fonts_lack_is_a_warning_naming_the_student(tmp_path):
    path = write_exam(tmp_path, [HAND])
    responses = write_csv(tmp_path / "r.csv", path, [("محمد علي", "01", correct(path, "01")),
                                                     ("Ann", "01", correct(path, "01"))])
    result = run(str(path), str(responses), "--out", str(tmp_path / "out"), "--format", "md,pdf")
    assert result.returncode == 0, result.stderr
    assert "warning: row 2: 'محمد علي': the PDFs print ARABIC LETTER MEEM as an empty box" in result.stderr
    assert "Ann" not in result.stderr


def test_parse_answer_reads_long_answers_exactly():
    from symattn.grade.numbers import parse_answer

    assert parse_answer("0." + "0" * 10_000 + "1") == Decimal(1).scaleb(-10_001)
    assert parse_answer("n/a") is None


def test_the_class_list_names_a_student_the_pdfs_print_as_boxes():
    """exam --students warns of these (with PDFs); Greek, Cyrillic, Vietnamese and Japanese names print."""
    from symattn.exam.students import Student, unprinted_names

    students = (Student("s1", "Ωμέγα Жуков"), Student("s2", "Nguyễn 山田"), Student("s3", "דוד לוי"),
                Student("s4", "김민준"))
    assert unprinted_names(students, "class.csv") == [
        "class.csv: 'דוד לוי' (id s3): the PDFs print HEBREW LETTER DALET as an empty box (TeX here has no font "
        "with it)",
        "class.csv: '김민준' (id s4): the PDFs print HANGUL SYLLABLE GIM as an empty box (TeX here has no font with "
        "it)"]
