"""The KV cache on grouped-query attention against an independent float implementation (numpy): the whole
sequence (cached + new positions) with a causal mask, the K/V heads repeat_interleaved to the query heads, RoPE
(interleaved and half) at absolute positions; its last n rows must be the cached decoding step's outputs. The
cached keys are what a model stores: the whole sequence's keys (rotated, with RoPE) of the first p positions."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from symattn import answers, derive_spec, parse_spec, render_html, render_json, render_markdown
from symattn.cli import main


def random_matrix(rng: random.Random, rows: int, cols: int) -> list[list[str]]:
    return [[f"{rng.randint(-20, 20) / 10}" for _ in range(cols)] for _ in range(rows)]


def floats(m) -> np.ndarray:
    return np.array(m, dtype=float)


def rope_numpy(M: np.ndarray, positions: np.ndarray, pairing: str) -> np.ndarray:
    """RoPE with base 10000: interleaved pairs (2i, 2i + 1) (RoFormer) or half pairs (i, i + d/2) (rotate_half)."""
    d = M.shape[1]
    phi = positions[:, None] * (10000.0 ** (-2 * np.arange(d // 2) / d))[None, :]
    first, second = (np.arange(0, d, 2), np.arange(1, d, 2)) if pairing == "interleaved" else \
        (np.arange(d // 2), np.arange(d // 2, d))
    out = M.copy()
    a, b = M[:, first], M[:, second]
    out[:, first] = a * np.cos(phi) - b * np.sin(phi)
    out[:, second] = a * np.sin(phi) + b * np.cos(phi)
    return out


def whole_sequence(seed: int, p: int, n: int, heads: int, kv: int, pairing: str | None, d: int = 4, d_k: int = 2):
    """Random weights and X of p + n positions; the spec of the step (the first p positions' K and V as its
    cache, rounded to 12 digits as a model would store them) and the numpy reference of the whole sequence."""
    rng = random.Random(seed)
    X = random_matrix(rng, p + n, d)
    W_Q = [random_matrix(rng, d, d_k) for _ in range(heads)]
    W_K = [random_matrix(rng, d, d_k) for _ in range(kv)]
    W_V = [random_matrix(rng, d, d_k) for _ in range(kv)]
    W_O = random_matrix(rng, heads * d_k, d)
    at = np.arange(p + n, dtype=float)
    Xf = floats(X)
    K = np.stack([Xf @ floats(W) for W in W_K])
    V = np.stack([Xf @ floats(W) for W in W_V])
    Q = np.stack([Xf @ floats(W) for W in W_Q])
    if pairing:
        K = np.stack([rope_numpy(k, at, pairing) for k in K])
        Q = np.stack([rope_numpy(q, at, pairing) for q in Q])
    cached = {"K": [[f"{x:.12f}" for x in row] for row in K[:, :p].reshape(-1, d_k)],
              "V": [[f"{x:.12f}" for x in row] for row in V[:, :p].reshape(-1, d_k)]}
    K, V = floats(cached["K"]).reshape(kv, p, d_k), floats(cached["V"]).reshape(kv, p, d_k)
    # the reference uses the stored (rounded) cache too, then the new rows computed in floats
    Kn = np.stack([Xf[p:] @ floats(W) for W in W_K])
    Vn = np.stack([Xf[p:] @ floats(W) for W in W_V])
    if pairing:
        Kn = np.stack([rope_numpy(k, at[p:], pairing) for k in Kn])
    K, V = np.concatenate([K, Kn], axis=1), np.concatenate([V, Vn], axis=1)
    K, V = np.repeat(K, heads // kv, axis=0), np.repeat(V, heads // kv, axis=0)  # repeat_interleave
    mask = np.tril(np.ones((p + n, p + n)))
    S = Q @ K.transpose(0, 2, 1) / np.sqrt(d_k) + np.where(mask == 1, 0.0, -np.inf)
    A = np.exp(S - S.max(axis=2, keepdims=True))
    A /= A.sum(axis=2, keepdims=True)
    Z = A @ V
    concat = np.concatenate(list(Z), axis=1)
    tokens = [f"t{i}" for i in range(p + n)]
    data = {"kind": "grouped_query", "past_tokens": tokens[:p], "tokens": tokens[p:], "X": X[p:],
            "heads": [{"W_Q": W} for W in W_Q],
            "kv_heads": [{"W_K": W_K[g], "W_V": W_V[g], "past_K": cached["K"][g * p:(g + 1) * p],
                          "past_V": cached["V"][g * p:(g + 1) * p]} for g in range(kv)],
            "W_O": W_O}
    if pairing:
        data["rope"] = {"pairing": pairing}
    return data, {"weights": A[:, p:], "heads": Z[:, p:], "output": (concat @ floats(W_O))[p:]}


def solve(data: dict) -> dict:
    return answers(derive_spec(parse_spec({"sections": [data]}), steps=False))["sections"][0]


def close(texts, expected) -> bool:
    return np.allclose([float(t) for t in texts], expected, atol=1e-9, rtol=1e-9)


@pytest.mark.parametrize(("seed", "p", "n", "heads", "kv", "pairing"), [
    (1, 2, 2, 4, 2, None), (2, 3, 1, 4, 1, "interleaved"), (3, 2, 2, 4, 2, "half"), (4, 1, 3, 6, 3, "interleaved"),
    (5, 2, 2, 2, 2, None)])
def test_the_cached_step_is_the_whole_sequence_s_last_rows(seed, p, n, heads, kv, pairing):
    data, ref = whole_sequence(seed, p, n, heads, kv, pairing)
    got = solve(data)
    assert got["past_tokens"] == data["past_tokens"] and got["positions"] == list(range(p, p + n))
    assert got["key_tokens"] == data["past_tokens"] + data["tokens"]
    assert all(len(head["K"]) == p + n and len(head["V"]) == p + n for head in got["kv_heads"])
    for t, token in enumerate(data["tokens"]):
        assert close(got["queries"][token]["output"], ref["output"][t])
        for h in range(heads):
            assert close(got["heads"][h]["queries"][token]["weights"], ref["weights"][h][t])
            assert close(got["queries"][token]["heads"][h], ref["heads"][h][t])


def text(data: dict, lang: str = "en") -> str:
    return render_markdown(derive_spec(parse_spec({"sections": [data]}), lang=lang)).replace("\\+", "+")


def test_the_document_shows_each_kv_head_s_cache_and_the_check():
    data, _ = whole_sequence(6, 2, 2, 4, 2, "interleaved")
    md = text(data)
    assert md.count("KV cache: appending the new keys and values") == 1
    assert "K}^{[1]}_{\\text{cache}}" in md and "K}^{[2]}_{\\text{cache}}" in md
    assert "holds 4 positions × 2 K/V heads × (2 + 2) = 32 numbers" in md and "4 × 4 × (2 + 2) = 64" in md
    assert "t2`, at position 2, sees positions 0–2" in md
    assert md.count("in the whole sequence's attention") == 2
    assert "Check: the offset mask against the whole sequence's causal attention" in md
    assert "in a decoding step with a KV cache" in md and md.count(r"}}\text{, cached + new}}") == 2  # the figure


def test_every_format_renders():
    data, _ = whole_sequence(7, 2, 1, 4, 2, "half")
    derivation = derive_spec(parse_spec({"sections": [data]}), lang="ja")
    assert "キャッシュ" in render_markdown(derivation) and "<svg" in render_html(derivation)
    assert json.loads(render_json(derivation))["sections"][0]["positions"] == [2]


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_pdf_compiles(tmp_path, lang):
    data, _ = whole_sequence(8, 2, 2, 4, 2, "interleaved")
    path = tmp_path / "gqa.json"
    path.write_text(json.dumps({"sections": [data]}))
    assert main(["render", str(path), "--lang", lang, "--format", "pdf", "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "gqa.pdf").read_bytes().startswith(b"%PDF")


def _drop_past_V_of_head_1(data):
    del data["kv_heads"][1]["past_K"], data["kv_heads"][1]["past_V"]


def _drop_past_tokens(data):
    del data["past_tokens"]


def _short_rows(data):
    data["kv_heads"][0]["past_K"] = data["kv_heads"][0]["past_K"][:1]


def _wide_values(data):
    data["kv_heads"][1]["past_V"] = [[*row, "1"] for row in data["kv_heads"][1]["past_V"]]


def _repeated_name(data):
    data["past_tokens"] = ["t0", "t2"]


def _wrong_mask(data):
    data["mask"] = [[1, 1], [1, 1]]


@pytest.mark.parametrize(("change", "message"), [
    (_drop_past_V_of_head_1, "sections[0].kv_heads[1].past_K: missing: with past_tokens every K/V head gives"),
    (_drop_past_tokens, "sections[0].past_tokens: missing: kv_heads[0] gives a KV cache"),
    (_short_rows, "sections[0].kv_heads[0].past_K: 1 rows"),
    (_wide_values, "sections[0].kv_heads[1].past_V: 3 columns, but the section's values are 2 wide"),
    (_repeated_name, "sections[0].past_tokens[1]: token 't2' is also one of the new tokens"),
    (_wrong_mask, "sections[0].mask: 2 × 2, but with a KV cache there are 2 cached + 2 new = 4 positions"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, change, message):
    data, _ = whole_sequence(9, 2, 2, 4, 2, None)
    change(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"sections": [data]}))
    assert main(["solve", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err
