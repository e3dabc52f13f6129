"""Error carried forward on random versions and random mistakes, against an independent float implementation of
the rule (numpy): every later blank is credited exactly when it is within the tolerance of the true value or of
the value a float pipeline computes from the student's own earlier answers."""

from __future__ import annotations

import random

import numpy as np
import pytest

from symattn.grade.exam import load_exam
from symattn.grade.mark import grade
from symattn.grade.responses import Response

from .exams import blanks, generated


def vectors(entries, symbol, values):
    """A quantity's entries as a float array (table rows by `row`)."""
    chosen = [b for b in entries if b["symbol"] == symbol]
    rows = max(b["row"] for b in chosen)
    cols = max(b["column"] for b in chosen)
    out = np.zeros((rows, cols))
    for b in chosen:
        out[b["row"] - 1, b["column"] - 1] = float(values[b["id"]])
    return out


def follow_through(entries, typed, focus_row, d_k):
    """The float pipeline of the student's own answers: scores, scaled, weights, output."""
    Q, K, V = (vectors(entries, s, typed) for s in "QKV")
    s = vectors(entries, "s", typed)[0]
    a = vectors(entries, "a", typed)[0]
    w = vectors(entries, "w", typed)[0]
    return {"s": K @ Q[focus_row - 1], "a": s / np.sqrt(d_k), "w": np.exp(a) / np.exp(a).sum(), "z": w @ V}


def trivial(x, tol, peaked=False):
    return np.ptp(x) <= tol or (peaked and (np.abs(x) > tol).sum() <= 1)


@pytest.mark.parametrize("difficulty", ["easy", "standard"])
def test_random_mistakes_are_carried_as_a_float_pipeline_says(tmp_path, difficulty):
    path = generated(tmp_path, 4, "self_attention", seed=11, difficulty=difficulty)
    exam = load_exam(path)
    rng = random.Random(difficulty)
    checked, credited = 0, 0
    for label, entries in blanks(path).items():
        version = exam.versions[label]
        tol = {b.id: p.tolerance for p in version.parts for b in p.blanks}
        for _ in range(15):
            typed = {b["id"]: f"{float(b['answer']):.4f}" for b in entries}
            for b in rng.sample(entries, 3):  # three random slips anywhere
                typed[b["id"]] = f"{float(b['answer']) + rng.choice([-1, 1]) * rng.choice([0.5, 1, 2]):.4f}"
            # then some later parts worked on from the slips, as a careful student would
            own = follow_through(entries, typed, version.focus_row, version.d_k[None])
            for symbol in "sawz":
                if rng.random() < 0.7:
                    for b in entries:
                        if b["symbol"] == symbol:
                            typed[b["id"]] = f"{own[symbol][b['column'] - 1]:.4f}"
                    own = follow_through(entries, typed, version.focus_row, version.d_k[None])
            marks = {m.blank.id: m for m in grade(Response(2, "S", label, typed), version).marks}
            own = follow_through(entries, typed, version.focus_row, version.d_k[None])
            student = {s: vectors(entries, s, typed) for s in ("Q", "K", "V", "s", "a", "w")}
            guard = {"s": trivial(student["Q"][version.focus_row - 1], 0.00005)
                     or all(np.abs(r - student["K"][0]).max() <= 0.00005 for r in student["K"]),
                     "a": trivial(student["s"][0], 0.00005), "w": trivial(student["a"][0], 0.0001),
                     "z": trivial(student["w"][0], 0.001, True)
                     or all(np.abs(r - student["V"][0]).max() <= 0.001 for r in student["V"])}
            for b in entries:
                if b["symbol"] not in "sawz":
                    continue
                x, t = float(typed[b["id"]]), float(tol[b["id"]])
                carried = own[b["symbol"]][b["column"] - 1]
                gaps = [abs(abs(x - float(b["answer"])) - t), abs(abs(x - carried) - t)]
                if min(gaps) < 1e-9:
                    continue  # on the boundary: floats cannot say
                expected = abs(x - float(b["answer"])) <= t or (not guard[b["symbol"]] and abs(x - carried) <= t)
                assert (marks[b["id"]].verdict in ("right", "carried")) == expected, (label, b["id"], typed)
                checked += 1
                credited += marks[b["id"]].verdict == "carried"
    assert checked > 500 and credited > 50  # the rule was exercised, both ways
