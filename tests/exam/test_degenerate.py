"""No degenerate version is drawn (README: Exams, "No version has ..."): on 200 versions per kind and difficulty,
recomputed from the drawn numbers alone (fractions, and numpy for the softmax): no output projection with a zero
row or column or two equal columns, no column of V with one value, no two equal weights, the two largest weights at
least 0.02 apart, grouped-query heads and final outputs that differ, and feed-forward networks without a dead
hidden unit or a zero or repeated row of W_2. The numbers only: no paper is rendered."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from symattn import generate
from symattn.exam.examiners import exam_kinds

COUNT = 200
GAP = 0.02


def F(matrix) -> list[list[Fraction]]:
    return [[Fraction(v) for v in row] for row in matrix]


def mul(A, B) -> list[list[Fraction]]:
    return [[sum(a * b for a, b in zip(row, col, strict=True)) for col in zip(*B, strict=True)] for row in A]


def mixes(W_O) -> bool:
    columns = list(zip(*W_O, strict=True))
    return all(any(r) for r in W_O) and all(any(c) for c in columns) and len(set(columns)) == len(columns)


def varies(V) -> bool:
    return all(len(set(col)) > 1 for col in zip(*V, strict=True))


def rotate(M, positions):
    return [[r[0] * np.cos(m) - r[1] * np.sin(m), r[0] * np.sin(m) + r[1] * np.cos(m)]
            for r, m in zip(M, positions, strict=True)]


def weights(q, K, d_k) -> np.ndarray:
    scores = np.array([float(sum(a * b for a, b in zip(q, k, strict=True))) for k in K]) / np.sqrt(d_k)
    e = np.exp(scores - scores.max())
    return e / e.sum()


def fair_softmax(w) -> bool:
    top = np.sort(w)[::-1]
    return top[0] - top[1] >= GAP - 1e-12 and np.min(np.abs(np.subtract.outer(w, w))[~np.eye(len(w), dtype=bool)]) > 1e-9


def attention(X, source, W_Q, W_K, W_V, focus):
    Q, K, V = mul(X, F(W_Q)), mul(source, F(W_K)), mul(source, F(W_V))
    return Q, K, V, weights(Q[focus], K, len(W_K[0]))


def problems(section: dict) -> list[str]:
    kind, found = section["kind"], []
    if kind in ("self_attention", "cross_attention"):
        X = F(section["X"])
        source = F(section["memory"]) if kind == "cross_attention" else X
        focus = section["tokens"].index(section["focus"])
        Q, K, V = mul(X, F(section["W_Q"])), mul(source, F(section["W_K"])), mul(source, F(section["W_V"]))
        if section.get("rope"):
            positions = range(len(X))  # position m turns the pair by m radians (θ_0 = 1)
            Q, K = rotate(Q, positions), rotate(K, positions)
        w = weights(Q[focus], K, len(section["W_K"][0]))
        found += [] if varies(V) else ["a column of V with one value"]
        found += [] if fair_softmax(w) else [f"weights {w}"]
    elif kind == "multi_head":
        X, focus = F(section["X"]), section["tokens"].index(section["focus"])
        found += [] if mixes(F(section["W_O"])) else ["W_O"]
        for head in section["heads"]:
            _, _, V, w = attention(X, X, head["W_Q"], head["W_K"], head["W_V"], focus)
            found += [] if varies(V) else ["V"]
            found += [] if fair_softmax(w) else [f"weights {w}"]
    elif kind == "grouped_query":
        X, focus = F(section["X"]), section["tokens"].index(section["focus"])
        kv, W_O = section["kv_heads"][0], F(section["W_O"])
        found += [] if mixes(W_O) else ["W_O"]
        outputs = []
        for head in section["heads"]:
            _, _, V, w = attention(X, X, head["W_Q"], kv["W_K"], kv["W_V"], focus)
            found += [] if varies(V) else ["V"]
            found += [] if fair_softmax(w) else [f"weights {w}"]
            outputs.append(float(sum(float(a) * float(v[0]) for a, v in zip(w, V, strict=True))))
        final = np.array(outputs) @ np.array(W_O, dtype=float)
        found += [] if abs(outputs[0] - outputs[1]) > 1e-9 else ["equal head outputs"]
        found += [] if abs(final[0] - final[1]) > 1e-9 else ["equal final outputs"]
    elif kind == "feed_forward":
        X, W_1, W_2 = F(section["X"]), F(section["W_1"]), F(section["W_2"])
        hidden = [[h + b for h, b in zip(row, F([section["b_1"]])[0], strict=True)] for row in mul(X, W_1)]
        found += [] if all(any(h > 0 for h in unit) for unit in zip(*hidden, strict=True)) else ["a dead unit"]
        rows = [tuple(r) for r in W_2]
        found += [] if all(any(r) for r in rows) and len(set(rows)) == len(rows) else ["W_2 rows"]
    elif kind == "next_token":
        logits = np.array([float(v) for v in (np.array(F(section["X"]), dtype=object) @ np.array(
            F(section["W_vocab"]), dtype=object))[0]]) + np.array([float(b) for b in section["b_vocab"]])
        logits /= float(Fraction(section.get("temperature", "1")))
        e = np.exp(logits - logits.max())
        found += [] if fair_softmax(e / e.sum()) else ["probabilities"]
    return found


@pytest.mark.parametrize("difficulty", ["easy", "standard"])
@pytest.mark.parametrize("kind", [k for k in exam_kinds() if k != "add_norm"])
def test_no_degenerate_version(kind, difficulty):
    versions = generate(COUNT, 32, kind, difficulty, "en")
    bad = {v.label: found for v in versions if (found := problems(v.data["sections"][0]))}
    assert not bad
