"""FlashAttention's online softmax (softmax = "online", block = b) on self- and cross-attention: every block's m, ℓ
and o against an independent numpy implementation of the algorithm, the exact equality with the direct softmax,
the sentences, the errors and every format."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from sympy import Add, S, exp
from sympy import expand_mul as expand

from symattn import answers, derive_spec, parse_spec, render_html, render_json, render_markdown
from symattn.cli import main
from symattn.document.steps import Paragraph
from symattn.features.online_softmax import engine as online_engine
from symattn.features.online_softmax.steps import OnlineBlock, OnlineResult
from symattn.render.displayed import displayed_lines


def flash_numpy(q, K, V, block, visible):
    """FlashAttention-2's algorithm 1 for one query in float64: per block the running maximum m, the rescaled sum ℓ
    and the unnormalised output o, then o/ℓ. `visible`: the mask row (False: the key is skipped)."""
    m, ell, o, out = -np.inf, 0.0, np.zeros(V.shape[1]), []
    a = K @ q / np.sqrt(K.shape[1])
    for start in range(0, len(a), block):
        keys = [j for j in range(start, min(start + block, len(a))) if visible[j]]
        new = max([m, *(a[j] for j in keys)])
        if new > -np.inf:
            factor = np.exp(m - new) if m > -np.inf else 0.0
            p = np.array([np.exp(a[j] - new) for j in keys])
            ell = factor * ell + p.sum()
            o = factor * o + (p @ V[keys] if keys else 0.0)
        m = new
        out.append((m, ell, o.copy()))
    return out, o / ell


def numbers(rng, rows, cols):
    return [[str(rng.randint(-20, 20) / 10) for _ in range(cols)] for _ in range(rows)]


def self_spec(rng, n, block, mask=None, **extra):
    d = 2
    section = {"kind": "self_attention", "tokens": [f"t{i}" for i in range(n)], "X": numbers(rng, n, d),
               "W_Q": numbers(rng, d, d), "W_K": numbers(rng, d, d), "W_V": numbers(rng, d, 3),
               "softmax": "online", "block": block, **extra}
    if mask is not None:
        section["mask"] = mask
    return section


def floats(matrix):
    return np.array([[float(x) for x in row] for row in matrix])


def check_against_numpy(section, data, queries, keys_source, mask):
    X, source = floats(section["X"]), floats(section[keys_source])
    Q, K, V = X @ floats(section["W_Q"]), source @ floats(section["W_K"]), source @ floats(section["W_V"])
    for i, token in enumerate(queries):
        answer = data["queries"][token]
        blocks, z = flash_numpy(Q[i], K, V, section["block"], mask[i])
        assert len(answer["online"]) == len(blocks)
        for got, (m, ell, o) in zip(answer["online"], blocks, strict=True):
            if m == -np.inf:
                assert got["m"] == "-inf"
                continue
            assert np.isclose(float(got["m"]), m, rtol=1e-12) and np.isclose(float(got["l"]), ell, rtol=1e-12)
            assert np.allclose([float(x) for x in got["o"]], o, rtol=1e-12, atol=1e-12)
        assert np.allclose([float(x) for x in answer["output"]], z, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("n", "block"), [(4, 1), (5, 2), (5, 3), (4, 2), (3, 5)])
def test_self_attention_matches_numpy_flash_attention(n, block):
    rng = random.Random(n * 10 + block)
    for masked in (None, "causal", "random"):
        mask = None if masked is None else masked
        if masked == "random":
            mask = [[1 if j == i or rng.random() < 0.5 else 0 for j in range(n)] for i in range(n)]
        section = self_spec(rng, n, block, mask)
        data = answers(derive_spec(parse_spec({"sections": [section]})))["sections"][0]
        rows = (np.ones((n, n), bool) if mask is None else np.tril(np.ones((n, n), bool)) if mask == "causal"
                else np.array(mask, bool))
        check_against_numpy(section, data, section["tokens"], "X", rows)


def test_cross_attention_matches_numpy_flash_attention():
    rng = random.Random(7)
    section = {"kind": "cross_attention", "tokens": ["y1", "y2"], "X": numbers(rng, 2, 2),
               "memory_tokens": ["h1", "h2", "h3", "h4", "h5"], "memory": numbers(rng, 5, 2),
               "W_Q": numbers(rng, 2, 2), "W_K": numbers(rng, 2, 2), "W_V": numbers(rng, 2, 3),
               "softmax": "online", "block": 2}
    data = answers(derive_spec(parse_spec({"sections": [section]})))["sections"][0]
    check_against_numpy(section, data, section["tokens"], "memory", np.ones((2, 5), bool))


def derivation_of(**overrides):
    rng = random.Random(3)
    section = self_spec(rng, 5, 2, "causal", **overrides)
    return derive_spec(parse_spec({"sections": [section]}))


def test_every_step_is_exact_and_the_result_is_the_direct_softmax_exactly():
    derivation = derivation_of()
    section = derivation.sections[0]
    V = section.result.V
    assert len({len(s.logits) for s in section.steps if isinstance(s, OnlineBlock)}) == 2  # blocks of 2, then 1
    blocks = [s for s in section.steps if isinstance(s, OnlineBlock)]
    results = [s for s in section.steps if isinstance(s, OnlineResult)]
    assert len(results) == 5 and len(blocks) == 15
    for step in blocks:  # the recurrence holds exactly: ℓ⁽ᵇ⁾ = e^{m⁽ᵇ⁻¹⁾−m⁽ᵇ⁾} ℓ⁽ᵇ⁻¹⁾ + Σ e^{a_j − m⁽ᵇ⁾}
        factor = S.Zero if step.rescale is None else step.rescale
        assert expand(factor * step.previous_total + Add(*step.exps) - step.total) == 0
        for c, (o, before) in enumerate(zip(step.partial, step.previous_partial, strict=True)):
            added = Add(*(e * row.entries[c] for e, row in zip(step.exps, step.values, strict=True)))
            assert expand(factor * before + added - o) == 0
        assert step.maximum == max((a for a in (step.previous, *step.logits)), key=lambda a: float(a))
    for step in results:  # z = o⁽ᴮ⁾/ℓ⁽ᴮ⁾ is Σ_j w_j v_j exactly: e^{m⁽ᴮ⁾}ℓ⁽ᴮ⁾ = Z and e^{m⁽ᴮ⁾}o⁽ᴮ⁾ = Σ_j e^{a_j} v_j
        at = section.steps.index(step)
        query_blocks = [s for s in section.steps[:at] if isinstance(s, OnlineBlock)][-3:]
        logits = [a for block in query_blocks for a in block.logits]
        last = query_blocks[-1]
        Z = Add(*(exp(a) for a in logits))
        assert all(w == 0 if a == S.NegativeInfinity else expand(w * Z - exp(a)) == 0
                   for w, a in zip(step.weights, logits, strict=True))
        assert expand(exp(last.maximum) * step.total - Z) == 0
        for c, o in enumerate(step.partial):
            assert expand(exp(last.maximum) * o - Add(*(exp(a) * V[j, c] for j, a in enumerate(logits)))) == 0
        assert all(expand(z * step.total - o) == 0 for z, o in zip(step.output, step.partial, strict=True))


def test_every_displayed_line_checks():
    for digits in (2, 4):
        lines = displayed_lines(derivation_of(), digits=digits)
        assert lines and all(line.checks() for line in lines)


def test_sentences_are_true_of_each_block():
    steps = derivation_of().sections[0].steps
    for i, step in enumerate(steps):
        if not isinstance(step, OnlineBlock):
            continue
        said = steps[i + 1]
        assert isinstance(said, Paragraph)
        if all(e == 0 for e in step.exps):
            assert said.key == "online.masked_block"
        elif step.rescale is None:
            assert said.key == "online.first_seen"
        elif step.rescale == 1:
            assert said.key == "online.no_rescale" and step.maximum == step.previous
        else:
            assert said.key == "online.rescale" and float(step.maximum) > float(step.previous)
    keys = [s.key for s in steps if isinstance(s, Paragraph)]
    assert "online.rescale" in keys and "online.masked_block" in keys and "online.no_rescale" in keys


@pytest.mark.parametrize(("overrides", "field"), [
    ({"block": 0}, "sections[0].block"),
    ({"block": 2.5}, "sections[0].block"),
    ({"block": "2"}, "sections[0].block"),
    ({"softmax": "fast"}, "sections[0].softmax"),
    ({"softmax": "standard"}, "sections[0].block"),
    ({"X": "symbolic"}, "sections[0].softmax"),
])
def test_bad_input_is_one_line_naming_the_field(tmp_path, capsys, overrides, field):
    rng = random.Random(1)
    section = {**self_spec(rng, 3, 2), **overrides}
    path = tmp_path / "bad.json"

    path.write_text(json.dumps({"sections": [section]}), encoding="utf-8")
    assert main(["solve", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and field in err


def test_default_block_and_the_direct_softmax_without_the_key():
    rng = random.Random(2)
    section = self_spec(rng, 3, 2)
    del section["block"]
    data = answers(derive_spec(parse_spec({"sections": [section]})))["sections"][0]
    assert [len(b["block"]) for b in data["queries"]["t0"]["online"]] == [2, 1]
    del section["softmax"]
    assert "online" not in answers(derive_spec(parse_spec({"sections": [section]})))["sections"][0]["queries"]["t0"]


def test_every_format_renders(tmp_path):
    derivation = derivation_of(focus="all")
    md, html = render_markdown(derivation), render_html(derivation)
    assert r"\ell^{(3)}" in md and "online" in render_json(derivation)
    assert "<math" in html and "&#x02113;" in html
    for lang in ("ja", "en"):
        rng = random.Random(5)
        path = tmp_path / f"{lang}.json"

        path.write_text(json.dumps({"sections": [self_spec(rng, 3, 2, "causal", focus="t2")]}), encoding="utf-8")
        assert main(["render", str(path), "--lang", lang, "--out", str(tmp_path / lang)]) == 0
        assert (tmp_path / lang / f"{lang}.pdf").read_bytes()[:4] == b"%PDF"


@pytest.mark.parametrize("extra", [{"positional_encoding": "sinusoidal"}, {"scale": False}, {"scale": "2.5"},
                                   {"mask": [[1, 0, 1], [0, 1, 1], [0, 0, 1]]}])
def test_the_engine_proves_the_equality_for_other_scores(extra):
    rng = random.Random(11)
    section = {**self_spec(rng, 3, 2), **extra}
    derivation = derive_spec(parse_spec({"sections": [section]}))
    result = derivation.sections[0].result
    rows = [tuple(result.V[j, :]) for j in range(result.V.rows)]
    for query in result.queries.values():
        online = online_engine.online_softmax(query.scaled, rows, 2, result.known)
        assert online_engine.matches_direct(online, rows)
    assert all(line.checks() for line in displayed_lines(derivation))
    render_markdown(derivation)


@pytest.mark.parametrize("form", ["QKV", "scores"])
def test_given_forms_take_the_online_softmax_too(form):
    """A section that gives Q, K, V (or the scores and V) runs the same blocks as the form from X it came from."""
    rng = random.Random(11)
    section = self_spec(rng, 4, 2, "causal")
    from_x = answers(derive_spec(parse_spec({"sections": [section]})))["sections"][0]
    X, V = floats(section["X"]), floats(section["X"]) @ floats(section["W_V"])
    Q, K = X @ floats(section["W_Q"]), X @ floats(section["W_K"])
    exact = {key: [[str(x) for x in row] for row in from_x[key]] for key in ("Q", "K", "V")}
    given = {"kind": "self_attention", "tokens": section["tokens"], "mask": "causal", "softmax": "online",
             "block": 2, "V": exact["V"]}
    if form == "QKV":
        given |= {"Q": exact["Q"], "K": exact["K"]}
    else:
        given |= {"scores": [[str(s) for s in from_x["queries"][t]["scores"]] for t in section["tokens"]], "d_k": 2}
    data = answers(derive_spec(parse_spec({"sections": [given]})))["sections"][0]
    for i, token in enumerate(section["tokens"]):
        blocks, z = flash_numpy(Q[i], K, V, 2, np.tril(np.ones((4, 4), bool))[i])
        assert [b["block"] for b in data["queries"][token]["online"]] == [["t0", "t1"], ["t2", "t3"]]
        assert np.allclose([float(x) for x in data["queries"][token]["output"]], z, rtol=1e-12)
        assert data["queries"][token]["online"] == from_x["queries"][token]["online"]


def test_online_softmax_without_values_is_refused(capsys, tmp_path):
    spec = tmp_path / "s.json"
    section = {"kind": "self_attention", "tokens": ["a", "b"], "scores": [[1, 2], [0, 1]],
               "d_k": 2, "softmax": "online"}
    spec.write_text(json.dumps({"sections": [section]}))
    assert main(["solve", str(spec)]) == 2
    assert capsys.readouterr().err.strip() == ('symattn: error: sections[0].softmax: "online" computes the output '
                                               'block by block, so it needs V (without V, use the standard softmax)')
