"""The tolerances accept every reasonable hand route at the asked precision and still reject the common mistakes:
hand routes simulated in floats on random versions of every kind and difficulty, checked with Moodle's rule."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from symattn import generate
from symattn.exercises.exercise import tolerance

from .moodle_cloze import Blank

DIGITS = 4


def matrix(rows) -> np.ndarray:
    return np.array([[float(Fraction(x)) for x in row] for row in rows])


def accepted(value: float, exact: float, tol: str) -> bool:
    return Blank(1, True, [(1.0, repr(float(exact)), float(tol))]).fraction(value) == 1.0


def scaled_routes(s: np.ndarray, d_k: int) -> list[np.ndarray]:
    """√d_k exactly, or for an irrational √d_k: divided by 1.4142 or 1.414, or times 0.7071 or 0.707."""
    root = np.sqrt(d_k)
    if root == int(root):
        return [s / root]
    return [s / root, s / 1.4142, s / 1.414, s * 0.7071, s * 0.707]


def weight_routes(a: np.ndarray) -> list[np.ndarray]:
    """Softmax of the rounded scaled scores: e^x exact, from the table (6 decimals) or rounded to 4, with or
    without subtracting the largest score first."""
    routes = []
    for shift, places in itertools.product((0.0, a.max()), (None, 6, 4)):
        e = np.exp(a - shift)
        e = e if places is None else np.round(e, places)
        routes.append(e / e.sum())
    return routes


def head_routes(q, K, V, d_k):
    """(exact s, a, w, z; every route's rounded a, w and z) of one head's query."""
    s = K @ q
    a = s / np.sqrt(d_k)
    w = np.exp(a - a.max())
    w /= w.sum()
    routes = []
    for a2 in scaled_routes(s, d_k):
        a2 = np.round(a2, DIGITS)
        for w2 in weight_routes(a2):
            w2 = np.round(w2, DIGITS)  # outputs from the 4-decimal weights
            routes.append((a2, w2, np.round(w2 @ V, DIGITS)))
    return (s, a, w, w @ V), routes


def runs(kind: str, difficulty: str, count: int):
    """Each version's heads (q, K, V, d_k), W_O for multi-head."""
    for version in generate(count, 13, kind, difficulty, "en"):
        section = version.data["sections"][0]
        X = matrix(section["X"])
        source = matrix(section["memory"]) if kind == "cross_attention" else X
        i = 0 if kind == "cross_attention" else section["tokens"].index(section["focus"])
        heads = [(X[i] @ matrix(h["W_Q"]), source @ matrix(h["W_K"]), source @ matrix(h["W_V"]),
                  len(h["W_K"][0])) for h in section.get("heads", [section])]
        yield heads, matrix(section["W_O"]) if "W_O" in section else None


@pytest.mark.parametrize("difficulty", ["easy", "standard"])
@pytest.mark.parametrize("kind", ["self_attention", "cross_attention", "multi_head"])
def test_every_hand_route_is_accepted(kind, difficulty):
    checked = 0
    for heads, W_O in runs(kind, difficulty, 12):
        d_k = heads[0][3]
        tol = {part: tolerance(DIGITS, part, d_k) for part in ("scaled", "weights", "output")}
        outputs = []
        for q, K, V, d in heads:
            (_s, a, w, z), routes = head_routes(q, K, V, d)
            for a2, w2, z2 in routes:
                for part, got, exact in (("scaled", a2, a), ("weights", w2, w), ("output", z2, z)):
                    assert all(accepted(g, e, tol[part]) for g, e in zip(got, exact, strict=True)), (part, got, exact)
                    checked += len(got)
            outputs.append((z, [z2 for _, _, z2 in routes]))
        if W_O is not None:  # the final output from the rounded head outputs
            final = np.concatenate([z for z, _ in outputs]) @ W_O
            for combo in itertools.product(*(routes for _, routes in outputs)):
                got = np.round(np.concatenate(combo) @ W_O, DIGITS)
                assert all(accepted(g, e, tol["output"]) for g, e in zip(got, final, strict=True))
                checked += len(got)
    assert checked > 500


@pytest.mark.parametrize("difficulty", ["easy", "standard"])
def test_common_mistakes_are_rejected(difficulty):
    """No scaling, or dividing by d_k instead of √d_k: of the scaled scores and weights the mistake changes at all,
    the tolerance rejects nearly all (those it accepts lie within a few thousandths of the right value)."""
    rejected = total = 0
    for kind in ("self_attention", "cross_attention", "multi_head"):
        for heads, _ in runs(kind, difficulty, 12):
            for q, K, V, d_k in heads:
                if d_k == 1:
                    continue  # nothing to scale: the mistakes are the right answers
                (s, a, w, _z), _ = head_routes(q, K, V, d_k)
                for wrong in (s, s / d_k):
                    e = np.exp(wrong - wrong.max())
                    for part, got, exact in (("scaled", np.round(wrong, DIGITS), a),
                                             ("weights", np.round(e / e.sum(), DIGITS), w)):
                        tol = tolerance(DIGITS, part, d_k)
                        changed = [(g, x) for g, x in zip(got, exact, strict=True) if abs(g - x) > 1e-9]
                        total += len(changed)
                        rejected += sum(not accepted(g, x, tol) for g, x in changed)
    assert total > 100 and rejected / total > 0.97, (rejected, total)
