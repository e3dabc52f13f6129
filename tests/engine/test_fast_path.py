"""The fast path (flint-backed products, WeightedAverage outputs, filed approximations) gives the same answers
as the slow one: checked against numpy, against SymPy's own evaluation, and against the pure-Python ground types."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import mpmath
import numpy as np
from sympy import Add, ImmutableMatrix, N, Rational, latex

from symattn import engine
from symattn.engine import WeightedAverage, fast
from symattn.numbers.significant import significant
from symattn.spec.model import Mask, Scale


def random_problem(n: int, seed: int) -> list[list[list[str]]]:
    rng = random.Random(seed)
    return [[[f"{rng.randint(-20, 20) / 10}" for _ in range(n)] for _ in range(n)] for _ in range(4)]


def exact(matrix: list[list[str]]) -> ImmutableMatrix:
    return ImmutableMatrix([[Rational(v) for v in row] for row in matrix])


def test_large_problem_agrees_with_numpy():
    """24 × 24: large enough for the DomainMatrix products and the shared value columns."""
    texts = random_problem(24, seed=7)
    X, WQ, WK, WV = (exact(m) for m in texts)
    result = engine.attention(X, X, WQ, WK, WV, Scale().divisor(24), tuple(range(24)))
    Xf, WQf, WKf, WVf = (np.array(m, dtype=float) for m in texts)
    S = (Xf @ WQf) @ (Xf @ WKf).T / np.sqrt(24)
    A = np.exp(S - S.max(axis=1, keepdims=True))
    A /= A.sum(axis=1, keepdims=True)
    Z = A @ (Xf @ WVf)
    for i, query in result.queries.items():
        assert np.allclose([float(w) for w in query.softmax.weights], A[i], rtol=1e-12, atol=1e-15)
        assert np.allclose([float(significant(v)) for v in query.output], Z[i], rtol=1e-10, atol=1e-12)


def test_weighted_average_is_the_written_out_sum():
    X = exact([["0.8", "1.2"], ["1.0", "0.5"], ["-0.3", "0.7"]])
    W = exact([["1", "0.2"], ["0.1", "0.9"]])
    query = engine.attention(X, X, W, W, W, Scale().divisor(2), (0,)).queries[0]
    entry = query.output[0]
    assert isinstance(entry, WeightedAverage)
    V = (X * W).col(0)
    written = Add(*(v * e for v, e in zip(V, query.softmax.exps, strict=True))) / query.softmax.total
    assert (entry.doit() - written).simplify() == 0
    assert abs(N(entry, 50) - N(written, 50)) < Rational(1, 10**45)
    assert significant(entry) == significant(written)  # filed approximation == SymPy's own evalf
    assert latex(entry) == latex(entry.expanded())


def test_pure_python_ground_types_give_identical_answers(tmp_path):
    """python-flint is optional: without it (SYMPY_GROUND_TYPES=python) every byte of the answers is the same, the
    grouped-query outputs (balls times W_O with flint, integers without) included."""
    import flint  # a declared dependency: the fast path is what CI tests  # noqa: F401

    texts = random_problem(12, seed=3)
    rng = random.Random(4)

    def matrix(rows: int, cols: int) -> list[list[str]]:
        return [[f"{rng.randint(-20, 20) / 10}" for _ in range(cols)] for _ in range(rows)]

    spec = tmp_path / "random.json"
    spec.write_text(json.dumps({"sections": [{
        "kind": "self_attention", "tokens": [f"t{i}" for i in range(12)], "X": texts[0], "W_Q": texts[1],
        "W_K": texts[2], "W_V": texts[3], "focus": "all"}, {  # and grouped-query heads of d_k = 3, √3 a surd
        "kind": "grouped_query", "tokens": [f"t{i}" for i in range(12)], "X": texts[0],
        "heads": [{"W_Q": matrix(12, 3)} for _ in range(4)],
        "kv_heads": [{"W_K": matrix(12, 3), "W_V": matrix(12, 3)} for _ in range(2)], "W_O": matrix(12, 12),
        "focus": "all", "mask": "causal"}]}), encoding="utf-8")

    def solve(ground_types: str) -> str:
        env = {**os.environ, "SYMPY_GROUND_TYPES": ground_types}
        done = subprocess.run([sys.executable, "-c", "from sympy.external.gmpy import GROUND_TYPES as g;"
                               "import sys; from symattn.cli import main; print(g, file=sys.stderr);"
                               f"sys.exit(main(['solve', {str(spec)!r}]))"],
                              env=env, capture_output=True, text=True, check=True)
        assert done.stderr.strip() == ground_types
        return done.stdout

    assert solve("python") == solve("flint")


def test_each_result_carries_its_own_numbers():
    """No process-wide cache: a result's numbers travel with it, another result does not see them, and a value
    formatted without them is evaluated to the same text."""
    X = exact([["0.8", "1.2"], ["1.0", "0.5"]])
    W = exact([["1", "0.2"], ["0.1", "0.9"]])
    first = engine.attention(X, X, W, W, W, Scale().divisor(2), (0,)).queries[0]
    second = engine.attention(X, X, W, W, W, Scale().divisor(2), (0,)).queries[0]
    weight = first.softmax.weights[0]
    assert first.softmax.known.get(weight) is not None
    assert second.softmax.known is not first.softmax.known
    assert second.softmax.known.get(weight) is None  # its own forms were never built
    assert significant(weight, 30, first.softmax.known) == significant(weight, 30)


def test_canonical_builders_give_what_sympy_evaluation_gives():
    """The shortcuts of canonical.py build exactly SymPy's own objects: same class, same arguments, equal."""
    from sympy import Add, S, cos, exp, sin, sqrt

    from symattn.engine import exp_sum, exponential

    rng = random.Random(5)
    for _ in range(300):
        kind = rng.choice(["rational", "surd", "trig"])
        a = Rational(rng.randint(-300, 300), rng.randint(1, 40))
        if kind == "surd":
            a *= sqrt(rng.choice([2, 3, 8, 32]))
        elif kind == "trig":
            a += Rational(rng.randint(-9, 9), 10) * sin(Rational(rng.randint(1, 9), 100)) + cos(rng.randint(1, 5))
        built, evaluated = exponential(a), exp(a)
        assert built == evaluated and type(built) is type(evaluated) and built.args == evaluated.args
    assert exponential(S.Zero) is S.One and exponential(S.One) is S.Exp1 and exponential(S.NegativeInfinity) == 0
    for _ in range(600):
        logits = [Rational(rng.randint(-30, 30), rng.randint(1, 6)) * sqrt(rng.choice([1, 2])) for _ in range(4)]
        for _ in range(rng.randint(0, 3)):  # e^0 = 1, e^1 = E, tied scores (k·e^a), several of each
            logits[rng.randrange(4)] = rng.choice([logits[0], logits[1], S.Zero, S.One])
        exps = tuple(exponential(a) for a in logits) + (S.Zero,) * rng.randint(0, 1)  # a masked key adds 0
        built, evaluated = exp_sum(exps), Add(*exps)
        assert built == evaluated and type(built) is type(evaluated) and built.args == evaluated.args
        softmax = engine.Softmax(engine.Numbers(), tuple(logits))
        assert all(w == e / softmax.total for w, e in zip(softmax.weights, softmax.exps, strict=True))
        for w, e in zip(softmax.weights, softmax.exps, strict=True):  # 1/Z and each e/Z as SymPy evaluates them
            evaluated = e / softmax.total
            assert type(w) is type(evaluated) and w.args == evaluated.args


def test_answer_key_numbers_equal_those_of_the_built_sympy_forms():
    """The answer key reads a row's weights and outputs from the engine's numbers (that it need not build the SymPy
    forms is measured by the benchmark of `solve`); the texts equal those of the forms once built (√6 scaling:
    irrational logits; a zero value column; a causal mask; equal scores, whose weights are rational)."""
    from symattn.features.attention.answers import softmax_texts
    from symattn.numbers.significant import FIGURES

    texts = random_problem(6, seed=11)
    texts[3] = [["0", *row[1:]] for row in texts[3]]  # W_V's first column zero: V's first column zero
    X, WQ, WK, WV = (exact(m) for m in texts)
    mask = Mask.causal(6).values
    for query_weights in (WQ, ImmutableMatrix.zeros(6, 6)):  # zero W_Q: every score 0, weights 1/n
        result = engine.attention(X, X, query_weights, WK, WV, Scale().divisor(6), tuple(range(6)), mask)
        for query in result.queries.values():
            weights, outputs = softmax_texts(query)  # before the forms exist
            assert weights == [significant(w, FIGURES) for w in query.softmax.weights]
            assert outputs == [significant(v, FIGURES) for v in query.output]


def test_exact_output_sums_are_the_same_with_flint_and_with_python_integers(monkeypatch):
    """Σ_j e^{a_j} v_j in integers: python-flint's product (when SymPy runs on flint) and Python's own integers give
    the same sums, and so bit for bit the same output numbers, which agree with SymPy's evaluation of the output."""
    rng = random.Random(21)
    columns = [[rng.randint(-10**6, 10**6) for _ in range(9)] for _ in range(5)]
    values = engine.Values(lambda: None, [(rng.randint(1, 100), column) for column in columns], None)
    mantissas = [rng.getrandbits(rng.randint(1, 1600)) for _ in range(9)]
    expected = [sum(m * v for m, v in zip(mantissas, column, strict=True)) for column in columns]
    texts = random_problem(9, seed=19)
    X, WQ, WK, WV = (exact(m) for m in texts)

    def outputs() -> list[list[tuple]]:
        result = engine.attention(X, X, WQ, WK, WV, Scale().divisor(9), tuple(range(9)),
                                     Mask.causal(9).values)
        return [[value._mpf_ for value in query.softmax.numbers.outputs] for query in result.queries.values()]

    with_flint = outputs()
    if fast.fmpz_mat is not None:
        assert values.numerators is not None
        assert fast.integer_sums(mantissas, values.integers, values.numerators) == expected
    monkeypatch.setattr(fast, "fmpz_mat", None)
    assert fast.integer_sums(mantissas, values.integers, None) == expected
    assert outputs() == with_flint
    query = engine.attention(X, X, WQ, WK, WV, Scale().divisor(9), (4,)).queries[4]
    with mpmath.workdps(80):
        for entry, value in zip(query.output, query.softmax.numbers.outputs, strict=True):
            assert abs(mpmath.mpf(str(N(entry.doit(), 80))) - value) <= abs(value) * mpmath.mpf(10) ** -70


def test_rational_scores_kept_as_fractions_give_what_the_sympy_path_gives():
    """Rational scores and logits kept as fractions (times √m when √d_k is not rational) give the SymPy path's
    scores, logits, numbers and answer texts, masked keys and zero logits included; no SymPy number is made for
    the answer key. The numbers agree to the working precision, not bit for bit: with python-flint the fraction
    path evaluates a row in arb, the SymPy path in mpmath."""
    from sympy import Integer, sqrt

    from symattn.features.attention.answers import query_answers
    from symattn.numbers.exact_latex import fraction_coefficients_latex

    texts = random_problem(8, seed=23)  # 8 × 8: V kept as a DomainMatrix, as the answer key reads it
    texts[3] = [["0", *row[1:]] for row in texts[3]]  # a zero value column
    texts[0][5] = ["0"] * 8  # a query whose scores are all 0
    X, WQ, WK, WV = (exact(m) for m in texts)
    mask = Mask.causal(8).values
    for scale in (Integer(2), Rational(3, 2), Integer(1), sqrt(8), sqrt(12), sqrt(2)):  # and logits c·√m
        result = engine.attention(X, X, WQ, WK, WV, scale, tuple(range(8)), mask)
        coefficients = fraction_coefficients_latex(list(zip(*result.fractions("V"), strict=True)))
        for i, query in result.queries.items():
            assert query.score_fractions is not None and query.softmax.fractions is not None
            answer = query_answers(query, coefficients)
            allowed = tuple(bool(mask[i, j]) for j in range(8))
            sympy_path = engine.attend(result.Q.row(i), result.K, result.V, scale, allowed)
            assert sympy_path.softmax.fractions is None
            assert query.scores == sympy_path.scores and query.scaled == sympy_path.scaled
            ours, theirs = query.softmax.numbers, sympy_path.softmax.numbers
            for part in ("exps", "weights", "outputs", "logits"):
                for a, b in zip(getattr(ours, part), getattr(theirs, part), strict=True):
                    assert (a is None) == (b is None) and (a is None or _agree(a, b))
            assert _agree(ours.total, theirs.total) and ours.irrational == theirs.irrational
            assert query.softmax.masked == sympy_path.softmax.masked == tuple(not ok for ok in allowed)
            assert answer == query_answers(sympy_path, coefficients)


def _agree(a: mpmath.mpf, b: mpmath.mpf) -> bool:
    """Two evaluations of one number agree to the working precision (10^-(WORKING_DIGITS + 5) relative)."""
    return a == b or abs(a - b) <= max(abs(a), abs(b)) * mpmath.mpf(10) ** -(engine.WORKING_DIGITS + 5)


def test_scores_in_the_millions_agree_with_numpy():
    """Entries in the thousands give scores of ~10^7, whose e^{a} differ by millions of binary digits: the weighted
    sums drop what lies beyond the working precision instead of running out of memory, and still agree with numpy."""
    rng = random.Random(5)
    texts = [[[f"{rng.randint(-99999, 99999) / 100}" for _ in range(6)] for _ in range(6)] for _ in range(4)]
    X, WQ, WK, WV = (exact(m) for m in texts)
    result = engine.attention(X, X, WQ, WK, WV, Scale().divisor(6), tuple(range(6)))
    Xf, WQf, WKf, WVf = (np.array(m, dtype=float) for m in texts)
    S = (Xf @ WQf) @ (Xf @ WKf).T / np.sqrt(6)
    assert np.abs(S).max() > 1e6
    A = np.exp(S - S.max(axis=1, keepdims=True))
    A /= A.sum(axis=1, keepdims=True)
    Z = A @ (Xf @ WVf)
    for i, query in result.queries.items():
        assert np.allclose([float(significant(v)) for v in query.output], Z[i], rtol=1e-9, atol=1e-9)
