"""Grouped-query and multi-query attention against an independent float implementation (numpy): the K/V heads
repeat_interleaved to the query heads, as PyTorch's scaled_dot_product_attention(..., enable_gqa=True) does, then
scaled dot-product attention per head, the concatenation and W_O; with a causal mask and with RoPE (interleaved
pairs); kv_heads = heads equals the multi_head kind; bad input is one line; every format renders."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from symattn import answers, derive_spec, parse_spec, render_html, render_json, render_latex, render_markdown
from symattn.cli import main


def random_matrix(rng: random.Random, rows: int, cols: int) -> list[list[str]]:
    return [[f"{rng.randint(-20, 20) / 10}" for _ in range(cols)] for _ in range(rows)]


def gqa_data(seed: int, n: int = 3, d: int = 4, heads: int = 4, kv: int = 2, d_k: int = 2, **extra) -> dict:
    rng = random.Random(seed)
    return {"kind": "grouped_query", "tokens": [f"t{i}" for i in range(n)], "X": random_matrix(rng, n, d),
            "heads": [{"W_Q": random_matrix(rng, d, d_k)} for _ in range(heads)],
            "kv_heads": [{"W_K": random_matrix(rng, d, d_k), "W_V": random_matrix(rng, d, d_k)} for _ in range(kv)],
            "W_O": random_matrix(rng, heads * d_k, d), **extra}


def floats(m) -> np.ndarray:
    return np.array(m, dtype=float)


def rope_numpy(M: np.ndarray, positions: np.ndarray, base: float = 10000.0) -> np.ndarray:
    """Interleaved RoPE (RoFormer): pair (2i, 2i + 1) of row t turned by positions[t] · base^(−2i/d)."""
    d = M.shape[1]
    theta = base ** (-2 * np.arange(d // 2) / d)
    phi = positions[:, None] * theta[None, :]
    out = M.copy()
    a, b = M[:, 0::2], M[:, 1::2]
    out[:, 0::2] = a * np.cos(phi) - b * np.sin(phi)
    out[:, 1::2] = a * np.sin(phi) + b * np.cos(phi)
    return out


def numpy_gqa(data: dict) -> dict:
    """The reference: per query head h, K/V head h // (H / G) (np.repeat of the K/V heads along the head axis, as
    torch's repeat_interleave), softmax(QKᵀ/√d_k + M)V, the heads side by side, times W_O."""
    X = floats(data["X"])
    n = X.shape[0]
    H, G = len(data["heads"]), len(data["kv_heads"])
    K = np.stack([X @ floats(h["W_K"]) for h in data["kv_heads"]])
    V = np.stack([X @ floats(h["W_V"]) for h in data["kv_heads"]])
    K, V = np.repeat(K, H // G, axis=0), np.repeat(V, H // G, axis=0)  # repeat_interleave: [k0, k0, k1, k1]
    Q = np.stack([X @ floats(h["W_Q"]) for h in data["heads"]])
    if data.get("rope"):
        positions = np.arange(n, dtype=float)
        Q = np.stack([rope_numpy(q, positions) for q in Q])
        K = np.stack([rope_numpy(k, positions) for k in K])
    mask = np.tril(np.ones((n, n))) if data.get("mask") == "causal" else np.ones((n, n))
    S = Q @ K.transpose(0, 2, 1) / np.sqrt(Q.shape[2]) + np.where(mask == 1, 0.0, -np.inf)
    A = np.exp(S - S.max(axis=2, keepdims=True))
    A /= A.sum(axis=2, keepdims=True)
    Z = A @ V  # heads × n × d_v
    concat = np.concatenate(list(Z), axis=1)
    return {"weights": A, "heads": Z, "concat": concat, "output": concat @ floats(data["W_O"])}


def solve(data: dict) -> dict:
    return answers(derive_spec(parse_spec({"sections": [data]}), steps=False))["sections"][0]


def close(texts, expected) -> bool:
    return np.allclose([float(t) for t in texts], expected, atol=1e-12, rtol=1e-12)


@pytest.mark.parametrize(("seed", "heads", "kv", "extra"), [
    (1, 4, 2, {}), (2, 4, 1, {}), (3, 3, 3, {}), (4, 6, 2, {"mask": "causal"}), (5, 4, 2, {"rope": True}),
    (6, 4, 1, {"rope": True, "mask": "causal"}), (7, 8, 4, {"focus": "matrix"})])
def test_answers_match_numpy(seed, heads, kv, extra):
    data = gqa_data(seed, heads=heads, kv=kv, **extra)
    ref = numpy_gqa(data)
    got = solve(data)
    assert got["mapping"] == [h // (heads // kv) for h in range(heads)]
    for i, token in enumerate(data["tokens"]):
        query = got["queries"][token]
        assert close(query["concat"], ref["concat"][i]) and close(query["output"], ref["output"][i])
        for h in range(heads):
            assert close(query["heads"][h], ref["heads"][h][i])
            weights = got["heads"][h]["queries"][token]["weights"]
            assert close(weights, ref["weights"][h][i])
            assert close(got["heads"][h]["queries"][token]["output"], ref["heads"][h][i])


def test_the_keys_and_values_are_computed_once_per_kv_head():
    data = gqa_data(8, heads=4, kv=2)
    got = solve(data)
    X = floats(data["X"])
    assert len(got["kv_heads"]) == 2
    for g, head in enumerate(data["kv_heads"]):
        assert close(np.ravel([[float(v) for v in row] for row in got["kv_heads"][g]["K"]]),
                     np.ravel(X @ floats(head["W_K"])))
    assert [h["kv_head"] for h in got["heads"]] == [0, 0, 1, 1]


def test_as_many_kv_heads_as_query_heads_is_the_multi_head_kind():
    data = gqa_data(9, heads=3, kv=3, focus="t1")
    multi = {"kind": "multi_head", "tokens": data["tokens"], "X": data["X"], "focus": "t1", "W_O": data["W_O"],
             "heads": [{"W_Q": q["W_Q"], **kv} for q, kv in zip(data["heads"], data["kv_heads"], strict=True)]}
    ours, theirs = solve(data), solve(multi)
    assert ours["queries"]["t1"]["output"] == theirs["output"]
    assert ours["queries"]["t1"]["concat"] == theirs["concat"]
    assert ours["queries"]["t1"]["exact"]["output"] == theirs["exact"]["output"]


def test_sentences_say_mqa_gqa_or_multi_head_and_the_cache_it_saves():
    def text(data):
        return render_markdown(derive_spec(parse_spec({"sections": [data]}), lang="en")).replace("\\+", "+")

    mqa = text(gqa_data(10, heads=4, kv=1, focus="t0"))
    assert "Multi-query attention (MQA)" in mqa and "1 × (2 + 2) = 4 numbers" in mqa
    assert "4 × (2 + 2) = 16, 4 times as many" in mqa
    gqa = text(gqa_data(10, heads=8, kv=2, focus="t0"))
    assert "Grouped-query attention (GQA) has 8 query heads but only 2" in gqa
    assert "2 × (2 + 2) = 8 numbers" in gqa and "8 × (2 + 2) = 32, 4 times as many" in gqa
    mha = text(gqa_data(10, heads=2, kv=2, focus="t0"))
    assert "plain multi-head attention" in mha and "nothing is saved" in mha
    single = text(gqa_data(10, heads=1, kv=1, focus="t0"))
    assert "single-head attention" in single and "nothing to concatenate" in single
    masked = text(gqa_data(10, heads=2, kv=1, focus="t0", mask="causal"))
    assert "causal mask" in masked and r"-\infty" in masked


def test_every_format_renders():
    derivation = derive_spec(parse_spec({"sections": [gqa_data(11, heads=4, kv=2, focus=["t0", "t2"])]}), lang="ja")
    assert r"{1}{Grouped{-}query attention" in render_latex(derivation)
    assert "<svg" in render_html(derivation) and "K/V ヘッド" in render_markdown(derivation)
    assert json.loads(render_json(derivation))["sections"][0]["kind"] == "grouped_query"


@pytest.mark.parametrize(("lang", "heads", "kv"), [("ja", 12, 3), ("en", 4, 2)])
def test_the_pdf_compiles(tmp_path, capsys, lang, heads, kv):
    """In ja with twelve heads: the figure's columns hold boxes of unequal widths ((1) and (12), and ⋮)."""
    path = tmp_path / "gqa.json"
    path.write_text(json.dumps({"sections": [gqa_data(12, heads=heads, kv=kv, focus="t1", rope=True)]}))
    assert main(["render", str(path), "--lang", lang, "--format", "pdf", "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "gqa.pdf").read_bytes().startswith(b"%PDF")


@pytest.mark.parametrize(("change", "message"), [
    ({"kv": 3, "heads": 8}, "sections[0].kv_heads: 3 K/V heads do not divide 8 query heads"),
    ({"W_O_rows": 3}, "sections[0].W_O: 3 rows, but the concatenated heads have 8 entries (4 heads × d_v = 2)"),
    ({"W_K_width": 3}, "sections[0].kv_heads[0].W_K: 3 columns, but the query heads' W_Q have 2"),
    ({"d_k": 3, "rope": True}, "sections[0].rope: RoPE rotates pairs of dimensions, but q and k have 3"),
    ({"W_Q_rows": 3}, "sections[0].heads[0].W_Q: 3 rows, but there are 4 X columns"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, change, message):
    data = gqa_data(13, heads=change.get("heads", 4), kv=change.get("kv", 2), d_k=change.get("d_k", 2))
    rng = random.Random(0)
    if "W_O_rows" in change:
        data["W_O"] = random_matrix(rng, change["W_O_rows"], 4)
    if "W_K_width" in change:
        for head in data["kv_heads"]:
            head["W_K"] = random_matrix(rng, 4, change["W_K_width"])
    if "W_Q_rows" in change:
        data["heads"][0]["W_Q"] = random_matrix(rng, change["W_Q_rows"], 2)
    if change.get("rope"):
        data["rope"] = True
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"sections": [data]}))
    assert main(["solve", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err


def test_a_head_with_an_unknown_key_names_it(tmp_path, capsys):
    data = gqa_data(14)
    data["kv_heads"][1]["W_Q"] = data["kv_heads"][1]["W_K"]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"sections": [data]}))
    assert main(["solve", str(path)]) == 2
    assert "sections[0].kv_heads[1].W_Q: unknown key" in capsys.readouterr().err
