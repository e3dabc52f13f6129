"""Error carried forward, against hand-worked cases for each part of self-attention, one cross-attention and one
multi-head case, and the guard against answers that make the later work trivial."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import pytest

from symattn.grade.exam import load_exam
from symattn.grade.mark import grade
from symattn.grade.responses import Response

from .exams import HAND, blanks, correct, generated, rounded, write_exam


@pytest.fixture(scope="module")
def hand(tmp_path_factory):
    path = write_exam(tmp_path_factory.mktemp("hand"), [HAND])
    return path, load_exam(path).versions["01"]


def marks(version, answers: dict[str, str]):
    graded = grade(Response(2, "Ann", version.label, dict(answers)), version)
    return graded, {m.blank.id: m for m in graded.marks}


def softmax(values):
    exps = [math.exp(v) for v in values]
    return [e / sum(exps) for e in exps]


def test_the_hand_worked_version_has_the_hand_worked_answers(hand):
    path, version = hand
    answers = {b["id"]: float(b["answer"]) for b in blanks(path)["01"]}
    assert [answers["v01.b.s.1"], answers["v01.b.s.2"]] == [1, 4]
    assert [answers["v01.c.a.1"], answers["v01.c.a.2"]] == [0.5, 2]
    assert answers["v01.d.w.1"] == pytest.approx(1 / (1 + math.exp(1.5)), abs=1e-15)
    assert answers["v01.e.z.2"] == pytest.approx(math.exp(1.5) / (1 + math.exp(1.5)), abs=1e-15)
    assert "v01.a.K.2.1" in answers and version.focus_row == 1


def test_a_wrong_key_carries_into_the_scores_and_on(hand):
    """K[2][1] = 3 instead of 2: the student's s_B = 3 + 2 = 5, a_B = 5/2 = 2.5, w = softmax(0.5, 2.5),
    z = w·V = w. Every later blank is credited from their own values; only the key itself costs."""
    path, version = hand
    answers = correct(path, "01")
    w = softmax([0.5, 2.5])
    answers.update({"v01.a.K.2.1": "3", "v01.b.s.2": "5", "v01.c.a.2": "2.5", "v01.d.w.1": f"{w[0]:.4f}",
                    "v01.d.w.2": f"{w[1]:.4f}", "v01.e.z.1": f"{w[0]:.4f}", "v01.e.z.2": f"{w[1]:.4f}"})
    graded, by_id = marks(version, answers)
    assert by_id["v01.a.K.2.1"].verdict == "wrong"
    assert {k: by_id[k].verdict for k in ("v01.b.s.2", "v01.c.a.2", "v01.d.w.1", "v01.d.w.2", "v01.e.z.1",
                                          "v01.e.z.2")} == dict.fromkeys(
        ("v01.b.s.2", "v01.c.a.2", "v01.d.w.1", "v01.d.w.2", "v01.e.z.1", "v01.e.z.2"), "carried")
    assert by_id["v01.b.s.2"].carried == 5 and by_id["v01.c.a.2"].carried == Decimal("2.5")
    points = [p.points for p in version.parts]  # (a) loses one of its 20 blanks' shares
    assert [graded.points(p) for p in version.parts] == [Fraction(points[0] * 19, 20), *points[1:]]


def test_each_part_carries_from_the_one_before(hand):
    """A wrong answer in one part only: the next part is credited from it, the true value too."""
    path, version = hand
    # (b) s_A = 2 (wrong): a_A carried = 1; (c) a_B = 3 (wrong): w carried = softmax(0.5, 3) = ...
    answers = correct(path, "01")
    answers.update({"v01.b.s.1": "2", "v01.c.a.1": "1"})
    _, by_id = marks(version, answers)
    assert by_id["v01.b.s.1"].verdict == "wrong" and by_id["v01.c.a.1"].verdict == "carried"
    assert by_id["v01.d.w.1"].verdict == "right"  # the true weights stay right whatever was carried
    answers = correct(path, "01")
    w = softmax([0.5, 3])
    answers.update({"v01.c.a.2": "3", "v01.d.w.1": f"{w[0]:.4f}", "v01.d.w.2": f"{w[1]:.4f}"})
    _, by_id = marks(version, answers)
    assert [by_id[k].verdict for k in ("v01.c.a.2", "v01.d.w.1", "v01.d.w.2")] == ["wrong", "carried", "carried"]
    # (d) w = [0.3, 0.7] (wrong, not trivial): z carried = [0.3, 0.7]
    answers = correct(path, "01")
    answers.update({"v01.d.w.1": "0.3", "v01.d.w.2": "0.7", "v01.e.z.1": "0.3", "v01.e.z.2": "0.7"})
    _, by_id = marks(version, answers)
    assert [by_id[k].verdict for k in ("v01.d.w.1", "v01.e.z.1", "v01.e.z.2")] == ["wrong", "carried", "carried"]


def test_a_carried_value_is_held_to_the_parts_tolerance(hand):
    """Carried a_B = 2.5; 2.5001 is beyond ±0.00005 of it (and of the true 2), 2.50004 within."""
    path, version = hand
    answers = correct(path, "01")
    answers.update({"v01.b.s.2": "5", "v01.c.a.2": "2.5001"})
    assert marks(version, answers)[1]["v01.c.a.2"].verdict == "wrong"
    answers["v01.c.a.2"] = "2.50004"
    assert marks(version, answers)[1]["v01.c.a.2"].verdict == "carried"


def test_trivial_answers_carry_nothing(hand):
    """A zero query row makes every score 0, the scaled scores 0, the weights 1/2: nothing of it is credited."""
    path, version = hand
    answers = correct(path, "01")
    answers.update({"v01.a.Q.1.1": "0", "v01.a.Q.1.2": "0", "v01.b.s.1": "0", "v01.b.s.2": "0",
                    "v01.c.a.1": "0", "v01.c.a.2": "0", "v01.d.w.1": "0.5", "v01.d.w.2": "0.5",
                    "v01.e.z.1": "0.5", "v01.e.z.2": "0.5"})
    graded, by_id = marks(version, answers)
    later = ("v01.b.s.1", "v01.b.s.2", "v01.c.a.1", "v01.c.a.2", "v01.d.w.1", "v01.d.w.2", "v01.e.z.1", "v01.e.z.2")
    assert [by_id[k].verdict for k in later] == ["wrong"] * 8
    assert by_id["v01.b.s.1"].refused == "grade.trivial_query"
    assert by_id["v01.d.w.1"].refused == "grade.trivial_scores"
    assert by_id["v01.e.z.1"].refused == "grade.trivial_weights"
    assert graded.total == Fraction(version.parts[0].points * 18, 20)  # only (a), less its two zeroed q entries


def test_one_hot_weights_carry_nothing_into_the_output(hand):
    """w = [1, 0] makes the output v_A copied: z = [1, 0] is not credited."""
    path, version = hand
    answers = correct(path, "01")
    answers.update({"v01.d.w.1": "1", "v01.d.w.2": "0", "v01.e.z.1": "1", "v01.e.z.2": "0"})
    _, by_id = marks(version, answers)
    assert by_id["v01.e.z.1"].verdict == "wrong" and by_id["v01.e.z.1"].refused == "grade.trivial_weights"


def test_cross_attention_carries_a_wrong_query(tmp_path):
    path = generated(tmp_path, 1, "cross_attention", seed=4)
    version = load_exam(path).versions["01"]
    answers = correct(path, "01")
    q = [Fraction(b["answer"]) for b in blanks(path)["01"] if b["symbol"] == "q"]
    K = {}
    for b in blanks(path)["01"]:
        if b["symbol"] == "K":
            K.setdefault(b["row"], []).append(Fraction(b["answer"]))
    q[0] += 1  # the student's q_1 is one too large: every score moves by k_j1
    answers["v01.a.q.1"] = str(float(q[0]))
    for j, k in K.items():
        answers[f"v01.b.s.{j}"] = rounded(str(float(sum(a * b for a, b in zip(q, k, strict=True)))))
    _, by_id = marks(version, answers)
    moved = [j for j, k in K.items() if k[0] != 0]
    assert moved and all(by_id[f"v01.b.s.{j}"].verdict == "carried" for j in moved)


def test_multi_head_carries_a_head_output_into_the_final_output(tmp_path):
    """A wrong head output (part (e) asks each head's output and z·W_O, not the concatenation): z·W_O is credited
    from the student's own head outputs, concatenated."""
    path = generated(tmp_path, 1, "multi_head", seed=2)
    exam = load_exam(path)
    version = exam.versions["01"]
    answers = correct(path, "01")
    entries = blanks(path)["01"]
    heads = [b for b in entries if b["symbol"] in ("z1", "z2")]
    concat = [Fraction(b["answer"]) for b in heads]
    concat[0] += 1
    answers[heads[0]["id"]] = str(float(concat[0]))
    W_O = [[Fraction(v) for v in row] for row in version.section["W_O"]]
    finals = [b["id"] for b in entries if b["symbol"] == "z_final"]
    for c, blank in enumerate(finals):
        answers[blank] = rounded(str(float(sum(concat[k] * W_O[k][c] for k in range(len(concat))))))
    _, by_id = marks(version, answers)
    assert by_id[heads[0]["id"]].verdict == "wrong"
    changed = [f for c, f in enumerate(finals) if W_O[0][c] != 0]
    assert changed and all(by_id[f].verdict == "carried" for f in changed)
