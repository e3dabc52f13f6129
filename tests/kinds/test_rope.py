"""RoPE on self-attention sections (issue 17): against an independent numpy RoPE for both pairings, the
relative-position property (scores depend on m − n alone), exactness of the answers, bad input through the command
line, and every format in both languages.

Conventions, where frameworks differ (the numpy reference below follows them, not symattn's code):
- "interleaved" (RoFormer, Su et al. 2021; Meta's original LLaMA code): pair i is dimensions (2i, 2i + 1),
  x'_{2i} = x_{2i} cos(mθ_i) − x_{2i+1} sin(mθ_i), x'_{2i+1} = x_{2i} sin(mθ_i) + x_{2i+1} cos(mθ_i).
- "half" (GPT-NeoX, Hugging Face's rotate_half): x' = x·cos + rotate_half(x)·sin, with cos and sin of the angles
  (mθ_0 … mθ_{d/2−1}) repeated twice and rotate_half(x) = [−x_{d/2:}, x_{:d/2}]: pair i is (i, i + d/2).
- θ_i = base^(−2i/d), d the width of q and k; positions count from 0 unless given; V is not rotated.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from sympy import ImmutableMatrix, N, Rational, exp, expand

from symattn import (
    answers,
    derive,
    derive_spec,
    parse_spec,
    render_html,
    render_json,
    render_latex,
    render_markdown,
)
from symattn.cli import main
from symattn.document.sentences import CONDITIONS
from symattn.document.steps import Heading, Paragraph
from symattn.engine import dot
from symattn.features.rope import engine as engine_rope
from symattn.render.displayed import displayed_lines
from symattn.spec.model import Rope
from tests.render.test_displayed_lines import check
from tests.render.test_html_page import fonts, measure  # noqa: F401 (fonts: a fixture)


def spec_data(rng: random.Random, pairing: str, n: int = 3, d_model: int = 3, d: int = 4, base=10000,
              positions=None, mask=None) -> dict:
    def matrix(rows, cols):
        return [[f"{rng.randint(-15, 15) / 10}" for _ in range(cols)] for _ in range(rows)]

    rope = {"pairing": pairing, "base": base}
    if positions is not None:
        rope["positions"] = positions
    section = {"kind": "self_attention", "tokens": [f"t{i}" for i in range(n)], "X": matrix(n, d_model),
               "W_Q": matrix(d_model, d), "W_K": matrix(d_model, d), "W_V": matrix(d_model, 2), "focus": "all",
               "rope": rope}
    if mask is not None:
        section["mask"] = mask
    return {"sections": [section]}


def numpy_rope(x: np.ndarray, positions: np.ndarray, pairing: str, base: float) -> np.ndarray:
    """Rows of x rotated for their positions, written as the frameworks do it (see the module's docstring)."""
    d = x.shape[1]
    theta = base ** (-2.0 * np.arange(d // 2) / d)
    angles = positions[:, None] * theta[None, :]  # n × d/2
    cos, sin = np.cos(angles), np.sin(angles)
    if pairing == "interleaved":
        out = np.empty_like(x)
        even, odd = x[:, 0::2], x[:, 1::2]
        out[:, 0::2] = even * cos - odd * sin
        out[:, 1::2] = even * sin + odd * cos
        return out
    cos2, sin2 = np.concatenate([cos, cos], axis=1), np.concatenate([sin, sin], axis=1)
    rotate_half = np.concatenate([-x[:, d // 2:], x[:, :d // 2]], axis=1)
    return x * cos2 + rotate_half * sin2


def numpy_attention(data: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    section = data["sections"][0]
    X, W_Q, W_K, W_V = (np.array(section[k], dtype=float) for k in ("X", "W_Q", "W_K", "W_V"))
    rope = section["rope"]
    n = X.shape[0]
    positions = np.array(rope.get("positions", range(n)), dtype=float)
    Q = numpy_rope(X @ W_Q, positions, rope["pairing"], float(rope["base"]))
    K = numpy_rope(X @ W_K, positions, rope["pairing"], float(rope["base"]))
    scores = Q @ K.T / np.sqrt(Q.shape[1])
    if section.get("mask") == "causal":
        scores = np.where(np.tril(np.ones((n, n))) > 0, scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return Q, K, weights, weights @ (X @ W_V)


def numbers(rows) -> np.ndarray:
    return np.array([[float(v) for v in row] for row in rows])


@pytest.mark.parametrize("pairing", ["interleaved", "half"])
@pytest.mark.parametrize("seed", range(4))
def test_weights_and_outputs_match_numpy(pairing, seed):
    rng = random.Random(seed)
    d = rng.choice([2, 4, 6])
    n = rng.randint(2, 4)
    positions = rng.sample(range(0, 40), n) if seed % 2 else None
    data = spec_data(rng, pairing, n=n, d=d, base=rng.choice([10000, 100, "2.5"]), positions=positions,
                     mask="causal" if seed == 3 else None)
    Q, K, weights, outputs = numpy_attention(data)
    section = answers(derive_spec(parse_spec(data), lang="en"))["sections"][0]
    assert np.allclose(numbers(section["Q_rotated"]), Q, atol=1e-12)
    assert np.allclose(numbers(section["K_rotated"]), K, atol=1e-12)
    for t, token in enumerate(data["sections"][0]["tokens"]):
        query = section["queries"][token]
        assert np.allclose([float(w) for w in query["weights"]], weights[t], atol=1e-12)
        assert np.allclose([float(v) for v in query["output"]], outputs[t], atol=1e-12)
    # Q and K stay the unrotated projections; V is not rotated
    X, W_Q, W_V = (np.array(data["sections"][0][k], dtype=float) for k in ("X", "W_Q", "W_V"))
    assert np.allclose(numbers(section["Q"]), X @ W_Q, atol=1e-12)
    assert np.allclose(numbers(section["V"]), X @ W_V, atol=1e-12)
    assert section["rope"]["pairing"] == pairing and len(section["rope"]["theta"]) == d // 2


def scores_of(data: dict) -> dict[int, tuple]:
    result = derive_spec(parse_spec(data), lang="en", steps=False).sections[0].result
    return {i: q.scores for i, q in result.queries.items()}


@pytest.mark.parametrize("pairing", ["interleaved", "half"])
def test_shifting_every_position_leaves_the_scores_exactly_unchanged(pairing):
    rng = random.Random(7)
    data = spec_data(rng, pairing, n=3, d=4, positions=[0, 1, 2])
    shifted = json.loads(json.dumps(data))
    shifted["sections"][0]["rope"]["positions"] = [5, 6, 7]
    before, after = scores_of(data), scores_of(shifted)
    assert before == after  # the same exact expressions, not only the same numbers
    moved = json.loads(json.dumps(data))
    moved["sections"][0]["rope"]["positions"] = [0, 2, 1]
    assert scores_of(moved) != before  # the property is about differences, not a constant output


def test_the_scores_equal_the_dot_products_of_the_rotated_vectors():
    """relative_score(q, k, m − n) is (R_m q)·(R_n k) exactly: both written in e^{i·angle} cancel to 0."""
    rope = Rope(Rational(100), "half")
    rng = random.Random(3)
    q = ImmutableMatrix(1, 4, [Rational(rng.randint(-9, 9), 10) for _ in range(4)])
    k = ImmutableMatrix(1, 4, [Rational(rng.randint(-9, 9), 10) for _ in range(4)])
    for m, n in ((3, 1), (0, 4), (2, 2)):
        rotated = dot(engine_rope.rotate_row(q, m, rope), engine_rope.rotate_row(k, n, rope))
        relative = engine_rope.relative_score(q, k, m - n, rope)
        assert expand((rotated - relative).rewrite(exp)) == 0
        assert abs(N(rotated - relative, 50)) < 1e-45


def test_engine_scores_are_the_relative_scores():
    rng = random.Random(11)
    data = spec_data(rng, "interleaved", n=3, d=4, positions=[4, 1, 9])
    derivation = derive_spec(parse_spec(data), lang="en", steps=False)
    section, result = derivation.sections[0].spec, derivation.sections[0].result
    Q = ImmutableMatrix(section.X.values * section.W_Q.values)
    K = ImmutableMatrix(section.X.values * section.W_K.values)
    for i, query in result.queries.items():
        for j, score in enumerate(query.scores):
            expected = engine_rope.relative_score(Q.row(i), K.row(j), [4, 1, 9][i] - [4, 1, 9][j], section.rope)
            assert score == expected


ARTICLE = """
[[sections]]
kind = "self_attention"
tokens = ["I", "love", "machine", "learning"]
X   = [[1.0, 0.5, 0.2, -0.1], [0.8, 1.2, 0.0, 0.3], [1.5, 0.7, -0.4, 0.6], [0.6, 1.8, 0.5, 0.2]]
W_Q = [[1.0, 0.2, 0.0, 0.1], [0.1, 0.9, 0.3, 0.0], [0.0, 0.4, 1.0, 0.2], [0.3, 0.0, 0.1, 1.0]]
W_K = [[0.6, 0.1, 0.2, 0.0], [-0.3, 1.0, 0.0, 0.4], [0.1, 0.0, 0.8, 0.1], [0.0, 0.2, 0.1, 0.9]]
W_V = [[1.2, 0.0], [-0.2, 0.8], [0.5, 0.5], [0.1, 0.3]]
focus = ["love", "learning"]
rope = true
"""


@pytest.fixture(scope="module")
def article(tmp_path_factory):
    path = tmp_path_factory.mktemp("rope") / "rope.toml"
    path.write_text(ARTICLE, encoding="utf-8")
    return path


def test_answers_are_exact_cos_and_sin_of_exact_arguments(article):
    section = json.loads(render_json(derive(article, lang="en")))["sections"][0]
    assert section["rope"]["exact"]["theta"] == ["1", r"\frac{1}{100}"]
    assert section["rope"]["positions"] == [0, 1, 2, 3]
    machine = section["exact"]["Q_rotated"][2]  # position 2: angles 2 and 2/100 = 1/50
    assert any(r"\cos{\left(2 \right)}" in e for e in machine)
    assert any(r"\sin{\left(\frac{1}{50} \right)}" in e for e in machine)
    for name in ("Q", "K", "V"):  # the projections before the rotation, exact rationals; V is never rotated
        assert not any("cos" in e or "sin" in e for row in section["exact"][name] for e in row)
    assert section["Q"][0] == section["Q_rotated"][0]  # position 0 is not rotated
    assert section["Q"][1] != section["Q_rotated"][1]


@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("digits", [None, 3])
def test_every_line_of_a_rope_document_checks(article, lang, digits):
    lines = displayed_lines(derive(article, lang=lang, digits=digits))
    assert len(lines) > 40
    for line in lines:
        check(line)


def test_sentences_are_true_and_say_rope(article):
    derivation = derive(article, lang="en")
    keys = [step.key for step in derivation.steps if isinstance(step, (Paragraph, Heading))]
    assert "rope.intro" in keys and "rope.pairs_interleaved" in keys and "rope.relative" in keys
    assert "self.no_positional" not in keys and not any(key.startswith("pe.") for key in keys)
    for step in derivation.steps:
        if isinstance(step, (Paragraph, Heading)) and step.facts is not None and step.key in CONDITIONS:
            assert CONDITIONS[step.key](step.facts), step.key
    text = render_markdown(derivation)
    assert "Step 3: Rotary position embeddings (RoPE)" in text and "Step 4: Attention scores" in text
    assert r"\cos(\tfrac{1}{50})" in text and r"\cos(2)" in text
    assert r"{\hat{q}}_{\text{love}} \cdot {\hat{k}}_{\text{I}}" in text


def test_half_pairing_is_said_and_rotates_i_with_i_plus_half(article):
    spec = article.read_text().replace("rope = true", 'rope = { pairing = "half", positions = [3, 1, 4, 1] }')
    path = article.parent / "half.toml"
    path.write_text(spec, encoding="utf-8")
    text = render_markdown(derive(path, lang="en"))
    assert "(0, 2), (1, 3)" in text and "rotate\\_half" in text
    assert "The positions are given in the spec" in text


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_every_format_renders(article, tmp_path, lang, capsys):
    derivation = derive(article, lang=lang)
    page, text = render_html(derivation), render_markdown(derivation)
    assert "<math" in page and '<svg xmlns="http://www.w3.org/2000/svg" class="rope"' in page
    assert r"\cos(1) & -\sin(1)" in text and r"\xrightarrow{\mathrm{RoPE}} \hat{Q},\ \hat{K}" in text
    assert r"\qbezier" in render_latex(derivation) and r"\hat{Q} = \mathrm{RoPE}(X W_Q)" in render_latex(derivation)
    formats = "tex,json,md,html" + (",pdf" if lang == "ja" else "")
    assert main(["render", str(article), "--lang", lang, "--format", formats, "--out", str(tmp_path)]) == 0
    assert (tmp_path / "rope.md").is_file() and (tmp_path / "rope.html").is_file()
    if lang == "ja":
        assert (tmp_path / "rope.pdf").read_bytes().startswith(b"%PDF")


def test_the_english_pdf_compiles(article, tmp_path):
    assert main(["render", str(article), "--lang", "en", "--format", "pdf", "--exact", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "rope.pdf").stat().st_size > 10_000


BAD = [
    ('rope = true\nW_Q = [[1, 0, 1], [0, 1, 0]]\nW_K = [[1, 0, 1], [0, 1, 0]]', "sections[0].rope",
     "odd number"),
    ('rope = { pairing = "halve" }', "sections[0].rope.pairing", "did you mean 'half'"),
    ("rope = { positions = [0, 1] }", "sections[0].rope.positions", "list of 3 positions"),
    ("rope = { positions = [0, -1, 2] }", "sections[0].rope.positions[1]", "whole number"),
    ("rope = { base = 1 }", "sections[0].rope.base", "greater than 1"),
    ("rope = { base = 0.5 }", "sections[0].rope.base", "greater than 1"),
    ('rope = { bases = 10 }', "sections[0].rope.bases", "unknown key"),
    ('rope = "yes"', "sections[0].rope", "expected true"),
    ('rope = true\npositional_encoding = "sinusoidal"', "sections[0].rope", "positional_encoding"),
    ('rope = true\nX = "symbolic"', "sections[0].rope", "symbolic"),
]


@pytest.mark.parametrize("extra, field, words", BAD)
def test_bad_rope_input_is_one_line_and_exit_2(tmp_path, capsys, extra, field, words):
    base = {"X": "[[1.0, 0.5], [0.8, 1.2], [1.5, 0.7]]", "W_Q": "[[1, 0], [0, 1]]", "W_K": "[[1, 0], [0, 1]]"}
    for line in extra.splitlines():
        key = line.split(" = ")[0]
        if key in base:
            base[key] = line.split(" = ", 1)[1]
    rest = "\n".join(line for line in extra.splitlines() if line.split(" = ")[0] not in base)
    text = ('[[sections]]\nkind = "self_attention"\ntokens = ["a", "b", "c"]\n'
            + "".join(f"{k} = {v}\n" for k, v in base.items()) + 'W_V = [[1, 0], [0, 1]]\n' + rest + "\n")
    if base["X"] == '"symbolic"':
        text = text.replace('W_Q = [[1, 0], [0, 1]]', 'W_Q = [[1, 0], [0, 1]]\nd_model = 2')
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    status = main(["render", str(path), "--format", "json", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert status == 2 and len(err.splitlines()) == 1, err
    assert err.startswith(f"symattn: error: {field}:") and words in err, err
    assert not (tmp_path / "out").exists()


def test_trig_sums_are_written_as_sympy_writes_them():
    """The answers' quick LaTeX of RoPE's values (exactfmt.trig_sum_latex) is SymPy's own, byte for byte."""
    from sympy import Add, Integer, cos, latex, sin, sqrt

    from symattn.engine import exponential
    from symattn.numbers.exact_latex import exponential_latex, trig_sum_latex

    rng = random.Random(2)
    angles = [Rational(1, 50), sqrt(10) / 10, 10 ** Rational(2, 3) / 100, Integer(7),
              Integer(10) ** Rational(1, 3) / 200]
    for _ in range(300):
        value = Add(*[Rational(rng.randint(-30, 30), rng.choice([1, 2, 500])) * rng.choice([cos, sin])(
            rng.choice([1, -1]) * rng.choice(angles)) for _ in range(rng.randint(1, 5))],
            Rational(rng.randint(-3, 3), 4) if rng.random() < 0.3 else 0)
        if value.is_Rational:
            continue
        assert trig_sum_latex(value) == latex(value, order="none")
        assert exponential_latex(value) == latex(exponential(value), order="none")


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_rope_flow_figure_lays_out_in_chromium(article, lang, fonts, tmp_path):  # noqa: F811 (the fixture)
    """Q̂ = RoPE(XW_Q) and K̂ = RoPE(XW_K) fit their boxes and no arrow label touches anything (as the built-in
    examples' figures, tests/render/test_html_page.py)."""
    result = measure(render_html(derive(article, lang=lang)), tmp_path, fonts)
    assert result["boxes"] and all(b["fits"] for b in result["boxes"]), [b for b in result["boxes"] if not b["fits"]]
    assert all(label["clashes"] == 0 for label in result["labels"]), result["labels"]
