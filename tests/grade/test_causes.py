"""The likely cause of a wrong answer (grade/causes.py, the seam for `symattn check`'s diagnosis), on
hand-worked versions."""

from __future__ import annotations

import pytest

from symattn.grade.exam import load_exam
from symattn.grade.mark import grade
from symattn.grade.responses import Response

from .exams import HAND, correct, rounded, write_exam

# X = I, so Q, K, V are the weight matrices; d_k = 2. q_A = [1, 0], k_A = [1, 2], k_B = [0, 1]: s = [1, 0],
# a = [1/√2, 0] ≈ [0.7071, 0].
SQUARE = {"title": "Version 02", "lang": "en", "sections": [{
    "kind": "self_attention", "tokens": ["A", "B"], "X": [["1", "0"], ["0", "1"]],
    "W_Q": [["1", "0"], ["0", "1"]], "W_K": [["1", "2"], ["0", "1"]], "W_V": [["1", "0"], ["0", "1"]],
    "focus": "A"}]}


@pytest.fixture(scope="module")
def exam(tmp_path_factory):
    path = write_exam(tmp_path_factory.mktemp("causes"), [HAND, SQUARE])
    return path, load_exam(path)


def cause(exam, label: str, changes: dict[str, str], blank: str) -> str:
    path, loaded = exam
    answers = correct(path, label)
    answers.update(changes)
    marks = {m.blank.id: m for m in grade(Response(2, "S", label, answers), loaded.versions[label]).marks}
    assert marks[blank].verdict == "wrong"
    return marks[blank].cause.name


@pytest.mark.parametrize(("label", "changes", "blank", "expected"), [
    ("01", {"v01.c.a.2": "4"}, "v01.c.a.2", "no_scaling"),  # s_B = 4 not divided by √4
    ("01", {"v01.c.a.2": "1"}, "v01.c.a.2", "scaled_by_d_k"),  # 4 / 4
    ("01", {"v01.d.w.1": "0.0474"}, "v01.d.w.1", "no_scaling"),  # softmax(1, 4) from the true raw scores
    ("01", {"v01.d.w.1": "0.3208"}, "v01.d.w.1", "scaled_by_d_k"),  # softmax(0.25, 1)
    ("01", {"v01.d.w.1": "0.1842"}, "v01.d.w.1", "typo"),  # 0.1824 with two digits swapped
    ("01", {"v01.d.w.1": "0.9"}, "v01.d.w.1", "unknown"),
    ("02", {"v02.a.K.1.2": "0"}, "v02.a.K.1.2", "transposed"),  # (X·W_Kᵀ)[1][2] = W_K[2][1] = 0
    ("01", {"v01.c.a.1": "0.5001"}, "v01.c.a.1", "typo"),  # the exact 0.5 has nothing to round: a slip (0.7072 for 1/√2 is
    # accepted now: (c)'s tolerance with an irrational √d_k takes √2 as 1.414)
])
def test_causes(exam, label, changes, blank, expected):
    assert cause(exam, label, changes, blank) == expected


def test_points_are_rounded_half_up_for_display():
    from fractions import Fraction

    from symattn.grade.feedback import points_text

    assert [points_text(Fraction(p, q)) for p, q in ((1, 8), (11, 3), (14, 1), (0, 1), (5, 1000), (7, 2))] == \
        ["0.13", "3.67", "14", "0", "0.01", "3.5"]


@pytest.mark.parametrize("variant", [dict(cause="softmax_axis", axis=0), dict(cause="mask", mask="causal")])
def test_a_mistake_made_throughout_gets_check_s_diagnosis(tmp_path_factory, variant):
    """A student who took every softmax over the wrong axis, or masked keys that are not masked: grading asks
    `symattn check`'s diagnosis of the whole sheet (the same hypotheses and names), which names the cause of each
    wrong weight and output; a slip of one entry stays with the grader's own entry-by-entry causes (above)."""
    from symattn.check.hypotheses import Variant, run, section_from_data

    from .exams import blanks, generated

    for seed in range(4, 40):  # a causal mask changes nothing for the last token: a version asking another
        path = generated(tmp_path_factory.mktemp(f"seed{seed}"), 1, "self_attention", seed=seed)
        version = load_exam(path).versions["01"]
        focus = version.section["focus"]
        if focus != version.section["tokens"][-1]:
            break
    section = section_from_data(version.section)
    predicted = run(section, Variant(**variant), {focus: version.section["tokens"].index(focus)})
    keys = {"w": "weights", "z": "output"}
    answers = correct(path, "01")
    changed = []
    for blank in blanks(path)["01"]:
        symbol = blank["symbol"]
        if symbol in keys:
            value = predicted[("queries", focus, keys[symbol], blank["column"] - 1)]
            written = f"{value:.4f}"
            if written != answers[blank["id"]]:
                answers[blank["id"]] = written
                changed.append(blank["id"])
    assert changed
    marks = {m.blank.id: m for m in grade(Response(2, "S", "01", answers), version).marks}
    wrong = [b for b in changed if marks[b].verdict == "wrong"]
    assert wrong and all(marks[b].cause.name == variant["cause"] for b in wrong)


# Issue 33 item 7: a cause only where it explains the answer better than the alternatives. X = I, q_A = [1, 0],
# k_A = [1, 0.5], k_B = [0, 2]: s = [1, 0], w = softmax(s/√2) ≈ [0.6698, 0.3302]; V's first column [0.4, 1.4], so
# z_1 = w·V ≈ 0.7302, while w·K gives 0.6698, 0.0008 from the unscaled softmax(s)·V = 0.6689 (within z's tolerance).
KEYS_FOR_VALUES = {"title": "Version 03", "lang": "en", "sections": [{
    "kind": "self_attention", "tokens": ["A", "B"], "X": [["1", "0"], ["0", "1"]],
    "W_Q": [["1", "0"], ["0", "1"]], "W_K": [["1", "0.5"], ["0", "2"]], "W_V": [["0.4", "1"], ["1.4", "0"]],
    "focus": "A"}]}


def test_keys_for_values_is_not_no_scaling(tmp_path):
    path = write_exam(tmp_path, [KEYS_FOR_VALUES])
    loaded = load_exam(path)
    answers = correct(path, "01")
    answers["v01.e.z.1"] = "0.6698"  # w·K
    marks = {m.blank.id: m for m in grade(Response(2, "S", "01", answers), loaded.versions["01"]).marks}
    assert marks["v01.e.z.1"].verdict == "wrong"
    assert marks["v01.e.z.1"].cause.name == "unknown"


def _generated_version(tmp_path):
    from .exams import generated

    path = generated(tmp_path, 1, "self_attention", seed=5)
    return path, load_exam(path).versions["01"]


def test_an_all_zero_query_is_not_no_scaling(tmp_path):
    path, version = _generated_version(tmp_path)
    focus = version.section["tokens"].index(version.section["focus"]) + 1
    values = {b.id: b.answer for b in version.blanks}
    n = len(version.section["tokens"])
    answers = correct(path, "01")
    for b in version.blanks:  # q = 0: every score 0, every weight 1/n, the output the mean of the values
        if b.role in ("Q", "q") and b.row == focus or b.role in ("scores", "scaled"):
            answers[b.id] = "0"
        elif b.role == "weights":
            answers[b.id] = f"{1 / n:.4f}"
        elif b.role == "output":
            answers[b.id] = f"{float(sum(values[f'v01.a.V.{j}.{b.column}'] for j in range(1, n + 1))) / n:.4f}"
    marks = grade(Response(2, "S", "01", answers), version).marks
    causes = [m.cause.name for m in marks if m.verdict == "wrong"]
    assert len(causes) >= 8 and "no_scaling" not in causes and "scaled_by_d_k" not in causes


def test_weights_rounded_to_two_decimals(tmp_path):
    path, version = _generated_version(tmp_path)
    answers = correct(path, "01")
    for b in version.blanks:
        if b.role == "weights":
            answers[b.id] = rounded(str(b.answer), 2)
    marks = [m for m in grade(Response(2, "S", "01", answers), version).marks if m.blank.role == "weights"]
    wrong = [m for m in marks if m.verdict == "wrong"]
    assert wrong
    for m in wrong:  # not renormalised, and not "one unit off in the last digit"
        assert (m.cause.name, m.cause.explanation) == ("rounding", "grade.cause.too_few_decimals")
