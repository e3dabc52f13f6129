"""Sliding-window attention (kinds/sliding_window/): query i sees the keys i − w < j ≤ i. Checked through the public
API against an independent float implementation, against self-attention's causal mask when the window covers the
sequence, with a KV cache that drops what the window no longer reaches, and on the page (every displayed line, every
format, the PDF)."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import symattn
from symattn import examples
from symattn.cli import main
from symattn.render.displayed import displayed_lines
from tests.render.test_displayed_lines import check

W_Q = [["1", "0.5"], ["0", "1"]]
W_K = [["0.5", "0"], ["1", "0.5"]]
W_V = [["1", "0", "0.5"], ["0", "1", "0.5"]]
BASE = {"kind": "sliding_window", "tokens": ["a", "b", "c", "d"],
        "X": [["1", "0"], ["0.5", "1"], ["0", "1.5"], ["1", "1"]], "W_Q": W_Q, "W_K": W_K, "W_V": W_V}
PAST = {"past_tokens": ["p0", "p1", "p2"], "past_X": [["1", "1"], ["0", "0.5"], ["1.5", "0"]]}


def derive(section: dict, lang: str = "en") -> symattn.Derivation:
    return symattn.derive_spec(symattn.parse_spec({"lang": lang, "sections": [section]}))


def answers(section: dict) -> dict:
    return symattn.answers(derive(section))["sections"][0]


def floats(rows) -> np.ndarray:
    return np.array([[float(x) for x in row] for row in rows], dtype=float)


def reference(X, W_Q, W_K, W_V, w, past_K=None, past_V=None):
    """Sliding-window attention in floats, written from the definition: the rows of the n tokens of X, which follow
    p cached positions (past_K, past_V: their keys and values) and see positions j with i − w < j ≤ i."""
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    p = 0 if past_K is None else len(past_K)
    if p:
        K, V = np.vstack([past_K, K]), np.vstack([past_V, V])
    weights, outputs = [], []
    for t, q in enumerate(Q):
        i = p + t
        scores = np.array([q @ k / np.sqrt(W_K.shape[1]) for k in K])
        inside = np.array([i - w < j <= i for j in range(len(K))])
        e = np.where(inside, np.exp(scores - scores[inside].max()), 0.0)
        weights.append(e / e.sum())
        outputs.append(weights[-1] @ V)
    return np.array(weights), np.array(outputs)


def random_matrix(rng: random.Random, rows: int, cols: int) -> list[list[str]]:
    return [[str(rng.randint(-20, 20) / 10) for _ in range(cols)] for _ in range(rows)]


def random_section(rng: random.Random, cached: bool) -> tuple[dict, dict]:
    n, d, d_k, d_v, w = rng.randint(1, 6), rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 7)
    section = {"kind": "sliding_window", "tokens": [f"t{i}" for i in range(n)], "X": random_matrix(rng, n, d),
               "W_Q": random_matrix(rng, d, d_k), "W_K": random_matrix(rng, d, d_k), "W_V": random_matrix(rng, d, d_v),
               "window": w, "focus": "all"}
    past = {}
    if cached:
        p = rng.randint(1, 5)
        past = {"past_tokens": [f"p{i}" for i in range(p)], "past_K": random_matrix(rng, p, d_k),
                "past_V": random_matrix(rng, p, d_v)}
    return {**section, **past}, past


# ------------------------------------------------------------ the numbers


@pytest.mark.parametrize("seed", range(20))
def test_exact_answers_agree_with_an_independent_float_implementation(seed):
    rng = random.Random(seed)
    section, past = random_section(rng, cached=seed % 3 == 2)  # every third with a KV cache
    got = answers(section)
    weights, outputs = reference(floats(section["X"]), floats(section["W_Q"]), floats(section["W_K"]),
                                 floats(section["W_V"]), section["window"],
                                 floats(past["past_K"]) if past else None, floats(past["past_V"]) if past else None)
    first = len(past.get("past_tokens", ())) + 1 - section["window"]
    kept = slice(max(0, first), None) if past else slice(None)  # the step's keys: the kept cached ones, the new
    for t, token in enumerate(section["tokens"]):
        query = got["queries"][token]
        assert np.allclose([float(x) for x in query["weights"]], weights[t][kept], rtol=0, atol=1e-9)
        assert np.allclose([float(x) for x in query["output"]], outputs[t], rtol=0, atol=1e-9)
        assert np.allclose(weights[t][:kept.start or 0], 0)  # the dropped positions: no weight at all
    assert got["window"] == section["window"]
    mask = np.array(got["mask"])
    assert (mask.sum(axis=1) == [min(section["window"], len(past.get("past_tokens", ())) + t + 1)
                                 for t in range(len(section["tokens"]))]).all()


@pytest.mark.parametrize("window", [4, 5, 100])
def test_a_window_as_long_as_the_sequence_is_causal_self_attention_exactly(window):
    sliding = answers({**BASE, "window": window, "focus": "all"})
    causal = answers({**{k: v for k, v in BASE.items() if k != "kind"}, "kind": "self_attention", "mask": "causal",
                      "focus": "all"})
    for key in ("Q", "K", "V", "queries", "exact", "d_k", "scale", "tokens"):
        assert sliding[key] == causal[key], key
    assert sliding["causal"] is True and sliding["mask"] == [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]


def test_a_window_of_one_gives_each_query_itself_with_weight_exactly_one():
    got = answers({**BASE, "window": 1, "focus": "all"})
    V = got["V"]
    for t, token in enumerate(BASE["tokens"]):
        weights = got["queries"][token]["weights"]
        assert [float(w) for w in weights] == [1.0 if j == t else 0.0 for j in range(4)]
        assert got["queries"][token]["exact"]["weights"][t] == "1"
        assert got["queries"][token]["output"] == V[t]
        assert got["visible"][token] == [token]
    text = symattn.render_markdown(derive({**BASE, "window": 1, "focus": ["c"]}))
    assert "each token sees only itself" in text and "its weight is exactly 1" in text


def test_the_answers_give_the_window_mask_and_visible_keys():
    got = answers({**BASE, "window": 2, "focus": ["d"]})
    assert got["window"] == 2 and got["causal"] is False
    assert got["mask"] == [[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]]
    assert got["visible"] == {"a": ["a"], "b": ["a", "b"], "c": ["b", "c"], "d": ["c", "d"]}
    assert got["positions"] == got["key_positions"] == [0, 1, 2, 3] and "cache" not in got
    assert got["queries"]["d"]["scaled_scores"][:2] == ["-inf", "-inf"]
    assert [float(w) for w in got["queries"]["d"]["weights"][:2]] == [0, 0]


# ------------------------------------------------------------ the KV cache


def test_a_cache_keeps_only_the_last_w_keys_and_gives_the_whole_sequences_rows():
    section = {**BASE, "tokens": ["d"], "X": [["1", "1"]], "window": 2, "focus": ["d"],
               "past_tokens": ["a", "b", "c"], "past_X": BASE["X"][:3]}
    got = answers(section)
    assert got["cache"] == {"past_tokens": ["a", "b", "c"], "kept_positions": [2], "kept_tokens": ["c"],
                            "dropped_positions": [0, 1], "dropped_tokens": ["a", "b"], "check": "embeddings"}
    assert got["key_tokens"] == ["c", "d"] and got["key_positions"] == [2, 3] and got["positions"] == [3]
    assert len(got["K"]) == len(got["V"]) == 2
    # the same token without a cache, in the whole sequence: its row is the cached step's, to 30 digits
    whole = answers({**BASE, "X": [*BASE["X"][:3], ["1", "1"]], "window": 2, "focus": ["d"]})
    assert got["queries"]["d"]["output"] == whole["queries"]["d"]["output"]
    assert got["queries"]["d"]["weights"] == whole["queries"]["d"]["weights"][2:]
    text = symattn.render_markdown(derive(section))
    assert "no query of this step or of a later one can see positions 0–1 again" in text
    assert "the cache drops the keys and values of `a` and `b` and keeps those of `c`" in text
    assert "recompute the whole sequence from the embeddings of all 4 tokens" in text


def test_a_cache_of_keys_and_values_alone_says_what_its_check_checks():
    past_K = [["0.5", "0"], ["1.5", "0.5"], ["1.5", "0.75"]]
    past_V = [["1", "0", "0.5"], ["0.5", "1", "0.75"], ["0", "1.5", "0.75"]]
    section = {**BASE, "tokens": ["d", "e"], "X": [["1", "1"], ["0.5", "0.5"]], "window": 3, "focus": "all",
               "past_tokens": ["a", "b", "c"], "past_K": past_K, "past_V": past_V}
    got = answers(section)
    assert got["cache"]["dropped_positions"] == [0] and got["cache"]["kept_tokens"] == ["b", "c"]
    assert got["cache"]["check"] == "cached_rows"
    weights, outputs = reference(floats(section["X"]), floats(W_Q), floats(W_K), floats(W_V), 3, floats(past_K),
                                 floats(past_V))
    for t, token in enumerate(("d", "e")):
        assert np.allclose([float(x) for x in got["queries"][token]["output"]], outputs[t], rtol=0, atol=1e-9)
    assert got["mask"] == [[1, 1, 1, 0], [0, 1, 1, 1]]
    text = symattn.render_markdown(derive(section))
    assert "Only the cached keys and values are given here, not the earlier tokens’ embeddings" in text
    assert "embeddings of all" not in text


def test_a_cache_the_window_reaches_entirely_drops_nothing():
    section = {**BASE, "tokens": ["d"], "X": [["1", "1"]], "window": 4, "focus": ["d"], **PAST}
    got = answers(section)
    assert got["cache"]["dropped_positions"] == [] and got["cache"]["kept_positions"] == [0, 1, 2]
    assert got["causal"] is True
    assert "the cache drops nothing" in symattn.render_markdown(derive(section))
    given = {**section, "past_K": [["1", "0"], ["0", "1"], ["1", "1"]], "past_V": [["1", "0", "0"]] * 3}
    del given["past_X"]
    assert answers(given)["cache"]["check"] == "none"
    text = symattn.render_markdown(derive(given))  # the same rows and nothing dropped: no check is claimed
    assert "would repeat the computation above step for step, so it would check nothing" in text
    assert "Check" not in text and "recomputing the whole sequence" in text and "dropped" not in text


def test_a_window_of_one_drops_the_whole_cache():
    section = {**BASE, "tokens": ["d"], "X": [["1", "1"]], "window": 1, "focus": ["d"], **PAST}
    got = answers(section)
    assert got["cache"]["dropped_tokens"] == ["p0", "p1", "p2"] and got["key_tokens"] == ["d"]
    assert got["queries"]["d"]["weights"] == ["1"] or float(got["queries"]["d"]["weights"][0]) == 1
    assert "the cache drops every cached key and value" in symattn.render_markdown(derive(section))


# ------------------------------------------------------------ bad input


@pytest.mark.parametrize(("extra", "message"), [
    ({"window": 0}, "sections[0].window: expected a whole number of keys from 1"),
    ({"window": -2}, "sections[0].window: expected a whole number of keys from 1"),
    ({"window": "3"}, "sections[0].window: expected a whole number of keys from 1"),
    ({"window": True}, "sections[0].window: expected a whole number of keys from 1"),
    ({"window": 2.5}, "sections[0].window: expected a whole number of keys from 1"),
    ({}, "sections[0].window: missing"),
    ({"window": 2, "mask": "causal"}, "sections[0].mask: applies to"),
    ({"window": 2, "past_tokens": ["p"], "past_X": [["1", "0"]], "past_K": [["1", "0"]]},
     "sections[0].past_K: give the cache as past_X"),
    ({"window": 2, "past_tokens": ["p", "q"], "past_X": [["1", "0"]]}, "sections[0].past_X"),
    ({"window": 2, "past_tokens": ["p"], "past_X": [["1", "0", "1"]]}, "sections[0].past_X: 3 columns, but X has 2"),
    ({"window": 2, "past_X": [["1", "0"]]}, "sections[0].past_tokens: missing"),
    ({"window": 2, "past_tokens": ["a"], "past_X": [["1", "0"]]}, "sections[0].past_tokens[0]: token 'a'"),
])
def test_bad_input_is_one_line_naming_the_field_exit_2_nothing_written(tmp_path, capsys, extra, message):
    section = {k: v for k, v in BASE.items()}
    lines = ["[[sections]]", *(f"{key} = {toml(value)}" for key, value in {**section, **extra}.items())]
    spec = tmp_path / "bad.toml"
    spec.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["render", str(spec), "--format", "tex,md,html,json", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"symattn: error: {message}"), err
    assert err.count("\n") == 1
    assert not out.exists() or list(out.iterdir()) == []


def toml(value, entry: bool = False) -> str:
    """A value as TOML; a matrix's entries (`entry`) as the numbers their strings write, so that they stay exact."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(toml(v, True) for v in value) + "]"
    if isinstance(value, str):
        return value if entry and _number(value) else json.dumps(value)
    return str(value)


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# ------------------------------------------------------------ the page

SPECS = {
    "example": None,
    "all": {**BASE, "window": 2, "focus": "all"},
    "one": {**BASE, "window": 1, "focus": ["b", "d"]},
    "cached": {**BASE, "tokens": ["d", "e"], "X": [["1", "1"], ["0.5", "-1"]], "window": 3, "focus": "all", **PAST},
    "unscaled": {**BASE, "window": 3, "focus": ["d"], "scale": False},
}


def derived(name: str, lang: str, digits: int | None = None) -> symattn.Derivation:
    if SPECS[name] is None:
        return symattn.derive("sliding_window", lang=lang, digits=digits)
    return symattn.derive_spec(symattn.parse_spec({"lang": lang, "digits": digits or 4, "sections": [SPECS[name]]}))


@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("digits", [None, 3])
@pytest.mark.parametrize("name", list(SPECS))
def test_every_displayed_line_checks(name, lang, digits):
    lines = displayed_lines(derived(name, lang, digits))
    assert len(lines) > 10
    for line in lines:
        check(line)


def test_the_page_says_which_keys_are_inside_and_outside_the_window():
    text = symattn.render_markdown(derived("example", "en"))
    assert "a window of the last $w$ positions of the sequence, ending at itself" in text
    assert "`on`, at position 3, sees positions 1–3: `cat`, `sat` and itself." in text
    assert ("Outside its window, with weight exactly 0: `the`, too far back (before position 1), and `mats`, after "
            "it.") in text
    assert "ordinary causal attention" not in text
    causal = symattn.render_markdown(derive({**BASE, "window": 9, "focus": ["c"]}))
    assert "sliding-window attention is ordinary causal attention" in causal
    assert "Outside its window, with weight exactly 0: `d`, after it." in causal
    ja = symattn.render_markdown(derived("example", "ja"))
    assert "位置 3 の「`on`」は位置 1〜3、つまり「`cat`」、「`sat`」と自分自身を参照する。" in ja
    assert ("窓の外にあり、重みがちょうど 0 になるもの：「`the`」（遠すぎる：位置 1 より前）、"
            "「`mats`」（自分より後）。") in ja


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_example_renders_to_every_text_format(tmp_path, lang):
    assert main(["render", "--example", "sliding_window", "--lang", lang, "--format", "tex,md,html,json",
                 "--out", str(tmp_path)]) == 0
    for suffix in ("tex", "md", "html"):
        text = (tmp_path / f"sliding_window.{suffix}").read_text(encoding="utf-8")
        assert "Window Attention" in text and "0.4150" in text  # TeX writes Sliding{-}Window
    data = json.loads((tmp_path / "sliding_window.json").read_text(encoding="utf-8"))
    assert data["sections"][0]["kind"] == "sliding_window" and data["sections"][0]["window"] == 3


@pytest.mark.pdf
@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_example_and_a_cached_step_compile_to_pdf(tmp_path, lang):
    assert main(["render", "--example", "sliding_window", "--lang", lang, "--format", "pdf",
                 "--out", str(tmp_path)]) == 0
    assert (tmp_path / "sliding_window.pdf").read_bytes().startswith(b"%PDF")
    spec = tmp_path / "cached.toml"
    spec.write_text("\n".join(["[[sections]]", *(f"{key} = {toml(value)}" for key, value in SPECS["cached"].items())])
                    + "\n", encoding="utf-8")
    assert main(["render", str(spec), "--lang", lang, "--format", "pdf", "--out", str(tmp_path / "cached")]) == 0
    assert (tmp_path / "cached" / "cached.pdf").read_bytes().startswith(b"%PDF")


def test_a_query_that_sees_every_kept_key_is_not_said_to_see_the_whole_sentence():
    section = {**BASE, "tokens": ["d"], "X": [["1", "1"]], "window": 2, "focus": ["d"], **PAST}
    text = symattn.render_markdown(derive(section))
    assert "Outside its window, with weight exactly 0: positions 0–1, dropped from the cache." in text
    assert "the cache no longer holds them, so they have no column here" in text
    assert "whole sentence" not in text and "for all tokens" not in text
    assert "it does not attend to `p0` and `p1` at all (masked)" in text


def test_several_tokens_derived_are_introduced_as_several():
    section = {**BASE, "window": 2, "focus": "all"}
    text = symattn.render_markdown(derive(section))
    assert "goes through the tokens" in text and "shows how the token" not in text
    one = symattn.render_markdown(derive({**section, "focus": ["c"]}))
    assert "shows how the token" in one and "goes through the tokens" not in one


def test_dropped_positions_are_said_to_lie_outside_every_window():
    section = {**BASE, "tokens": ["d"], "X": [["1", "1"]], "window": 2, "focus": "all", **PAST}
    assert answers(section)["cache"]["dropped_positions"] == [0, 1]
    text = symattn.render_markdown(derive(section))
    assert "The dropped positions lie outside every new token’s window, as if masked for good" in text


@pytest.mark.parametrize("value, shown", [("2.5", "2.5"), ("true", "true"), ("3.0", "3.0")])
def test_a_bad_window_is_shown_as_written(tmp_path, capsys, value, shown):
    spec = tmp_path / "w.toml"
    spec.write_text(examples.source("sliding_window").replace("window = 3", f"window = {value}"),
                    encoding="utf-8")
    assert main(["render", str(spec), "--format", "md", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(f"got {shown}") and "Decimal" not in err and not (tmp_path / "out").exists()
