"""The add_norm and norm kinds: LayerNorm and RMSNorm of each token's row, exact, against an independent numpy
float implementation on random inputs, a hand example's exact values, the one-line errors, every format in both
languages, checkable lines and true sentences.

The PyTorch conventions the float reference follows (torch.nn.LayerNorm(d, eps, elementwise_affine=True)):
  LayerNorm(x) = (x − mean(x)) / sqrt(var(x) + eps) * gamma + beta, per row, where var is the BIASED variance
  (mean((x − mean(x))²), i.e. divided by d, not d − 1: torch.var(x, unbiased=False)), eps added INSIDE the square
  root, gamma and beta elementwise (one per entry of the row; defaults 1 and 0), eps default 1e-5.
RMSNorm as LLaMA's (x * rsqrt(mean(x²) + eps) * weight): no mean subtracted, no beta, eps default 1e-6.
add_norm is the post-norm Add & Norm of the original Transformer: LayerNorm(X + Y), row by row.
"""

from __future__ import annotations

import json
import random
import re

import numpy as np
import pytest
from sympy import Rational, sqrt

import symattn
from symattn.cli import main
from symattn.document.sentences import CONDITIONS
from symattn.document.steps import Heading, Paragraph
from symattn.kinds import kind_of
from symattn.kinds.norm.printers import root_checks
from symattn.kinds.norm.steps import NormAffine
from symattn.numbers.display import Number
from symattn.render.displayed import displayed_lines

# ------------------------------------------------------------ the float reference (PyTorch's conventions)


def layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)  # biased: divided by d
    return (x - mean) / np.sqrt(var + eps) * gamma + beta  # eps inside the square root


def rms_norm(x: np.ndarray, gamma: np.ndarray, eps: float) -> np.ndarray:
    return x / np.sqrt((x**2).mean(axis=1, keepdims=True) + eps) * gamma


def section(kind: str = "add_norm", **keys) -> dict:
    base = {"kind": kind, "tokens": ["A", "B"], "X": [["1", "2", "4"], ["0.5", "0.5", "0.5"]]}
    if kind == "add_norm":
        base["Y"] = [["0.5", "0", "-1"], ["0", "0", "0"]]
    return {**base, **keys}


def derive(*sections: dict, lang: str = "en"):
    return symattn.derive_spec(symattn.parse_spec({"title": "Norm", "lang": lang, "sections": list(sections)}))


def floats(texts) -> np.ndarray:
    return np.array([float(t) for t in texts])


def random_matrix(rng: random.Random, n: int, d: int) -> list[list[str]]:
    return [[f"{rng.uniform(-3, 3):.2f}" for _ in range(d)] for _ in range(n)]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("norm", ["layer", "rms"])
@pytest.mark.parametrize("kind", ["add_norm", "norm"])
def test_the_answers_agree_with_numpy_on_random_inputs(kind, norm, seed):
    rng = random.Random(seed * 7 + len(kind) + len(norm))
    n, d = rng.randint(1, 5), rng.randint(2, 9)
    tokens = [f"t{i}" for i in range(n)]
    X, Y = random_matrix(rng, n, d), random_matrix(rng, n, d)
    gamma = [f"{rng.uniform(-2, 2):.1f}" for _ in range(d)]
    beta = [f"{rng.uniform(-1, 1):.1f}" for _ in range(d)]
    eps = rng.choice(["1e-5", "0.001", "1e-6", "0.5"])
    data = {"kind": kind, "tokens": tokens, "X": X, "norm": norm, "eps": eps, "gamma": gamma}
    if kind == "add_norm":
        data["Y"] = Y
    if norm == "layer":
        data["beta"] = beta
    answer = symattn.answers(derive(data))["sections"][0]
    x = np.array([[float(v) for v in row] for row in X])
    if kind == "add_norm":
        x = x + np.array([[float(v) for v in row] for row in Y])
    g, b = floats(gamma), floats(beta)
    expected = layer_norm(x, g, b, float(eps)) if norm == "layer" else rms_norm(x, g, float(eps))
    for i, token in enumerate(tokens):
        row = answer["rows"][token]
        assert np.allclose(floats(row["output"]), expected[i], rtol=1e-12, atol=1e-12)
        if norm == "layer":
            assert float(row["mean"]) == pytest.approx(x[i].mean(), rel=1e-12, abs=1e-12)
            assert float(row["variance"]) == pytest.approx(x[i].var(ddof=0), rel=1e-12, abs=1e-12)
        else:
            assert "mean" not in row
            assert float(row["variance"]) == pytest.approx((x[i] ** 2).mean(), rel=1e-12)
        assert float(row["std"]) == pytest.approx(np.sqrt(float(row["variance"]) + float(eps)), rel=1e-12)
        assert ("sum" in row) == (kind == "add_norm")
        assert all(len(t.lstrip("-").replace(".", "").lstrip("0")) >= 30 or float(t) == 0 for t in row["output"])


def test_a_hand_example_is_exact():
    """u = [1, 2, 4] + [0.5, 0, −1] = [1.5, 2, 3]: μ = 13/6, deviations [−2/3, −1/6, 5/6], σ² = 7/18, σ² + ε =
    350009/900000, and the normalised row is each deviation over √(350009/900000)."""
    derived = derive(section()).sections[0]
    row = derived.result.rows[0]
    assert row.values == (Rational(3, 2), 2, 3)
    assert row.mean == Rational(13, 6)
    assert row.centred == (Rational(-2, 3), Rational(-1, 6), Rational(5, 6))
    assert row.variance == Rational(7, 18)
    assert row.radicand == Rational(350009, 900000)
    assert row.std == sqrt(Rational(350009, 900000))
    for c, n in zip(row.centred, row.normalised, strict=True):
        assert (n - c / sqrt(Rational(350009, 900000))).equals(0)
    answer = symattn.answers(derive(section()))["sections"][0]["rows"]["A"]
    assert answer["exact"]["mean"] == r"\frac{13}{6}" and answer["exact"]["variance"] == r"\frac{7}{18}"
    assert answer["exact"]["std"] == r"\frac{\sqrt{3500090}}{3000}"
    assert answer["exact"]["normalised"][0] == r"- \frac{200 \sqrt{3500090}}{350009}"
    assert answer["normalised"][0] == "-1.06903122305090159425379383394"
    tex = symattn.render_latex(derive(section()))
    assert r"\mu_{\mathrm{A}}" in tex and r"\tfrac{13}{6} \approx 2.1667" in tex
    # a student's display: the long surd only under --exact (issue 31 item 12), decimals otherwise
    assert r"\sqrt{3500090}" not in tex and r"\approx \sqrt{0.3889} \approx 0.6236" in tex
    exact = symattn.render_latex(derive(section()), exact=True)
    assert r"\sqrt{\tfrac{350009}{900000}} = \frac{\sqrt{3500090}}{3000}" in exact


def test_a_perfect_square_stays_rational():
    """x = [1, 3], ε = 0: μ = 2, σ² = 1, √1 = 1, the normalised row [−1, 1] exactly (= throughout)."""
    derived = derive({"kind": "norm", "tokens": ["A"], "X": [["1", "3"]], "eps": "0"})
    row = derived.sections[0].result.rows[0]
    assert (row.mean, row.variance, row.std, row.normalised) == (2, 1, 1, (-1, 1))
    tex = symattn.render_latex(derived)
    assert r"\approx" not in tex.split("Step 2")[1]
    text = symattn.render_markdown(derived)
    assert "nothing is added to the variance" in text and "keeps the division away from 0" not in text


def test_eps_is_parsed_exactly_and_defaults_per_norm():
    layer = derive(section("norm")).sections[0].spec
    rms = derive(section("norm", norm="rms")).sections[0].spec
    given = derive(section("norm", eps="1e-5")).sections[0].spec
    assert (layer.eps, rms.eps, given.eps) == (Rational(1, 100000), Rational(1, 10**6), Rational(1, 100000))


def test_outputs_and_inputs_carry_the_rows():
    derived = derive(section()).sections[0]
    kind = kind_of("add_norm")
    carried = kind.outputs(derived.spec, derived.result)
    assert carried.tokens == ("A", "B") and carried.rows.shape == (2, 3)
    assert carried.rows[1, :].tolist() == [[0, 0, 0]] and carried.rows[0, 0] == derived.result.rows[0].output[0]
    assert kind.inputs(derived.spec, derived.result).rows.tolist() == [[1, 2, 4], [Rational(1, 2)] * 3]


@pytest.mark.parametrize("keys, kind, message", [
    ({"Y": [["1", "2"], ["3", "4"]]}, "add_norm", "sections[0].Y: 2 × 2, but X is 2 × 3"),
    ({"X": [["1", "2", "3"]]}, "norm", "sections[0].X"),
    ({"gamma": ["1", "2"]}, "norm", "sections[0].gamma: 2 entries, but the rows have 3"),
    ({"beta": "1"}, "norm", "sections[0].beta: expected a list of 3 numbers"),
    ({"norm": "batch"}, "norm", 'sections[0].norm: expected "layer" (LayerNorm) or "rms" (RMSNorm)'),
    ({"eps": "-1e-5"}, "norm", "sections[0].eps: expected a number ≥ 0"),
    ({"eps": "0"}, "norm", "sections[0].eps: eps = 0, but the row of 'B' has all entries equal"),
    ({"norm": "rms", "beta": ["0", "0", "0"]}, "norm", "sections[0].beta: RMSNorm has no shift"),
    ({"Y": [["1", "2", "3"], ["1", "1", "1"]]}, "norm", "sections[0].Y"),
    ({"focus": "C"}, "norm", "sections[0].focus: no token 'C'"),
    ({"X": [["a", "1", "2"], ["1", "1", "1"]]}, "norm", "sections[0].X: expected numbers"),
])
def test_bad_input_is_one_line_naming_the_field(keys, kind, message):
    with pytest.raises(symattn.SpecError) as error:
        derive(section(kind, **keys))
    assert message in str(error.value) and "\n" not in str(error.value)


def test_every_displayed_line_checks():
    rng = random.Random(3)
    for norm in ("layer", "rms"):
        data = {"kind": "add_norm", "tokens": ["a", "b", "c"], "X": random_matrix(rng, 3, 5),
                "Y": random_matrix(rng, 3, 5), "norm": norm, "gamma": ["1.5", "-1", "0.5", "2", "1"]}
        for digits in (2, 4):
            lines = displayed_lines(derive(data), digits=digits)
            assert len(lines) >= 3 * 5 * 3
            assert all(line.checks() for line in lines)


def test_every_square_root_checks_from_its_radicand_as_shown():
    """√(σ² + ε) ≈ s: the radicand is shown with the decimals that make s its rounded root (root_checks)."""
    rng = random.Random(5)
    checked = 0
    for norm in ("layer", "rms"):
        data = {"kind": "norm", "tokens": ["a", "b", "c", "d"], "X": random_matrix(rng, 4, 3), "norm": norm}
        for digits in (1, 2, 4):
            tex = symattn.render_latex(derive(data), digits=digits)
            for radicand, root in re.findall(r"\\sqrt\{(-?[0-9.]+)\} \\approx (-?[0-9.]+)", tex):
                assert root_checks(Number(radicand, False), Number(root, False)), (radicand, root)
                checked += 1
    assert checked >= 8


def test_a_constant_row_is_said_to_be_constant_only_when_it_is():
    """B's row is 0.5 everywhere: σ² = 0 and the division is by √ε, said for B and never for A."""
    derived = derive(section())
    said = {}
    for step in derived.sections[0].steps:
        if isinstance(step, Paragraph | Heading) and step.key in CONDITIONS:
            assert CONDITIONS[step.key](step.facts), step.key
            said.setdefault(step.facts.token, set()).add(step.key)
    assert "norm.constant_layer" in said["B"] and "norm.constant_layer" not in said.get("A", set())
    assert "norm.defaults_layer" in said[None]
    text = symattn.render_markdown(derived)
    assert text.count("All entries of this row are equal") == 1
    rms = symattn.render_markdown(derive(section("norm", norm="rms", X=[["1", "2", "3"], ["0", "0", "0"]])))
    assert rms.count("Every entry of this row is 0") == 1 and "All entries" not in rms


@pytest.mark.parametrize("gamma, beta, said", [
    (None, None, "The scale"), (["1", "1", "1"], ["0", "0", "0"], "they change nothing"),
    (["2", "1", "1"], None, "multiplied by its scale"), (None, ["0", "0.5", "0"], "shifted by its entry"),
])
def test_the_scale_and_shift_are_shown_only_when_they_change_something(gamma, beta, said):
    keys = {**({"gamma": gamma} if gamma else {}), **({"beta": beta} if beta else {})}
    derived = derive(section(**keys))
    assert said in symattn.render_markdown(derived)
    affine = [step for step in derived.sections[0].steps if isinstance(step, NormAffine)]
    assert len(affine) == (0 if said in ("The scale", "they change nothing") else 2)  # one per token


@pytest.mark.parametrize("lang, words", [("en", "Add & Norm (LayerNorm)"), ("ja", "Add & Norm（LayerNorm）")])
def test_both_languages_render_every_text_format(lang, words):
    derived = derive(section(focus="all"), section("norm", norm="rms", focus="matrix"), lang=lang)
    md, html = symattn.render_markdown(derived), symattn.render_html(derived)
    assert words.replace("&", r"\&") in md and "RMSNorm" in md
    assert words.replace("&", "&amp;") in html
    assert "1.0690" in md and "1.0690" in html and "1.0690" in symattn.render_latex(derived)
    answers = json.loads(symattn.render_json(derived))["sections"]
    assert [a["kind"] for a in answers] == ["add_norm", "norm"] and "beta" not in answers[1]


@pytest.mark.pdf
@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_cli_writes_every_format_and_the_pdf_compiles(lang, tmp_path):
    spec = tmp_path / "norm.toml"
    spec.write_text("""[[sections]]
kind = "add_norm"
tokens = ["I", "love"]
X = [[1.0, 2.0, 4.0], [0.5, 0.5, 0.5]]
Y = [[0.5, 0.0, -1.0], [0.0, 0.0, 0.0]]
gamma = [2, 1, 0.5]
beta = [0.1, 0, 0]

[[sections]]
kind = "norm"
norm = "rms"
tokens = ["I"]
X = [[1, 2, 2, 4]]
""", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["render", str(spec), "--lang", lang, "--format", "tex,md,html,json,pdf", "--out", str(out)]) == 0
    files = {path.suffix: path for path in out.iterdir() if not path.name.startswith(".")}  # (the manifest)
    assert set(files) >= {".tex", ".md", ".html", ".json", ".pdf"}
    assert files[".pdf"].read_bytes().startswith(b"%PDF")
    answers = json.loads(files[".json"].read_text(encoding="utf-8"))["sections"]
    assert answers[1]["rows"]["I"]["std"] == "2.50000019999999200000063999994"  # √(6.25 + 10⁻⁶)
