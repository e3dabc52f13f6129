"""The given forms of self- and cross-attention (issue 17): Q, K and V given instead of X and the W, or the scores
given (with V or without). Their answers against an independent float implementation on random inputs, the same
weights and outputs as the form from X when Q = X·W_Q etc., their one-line errors, every format, and sentences
that never speak of X or embeddings."""

from __future__ import annotations

import random
import re
import subprocess
import sys
from decimal import Decimal

import numpy as np
import pytest

from symattn import (
    SpecError,
    answers,
    compile_pdf,
    derive_spec,
    parse_spec,
    render_html,
    render_json,
    render_latex,
    render_markdown,
)
from symattn.document.sentences import CONDITIONS
from symattn.document.steps import Heading, Paragraph
from symattn.render.displayed import displayed_lines
from tests.render.test_displayed_lines import check
from tests.render.test_html_page import fonts, measure  # noqa: F401 (fonts: a fixture)


def random_matrix(rng: random.Random, rows: int, cols: int) -> list[list[str]]:
    """Entries with one or two decimals, as a spec writes them (exact from their text)."""
    return [[f"{rng.randint(-150, 150) / 100:.2f}" for _ in range(cols)] for _ in range(rows)]


def as_array(M) -> np.ndarray:
    return np.array([[float(v) for v in row] for row in M])


def float_attention(S, V, divisor, mask=None):
    """softmax(S / divisor + M) (· V), in float64: the textbook formula."""
    S = as_array(S) / divisor
    if mask is not None:
        S = S + np.where(np.array(mask) == 1, 0.0, -np.inf)
    A = np.exp(S - S.max(axis=1, keepdims=True))
    A /= A.sum(axis=1, keepdims=True)
    return A, None if V is None else A @ as_array(V)


def numbers(row) -> np.ndarray:
    return np.array([float(v) for v in row])


def solve(section: dict) -> dict:
    return answers(derive_spec(parse_spec({"sections": [section]}), steps=False))["sections"][0]


def assert_matches(data: dict, tokens, A, Z, scaled=None):
    for i, token in enumerate(tokens):
        query = data["queries"][token]
        assert np.allclose(numbers(query["weights"]), A[i], atol=1e-12, rtol=0)
        if scaled is not None:
            finite = np.isfinite(scaled[i])
            got = numbers(query["scaled_scores"])
            assert np.allclose(got[finite], scaled[i][finite], atol=1e-12, rtol=0)
            assert all(v == "-inf" for v, ok in zip(query["scaled_scores"], finite, strict=True) if not ok)
        if Z is None:
            assert "output" not in query and "output" not in query["exact"]
        else:
            assert np.allclose(numbers(query["output"]), Z[i], atol=1e-12, rtol=0)


@pytest.mark.parametrize("seed", range(6))
def test_given_qkv_self_attention_matches_numpy(seed):
    rng = random.Random(seed)
    n, d, d_v = rng.randint(2, 5), rng.randint(1, 4), rng.randint(1, 3)
    tokens = [f"t{i}" for i in range(n)]
    Q, K, V = random_matrix(rng, n, d), random_matrix(rng, n, d), random_matrix(rng, n, d_v)
    mask = [[1 if j <= i or rng.random() < 0.3 else 0 for j in range(n)] for i in range(n)] if seed % 2 else None
    section = {"kind": "self_attention", "tokens": tokens, "Q": Q, "K": K, "V": V}
    if mask:
        section["mask"] = mask
    data = solve(section)
    A, Z = float_attention(as_array(Q) @ as_array(K).T, V, np.sqrt(d), mask)
    assert_matches(data, tokens, A, Z)
    assert data["Q"] == solve(section)["Q"] and len(data["V"]) == n and data["d_k"] == d


@pytest.mark.parametrize("seed", range(4))
def test_given_qkv_cross_attention_matches_numpy(seed):
    rng = random.Random(100 + seed)
    n, m, d = rng.randint(1, 3), rng.randint(2, 5), rng.randint(1, 4)
    tokens, memory = [f"y{i}" for i in range(n)], [f"h{j}" for j in range(m)]
    Q, K, V = random_matrix(rng, n, d), random_matrix(rng, m, d), random_matrix(rng, m, 2)
    data = solve({"kind": "cross_attention", "tokens": tokens, "memory_tokens": memory, "Q": Q, "K": K, "V": V,
                  "scale": "2.5" if seed % 2 else True})
    A, Z = float_attention(as_array(Q) @ as_array(K).T, V, 2.5 if seed % 2 else np.sqrt(d))
    assert data["memory_tokens"] == memory
    assert_matches(data, tokens, A, Z)


@pytest.mark.parametrize("scale", [True, False, "0.5"])
@pytest.mark.parametrize("values", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_given_scores_match_numpy(scale, values, seed):
    rng = random.Random(200 + seed)
    n, d_k = rng.randint(2, 5), rng.choice([1, 2, 3, 4, 8])
    tokens = [f"t{i}" for i in range(n)]
    S = random_matrix(rng, n, n)
    V = random_matrix(rng, n, 2) if values else None
    mask = "causal" if seed == 1 else None
    section = {"kind": "self_attention", "tokens": tokens, "scores": S, "scale": scale,
               **({"d_k": d_k} if scale is True else {}), **({"V": V} if values else {}),
               **({"mask": mask} if mask else {})}
    data = solve(section)
    divisor = {True: np.sqrt(d_k), False: 1.0, "0.5": 0.5}[scale]
    causal = [[1 if j <= i else 0 for j in range(n)] for i in range(n)] if mask else None
    A, Z = float_attention(S, V, divisor, causal)
    scaled = as_array(S) / divisor + (np.where(np.array(causal) == 1, 0, -np.inf) if causal else 0)
    assert_matches(data, tokens, A, Z, scaled)
    assert ("V" in data) == values and "Q" not in data and "K" not in data
    assert data["d_k"] == (d_k if scale is True else None)
    for i, token in enumerate(tokens):  # the given scores, exactly as given
        assert np.array_equal(numbers(data["queries"][token]["scores"]), as_array(S)[i])


def test_given_scores_of_cross_attention_have_one_column_per_memory_token():
    data = solve({"kind": "cross_attention", "tokens": ["y"], "memory_tokens": ["a", "b", "c"],
                  "scores": [["1.2", "0.3", "-0.5"]], "scale": False})
    A, _ = float_attention([["1.2", "0.3", "-0.5"]], None, 1.0)
    assert_matches(data, ["y"], A, None)


X = [["1.0", "0.5"], ["0.8", "1.2"], ["1.5", "0.7"]]
W = {"W_Q": [["1.0", "0.2"], ["0.1", "0.9"]], "W_K": [["0.6", "0.1"], ["-0.3", "1.0"]],
     "W_V": [["1.2", "0.0", "0.5"], ["-0.2", "0.8", "0.3"]]}
TOKENS = ["I", "love", "cats"]


def products() -> dict[str, list[list[str]]]:
    """Q = X·W_Q, K = X·W_K, V = X·W_V, exactly, as decimal texts (products of decimals are decimals)."""
    def times(A, B):
        return [[str(sum(Decimal(a) * Decimal(B[i][c]) for i, a in enumerate(row))) for c in range(len(B[0]))]
                for row in A]

    return {name: times(X, W[f"W_{name}"]) for name in "QKV"}


@pytest.mark.parametrize("mask", [None, "causal"])
def test_given_qkv_equals_the_form_from_x(mask):
    extra = {"mask": mask} if mask else {}
    from_x = solve({"kind": "self_attention", "tokens": TOKENS, "X": X, **W, **extra})
    given = solve({"kind": "self_attention", "tokens": TOKENS, **products(), **extra})
    assert given == from_x


def test_given_scores_equal_the_form_from_x():
    from_x = solve({"kind": "self_attention", "tokens": TOKENS, "X": X, **W})
    scores = [[re.sub(r"\\frac\{(-?\d+)\}\{(\d+)\}", r"\1/\2", s) for s in from_x["queries"][t]["exact"]["scores"]]
              for t in TOKENS]  # QKᵀ exactly, as fractions
    given = solve({"kind": "self_attention", "tokens": TOKENS, "scores": scores, "V": products()["V"], "d_k": 2})
    for t in TOKENS:
        assert given["queries"][t] == from_x["queries"][t]
    alone = solve({"kind": "self_attention", "tokens": TOKENS, "scores": scores, "d_k": 2})
    for t in TOKENS:
        expected = {k: v for k, v in from_x["queries"][t].items() if k != "output"}
        expected["exact"] = {k: v for k, v in expected["exact"].items() if k != "output"}
        assert alone["queries"][t] == expected


def test_given_qkv_derivation_shows_the_same_steps_from_the_scores_on():
    base = parse_spec({"sections": [{"kind": "self_attention", "tokens": TOKENS, "X": X, **W, "focus": "love"}]})
    given = parse_spec({"sections": [{"kind": "self_attention", "tokens": TOKENS, **products(), "focus": "love"}]})
    lines_x = [(line.what, line.result.text) for line in displayed_lines(derive_spec(base, lang="en"))]
    lines_given = [(line.what, line.result.text) for line in displayed_lines(derive_spec(given, lang="en"))]
    assert lines_given == lines_x[-len(lines_given):]  # the form from X adds the projections before them


SPECS = {
    "qkv": {"kind": "self_attention", "tokens": TOKENS, **products(), "focus": "all"},
    "qkv-masked": {"kind": "self_attention", "tokens": TOKENS, **products(), "mask": "causal", "focus": "love"},
    "qkv-cross": {"kind": "cross_attention", "tokens": ["私は", "猫"], "memory_tokens": TOKENS,
                  "Q": [["0.5", "1.2"], ["1.0", "0.3"]], "K": products()["K"], "V": products()["V"], "focus": "all"},
    "scores": {"kind": "self_attention", "tokens": ["A", "B", "C"], "scores": [[2, 1, 0], [1, 3, 1], [0, 1, 2]],
               "V": [["1", "0"], ["0.5", "0.5"], ["0", "1"]], "d_k": 4, "focus": "all"},
    "weights": {"kind": "self_attention", "tokens": ["A", "B", "C"], "scores": [[2, 1, 0], [1, 3, 1], [0, 1, 2]],
                "d_k": 2, "mask": "causal", "focus": "all"},
    "weights-cross": {"kind": "cross_attention", "tokens": ["y"], "memory_tokens": ["a", "b"],
                      "scores": [["1.5", "-0.5"]], "scale": "2", "focus": "matrix"},
    "scores-cross": {"kind": "cross_attention", "tokens": ["y", "z"], "memory_tokens": ["a", "b"],
                     "scores": [["1.5", "-0.5"], ["0", "1"]], "V": [["1"], ["2"]], "scale": False},
}


def derivation(name: str, lang: str):
    return derive_spec(parse_spec({"title": name, "sections": [SPECS[name]]}), lang=lang)


@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("name", SPECS)
def test_every_format_renders_and_every_line_checks(name, lang):
    d = derivation(name, lang)
    tex, md, html = render_latex(d), render_markdown(d), render_html(d)
    assert "\\begin{document}" in tex and md.startswith("# ") and "<html" in html
    render_json(d)
    lines = displayed_lines(d)
    assert lines or SPECS[name]["focus"] == "matrix"  # the matrix form alone shows matrices, no lines
    for line in lines:
        check(line)


@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("name", SPECS)
def test_sentences_are_true_and_never_speak_of_x(name, lang):
    d = derivation(name, lang)
    for step in d.steps:
        if isinstance(step, Paragraph | Heading) and step.key in CONDITIONS:
            assert CONDITIONS[step.key](step.facts), (step.key, step.facts)
    md = render_markdown(d)
    words = ["embedding", "projection", "W_Q", "W_K", "W_V"] if lang == "en" else ["埋め込み", "射影", "W_Q"]
    for word in words:
        assert word not in md, word
    assert not re.search(r"\$X\$|\bX\b|\\tilde\{X\}", md)
    if "V" not in SPECS[name]:
        assert "{z}_" not in md and "Attention}(Q, K, V)" not in md
        assert ("Value" not in md) if lang == "en" else True


def test_given_scores_heading_says_scores_not_dot_products():
    md = render_markdown(derivation("weights", "en"))
    assert "Step 1: The given scores" in md and "dot product" not in md
    assert "Step 2: The scores of the token `A`" in md and "Step 3: Softmax (`A`)" in md
    assert "Step 4: The scores of the token `B`" in md  # two steps a query without values
    assert "Here $d_k = 2$ is given" in md
    assert r"S &= \left[" in md


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_pdf_of_both_forms_compiles(lang):
    spec = parse_spec({"title": "given", "sections": [SPECS["qkv-masked"], SPECS["weights"], SPECS["qkv-cross"]]})
    pdf = compile_pdf(render_latex(derive_spec(spec, lang=lang)))
    assert pdf.startswith(b"%PDF")


BASE = {"kind": "self_attention", "tokens": ["A", "B"]}
QKV = {"Q": [[1, 0], [0, 1]], "K": [[1, 0], [0, 1]], "V": [[1], [2]]}


@pytest.mark.parametrize("extra, message", [
    ({**QKV, "X": [[1, 0], [0, 1]]}, "sections[0].X: give either X with W_Q, W_K, W_V, or Q, K and V, not both"),
    ({**QKV, "W_K": [[1, 0], [0, 1]]}, "sections[0].W_K: give either X with W_Q, W_K, W_V, or Q, K and V, not both"),
    ({"Q": QKV["Q"], "V": QKV["V"]}, "sections[0].K: missing: give Q, K and V together (this section gives Q and V)"),
    ({**QKV, "K": [[1, 0, 0], [0, 1, 0]]}, "sections[0].K: 3 columns, but Q has 2 (q·k needs equal lengths)"),
    ({**QKV, "V": [[1]]}, "sections[0].V: 1 rows, but there are 2 tokens"),
    ({"scores": [[1, 0], [0, 1], [1, 1]], "d_k": 2}, "sections[0].scores: 3 rows, but there are 2 tokens"),
    ({"scores": [[1, 0, 1], [0, 1, 1]], "d_k": 2},
     "sections[0].scores: 3 columns, but there are 2 tokens (one column per key)"),
    ({"scores": [[1, 0], [0, 1]]},
     "sections[0].d_k: missing: scores scaled by √d_k need d_k (or give scale = false, or a number)"),
    ({"scores": [[1, 0], [0, 1]], "K": QKV["K"], "scale": False},
     "sections[0].K: give either Q, K and V, or scores (and V), not both"),
    ({"scores": [[1, 0], [0, 1]], "scale": False, "positional_encoding": "sinusoidal"},
     "sections[0].positional_encoding: applies to X, which a section that gives scores does not have"),
    ({**QKV, "rope": True}, "sections[0].rope: applies to the queries and keys projected from X; a section that "
                            "gives Q, K and V gives them as the scores use them (rotated already, for RoPE)"),
    ({**QKV, "P": [[1, 0], [0, 1]]},
     "sections[0].P: applies to X, which a section that gives Q, K and V does not have"),
    ({"scores": [[1, 0], [0, 1]], "scale": False, "mask": [[1, 1]]},
     'sections[0].mask: 1 × 2, but there are 2 tokens (expected 2 × 2, or "causal")'),
])
def test_bad_input_is_one_line_naming_the_field(extra, message):
    with pytest.raises(SpecError) as error:
        parse_spec({"sections": [{**BASE, **extra}]})
    assert str(error.value) == message


def test_cross_attention_errors():
    cross = {"kind": "cross_attention", "tokens": ["A"], "memory_tokens": ["x", "y"]}
    with pytest.raises(SpecError, match=r"^sections\[0\]\.memory: give either X and memory with W_Q, W_K, W_V, or"):
        parse_spec({"sections": [{**cross, "scores": [[1, 0]], "d_k": 1, "memory": [[1], [2]]}]})
    with pytest.raises(SpecError, match=r"^sections\[0\]\.scores: 3 columns, but there are 2 memory_tokens"):
        parse_spec({"sections": [{**cross, "scores": [[1, 0, 2]], "d_k": 1}]})
    with pytest.raises(SpecError, match=r"^sections\[0\]\.K: 1 rows, but there are 2 memory_tokens"):
        parse_spec({"sections": [{**cross, "Q": [[1]], "K": [[1]], "V": [[1], [2]]}]})


def test_the_cli_exits_2_with_one_line(tmp_path):
    spec = tmp_path / "bad.toml"
    spec.write_text('[[sections]]\nkind = "self_attention"\ntokens = ["A", "B"]\nscores = [[1, 0], [0, 1]]\n',
                    encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "symattn", "solve", str(spec)], capture_output=True, text=True)
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        "symattn: error: sections[0].d_k: missing: scores scaled by √d_k need d_k (or give scale = false, or a "
        "number)"]


def test_the_readme_example_of_given_qkv_gives_the_articles_answers():
    from pathlib import Path

    from symattn import derive, read_spec_text

    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```toml\n(.*?)```", readme, re.S) if "\nQ = [[" in b)
    given = answers(derive_spec(parse_spec(read_spec_text(block, "toml", "readme.toml"))))["sections"][0]
    article = next(s for s in answers(derive("mt"))["sections"] if s["kind"] == "self_attention")
    assert given["queries"]["love"] == article["queries"]["love"]
    assert given["Q"] == article["Q"] and given["V"] == article["V"]


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_figures_of_the_given_forms_lay_out_in_chromium(lang, fonts, tmp_path):  # noqa: F811 (the fixture)
    """Every given form's figure (Q, K, V; cross; scores with and without V, masked or not) in one page: each text
    inside its box, measured by Chromium."""
    spec = parse_spec({"sections": list(SPECS.values())})
    d = derive_spec(spec, lang=lang)
    figures = [step for step in d.steps if type(step).__name__ == "FlowFigure"]
    assert len(figures) == 7 and {f.drawing.boxes[0].name for f in figures} == {"Q", "S"}  # Q, K, V or S given
    result = measure(render_html(d), tmp_path, fonts)
    assert result["boxes"] and all(b["fits"] for b in result["boxes"]), [b for b in result["boxes"] if not b["fits"]]
    texts = {b["text"] for b in result["boxes"]}
    assert ("given scores" if lang == "en" else "与えられたスコア") in texts and "X" not in texts
