"""No degenerate version is drawn (README: Exams, "No degenerate version"), and every version of a kind costs about
the same real work (README: "Equal real work"): on 200 versions per kind and difficulty,
recomputed from the drawn numbers alone (fractions, and numpy for the softmax): no output projection with a zero
row or column or two equal columns, no column of V with one value, no two equal weights, the two largest weights at
least 0.02 apart, grouped-query heads and final outputs that differ, and feed-forward networks without a dead
hidden unit or a zero or repeated row of W_2; the products worked by hand (neither factor 0 or ±1) within the
kind's band, and no two versions with the same weights up to the order of rows and columns. The numbers only: no
paper is rendered."""

from __future__ import annotations

from fractions import Fraction
from itertools import permutations

import numpy as np
import pytest

from symattn import generate
from symattn.exam.examiners import exam_kinds, examiner

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


def worked(*factors) -> bool:
    return all(Fraction(f) not in (0, 1, -1) for f in factors)


def hand_products(section: dict) -> int | None:
    """The products a student works, neither factor 0 or ±1, recomputed for the kinds whose parts are plain
    matrix products (the others: the kind's own count, held to its band)."""
    kind = section["kind"]
    if kind in ("self_attention", "cross_attention") and not section.get("rope"):
        X = F(section["X"])
        source = F(section["memory"]) if kind == "cross_attention" else X
        W = {k: F(section[k]) for k in ("W_Q", "W_K", "W_V")}
        n = sum(worked(x, w) for M, rows in ((W["W_Q"], X), (W["W_K"], source), (W["W_V"], source))
                for r in rows for col in zip(*M, strict=True) for x, w in zip(r, col, strict=True))
        q = mul(X, W["W_Q"])[section["tokens"].index(section["focus"])]
        n += sum(worked(a, b) for k in mul(source, W["W_K"]) for a, b in zip(q, k, strict=True))
        return n + sum(worked(v) for r in mul(source, W["W_V"]) for v in r)  # w · v: a weight is never 0 or ±1
    if kind == "next_token":
        return sum(worked(x, w) for col in zip(*F(section["W_vocab"]), strict=True)
                   for x, w in zip(F(section["X"])[0], col, strict=True))
    return None


def unordered(matrix) -> tuple:
    rows = [tuple(Fraction(v) for v in r) for r in matrix]
    return min(tuple(sorted(zip(*order, strict=True))) for order in permutations(rows))


def weights_of(section: dict) -> tuple:
    places = [section, *section.get("heads", []), *section.get("kv_heads", [])]
    return tuple((n, k, unordered(v)) for n, place in enumerate(places) for k, v in sorted(place.items())
                 if k.startswith("W_"))


@pytest.mark.parametrize("difficulty", ["easy", "standard"])
@pytest.mark.parametrize("kind", list(exam_kinds()))
def test_no_degenerate_version_and_equal_work(kind, difficulty):
    versions = generate(COUNT, 32, kind, difficulty, "en")
    sections = [v.data["sections"][0] for v in versions]
    bad = {v.label: found for v, s in zip(versions, sections, strict=True) if (found := problems(s))}
    assert not bad
    band = examiner(kind).work_band(difficulty)
    counts = [examiner(kind).hand_products(s) for s in sections]
    assert all(mine is None or mine == count for mine, count in zip(map(hand_products, sections), counts,
                                                                     strict=True))
    if band is not None:
        assert all(band[0] <= c <= band[1] for c in counts)
        assert band[1] - band[0] <= max(5, band[1] // 2)  # a narrow band (README: Equal real work)
    weights = [weights_of(s) for s in sections]
    assert not weights[0] or len(set(weights)) == len(weights)  # (add_norm has no weight matrices)


def test_exam_json_reports_each_versions_work(tmp_path):
    import json
    from decimal import Decimal

    from symattn import ExamOptions, build_exam

    build_exam(ExamOptions(3, 1, "self_attention", "standard", "en"), tmp_path, ("json",))
    for version in json.loads((tmp_path / "exam.json").read_text(encoding="utf-8"))["versions"]:
        answers = [Decimal(b["answer"]) for p in version["parts"] for b in p["blanks"]]
        assert version["work"] == {"hand_products": hand_products(version["spec"]["sections"][0]),
                                   "band": list(examiner("self_attention").work_band("standard")),
                                   "blanks": len(answers), "distinct_answers": len({a.normalize() for a in answers})}
