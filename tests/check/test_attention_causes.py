"""More of the mistakes people make in attention (issue 33 items 10, 11, 12, 14): random sections whose answers
numpy computed with one mistake (scores multiplied by √d_k, softmax's sum left out, w·K for w·V, sinusoids
concatenated instead of interleaved, positions from 1) are diagnosed with that cause in at least 95 % of cases;
float32's digits are `float32`, not a typo; and tutorial-style documents are found with their causes."""

from __future__ import annotations

import json
import random
from collections import Counter

import numpy as np
import pytest

from bench.confusion import claims_data, half_up
from symattn.check import check
from symattn.check.claims import claims_of
from symattn.cli import main
from symattn.pipeline.parse import load_example, parse_spec
from symattn.spec.files import read_spec_text

CASES = 20


def _matrix(rng: random.Random, rows: int, cols: int, top: int) -> list[list[str]]:
    return [[f"{rng.randint(-top, top) / 10:.1f}" for _ in range(cols)] for _ in range(rows)]


def _section(rng: random.Random, cause: str) -> dict:
    n, d = (3, 4) if cause.startswith(("pe", "positions")) else (rng.choice((3, 4)), rng.choice((2, 3)))
    section = {"kind": "self_attention", "tokens": [f"t{i}" for i in range(n)], "X": _matrix(rng, n, d, 20),
               "W_Q": _matrix(rng, d, d, 12), "W_K": _matrix(rng, d, d, 12), "W_V": _matrix(rng, d, d, 12),
               "focus": "all"}
    if cause.startswith(("pe", "positions")):
        section["positional_encoding"] = "sinusoidal"
    return section


def _sinusoids(n: int, d: int, cause: str) -> np.ndarray:
    pos, j = np.arange(n)[:, None] + (cause == "positions_from_1"), np.arange(d)[None, :]
    if cause == "pe_concatenated":  # sin(pos / 10000^(2i/d)) for i < d/2, then the cosines
        half = d // 2
        i = np.where(j < half, j, j - half)
        angle = pos / 10000.0 ** (2 * i / d)
        return np.where(j < half, np.sin(angle), np.cos(angle))
    angle = pos / 10000.0 ** (2 * (j // 2) / d)
    return np.where(j % 2 == 0, np.sin(angle), np.cos(angle))


def _answers(section: dict, cause: str) -> dict[str, np.ndarray]:
    f = {k: np.array(section[k], dtype=float) for k in ("X", "W_Q", "W_K", "W_V")}
    n, d = f["X"].shape
    out: dict[str, np.ndarray] = {}
    X = f["X"]
    if "positional_encoding" in section:
        out["P"] = _sinusoids(n, d, cause)
        X = out["X_plus_P"] = X + out["P"]
    Q, K, V = X @ f["W_Q"], X @ f["W_K"], X @ f["W_V"]
    out.update(Q=Q, K=K, V=V, scores=Q @ K.T)
    A = out["scores"] * np.sqrt(d) if cause == "times_sqrt_d_k" else out["scores"] / np.sqrt(d)
    out["scaled_scores"] = A
    E = np.exp(A)
    out["weights"] = W = E if cause == "unnormalised_softmax" else E / E.sum(axis=1, keepdims=True)
    out["output"] = W @ (K if cause == "keys_for_values" else V)
    return out


@pytest.mark.parametrize("cause", ["times_sqrt_d_k", "unnormalised_softmax", "keys_for_values",
                                   "pe_concatenated", "positions_from_1"])
def test_injected_attention_mistakes_are_diagnosed(cause):
    rng = random.Random(11)
    counts: Counter = Counter()
    while sum(counts.values()) < CASES:
        data = {"sections": [_section(rng, cause)]}
        claims = claims_of(claims_data(data["sections"][0], _answers(data["sections"][0], cause), {}))
        spec = parse_spec(read_spec_text(json.dumps(data), "json", "random"), "random")
        found = {f.cause for f in check(spec, claims).wrong}
        if found:
            counts[found.pop() if len(found) == 1 else "mixed"] += 1
    assert counts[cause] / CASES >= 0.95, counts


def test_float32_digits_are_float32_not_a_typo():
    # decoder's P[1][0] is sin 1 = 0.8414709848…; float32(sin 1) prints 0.84147096
    spec = load_example("decoder")
    [finding] = check(spec, claims_of({"sections[0].P[1][0]": "0.84147096"})).wrong
    assert (finding.cause, finding.correct) == ("float32", "0.84147098")
    assert "0.841470956802368" in finding.explanation and "0.84147098…" in finding.explanation
    assert float(np.float32(np.sin(1.0))) == pytest.approx(0.8414709568023682, abs=0)
    # a slip in the last digit of the same number is no float32
    [slip] = check(spec, claims_of({"sections[0].P[1][0]": "0.84147099"})).wrong
    assert slip.cause == "rounding"


TUTORIAL = """# Self-attention, step by step

The scores of love against each key, then scaled by √d_k (d_k = 2):

$$a = [{a}]$$

$$\\text{{weights}} = [{w}]$$
"""


def test_a_tutorial_that_multiplied_by_sqrt_d_k(tmp_path, capsys):
    assert main(["solve", "--example", "mt"]) == 0
    data = json.loads(capsys.readouterr().out)
    scores = np.array(data["sections"][0]["queries"]["love"]["scores"], dtype=float)
    a = scores * np.sqrt(2)  # multiplied by √d_k instead of divided
    w = np.exp(a) / np.exp(a).sum()
    doc = tmp_path / "tutorial.md"
    doc.write_text(TUTORIAL.format(a=", ".join(f"{v:.4f}" for v in half_up(a, 4)),
                                   w=", ".join(f"{v:.4f}" for v in half_up(w, 4))), encoding="utf-8")
    status = main(["check", "--example", "mt", "--from", str(doc), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert (status, report["claims"], report["coverage"]["unmatched"]) == (1, 8, [])
    assert [(w["at"], w["printed"], w["correct"], w["cause"]) for w in report["wrong"]][:2] == [
        ("sections[0].queries.love.scaled_scores[0]", "1.6377", "0.8188", "times_sqrt_d_k"),
        ("sections[0].queries.love.scaled_scores[1]", "2.4008", "1.2004", "times_sqrt_d_k")]
    assert {w["cause"] for w in report["wrong"]} == {"times_sqrt_d_k"} and len(report["wrong"]) == 8
