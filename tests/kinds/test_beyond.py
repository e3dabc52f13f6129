"""Beyond the article: causal masks, positional encodings, the flow figure and the heatmaps."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sympy import Integer, S, cos, sin

from symattn import SpecError, answers, derive, derive_spec, parse_spec, render_json
from symattn.render.latex import escape, render_latex
from symattn.spec.model import Mask, Positions

I2 = [["1", "0"], ["0", "1"]]


def spec(**overrides):
    base = {"kind": "self_attention", "tokens": ["a", "b", "c"], "X": [["1", "0"], ["0", "1"], ["1", "1"]],
            "W_Q": I2, "W_K": I2, "W_V": [["1"], ["2"]]}
    base.update(overrides)
    return parse_spec({"sections": [base]})


def float_attention(X, WQ, WK, WV, mask):
    """Masked attention in float64, written from the textbook formula softmax(QKᵀ/√d_k + M)V."""
    Q, K, V = X @ WQ, X @ WK, X @ WV
    S_ = Q @ K.T / np.sqrt(WK.shape[1]) + np.where(mask == 1, 0.0, -np.inf)
    A = np.exp(S_ - S_.max(axis=1, keepdims=True))
    A /= A.sum(axis=1, keepdims=True)
    return A, A @ V


def test_causal_mask_and_sinusoidal_encoding_are_exact():
    assert Mask.causal(3).values.tolist() == [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    P = Positions.sinusoidal(3, 4).P.values
    assert P[0, :].tolist() == [[0, 1, 0, 1]]
    assert P[1, 0] == sin(1) and P[1, 1] == cos(1) and P[2, 2] == sin(Integer(2) / 100)


def test_masked_weights_are_exactly_zero_and_rows_sum_to_one():
    result = derive_spec(spec(mask="causal")).sections[0].result
    first = result.queries[0]
    assert first.scaled[1] == S.NegativeInfinity and first.softmax.weights[1:] == (0, 0)
    assert first.softmax.weights[0] == 1
    for query in result.queries.values():
        assert sum(query.softmax.weights).simplify() == 1


def test_decoder_example_matches_float_attention():
    derivation = derive("decoder")
    section = derivation.sections[0]
    s = section.spec
    X = np.array((s.X.values + s.positions.P.values).evalf(30).tolist(), dtype=float)
    A, Z = float_attention(X, *(np.array(m.values.tolist(), dtype=float) for m in (s.W_Q, s.W_K, s.W_V)),
                           np.array(s.mask.values.tolist(), dtype=int))
    data = answers(derivation)["sections"][0]
    for i, token in enumerate(s.tokens):
        weights = [0.0 if w == "0" or float(w) == 0 else float(w) for w in data["queries"][token]["weights"]]
        assert np.allclose(weights, A[i], atol=1e-12, rtol=0)
        assert np.allclose([float(z) for z in data["queries"][token]["output"]], Z[i], atol=1e-12, rtol=0)
    assert data["queries"][s.tokens[0]]["scaled_scores"][1] == "-inf"
    json.loads(render_json(derivation))  # still valid JSON


def test_mask_and_positional_encoding_in_the_document():
    tex = render_latex(derive("decoder", lang="en"))
    assert r"M = \begin{bmatrix}" in tex and "1 & 0 & 0 & 0" in tex
    assert r"-\infty \qquad (M = 0)" in tex
    assert r"e^{{a}_{\cjksub{が}}} &= e^{-\infty} = 0" in tex
    assert r"\sin{\left(1 \right)} & \cos{\left(1 \right)}" in tex and "0.8415 & 0.5403" in tex
    assert "Embedding + position" in tex and r"[0.8000,\ 2.5000]" in tex  # X + P for position 0: [0.8, 1.5 + 1]


def test_flow_figures_open_their_sections_and_heatmaps_close_them():
    tex = render_latex(derive("mt"))
    body = tex.split(r"\maketitle")[1]
    assert body.index(r"\section*") < body.index(r"\flowcontent") < body.index(r"\subsection*")
    assert escape("図 1：Self-attention の流れ") in body and escape("図 3：Multi-head attention の流れ") in body
    assert body.count(r"Attention 重みの\mbox{ヒートマップ}") == 2  # self- and cross-attention
    assert r"\cellcolor{blue!60}0.3382" in body  # the largest weight gets the darkest cell
    assert "attention weights" in render_latex(derive("mt", lang="en"))


@pytest.mark.parametrize(("overrides", "message"), [
    ({"mask": [["1", "0"], ["1", "1"]]}, "sections[0].mask: 2 × 2, but there are 3 tokens"),
    ({"mask": [["1", "0", "0"], ["0", "0", "0"], ["1", "1", "1"]]},
     "sections[0].mask[1]: every query needs at least one visible key"),
    ({"mask": [["1", "2", "0"], ["1", "1", "0"], ["1", "1", "1"]]}, "sections[0].mask[0]: expected only 0"),
    ({"positional_encoding": "learned"}, 'sections[0].positional_encoding: expected "sinusoidal"'),
    ({"P": [["1", "0"]]}, "sections[0].P: 1 × 2, but X is 3 × 2"),
    ({"P": I2 + [["0", "0"]], "positional_encoding": "sinusoidal"}, "sections[0].P: give either"),
])
def test_bad_masks_and_encodings(overrides, message):
    with pytest.raises(SpecError) as caught:
        spec(**overrides)
    assert str(caught.value).startswith(message)


def test_embedding_table_shows_x_before_the_positions_are_added():
    tex = render_latex(derive("decoder", lang="en"))
    step1 = tex.split("Step 1: Token embeddings")[1].split("Positional encoding")[0]
    assert r"\tok{私は} & $[0.8,\ 1.5]$" in step1
    after = tex.split("Embedding + position")[1]
    assert r"\tok{私は} & $[0.8000,\ 2.5000]$" in after


def test_computed_heads_get_a_heatmap_each():
    identity = [["1", "0"], ["0", "1"]]
    spec_ = parse_spec({"sections": [{
        "kind": "multi_head", "focus": "a", "tokens": ["a", "b"], "X": [["1", "0"], ["0", "1"]],
        "heads": [{"W_Q": identity, "W_K": identity, "W_V": identity}] * 2,
        "W_O": [["1"], ["0"], ["0"], ["1"]]}]})
    tex = render_latex(derive_spec(spec_, lang="en"))
    assert tex.count(r"\cellcolor{blue!60}") == 2  # one heatmap row per head, its largest weight darkest
