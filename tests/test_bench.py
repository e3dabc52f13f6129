"""The benchmark's baselines compute what symattn computes (a fast wrong baseline would prove nothing)."""

from __future__ import annotations

import numpy as np
from sympy import Matrix, Rational

from bench.__main__ import fitted_exponent
from bench.naive import naive_attention, numpy_attention
from symattn import engine
from symattn.spec.model import Scale


def test_baselines_agree_with_the_engine():
    rows = [[Rational(v, 10) for v in row] for row in ([8, 12], [10, 5], [-3, 7])]
    W = [[Rational(v, 10) for v in row] for row in ([10, 2], [1, 9])]
    X, WM = Matrix(rows), Matrix(W)
    naive = np.array(naive_attention(X, WM, WM, WM).tolist(), dtype=float)
    floats = np.array(rows, dtype=float), *(np.array(W, dtype=float),) * 3
    assert np.allclose(naive, numpy_attention(*floats), atol=1e-12)
    result = engine.attention(X, X, WM, WM, WM, Scale().divisor(2), (0, 1, 2))
    exact = np.array([[float(v) for v in result.queries[i].output] for i in range(3)])
    assert np.allclose(exact, naive, atol=1e-12)


def test_fitted_exponent():
    assert abs(fitted_exponent([4, 8, 16], [1.0, 8.0, 64.0]) - 3) < 1e-12


def test_the_benchmark_specs_are_valid_chains(tmp_path):
    """The encoder layer the benchmark times is a chain symattn accepts: four sections, the last two Add & Norms of
    width d, every token's output passed on."""
    import symattn
    from bench.__main__ import encoder_layer_spec

    spec = symattn.load_spec(encoder_layer_spec(tmp_path, n=4, d=4, d_ff=8))
    answers = symattn.answers(symattn.derive_spec(spec, steps=False))
    assert [s["kind"] for s in answers["sections"]] == ["self_attention", "add_norm", "feed_forward", "add_norm"]
    assert len(answers["sections"][-1]["tokens"]) == 4


def test_the_grading_benchmark_responses_grade_as_meant(tmp_path):
    """The responses the benchmark grades: every third student one raw score off (its later parts carried),
    the others full marks."""
    from bench.__main__ import grading_responses
    from symattn.grade.build import grade_exam
    from tests.grade.exams import generated

    exam = generated(tmp_path, 4, "self_attention", seed=3)
    responses = grading_responses(exam, tmp_path / "responses.csv")
    result = grade_exam(exam, responses, tmp_path / "out", ("md",))
    totals = [float(g.total) for g in result.graded]
    assert totals[1:3] == [20, 20] and totals[0] == totals[3] < 20  # every version is worth 20 points
    assert all(g.points(g.version.parts[2]) == g.version.parts[2].points for g in result.graded)  # only (b) loses
