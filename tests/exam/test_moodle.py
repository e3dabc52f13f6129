"""moodle.xml as Moodle reads it: marks, names, category, feedback, decimals and tolerances, replayed with a port of
Moodle's own cloze parsing and marking (tests/exam/moodle_cloze.py)."""

from __future__ import annotations

import dataclasses
import json
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from symattn import ExamOptions, build_exam
from symattn.exercises.exercise import tolerance

from .moodle_cloze import extract, grade
from .test_exam import expected_answers

PARTS = ("qkv", "scores", "scaled", "weights", "output")


@pytest.fixture(scope="module", params=[("mixed", "easy", "en"), ("mixed", "standard", "ja")])
def bank(request, tmp_path_factory):
    kind, difficulty, lang = request.param
    out = tmp_path_factory.mktemp("moodle")
    build_exam(ExamOptions(6, 7, kind, difficulty, lang), out, ("json", "moodle"))
    root = ET.parse(out / "moodle.xml").getroot()
    data = json.loads((out / "exam.json").read_text(encoding="utf-8"))
    return root, data


def attention(spec: dict) -> bool:
    """Whether a version is of the attention kinds test_exam.expected_answers recomputes (mixed draws the newer
    kinds too: tests/exam/test_new_kinds.py recomputes those)."""
    section = spec["sections"][0]
    return section["kind"] in ("self_attention", "cross_attention", "multi_head") and "rope" not in section


def flat_expected(spec: dict) -> list[float] | None:
    """Every blank's value in the question's order, from numpy alone (None: not an attention kind's version)."""
    if not attention(spec):
        return None
    expected = expected_answers(spec)
    if "heads" in expected:
        flat = [x for Q, K, V, *_ in expected["heads"] for i in range(Q.shape[0]) for x in (*Q[i], *K[i], *V[i])]
        for part in (3, 4, 5):
            flat += [x for run in expected["heads"] for x in run[part]]
        return flat + [x for run in expected["heads"] for x in run[6]] + [*expected["output"]]  # concat not asked
    Q, K, V, s, a, w, z = expected["single"]
    if spec["sections"][0]["kind"] == "cross_attention":
        flat = [*Q[0]] + [x for j in range(K.shape[0]) for x in (*K[j], *V[j])]
    else:
        flat = [x for j in range(Q.shape[0]) for x in (*Q[j], *K[j], *V[j])]
    return flat + [*s, *a, *w, *z]


def test_marks_after_import_are_the_papers_points(bank):
    root, data = bank
    questions = [q for q in root.findall("question") if q.get("type") == "cloze"]
    assert len(questions) == len(data["versions"])
    for question, version in zip(questions, data["versions"], strict=True):
        text = question.find("questiontext/text").text
        blanks, mark, rest = extract(text)
        assert len(blanks) == text.count(":NUMERICAL:") and "{" not in re.sub(r"\{#\d+\}", "", rest)
        points = [int(p) for p in re.findall(r"\((\d+)\)<br>", text)]  # each part's points, as printed
        factor = mark / sum(points)  # Moodle's mark: the weights' sum, the paper's total times a whole factor
        assert factor.is_integer() and mark == int(question.find("defaultgrade").text)
        for part, worth in zip(text.split("<li>")[1:], points, strict=True):
            assert extract(part)[1] == worth * factor  # each part weighs its points (× the factor)
        assert all(b.numerical and len(b.answers) == 1 and b.answers[0][0] == 1 for b in blanks)
        values = flat_expected(version["spec"])
        if values is None:
            continue
        assert np.allclose([float(b.answers[0][1]) for b in blanks], values, atol=1e-11)
        assert grade(blanks, values) == pytest.approx(1.0)  # the exact answers earn every mark
        assert grade(blanks, [v + 0.5 for v in values]) == 0.0


def test_names_are_unique_and_under_the_exams_category(bank, tmp_path):
    root, data = bank
    category = root.find("question")
    assert category.get("type") == "category"
    options = data["options"]
    name = f"symattn {options['kind']} {options['difficulty']} {options['lang']} seed {data['seed']}"
    assert category.find("category/text").text == f"$course$/symattn/{name}"
    names = [q.find("name/text").text for q in root.findall("question")[1:]]
    assert len(set(names)) == len(names) and all(n.startswith(name + " — ") for n in names)
    build_exam(ExamOptions(2, 8, "mixed", options["difficulty"], options["lang"]), tmp_path, ("moodle",))
    other = [q.find("name/text").text for q in ET.parse(tmp_path / "moodle.xml").getroot().findall("question")[1:]]
    assert not set(other) & set(names)  # another exam's questions never collide in a question bank


def test_course_and_title_lead_the_names(tmp_path):
    """With the --course and --title options (ExamOptions fields added by the paper's options), they lead."""

    @dataclasses.dataclass(frozen=True)
    class Titled(ExamOptions):
        course: str = "CS 101/A"
        title: str = "Midterm <1>"

    build_exam(Titled(1, 3), tmp_path, ("moodle",))
    root = ET.parse(tmp_path / "moodle.xml").getroot()
    name = "CS 101/A Midterm <1> self_attention easy en seed 3"
    assert root.find("question/category/text").text == "$course$/symattn/" + name.replace("/", "//")
    assert root.findall("question")[1].find("name/text").text.startswith(name + " — ")


def test_worked_solution_is_the_feedback_and_math_is_typeset(bank):
    root, data = bank
    for question, version in zip(root.findall("question")[1:], data["versions"], strict=True):
        feedback = question.find("generalfeedback/text").text
        assert question.find("generalfeedback").get("format") == "html"
        assert len(feedback) > 2000 and r"\(" in feedback and "<math" not in feedback
        assert all("<" not in math for math in re.findall(r"\\\((.*?)\\\)", feedback, re.S))  # escaped
        text = question.find("questiontext/text").text
        prose = re.sub(r"\\\(.*?\\\)", "", re.sub(r"\{[^{}]*NUMERICAL[^{}]*\}", "", text))
        assert "d_k" not in prose and "_" not in prose  # math as math, not "d_k"
        assert r"\(d_k\)" in text or not attention(version["spec"])


def test_the_exp_table_is_the_papers_and_asks_for_numbers_only(tmp_path):
    """An easy version's e^x table is the paper's, −3 … 3 in steps of 0.125 in four pairs of columns (13 rows,
    not one column of 49), and the sentence before it asks for decimals only: a NUMERICAL box takes no
    expression in e, which the paper offers."""
    build_exam(ExamOptions(2, 3, "self_attention", "easy", "en"), tmp_path, ("moodle", "tex"))
    text = ET.parse(tmp_path / "moodle.xml").getroot().findall("question")[1].find("questiontext/text").text
    assert "expression in e" not in text and "to 4 decimals, with this table of" in text
    table = re.search(r"with this table of.*?<table[^>]*>(.*?)</table>", text, re.S).group(1)
    rows = re.findall(r"<tr>(.*?)</tr>", table)
    assert len(rows) == 1 + 13 and all(row.count("<td>") == 8 for row in rows[1:])
    cells = [c for row in rows[1:] for c in re.findall(r"<td>([^<]*)</td>", row)]
    pairs = [(cells[i], cells[i + 1]) for i in range(0, len(cells), 2) if cells[i]]
    assert sorted(float(x) for x, _ in pairs) == [-3 + k / 8 for k in range(49)]
    assert all(abs(float(e) - np.exp(float(x))) <= 5e-7 for x, e in pairs)
    assert "as an expression in e" in (tmp_path / "exam.tex").read_text(encoding="utf-8")  # the paper takes one


def test_every_box_of_a_part_has_the_same_decimals(bank):
    root, data = bank
    digits = data["options"]["digits"]
    for question in root.findall("question")[1:]:
        for part in question.find("questiontext/text").text.split("<li>")[1:]:
            answers = [b.answers[0][1] for b in extract(part)[0]]
            places = {len(a.partition(".")[2]) for a in answers}
            assert len(places) == 1 and places.pop() >= digits, answers  # =0.0000, never =0


def test_tolerances_are_the_exercises(bank):
    root, data = bank
    digits = data["options"]["digits"]
    for question, version in zip(root.findall("question")[1:], data["versions"], strict=True):
        if not attention(version["spec"]):
            continue
        section = version["spec"]["sections"][0]
        d_k = len((section["heads"][0] if "heads" in section else section)["W_K"][0])
        for part, key in zip(question.find("questiontext/text").text.split("<li>")[1:], PARTS, strict=True):
            assert {b.answers[0][2] for b in extract(part)[0]} == {float(tolerance(digits, key, d_k))}


def test_blank_weights_are_whole_equal_per_part_and_proportional_to_the_points():
    import random
    from fractions import Fraction

    from symattn.exam.drivers.moodle import blank_weights

    rng = random.Random(19)
    for _ in range(500):
        parts = [(rng.randint(1, 30), rng.randint(1, 60)) for _ in range(rng.randint(1, 5))]
        factor, weights = blank_weights(parts)
        assert all(w >= 1 and w * n == p * factor for (p, n), w in zip(parts, weights, strict=True))
        assert not any(all(Fraction(w, d).denominator == 1 for w in weights)  # the smallest such factor
                       for d in range(2, factor + 1) if factor % d == 0)
