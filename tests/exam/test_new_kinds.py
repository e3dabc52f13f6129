"""Exams of the newer kinds (rope, grouped_query, add_norm, feed_forward, next_token): every answer recomputed in
float64 from the version's spec alone, easy versions hand-friendly, the files built and reproducible."""

from __future__ import annotations

import json
import random
import re
import xml.etree.ElementTree as ET
from fractions import Fraction
from math import isqrt

import numpy as np
import pytest

from symattn.cli import main
from symattn.exam.build import build_exam, exercise
from symattn.exam.generate import draw, generate
from symattn.exam.options import ExamOptions
from symattn.exercises.exercise import AnswerTable
from symattn.exercises.levels import LEVELS

KINDS = ("rope", "grouped_query", "add_norm", "feed_forward", "next_token")


def number(text) -> float:
    return float(Fraction(str(text)))


def matrix(rows) -> np.ndarray:
    return np.array([[number(x) for x in row] for row in rows], dtype=float)


def softmax(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max())
    return e / e.sum()


def rotate(M: np.ndarray, positions) -> np.ndarray:
    """RoPE with one pair (d = 2, θ = 1): row m turned by m radians."""
    c, s = np.cos(positions), np.sin(positions)
    return np.stack([M[:, 0] * c - M[:, 1] * s, M[:, 0] * s + M[:, 1] * c], axis=1)


def expected(section: dict) -> list[list[np.ndarray]]:
    """Each part's answers (a vector, or a table's columns as matrices), recomputed with numpy."""
    X = matrix(section["X"])
    if section["kind"] == "feed_forward":
        h = X @ matrix(section["W_1"]) + matrix([section["b_1"]])
        a = np.maximum(h, 0)
        return [[h], [a], [a @ matrix(section["W_2"]) + matrix([section["b_2"]])]]
    if section["kind"] == "add_norm":
        u = X + matrix(section["Y"])
        mu = u.mean(axis=1, keepdims=True)
        var = ((u - mu) ** 2).mean(axis=1, keepdims=True)
        uh = (u - mu) / np.sqrt(var + number(section["eps"]))
        return [[u], [mu, var], [uh], [uh * matrix([section["gamma"]]) + matrix([section["beta"]])]]
    if section["kind"] == "next_token":
        logits = X[0] @ matrix(section["W_vocab"]) + matrix([section["b_vocab"]])[0]
        scaled = logits / number(section.get("temperature", "1"))
        p = softmax(scaled)
        ranks = np.empty(len(p))
        ranks[np.argsort(-p, kind="stable")] = np.arange(1, len(p) + 1)
        first = [logits] if "temperature" not in section else [logits, scaled]
        return [first, [p], [ranks[:, None]]]
    i = section["tokens"].index(section["focus"])
    if section["kind"] == "grouped_query":
        kv = section["kv_heads"][0]
        K, V = X @ matrix(kv["W_K"]), X @ matrix(kv["W_V"])
        qs = [X[i] @ matrix(h["W_Q"]) for h in section["heads"]]
        s = [K @ q for q in qs]
        a = [x / np.sqrt(K.shape[1]) for x in s]
        w = [softmax(x) for x in a]
        z = [x @ V for x in w]
        return [[*qs, K, V], s, a, w, [*z, np.concatenate(z) @ matrix(section["W_O"])]]
    Q, K, V = X @ matrix(section["W_Q"]), X @ matrix(section["W_K"]), X @ matrix(section["W_V"])  # RoPE
    positions = np.arange(len(section["tokens"]), dtype=float)
    Qr, Kr = rotate(Q, positions), rotate(K, positions)
    s = Kr @ Qr[i]
    a = s / np.sqrt(2)
    w = softmax(a)
    return [[Q, K, V], [Qr[i], Kr], [s, a], [w], [w @ V]]


def asked(work) -> list[list[np.ndarray]]:
    """The exercise's parts as the same structure: a vector per AnswerVector, each column of an AnswerTable."""
    out = []
    for part in work.parts:
        values = []
        for answer in part.answers:
            if isinstance(answer, AnswerTable):
                values += [np.array([[float(v) for v in row] for row in column.values.tolist()])
                           for column in answer.columns]
            else:
                values.append(np.array([float(v) for v in answer.entries]))
        out.append(values)
    return out


def moodle_order(parts: list[list[np.ndarray]], work) -> list[float]:
    """The answers in the order of the Moodle blanks: vectors whole, tables row by row across their columns."""
    flat = []
    for part, values in zip(work.parts, parts, strict=True):
        k = 0
        for answer in part.answers:
            if isinstance(answer, AnswerTable):
                columns = values[k:k + len(answer.columns)]
                k += len(answer.columns)
                flat += [x for i in range(len(answer.tokens)) for column in columns for x in column[i]]
            else:
                flat += list(values[k].ravel())
                k += 1
    return flat


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("difficulty", ["easy", "standard"])
@pytest.mark.parametrize("lang", ["en", "ja"])
def test_answers_match_an_independent_computation(kind, difficulty, lang):
    options = ExamOptions(6, 3, kind, difficulty, lang)
    versions = generate(6, 3, kind, difficulty, lang)
    assert len({json.dumps(v.data["sections"], sort_keys=True) for v in versions}) == 6
    for version in versions:
        section = version.data["sections"][0]
        work = exercise(version, options, steps=False)
        got, want = asked(work), expected(section)
        assert [len(p) for p in got] == [len(p) for p in want]
        for g_part, w_part in zip(got, want, strict=True):
            for g, w in zip(g_part, w_part, strict=True):
                assert np.allclose(g.ravel(), np.asarray(w).ravel(), atol=1e-9), (kind, version.label)
        assert work.points == sum(p.points for p in work.parts) and all(p.points >= 1 for p in work.parts)
        rows = [tuple(map(number, r)) for r in section["X"]]
        assert len(set(rows)) == len(rows)  # no two tokens with the same input


def terminating(q: Fraction) -> bool:
    d = q.denominator
    for prime in (2, 5):
        while d % prime == 0:
            d //= prime
    return d == 1


@pytest.mark.parametrize("kind", KINDS)
def test_easy_versions_are_hand_friendly(kind):
    options = ExamOptions(8, 5, kind, "easy", "en")
    for version in generate(8, 5, kind, "easy", "en"):
        section = version.data["sections"][0]
        work = exercise(version, options, steps=False)
        if kind == "add_norm":  # ε = 0 and σ² the square of a short decimal: σ and every quotient exact
            assert section["eps"] == "0"
            for x, y in zip(section["X"], section["Y"], strict=True):
                u = [Fraction(a) + Fraction(b) for a, b in zip(x, y, strict=True)]
                mu = sum(u) / len(u)
                var = sum((v - mu) ** 2 for v in u) / len(u)
                root = Fraction(isqrt(var.numerator), isqrt(var.denominator))
                assert var > 0 and root * root == var
                assert all(terminating((v - mu) / root) for v in u)
        if kind == "feed_forward":  # ReLU zeroes something in every row and keeps something
            h = expected(section)[0][0]
            assert all((row < 0).any() and (row > 0).any() for row in h)
        if kind == "rope":  # every angle the rotations use is on the paper's cos/sin table (positions 0, 1, ...)
            assert [float(a) for a in work.angles] == list(range(len(section["tokens"])))
        if kind in ("next_token", "grouped_query"):  # every softmax input on the paper's e^x table
            table = {float(x) for x, _ in work.exp_table}
            inputs = expected(section)[0][0] if kind == "next_token" else np.concatenate(expected(section)[2])
            assert all(round(float(x), 9) in table for x in np.ravel(inputs))
            assert table == {k / 8 for k in range(-24, 25)}  # the fixed table: it gives nothing away
        if kind == "grouped_query":  # the two heads weigh the keys differently
            assert not np.allclose(expected(section)[1][0], expected(section)[1][1])
        if kind in ("next_token", "grouped_query", "rope"):  # a clear largest weight or probability
            weights = expected(section)[1] if kind == "next_token" else expected(section)[3]
            for w in weights:
                top = np.sort(np.ravel(w))[::-1]
                assert top[0] - top[1] >= 0.02


@pytest.mark.parametrize("kind", KINDS)
def test_the_numbers_do_not_depend_on_the_language(kind):
    """A draw takes the same random numbers in every language: only the words differ."""
    for difficulty in ("easy", "standard"):
        for seed in range(5):
            en = draw(random.Random(seed), kind, LEVELS[difficulty], "en")["sections"][0]
            ja = draw(random.Random(seed), kind, LEVELS[difficulty], "ja")["sections"][0]
            words = ("tokens", "focus", "vocabulary")
            assert {k: v for k, v in en.items() if k not in words} == {k: v for k, v in ja.items() if k not in words}
            assert en["tokens"] != ja["tokens"]


@pytest.mark.parametrize("kind", KINDS)
def test_json_and_moodle_files(kind, tmp_path):
    options = ExamOptions(4, 2, kind, "easy", "ja")
    build_exam(options, tmp_path, ("tex", "json", "moodle"))
    data = json.loads((tmp_path / "exam.json").read_text(encoding="utf-8"))
    assert data["options"]["kind"] == kind and len(data["versions"]) == 4
    questions = [q for q in ET.parse(tmp_path / "moodle.xml").getroot().findall("question")
                 if q.get("type") == "cloze"]  # after the exam's category
    versions = generate(4, 2, kind, "easy", "ja")
    for question, entry, version in zip(questions, data["versions"], versions, strict=True):
        assert entry["spec"] == version.data
        work = exercise(version, options, steps=False)
        text = question.find("questiontext/text").text
        blanks = re.findall(r"\{(\d+):NUMERICAL:=([-0-9.]+):([0-9.]+)\}", text)
        assert text.count("{") == len(blanks)
        assert np.allclose([float(b) for _, b, _ in blanks], moodle_order(expected(version.data["sections"][0]),
                                                                          work), atol=1e-11)
        total = sum(int(w) for w, _, _ in blanks)
        for part, piece in zip(work.parts, text.split("<li>")[1:], strict=True):  # each part weighs its points
            weights = [int(w) for w, _, _ in re.findall(r"\{(\d+):NUMERICAL:=([-0-9.]+):([0-9.]+)\}", piece)]
            assert sum(weights) * work.points == part.points * total
        assert ("<th><i>φ</i></th>" in text) == (kind == "rope")
    tex = (tmp_path / "exam.tex").read_text(encoding="utf-8")
    assert (r"$\cos\varphi$" in tex) == (kind == "rope")


def test_mixed_draws_every_kind():
    kinds = [v.data["sections"][0]["kind"] + ("+rope" if "rope" in v.data["sections"][0] else "")
             for v in generate(16, 1, "mixed", "easy", "en")]
    assert {"grouped_query", "next_token", "feed_forward", "add_norm", "self_attention+rope"} <= set(kinds)


def test_reproducible(tmp_path):
    for run in ("a", "b"):
        assert main(["exam", "--count", "3", "--seed", "4", "--kind", "add_norm", "--format", "tex,json,moodle",
                     "--out", str(tmp_path / run)]) == 0
    for name in ("exam.tex", "key.tex", "exam.json", "moodle.xml"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


@pytest.mark.pdf
@pytest.mark.parametrize("kind", KINDS)
def test_pdfs_build(kind, tmp_path):
    assert main(["exam", "--count", "2", "--seed", "1", "--kind", kind, "--lang", "en", "--format", "pdf",
                 "--out", str(tmp_path)]) == 0
    assert (tmp_path / "exam.pdf").read_bytes().startswith(b"%PDF")
    assert (tmp_path / "key.pdf").read_bytes().startswith(b"%PDF")


@pytest.mark.pdf
@pytest.mark.parametrize("kind", ["add_norm", "feed_forward", "next_token"])
def test_keys_run_past_no_page_foot(kind, tmp_path):
    """The key's worked solutions break across pages without running past a page's foot (every kind at once:
    tests/exam/test_exam.py)."""
    from symattn.render.pdf import compile_with_log, overfull_boxes

    build_exam(ExamOptions(4, 1, kind, "easy", "ja"), tmp_path, ("tex",))
    _, log = compile_with_log((tmp_path / "key.tex").read_text(encoding="utf-8"), jobname="key")
    assert overfull_boxes(log) == []
