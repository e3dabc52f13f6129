"""The `layer` example (issue 18): the article's sentence through an encoder layer and one decoder step to the next
token, checked against an independent float implementation of the same Transformer, and the block figures of
chained sections (symattn.pipeline.blocks): drawn for a run of two or more chained sections, with the right stages."""

from __future__ import annotations

import tomllib

import numpy as np
import pytest

import symattn
from symattn.document.steps import FlowFigure
from symattn.examples import source


def _matrix(rows) -> np.ndarray:
    return np.array([[float(v) for v in row] for row in rows])


def numpy_layer(spec: dict) -> np.ndarray:
    """The example's Transformer in float64, written from PyTorch's conventions: LayerNorm with the biased variance
    and eps = 1e-5 inside the root (torch.nn.LayerNorm), post-norm residuals (the original Transformer), ReLU
    feed-forward, attention softmax(QKᵀ/√d_k)V with a causal mask in the decoder, logits = x·W_vocab."""
    by_name = {s.get("name"): s for s in spec["sections"] if s["kind"] != "text"}

    def attention(Xq, Xk, s, causal=False):
        Q, K, V = Xq @ _matrix(s["W_Q"]), Xk @ _matrix(s["W_K"]), Xk @ _matrix(s["W_V"])
        S = Q @ K.T / np.sqrt(Q.shape[1])
        if causal:
            S = np.where(np.tril(np.ones(S.shape, bool)), S, -np.inf)
        A = np.exp(S - S.max(axis=1, keepdims=True))
        return (A / A.sum(axis=1, keepdims=True)) @ V

    def norm(x):
        mean = x.mean(axis=1, keepdims=True)
        return (x - mean) / np.sqrt(((x - mean) ** 2).mean(axis=1, keepdims=True) + 1e-5)

    def ffn(x, s):
        return np.maximum(x @ _matrix(s["W_1"]), 0) @ _matrix(s["W_2"])

    X = _matrix(by_name["enc_attn"]["X"])
    h = norm(X + attention(X, X, by_name["enc_attn"]))
    H = norm(h + ffn(h, by_name["enc_ffn"]))
    Y = _matrix(by_name["dec_attn"]["X"])
    d = norm(Y + attention(Y, Y, by_name["dec_attn"], causal=True))
    d = norm(d + attention(d, H, by_name["dec_cross"]))
    d = norm(d + ffn(d, by_name["dec_ffn"]))
    next_token = next(s for s in spec["sections"] if s["kind"] == "next_token")
    logits = d[-1] @ _matrix(next_token["W_vocab"])
    p = np.exp(logits - logits.max())
    return p / p.sum()


def _solved(text: str) -> dict:
    return symattn.answers(symattn.derive_spec(symattn.parse_spec(symattn.read_spec_text(text, "toml", "layer.toml")),
                                               steps=False))


def test_the_layer_predicts_the_next_token_as_the_float_transformer_does():
    """carry = "full": the chain's probabilities are the float Transformer's to 1e-10; the default carry (the
    rounded values each page shows) predicts the same token, 機械学習, with probabilities within 1e-3."""
    text = source("layer")
    spec = tomllib.loads(text)
    expected = numpy_layer(spec)
    vocabulary = next(s for s in spec["sections"] if s["kind"] == "next_token")["vocabulary"]
    full = _solved('carry = "full"\n' + text)["sections"][-1]
    assert np.allclose([float(p) for p in full["probabilities"]], expected, rtol=1e-10, atol=1e-12)
    shown = _solved(text)["sections"][-1]
    assert shown["predicted"] == vocabulary[int(np.argmax(expected))] == "機械学習"
    assert np.allclose([float(p) for p in shown["probabilities"]], expected, atol=1e-3)
    assert shown["ranking"] == [vocabulary[i] for i in np.argsort(-expected)]


def block(figure: FlowFigure) -> tuple[tuple[str, ...], int, int]:
    """A block figure's stages top to bottom (from its boxes' strings), the highlighted one and the one the rows
    from outside the chain enter (-1: none), read from its drawing."""
    boxes = [box for box in figure.drawing.boxes if box.name != "H"]
    stages = tuple(box.lines[0].content.removeprefix("figure.block_") if box.tint != "none" else "dots"
                   for box in boxes)
    current = next(n for n, box in enumerate(boxes) if box.tint == "output")
    side = next((int(box.row) for box in figure.drawing.boxes if box.name == "H"), -1)
    return stages, current, side


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_layer_document_draws_each_run_with_its_section_highlighted(lang):
    derivation = symattn.derive("layer", lang=lang)
    blocks = [step for section in derivation.sections for step in section.steps
              if isinstance(step, FlowFigure) and step.flavour == "block"]
    encoder = ("self", "add_norm", "ffn", "add_norm")
    decoder = ("masked", "add_norm", "cross", "add_norm", "ffn", "add_norm", "next")
    assert [block(b)[0] for b in blocks] == [encoder] * 4 + [decoder] * 7
    assert [block(b)[1] for b in blocks] == [*range(4), *range(7)]
    assert [block(b)[2] for b in blocks] == [-1] * 4 + [2] * 7  # the encoder's output enters the cross-attention
    md = symattn.render_markdown(derivation)
    assert md.count(r"\boxed{") == 11
    assert (r"\text{next{-}token prediction}" if lang == "en" else r"\text{次のトークンの予測}") in md


def test_no_block_figure_without_a_chain_and_one_for_two_chained_sections():
    plain = symattn.derive("mt")
    assert not any(isinstance(s, FlowFigure) and s.flavour == "block" for sec in plain.sections for s in sec.steps)
    text = """
[[sections]]
kind = "self_attention"
name = "a"
tokens = ["x", "y"]
X = [[1, 0], [0, 1]]
W_Q = [[1, 0], [0, 1]]
W_K = [[1, 0], [0, 1]]
W_V = [[1, 0], [0, 1]]
focus = "x"

[[sections]]
kind = "norm"
X = "from:a"
focus = "x"
"""
    derivation = symattn.derive_spec(symattn.parse_spec(symattn.read_spec_text(text, "toml", "two.toml")), lang="en")
    blocks = [s for sec in derivation.sections for s in sec.steps if isinstance(s, FlowFigure) and s.flavour == "block"]
    assert [block(b) for b in blocks] == [(("self", "norm"), 0, -1), (("self", "norm"), 1, -1)]
    assert "Figure 1: The sections of this chain in order" in symattn.render_markdown(derivation)


def test_exact_carried_values_are_written_in_full_where_they_are_used():
    """The encoder's ReLU network gives exact (terminating) outputs: the next Add & Norm carries them exactly and
    its input table writes every decimal its lines use (f_love = [-0.779355, ...], not -0.7794)."""
    md = symattn.render_markdown(symattn.derive("layer", lang="en"))
    section = md[md.index("## Encoder: Add \\& Norm (2)"):md.index("## The decoder") if "## The decoder" in md
                 else md.index("## One decoder step")]
    assert "Every value of it is exact, so it carries over exactly." in section
    assert "| `love` | $[-0.779355,\\ 0.51957,\\ 0.69276,\\ 0.34638]$ |" in section


@pytest.mark.parametrize(("carry", "lang"), [("shown", "ja"), ("full", "en")])
def test_the_layer_pdf_stays_on_the_page_in_either_carry(carry, lang):
    """A full carry's 90-digit values (and the exact values computed from them) are written rounded, not as
    fractions of a hundred digits: no line runs off the page (27 overfull boxes, up to 1346 pt, before)."""
    from symattn.render.pdf import compile_with_log, overfull_boxes

    text = f'carry = "{carry}"\n' + source("layer")
    spec = symattn.parse_spec(symattn.read_spec_text(text, "toml", "layer.toml"))
    _, log = compile_with_log(symattn.render_latex(symattn.derive_spec(spec, lang=lang)), jobname=f"layer-{carry}")
    assert overfull_boxes(log) == []


def test_a_long_chain_draws_the_stages_near_the_current_one():
    """30 chained sections: each block figure draws at most 12 boxes, the current section's among them (the rest
    as ⋮), where a column of 30 ran off the page."""
    sections = [{"kind": "self_attention", "name": "s0", "tokens": ["a", "b"], "X": [[1, "0.5"], ["0.2", 1]],
                 "W_Q": [[1, 0], [0, 1]], "W_K": [[1, 0], [0, 1]], "W_V": [[1, "0.5"], [0, 1]], "focus": "a"}]
    sections += [{"kind": "norm", "name": f"s{i}", "X": f"from:s{i - 1}", "focus": "a"} for i in range(1, 30)]
    spec = symattn.parse_spec({"sections": sections})
    derivation = symattn.derive_spec(spec, lang="en")
    blocks = [step for section in derivation.sections for step in section.steps
              if isinstance(step, FlowFigure) and step.flavour == "block"]
    assert len(blocks) == 30
    drawn = [block(b) for b in blocks]
    for n, (stages, current, _) in enumerate(drawn):
        assert len(stages) <= 12 and stages[current] == ("self" if n == 0 else "norm")
    assert drawn[0][0][-1] == "dots" and drawn[15][0][0] == drawn[15][0][-1] == "dots"
    assert drawn[29][0][0] == "dots" and drawn[29][1] == len(drawn[29][0]) - 1


def test_a_full_carry_s_answers_keep_to_30_significant_digits():
    """Values computed from a full carry are exact decimals of 90-digit numbers (a variance had 190 digits): the
    answers cut them to 30 significant digits, as solve's significant_digits says; the names and LaTeX stay."""
    import re

    answers = _solved('carry = "full"\n' + source("layer"))
    decimals = []

    def walk(value, key=None):
        if isinstance(value, dict):
            for k, v in value.items():
                if k != "exact":
                    walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str) and re.fullmatch(r"-?[0-9]+(\.[0-9]+)?(E[+-][0-9]+)?", value):
            decimals.append(value)

    walk(answers["sections"])
    assert decimals and max(len(re.sub(r"\D", "", d.split("E")[0]).lstrip("0")) for d in decimals) <= 30
    assert answers["sections"][-1]["predicted"] == "機械学習"
