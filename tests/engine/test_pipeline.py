"""Exactness invariants of the engine, and agreement with an independent float implementation."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy import ImmutableMatrix, Rational, sqrt, together

from symattn import engine
from symattn.spec.model import Scale


def float_attention(X, M, WQ, WK, WV, d_k):
    """Textbook attention in float64, written independently of the engine."""
    Q, K, V = X @ WQ, M @ WK, M @ WV
    S = Q @ K.T / np.sqrt(d_k)
    W = np.exp(S - S.max(axis=1, keepdims=True))
    W /= W.sum(axis=1, keepdims=True)
    return S * np.sqrt(d_k), W, W @ V


def as_float(matrix) -> np.ndarray:
    return np.array(matrix.evalf(30).tolist(), dtype=float)


entries = st.integers(-30, 30).map(lambda n: Rational(n, 10))


@st.composite
def problems(draw):
    n = draw(st.integers(1, 4))
    m = draw(st.integers(1, 4))
    d = draw(st.integers(1, 3))
    d_k = draw(st.integers(1, 3))
    d_v = draw(st.integers(1, 3))

    def matrix(rows, cols):
        return ImmutableMatrix(rows, cols, draw(st.lists(entries, min_size=rows * cols, max_size=rows * cols)))

    return matrix(n, d), matrix(m, d), matrix(d, d_k), matrix(d, d_k), matrix(d, d_v), d_k


@settings(max_examples=40, deadline=None)
@given(problems())
def test_agrees_with_float_implementation(problem):
    X, M, WQ, WK, WV, d_k = problem
    result = engine.attention(X, M, WQ, WK, WV, Scale().divisor(d_k), tuple(range(X.rows)))
    raw, weights, outputs = float_attention(*(as_float(a) for a in (X, M, WQ, WK, WV)), d_k)
    for i, query in result.queries.items():
        assert np.allclose([float(s) for s in query.scores], raw[i], rtol=0, atol=1e-12)
        assert np.allclose([float(w.evalf(30)) for w in query.softmax.weights], weights[i], rtol=0, atol=1e-12)
        assert np.allclose(as_float(query.output)[0], outputs[i], rtol=0, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(problems())
def test_softmax_rows_sum_to_exactly_one(problem):
    X, M, WQ, WK, WV, d_k = problem
    result = engine.attention(X, M, WQ, WK, WV, Scale().divisor(d_k), tuple(range(X.rows)))
    for query in result.queries.values():
        assert together(sum(query.softmax.weights)) == 1


def test_scaling_stays_exact():
    assert Scale().divisor(4) == 2
    assert Scale().divisor(2) == sqrt(2)
    scaled = engine.attend(ImmutableMatrix([[Rational(1), Rational(1, 2)]]),
                              ImmutableMatrix([[Rational(579, 500), 0]]), ImmutableMatrix([[1]]), sqrt(2)).scaled[0]
    assert scaled == Rational(579, 500) / sqrt(2)
    assert not scaled.is_Rational


def test_softmax_keeps_exp_over_shared_total():
    sm = engine.Softmax(engine.Numbers(), (Rational(0), Rational(1)))
    assert sm.total == 1 + sm.exps[1]
    assert sm.weights[0] == 1 / sm.total


def test_multi_head_concatenates_in_order():
    heads = (ImmutableMatrix([[1, 2]]), ImmutableMatrix([[3]]))
    W_O = ImmutableMatrix([[1, 0], [0, 1], [1, 1]])
    result = engine.combine_heads(heads, W_O)
    assert list(result.concat) == [1, 2, 3]
    assert list(result.output) == [4, 5]


def test_filed_approximations_match_evalf_to_many_digits():
    from decimal import Decimal

    from sympy import N

    X = ImmutableMatrix([[Rational(8, 10), Rational(12, 10)], [Rational(1), Rational(1, 2)]])
    result = engine.attention(X, X, X, X, X, sqrt(3), (0, 1))
    for query in result.queries.values():
        for value in (*query.softmax.weights, *query.output):
            filed = result.known.decimal(value, 60)
            assert filed is not None
            assert abs(filed - Decimal(str(N(value, 70)))) < Decimal("1e-60")
