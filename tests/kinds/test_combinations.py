"""Issue 17's options together (given forms, RoPE, the KV cache, the online softmax, multi-head and grouped-query
attention): each combination either gives the numbers of an independent float implementation (numpy) or is refused
with one line naming the field, never ignored silently.

Conventions of the float implementation: RoPE pairs (2i, 2i + 1) ("interleaved") or (i, i + d/2) ("half") with
θ_i = base^(−2i/d); a cache's p tokens are at positions 0 … p − 1, the new token t at p + t, the causal mask is
np.tril(ones((n, p + n)), k=p); grouped-query head h uses K/V head ⌊h / (heads / kv_heads)⌋."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest

from symattn import SpecError, answers, derive_spec, parse_spec

# ------------------------------------------------------------ an independent float implementation


def array(M) -> np.ndarray:
    return np.array([[float(Fraction(str(v))) for v in row] for row in M])


def rotate(A: np.ndarray, positions, base=10000.0, pairing="interleaved") -> np.ndarray:
    d, B = A.shape[1], A.copy()
    for t, m in enumerate(positions):
        for i in range(d // 2):
            a, b = (i, i + d // 2) if pairing == "half" else (2 * i, 2 * i + 1)
            c, s = np.cos(m * base ** (-2 * i / d)), np.sin(m * base ** (-2 * i / d))
            B[t, a], B[t, b] = A[t, a] * c - A[t, b] * s, A[t, a] * s + A[t, b] * c
    return B


def sinusoidal(n: int, d: int, offset: int) -> np.ndarray:
    return np.array([[np.sin((p + offset) / 10000 ** (2 * (j // 2) / d)) if j % 2 == 0
                      else np.cos((p + offset) / 10000 ** (2 * (j // 2) / d)) for j in range(d)] for p in range(n)])


def attention(Q, K, V, divisor, mask=None) -> np.ndarray:
    S = Q @ K.T / divisor
    if mask is not None:
        S = np.where(np.array(mask) == 0, -np.inf, S)
    A = np.exp(S - S.max(axis=1, keepdims=True))
    return (A / A.sum(axis=1, keepdims=True)) @ V


def causal(n: int, past: int = 0) -> np.ndarray:
    return np.tril(np.ones((n, past + n)), k=past)


# ------------------------------------------------------------ helpers


def solve(section: dict) -> dict:
    return answers(derive_spec(parse_spec({"sections": [section]}), steps=False))["sections"][0]


def outputs(data: dict, tokens) -> np.ndarray:
    return np.array([[float(v) for v in data["queries"][t]["output"]] for t in tokens])


def refused(section: dict) -> str:
    with pytest.raises(SpecError) as error:
        parse_spec({"sections": [section]})
    message = str(error.value)
    assert "\n" not in message
    return message


def numbers(rng: random.Random, rows: int, cols: int) -> list[list[str]]:
    return [[f"{rng.randint(-100, 100) / 50:.2f}" for _ in range(cols)] for _ in range(rows)]


def decoding(rng: random.Random, p: int, n: int, d: int) -> dict:
    """A self-attention decoding step: p cached tokens, n new ones, d = d_model = d_k = d_v."""
    return {"kind": "self_attention", "tokens": [f"n{i}" for i in range(n)], "X": numbers(rng, n, d),
            **{w: numbers(rng, d, d) for w in ("W_Q", "W_K", "W_V")},
            "past_tokens": [f"p{i}" for i in range(p)], "past_K": numbers(rng, p, d), "past_V": numbers(rng, p, d)}


def decoded(section: dict, X: np.ndarray, rope: dict | None, mask) -> np.ndarray:
    p, n = len(section["past_tokens"]), len(section["tokens"])
    Q, K, V = (X @ array(section[w]) for w in ("W_Q", "W_K", "W_V"))
    if rope is not None:
        Q, K = (rotate(M, range(p, p + n), float(rope.get("base", 10000)), rope.get("pairing", "interleaved"))
                for M in (Q, K))
    K, V = np.vstack([array(section["past_K"]), K]), np.vstack([array(section["past_V"]), V])
    return attention(Q, K, V, np.sqrt(K.shape[1]), mask)


# ------------------------------------------------------------ combinations that work


@pytest.mark.parametrize("seed", range(3))
def test_cache_rope_online_and_a_given_mask_match_numpy(seed):
    rng = random.Random(seed)
    p, n = rng.randint(1, 3), rng.randint(1, 2)
    section = decoding(rng, p, n, 4)
    mask = [[1 if j <= p + t or rng.random() < 0.5 else 0 for j in range(p + n)] for t in range(n)]
    rope = {"base": 100, "pairing": "half"} if seed % 2 else {}
    section |= {"rope": rope or True, "softmax": "online", "block": rng.randint(1, 9), "mask": mask}
    expected = decoded(section, array(section["X"]), rope, mask)
    assert np.allclose(outputs(solve(section), section["tokens"]), expected, atol=1e-12, rtol=0)


def test_cache_with_sinusoidal_positions_uses_the_absolute_positions():
    section = decoding(random.Random(7), 2, 2, 4) | {"positional_encoding": "sinusoidal"}
    X = array(section["X"]) + sinusoidal(2, 4, offset=2)
    expected = decoded(section, X, None, causal(2, 2))
    assert np.allclose(outputs(solve(section), section["tokens"]), expected, atol=1e-12, rtol=0)


def test_given_scores_with_a_mask_and_the_online_softmax_match_numpy():
    scores, V = [[2, 1, 0], [1, 3, 1], [0, 1, 2]], [[1, 0], [0, 1], ["1/2", 1]]
    data = solve({"kind": "self_attention", "tokens": ["A", "B", "C"], "scores": scores, "V": V, "d_k": 4,
                  "mask": "causal", "softmax": "online", "block": 1000})
    expected = attention(array(scores), np.eye(3), array(V), 2.0, causal(3))
    assert np.allclose(outputs(data, "ABC"), expected, atol=1e-12, rtol=0)


def test_multi_head_heads_with_their_own_rope_mask_and_scale_for_a_list_of_tokens():
    X = [[1, "0.5", 0, 1], ["0.2", "1.5", 1, 0], [0, 1, "0.5", "0.5"]]
    rng = random.Random(3)
    heads = [{w: numbers(rng, 4, 2) for w in ("W_Q", "W_K", "W_V")} for _ in range(2)]
    heads[0] |= {"rope": {"pairing": "half"}, "mask": [[1, 0, 1], [1, 1, 0], [0, 1, 1]], "scale": False}
    W_O = numbers(rng, 4, 3)
    data = solve({"kind": "multi_head", "tokens": ["A", "B", "C"], "X": X, "heads": heads, "W_O": W_O,
                  "focus": ["C", "A"], "rope": True, "mask": "causal"})
    Xa = array(X)
    Z = []
    for h, (divisor, mask, pairing) in enumerate([(1.0, heads[0]["mask"], "half"),
                                                   (np.sqrt(2), causal(3), "interleaved")]):
        Q, K = (rotate(Xa @ array(heads[h][w]), range(3), pairing=pairing) for w in ("W_Q", "W_K"))
        Z.append(attention(Q, K, Xa @ array(heads[h]["W_V"]), divisor, mask))
    expected = np.hstack(Z) @ array(W_O)
    assert np.allclose(outputs(data, "CA"), expected[[2, 0]], atol=1e-12, rtol=0)


def test_grouped_query_with_rope_and_a_mask_matches_numpy():
    rng = random.Random(5)
    X, W_O = numbers(rng, 3, 2), numbers(rng, 8, 2)
    W_Q = [numbers(rng, 2, 2) for _ in range(4)]
    kv = [{"W_K": numbers(rng, 2, 2), "W_V": numbers(rng, 2, 2)} for _ in range(2)]
    data = solve({"kind": "grouped_query", "tokens": ["A", "B", "C"], "X": X, "heads": [{"W_Q": w} for w in W_Q],
                  "kv_heads": kv, "W_O": W_O, "focus": "all", "rope": True, "mask": "causal"})
    Xa = array(X)
    Z = [attention(rotate(Xa @ array(W_Q[h]), range(3)), rotate(Xa @ array(kv[h // 2]["W_K"]), range(3)),
                   Xa @ array(kv[h // 2]["W_V"]), np.sqrt(2), causal(3)) for h in range(4)]
    assert np.allclose(outputs(data, "ABC"), np.hstack(Z) @ array(W_O), atol=1e-12, rtol=0)


# ------------------------------------------------------------ combinations refused with one line

GIVEN = {"kind": "self_attention", "tokens": ["A", "B"], "Q": [[1, 0], [0, 1]], "K": [[1, 0], [0, 1]],
         "V": [[1, 0], [0, 1]]}
SCORES = {"kind": "self_attention", "tokens": ["A", "B"], "scores": [[1, 0], [0, 1]], "d_k": 2}
CACHE = {"past_tokens": ["I"], "past_K": [[1, 0]], "past_V": [[1, 0]]}


def test_a_cache_on_the_given_forms_is_refused():
    assert refused(GIVEN | CACHE) == ("sections[0].past_tokens: a KV cache applies to keys and values projected "
                                      "from X; a section that gives Q, K and V gives every key: put the cached "
                                      "rows in K and V")
    assert refused(SCORES | {"past_V": [[1, 0]]}) == (
        "sections[0].past_V: a KV cache applies to keys and values projected from X; a section that gives scores "
        "gives every key: put the cached keys' columns in scores (and their rows in V)")


def test_rope_positions_other_than_the_absolute_ones_after_a_cache_are_refused():
    section = decoding(random.Random(1), 2, 2, 4)
    assert refused(section | {"rope": {"positions": [5, 6]}}) == (
        "sections[0].rope.positions: with a KV cache of 2 tokens the new tokens are at the positions 2 … 3, after "
        "the cached ones (give no positions)")
    assert solve(section | {"rope": {"positions": [2, 3]}})["rope"]["positions"] == [2, 3]


def test_online_with_symbolic_values_names_the_values_not_the_scores():
    assert refused(GIVEN | {"V": "symbolic", "d_v": 2, "softmax": "online"}) == (
        "sections[0].softmax: \"online\" rescales a numeric running output block by block, so it needs numeric "
        "values (V holds symbols)")


@pytest.mark.parametrize("extra, message", [
    ({"past_tokens": ["z"]},
     "sections[0].past_tokens: applies to self_attention, grouped_query and sliding_window sections only"),
    ({"rope": True}, "sections[0].rope: applies to self_attention, multi_head and grouped_query sections only"),
    ({"mask": [[1, 0]]}, "sections[0].mask: applies to self_attention, multi_head and grouped_query sections only"),
])
def test_cross_attention_names_the_kinds_that_take_a_key(extra, message):
    section = {"kind": "cross_attention", "tokens": ["x"], "memory_tokens": ["a", "b"], "Q": [[1, 0]],
               "K": [[1, 0], [0, 1]], "V": [[1, 0], [0, 1]]}
    assert refused(section | extra) == f"{message} (this section is cross_attention)"


MULTI = {"kind": "multi_head", "tokens": ["A", "B"], "X": [[1, 0], [0, 1]], "focus": "all", "W_O": [[1, 0], [0, 1]],
         "heads": [{"W_Q": [[1, 0], [0, 1]], "W_K": [[1, 0], [0, 1]], "W_V": [[1], [0]]}] * 2}


def test_multi_head_and_grouped_query_refuse_the_online_softmax_and_a_section_cache():
    assert refused(MULTI | {"softmax": "online"}) == ("sections[0].softmax: applies to self_attention and "
                                                      "cross_attention sections only (this section is multi_head)")
    assert refused(MULTI | CACHE).startswith("sections[0].past_tokens: applies to self_attention")
    gqa = {"kind": "grouped_query", "tokens": ["A"], "X": [[1, 0]], "heads": [{"W_Q": [[1, 0], [0, 1]]}],
           "kv_heads": [{"W_K": [[1, 0], [0, 1]], "W_V": [[1, 0], [0, 1]]}], "W_O": [[1, 0], [0, 1]]}
    assert refused(gqa | {"softmax": "online"}) == ("sections[0].softmax: applies to self_attention and "
                                                    "cross_attention sections only (this section is grouped_query)")


def test_multi_head_head_keys_that_do_not_apply_are_named():
    head = {**MULTI["heads"][0], "positional_encoding": "sinusoidal"}
    assert refused(MULTI | {"heads": [head, head]}) == (
        "sections[0].heads[0].positional_encoding: applies to the whole section (every head projects the same X), "
        "not to one head")
    given = {"kind": "multi_head", "focus": "A", "W_O": [[1], [1]], "heads": [{"output": [1], "d_k": 3},
                                                                            {"output": [2]}]}
    assert refused(given) == ("sections[0].heads[0].d_k: applies to a head computed from W_Q, W_K, W_V, not to one "
                              "with a given output")


def test_rope_on_given_scores_says_where_they_come_from():
    assert refused(SCORES | {"rope": True}) == ("sections[0].rope: applies to the queries and keys projected from X; "
                                                "given scores come from q and k rotated already (for RoPE)")


@pytest.mark.parametrize("section", [GIVEN, SCORES, {"kind": "cross_attention", "tokens": ["x"], "X": [[1, 0]],
                                                     "memory_tokens": ["a"], "memory": [[0, 1]],
                                                     **{w: [[1, 0], [0, 1]] for w in ("W_Q", "W_K", "W_V")}}])
def test_d_k_without_the_square_root_scaling_is_refused(section):
    assert refused(section | {"scale": False, "d_k": 3}) == (
        "sections[0].d_k: applies to scale = true (the scores ÷ √d_k); with scale = false it has no effect (leave it "
        "out)")
    assert refused(section | {"scale": "1/3", "d_k": 3}).endswith("with scale = 1/3 it has no effect (leave it out)")


def test_d_k_that_sizes_symbolic_projections_stays_allowed():
    data = solve({"kind": "self_attention", "tokens": ["A"], "X": [[1, 2]], "W_Q": "symbolic", "W_K": "symbolic",
                  "W_V": [[1, 0], [0, 1]], "d_k": 3, "scale": False})
    assert data["d_k"] == 3 and len(data["exact"]["Q"][0]) == 3
