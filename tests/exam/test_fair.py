"""Fair versions: one shape per exam, the same workload in every version, no degenerate problems, a fixed e^x
table, the same numbers in every language, --parts and its points. Values recomputed with numpy from the specs."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest

from symattn import ExamOptions, build_exam, generate
from symattn.cli import main
from symattn.exercises.levels import VOCABULARY

KINDS = ["self_attention", "cross_attention", "multi_head"]


def matrix(rows) -> np.ndarray:
    return np.array([[float(Fraction(x)) for x in row] for row in rows], dtype=float)


def runs(section: dict) -> list[tuple[np.ndarray, np.ndarray, dict]]:
    """(queries, source, weights) of every head: the attention runs of one version."""
    X = section["X"]
    source = section.get("memory", X)
    return [(matrix(X), matrix(source), head) for head in section.get("heads", [section])]


def focus_attention(section: dict) -> list[tuple[np.ndarray, np.ndarray]]:
    """Every asked query's scaled scores and weights, one per head, in float64."""
    i = section["tokens"].index(section["focus"])
    out = []
    for X, source, head in runs(section):
        q, K = (X @ matrix(head["W_Q"]))[i], source @ matrix(head["W_K"])
        a = K @ q / math.sqrt(K.shape[1])
        w = np.exp(a - a.max())
        out.append((a, w / w.sum()))
    return out


def products(section: dict) -> int:
    """The scalar products of parts (a)-(e), counted from the matrices' shapes: Q of every query row, K and V of
    every key, a q·k per key, Σ w·v per value entry, and z · W_O."""
    total = 0
    for X, source, head in runs(section):
        d, d_k, d_v = len(head["W_Q"]), len(head["W_Q"][0]), len(head["W_V"][0])
        n, m = X.shape[0], source.shape[0]
        total += n * d * d_k + m * d * d_k + m * d * d_v + m * d_k + m * d_v
    if "W_O" in section:
        total += len(section["W_O"]) * len(section["W_O"][0])
    return total


@pytest.fixture(scope="module", params=[(k, d) for k in KINDS for d in ("easy", "standard")], ids=str)
def exam(request, tmp_path_factory):
    kind, difficulty = request.param
    out = tmp_path_factory.mktemp(f"{kind}-{difficulty}")
    build_exam(ExamOptions(8, 19, kind, difficulty, "en"), out, ("json",), jobs=1)
    return json.loads((out / "exam.json").read_text(encoding="utf-8"))


def test_every_version_has_the_same_shape_and_workload(exam):
    sections = [v["spec"]["sections"][0] for v in exam["versions"]]
    shapes = {(len(s["memory"] if "memory" in s else s["X"]),
               len(s.get("heads", [s])[0]["W_K"][0])) for s in sections}
    assert shapes == {(exam["options"]["tokens"], exam["options"]["d_k"])}
    loads = [v["workload"] for v in exam["versions"]]
    assert all(load == loads[0] for load in loads)
    for version, section in zip(exam["versions"], sections, strict=True):
        assert version["workload"]["products"] == products(section)
        parts = version["workload"]["parts"]
        assert sum(p["products"] for p in parts.values()) == products(section)
        assert sum(p["points"] for p in parts.values()) == 20


def test_points_follow_the_work(exam):
    """Whole points in proportion to each part's operations, at least one each: more work never earns fewer
    points, and no part is more than one point away from its exact share (or under one point)."""
    parts = list(exam["versions"][0]["workload"]["parts"].values())
    total = sum(p["operations"] for p in parts)
    for p in parts:
        share = 20 * p["operations"] / total
        assert p["points"] >= 1 and (abs(p["points"] - share) < 1 or (share < 1 and p["points"] == 1))
    for p in parts:
        assert all(p["points"] >= o["points"] for o in parts if o["operations"] < p["operations"])


def test_no_degenerate_versions(exam):
    """No two tokens with one embedding, distinct heads, d_k = 1 never unasked, and for every asked query a
    largest weight at least 0.01 above the next."""
    for version in exam["versions"]:
        section = version["spec"]["sections"][0]
        for matrix_ in (section["X"], section.get("memory", section["X"])):
            assert len({tuple(row) for row in matrix_}) == len(matrix_)
        heads = section.get("heads", [])
        assert len({json.dumps(h, sort_keys=True) for h in heads}) == len(heads)
        attention = focus_attention(section)
        if len(attention) > 1:
            assert not np.allclose(attention[0][1], attention[1][1], atol=1e-9)  # the heads attend differently
        for _, w in attention:
            top = np.sort(w)
            assert top[-1] - top[-2] >= 0.01 - 1e-12
        assert all(len(h["W_K"][0]) != 1 for h in section.get("heads", [section]))


@pytest.mark.parametrize("kind", ["self_attention", "cross_attention"])
def test_no_two_tokens_share_an_embedding_even_with_six(kind):
    """Six tokens from the 36 easy rows would repeat one in about a third of the draws: none is kept."""
    for version in generate(20, 6, kind, "easy", "en", tokens=6):
        section = version.data["sections"][0]
        rows = section.get("memory", section["X"])
        assert len(rows) == 6 and len({tuple(row) for row in rows}) == 6


def test_heads_differ_even_when_small():
    """With d_k = 1 and two tokens many draws give two heads that attend alike: none is kept."""
    for version in generate(15, 7, "multi_head", "easy", "en", tokens=2, d_k=1):  # 40 took 66 s: the rules reject most
        section = version.data["sections"][0]
        first, second = focus_attention(section)
        assert section["heads"][0] != section["heads"][1] and not np.allclose(first[1], second[1], atol=1e-9)


def test_easy_scaled_scores_are_on_the_fixed_table():
    """Every easy scaled score, of every kind and seed here, is a multiple of 0.125 within ±3: the x of the one
    table every easy paper prints (49 rows, e^x to 6 decimals)."""
    from symattn.exam.exptable import exp_table

    table = exp_table("easy", 4)
    assert [x for x, _ in table] == [Fraction(k, 8) for k in range(-24, 25)]
    assert all(abs(float(Fraction(e)) - math.exp(float(x))) <= 5e-7 for x, e in table)
    assert exp_table("standard", 4) is None  # √2: a calculator
    seen = set()
    for kind in KINDS:
        for version in generate(12, 5, kind, "easy", "en"):
            for a, _ in focus_attention(version.data["sections"][0]):
                assert np.allclose(a * 8, np.round(a * 8), atol=1e-9) and np.all(np.abs(a) <= 3)
                seen |= {round(x * 8) for x in a}
    assert len(seen) > 10  # the check saw many different scores


def test_the_table_is_on_the_paper_that_needs_it(tmp_path):
    assert main(["exam", "--count", "2", "--seed", "4", "--kind", "mixed", "--format", "tex", "--out",
                 str(tmp_path / "all")]) == 0
    paper = (tmp_path / "all" / "exam.tex").read_text(encoding="utf-8")
    assert paper.count(r"$-2.875$ & $0.056416$") == 2 and paper.count(r"$3$ & $20.085537$") == 2
    assert main(["exam", "--count", "2", "--seed", "4", "--parts", "a,b", "--format", "tex", "--out",
                 str(tmp_path / "ab")]) == 0
    assert "20.085537" not in (tmp_path / "ab" / "exam.tex").read_text(encoding="utf-8")  # no e^x needed


@pytest.mark.parametrize("difficulty", ["easy", "standard"])
def test_the_same_seed_gives_the_same_numbers_in_ja_and_en(difficulty):
    """Only the token words differ, each the word at the same place of the other language's vocabulary."""
    ja, en = (generate(12, 23, "mixed", difficulty, lang) for lang in ("ja", "en"))
    to_en = dict(zip(VOCABULARY["ja"], VOCABULARY["en"], strict=True))

    def translated(value):
        if isinstance(value, dict):
            return {k: translated(v) for k, v in value.items()}
        if isinstance(value, list):
            return [translated(v) for v in value]
        return to_en.get(value, value)

    for a, b in zip(ja, en, strict=True):
        assert translated(a.data["sections"]) == b.data["sections"]


def test_shape_options_fix_every_version(tmp_path):
    build_exam(ExamOptions(6, 2, "mixed", "easy", "en", tokens=4, d_k=1), tmp_path, ("json",), jobs=1)
    exam = json.loads((tmp_path / "exam.json").read_text(encoding="utf-8"))
    assert exam["options"]["tokens"] == 4 and exam["options"]["d_k"] == 1
    shaped = [v["spec"]["sections"][0] for v in exam["versions"]
              if v["spec"]["sections"][0]["kind"] in ("self_attention", "cross_attention", "multi_head")
              and "rope" not in v["spec"]["sections"][0]]  # the newer kinds have fixed hand-sized shapes
    assert len(shaped) == 3
    for section in shaped:
        assert len(section.get("memory", section["X"])) == 4
        assert {len(h["W_K"][0]) for h in section.get("heads", [section])} == {1}


def test_parts_asks_only_those_and_carries_the_work_of_the_others(tmp_path):
    assert main(["exam", "--count", "3", "--seed", "8", "--kind", "self_attention", "--parts", "c, A",
                 "--format", "tex,json", "--out", str(tmp_path)]) == 0
    exam = json.loads((tmp_path / "exam.json").read_text(encoding="utf-8"))
    assert exam["options"]["parts"] == ["a", "c"]
    for version in exam["versions"]:
        section = version["spec"]["sections"][0]
        parts = version["workload"]["parts"]
        assert list(parts) == ["qkv", "scaled"]
        n, d_k = len(section["X"]), len(section["W_K"][0])
        assert parts["scaled"]["products"] == n * d_k  # the raw scores (b), needed for (c), not asked
        assert parts["scaled"]["operations"] == n * d_k + n
        assert sum(p["points"] for p in parts.values()) == 20
    paper = (tmp_path / "exam.tex").read_text(encoding="utf-8")
    assert paper.count(r"\part[") == 6  # two parts per version


@pytest.mark.parametrize(("argv", "message"), [
    (["--tokens", "1"], "--tokens: expected a whole number of tokens from 2 to 6, got 1"),
    (["--tokens", "7"], "--tokens: expected a whole number of tokens from 2 to 6, got 7"),
    (["--d-k", "2"], "--d-k: expected one of 1, 4 at easy, whose scaled scores must stay on the e^x table, got 2"),
    (["--d-k", "0", "--difficulty", "standard"], "--d-k: expected one of 1, 2, 3, 4 at standard, got 0"),
    (["--parts", "f"], "--parts: expected parts among a, b, c, d, e separated by commas, got 'f'"),
    (["--parts", "ab"], "--parts: expected parts among a, b, c, d, e separated by commas, got 'ab'"),
    (["--parts", "a,,b"], "--parts: expected parts among a, b, c, d, e separated by commas, got ''"),
    (["--parts", "a,b,a"], "--parts: expected each part once, got 'a,b,a'"),
])
def test_bad_fair_options(tmp_path, capsys, argv, message):
    assert main(["exam", *argv, "--format", "json", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"symattn: error: {message}") and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("argv", "message"), [
    (["--kind", "next_token", "--parts", "d,e"], "--parts: this exam's problems have the parts a–c"),
    (["--kind", "add_norm", "--tokens", "4"], "--tokens: the add_norm exam has a fixed hand-sized shape"),
    (["--kind", "rope", "--d-k", "4"], "--d-k: the rope exam has a fixed hand-sized shape"),
])
def test_options_a_kind_cannot_follow_are_refused(tmp_path, capsys, argv, message):
    assert main(["exam", *argv, "--count", "1", "--format", "json", "--out", str(tmp_path / "x")]) == 2
    assert capsys.readouterr().err.splitlines()[-1].startswith(f"symattn: error: {message}")  # after any progress
    assert not (tmp_path / "x").exists()
