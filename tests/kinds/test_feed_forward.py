"""The feed-forward kind against an independent numpy float implementation, written with PyTorch's conventions:

- ReLU: torch.relu(h) = max(0, h);
- GELU exact: torch.nn.functional.gelu(h) (approximate="none", the default) = h · Φ(h) = h/2 · (1 + erf(h/√2));
- GELU tanh: F.gelu(h, approximate="tanh") = h/2 · (1 + tanh(√(2/π) · (h + 0.044715 · h³)));
- SiLU: F.silu(h) = h · σ(h) = h / (1 + e^{−h});
- SwiGLU as LLaMA's FeedForward.forward: w2(F.silu(w1(x)) * w3(x)), nn.Linear(bias=False) layers; a spec's W_1, W_3
  are w1.weight.T, w3.weight.T (x·W rather than W·x), and its biases, when given, are added after each product.

Exactness (ReLU of rationals stays rational), the one-line errors, the zero-count sentence, every format in both
languages, and the rows a later section reads."""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from sympy import Rational

import symattn
from symattn import SpecError, answers, derive_spec, kind_of, parse_spec
from symattn.cli import main
from symattn.document.steps import Paragraph
from symattn.render.displayed import displayed_lines

ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "silu", "swiglu")


def _silu(h):
    return h / (1 + np.exp(-h))


FLOAT = {  # the PyTorch functions above, in float64
    "relu": lambda h: np.maximum(0, h),
    "gelu": lambda h: h / 2 * (1 + np.vectorize(math.erf)(h / math.sqrt(2))),
    "gelu_tanh": lambda h: h / 2 * (1 + np.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h**3))),
    "silu": _silu,
}


def numpy_ffn(X, W_1, W_2, activation, b_1=None, b_2=None, W_3=None, b_3=None):
    """(hidden or gate, up, activated, output) in float64."""
    h = X @ W_1 + (0 if b_1 is None else b_1)
    up = None
    if activation == "swiglu":
        up = X @ W_3 + (0 if b_3 is None else b_3)
        a = _silu(h) * up
    else:
        a = FLOAT[activation](h)
    return h, up, a, a @ W_2 + (0 if b_2 is None else b_2)


def random_matrix(rng: random.Random, rows: int, cols: int) -> list[list[str]]:
    return [[f"{rng.randint(-200, 200) / 100:.2f}" for _ in range(cols)] for _ in range(rows)]


def random_spec(rng: random.Random, activation: str, biases: bool) -> dict:
    n, d, d_ff, d_out = rng.randint(1, 3), rng.randint(1, 4), rng.randint(1, 6), rng.randint(1, 4)
    section = {"kind": "feed_forward", "tokens": [f"t{i}" for i in range(n)], "X": random_matrix(rng, n, d),
               "W_1": random_matrix(rng, d, d_ff), "W_2": random_matrix(rng, d_ff, d_out), "activation": activation}
    if activation == "swiglu":
        section["W_3"] = random_matrix(rng, d, d_ff)
    if biases:
        section["b_1"], section["b_2"] = random_matrix(rng, 1, d_ff)[0], random_matrix(rng, 1, d_out)[0]
        if activation == "swiglu":
            section["b_3"] = random_matrix(rng, 1, d_ff)[0]
    return {"title": "ffn", "lang": "en", "sections": [section]}


def floats(data) -> np.ndarray:
    return np.array([[float(Fraction(v)) for v in row] for row in data])


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_the_answers_agree_with_numpy_on_random_inputs(activation):
    rng = random.Random(f"ffn {activation}")
    for case in range(12):
        spec = random_spec(rng, activation, biases=case % 2 == 1)
        s = spec["sections"][0]
        vector = {k: floats([s[k]])[0] for k in ("b_1", "b_2", "b_3") if k in s}
        h, up, a, out = numpy_ffn(floats(s["X"]), floats(s["W_1"]), floats(s["W_2"]), activation,
                                  W_3=floats(s["W_3"]) if "W_3" in s else None, **vector)
        rows = answers(derive_spec(parse_spec(spec), steps=False))["sections"][0]["rows"]
        for i, token in enumerate(s["tokens"]):
            row = rows[token]
            assert len(row["output"]) == out.shape[1]
            expected = {"activated": a[i], "output": out[i]}
            expected |= {"gate": h[i], "up": up[i]} if activation == "swiglu" else {"hidden": h[i]}
            for key, values in expected.items():
                got = np.array([float(x) for x in row[key]])
                np.testing.assert_allclose(got, values, rtol=1e-12, atol=1e-12, err_msg=f"{key} of {token}")
                assert all(len(x.lstrip("-").replace(".", "").lstrip("0")) >= 30 or "E" in x or float(x) == 0
                           for x in row[key]), f"30 significant digits: {row[key]}"


def test_relu_of_rationals_is_exact_and_counts_its_zeros():
    spec = {"lang": "en", "sections": [{"kind": "feed_forward", "tokens": ["a"], "X": [["0.5", "-1.0"]],
                          "W_1": [["1.0", "-1.0", "0.5"], ["0.25", "1.0", "-2.0"]], "b_1": ["0.1", "0", "-0.2"],
                          "W_2": [["1", "0"], ["0", "1"], ["1", "1"]], "b_2": ["0.1", "0"]}]}
    derivation = derive_spec(parse_spec(spec))
    result = derivation.sections[0].result
    assert list(result.hidden) == [Rational(7, 20), Rational(-3, 2), Rational(41, 20)]
    assert list(result.activated) == [Rational(7, 20), 0, Rational(41, 20)]
    assert list(result.output) == [Rational(5, 2), Rational(41, 20)]  # 0.35 + 2.05 + 0.1, 0 + 2.05
    row = answers(derivation)["sections"][0]["rows"]["a"]
    assert row["exact"]["output"] == [r"\frac{5}{2}", r"\frac{41}{20}"] and row["zeroed"] == 1
    md = symattn.render_markdown(derivation)
    assert r"\max(0,\ -1.50)" in md and "= [0.35,\\  0.00,\\  2.05]" in md and r"\approx" not in md
    assert "1 of the 3 entries" in md


@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_the_zero_sentence_is_said_exactly_when_relu_zeroes_entries(activation):
    rng = random.Random(f"zeros {activation}")
    for _ in range(20):
        spec = random_spec(rng, activation, biases=True)
        s = spec["sections"][0]
        h = floats(s["X"]) @ floats(s["W_1"]) + floats([s["b_1"]])[0]
        derivation = derive_spec(parse_spec(spec))
        said = {p.params["token"].name: p.params["count"] for p in derivation.sections[0].steps
                if isinstance(p, Paragraph) and p.key in ("ffn.relu_zeros", "ffn.relu_zero_one")}
        negative = {t: int((h[i] < 0).sum()) for i, t in enumerate(s["tokens"])}
        if activation == "relu":
            assert said == {t: k for t, k in negative.items() if k}
        else:
            assert said == {}
        text = symattn.render_markdown(derivation)
        for count in said.values():
            assert f"{count} of the {h.shape[1]} entries" in text


def test_irrational_values_are_filed_once_and_every_line_checks():
    spec = random_spec(random.Random(7), "gelu_tanh", biases=True)
    for lang in ("ja", "en"):
        derivation = derive_spec(parse_spec({**spec, "lang": lang}))
        result = derivation.sections[0].result
        assert all(result.known.get(v) is not None for v in (*result.activated, *result.output) if not v.is_Rational)
        lines = displayed_lines(derivation)
        assert lines and all(line.checks() for line in lines)


def test_an_activation_line_shows_the_decimals_its_argument_needs():
    # h = 1/7: GELU(0.1429) rounds to 0.0796, GELU(1/7) = 0.07954…, so the line shows h with one more decimal
    spec = {"lang": "en", "sections": [{"kind": "feed_forward", "tokens": ["a"], "X": [["1/7"]], "W_1": [["1"]],
                                        "W_2": [["1"]], "activation": "gelu"}]}
    md = symattn.render_markdown(derive_spec(parse_spec(spec)))

    def gelu(h: float) -> float:
        return h / 2 * (1 + math.erf(h / math.sqrt(2)))

    assert round(gelu(0.1429), 4) != round(gelu(1 / 7), 4) == 0.0795
    line = next(x for x in md.splitlines() if x.startswith("a_{1}"))
    argument = line.split(r"\frac{")[1].split("}")[0]
    assert argument == "0.14286" and line.endswith(r"\approx 0.0795 \\")


def test_the_section_passes_on_its_output_rows_and_reads_x():
    spec = random_spec(random.Random(3), "silu", biases=False)
    section = derive_spec(parse_spec(spec)).sections[0]
    kind = kind_of("feed_forward")
    carried, given = kind.outputs(section.spec, section.result), kind.inputs(section.spec, section.result)
    assert carried.tokens == given.tokens == tuple(spec["sections"][0]["tokens"])
    assert carried.rows == section.result.output and given.rows == section.spec.X.values


BASE = {"kind": "feed_forward", "tokens": ["a", "b"], "X": [[1, 2], [3, 4]], "W_1": [[1, 0, 1], [0, 1, 1]],
        "W_2": [[1], [2], [3]]}


@pytest.mark.parametrize("change, field, problem", [
    ({"activation": "gelu_exact"}, "activation", "got 'gelu_exact' (did you mean 'gelu_tanh'?)"),
    ({"activation": "rellu"}, "activation", "(did you mean 'relu'?)"),
    ({"W_1": [[1, 0, 1]]}, "W_1", "1 rows, but X has 2 columns"),
    ({"W_2": [[1], [2]]}, "W_2", "2 rows, but W_1 has 3 columns"),
    ({"b_1": [1, 2]}, "b_1", "2 entries, but the product it is added to has 3"),
    ({"b_2": [[1]]}, "b_2", "expected a list of 1 numbers"),
    ({"activation": "swiglu"}, "W_3", "missing"),
    ({"activation": "swiglu", "W_3": [[1, 0], [0, 1]]}, "W_3", "expected W_1's shape 2×3, got 2×2"),
    ({"W_3": [[1, 0, 1], [0, 1, 1]]}, "W_3", 'applies to activation = "swiglu" only'),
    ({"X": [[1, 2]]}, "X", "1 rows, but there are 2 tokens"),
    ({"W_1": [["a", 0, 1], [0, 1, 1]]}, "W_1", "expected numbers"),
    ({"focus": "matrix"}, "focus", "derives token by token"),
    ({"focus": "c"}, "focus", "no token 'c'"),
])
def test_bad_input_is_one_line_naming_the_field(change, field, problem):
    with pytest.raises(SpecError) as error:
        parse_spec({"sections": [{**BASE, **change}]})
    assert error.value.field == f"sections[0].{field}" and problem in str(error.value)
    assert "\n" not in str(error.value)


def test_focus_chooses_the_tokens_derived():
    derivation = derive_spec(parse_spec({"lang": "en", "sections": [{**BASE, "focus": "b"}]}))
    md = symattn.render_markdown(derivation)
    assert "for `b`" in md and "for `a`" not in md and "The outputs of the network" not in md
    # a's output is answered too: [1, 2]·W_1 = [1, 2, 3], and 1 + 2·2 + 3·3 = 14
    assert answers(derivation)["sections"][0]["rows"]["a"]["output"] == ["14.0000000000000000000000000000"]


@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_every_text_format_renders_in_both_languages(lang, activation):
    spec = random_spec(random.Random(f"{lang} {activation}"), activation, biases=True)
    derivation = derive_spec(parse_spec({**spec, "lang": lang}))
    heading = "ネットワーク" if lang == "ja" else "network"
    for text in (symattn.render_latex(derivation), symattn.render_markdown(derivation),
                 symattn.render_html(derivation)):
        assert heading in text
    assert json.loads(symattn.render_json(derivation))["sections"][0]["activation"] == activation


@pytest.mark.pdf
@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_pdf_compiles_with_every_format(tmp_path, lang):
    spec = random_spec(random.Random(11), "swiglu", biases=True)
    spec["sections"].append({**random_spec(random.Random(12), "relu", biases=True)["sections"][0]})
    path = tmp_path / "ffn.json"
    path.write_text(json.dumps({**spec, "lang": lang}), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["render", str(path), "--format", "tex,md,html,json,pdf", "--out", str(out)]) == 0
    assert (out / "ffn.pdf").read_bytes().startswith(b"%PDF")
    assert {p.suffix for p in out.iterdir()} >= {".tex", ".md", ".html", ".json", ".pdf"}


def test_the_numbers_are_those_of_the_exact_forms():
    """Every activated and output number agrees with SymPy's own 40-digit evaluation of its exact form."""
    from sympy import N

    for activation in ACTIVATIONS[1:]:
        spec = random_spec(random.Random(f"exact {activation}"), activation, biases=True)
        result = derive_spec(parse_spec(spec), steps=False).sections[0].result
        for value in (*result.activated, *result.output):
            if not value.is_Rational:
                with mpmath.workdps(50):
                    number, exact = result.known.get(value), mpmath.mpf(str(N(value.doit(), 45)))
                    assert abs(number - exact) <= mpmath.mpf(10) ** -38 * max(1, abs(exact)), (activation, value)


def test_terms_that_cancel_out_give_an_exact_zero_and_near_cancellation_keeps_its_digits():
    from sympy import N

    same = {"kind": "feed_forward", "tokens": ["a"], "X": [["0.3", "0.7"]], "W_1": [["1"], ["2"]],
            "W_2": [["1", "1", "1"]], "activation": "gelu"}
    # h = [1.7, 1.7] twice: GELU(1.7) − GELU(1.7) is exactly 0, and shown with "="
    cancel = {**same, "W_1": [["1", "1"], ["2", "2"]], "W_2": [["1"], ["-1"]]}
    derivation = derive_spec(parse_spec({"lang": "en", "sections": [cancel]}))
    assert derivation.sections[0].result.output[0] == 0
    assert answers(derivation)["sections"][0]["rows"]["a"]["exact"]["output"] == ["0"]
    assert "&= [0]" in symattn.render_markdown(derivation)
    # h = 0.3 and 0.3 + 10^-30: GELU(0.3) − GELU(0.3 + 10^-30) ≈ −7.32 × 10^-31, all 30 digits correct
    near = {**same, "X": [["0.3"]], "W_1": [["1", "1"]], "b_1": ["0", "1e-30"], "W_2": [["1"], ["-1"]]}
    derivation = derive_spec(parse_spec({"sections": [near]}))
    output = derivation.sections[0].result.output[0]
    answer = answers(derivation)["sections"][0]["rows"]["a"]["output"][0]
    assert answer.startswith("-0.000000000000000000000000000000732327766827109862988938115973")
    assert str(N(output.doit(), 30)) == "-7.32327766827109862988938115973e-31"


def test_render_refuses_a_document_too_large_before_any_work(tmp_path):
    rng = random.Random(5)
    section = {"kind": "feed_forward", "tokens": [f"t{i}" for i in range(40)], "X": random_matrix(rng, 40, 16),
               "W_1": random_matrix(rng, 16, 64), "W_2": random_matrix(rng, 64, 16)}
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"sections": [section]}), encoding="utf-8")
    assert main(["render", str(path), "--format", "tex", "--out", str(tmp_path / "out")]) == 2
    assert not (tmp_path / "out").exists()
    section["focus"] = section["tokens"][:16]  # 16 tokens of d = 16, d_ff = 64: written out
    path.write_text(json.dumps({"sections": [section]}), encoding="utf-8")
    assert main(["render", str(path), "--format", "tex", "--out", str(tmp_path / "out")]) == 0
