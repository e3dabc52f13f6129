"""`symattn solve` JSON: the documented schema, 30 significant digits, agreement with an independent float run."""

from __future__ import annotations

import json
from decimal import Decimal, localcontext

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from symattn import answers, derive, derive_spec, parse_spec, render_json
from symattn.cli import main


def significant_digits(text: str) -> int:
    return len(text.lstrip("-").replace(".", "").lstrip("0"))


def test_schema_of_mt():
    data = json.loads(render_json(derive("mt")))
    kinds = [section["kind"] for section in data["sections"]]
    assert kinds == ["self_attention", "cross_attention", "multi_head"]
    self_attention, cross, multi = data["sections"]
    for section in (self_attention, cross):
        assert set(section) >= {"kind", "Q", "K", "V", "queries", "exact"}
        assert set(section["exact"]) == {"Q", "K", "V"}
    love = self_attention["queries"]["love"]
    assert set(love) == {"scores", "scaled_scores", "weights", "output", "exact"}
    assert set(love["exact"]) == {"scores", "scaled_scores", "Z", "weights", "output"}
    assert list(cross["queries"]) == ["私は"]
    assert set(multi) >= {"kind", "heads", "concat", "output", "exact"}
    assert multi["output"][1].startswith("0.923000")
    assert love["exact"]["scores"][0] == r"\frac{579}{500}"
    assert love["exact"]["scaled_scores"][0] == r"\frac{579 \sqrt{2}}{1000}"
    # Z is named once per query; each weight and output entry divides by it instead of repeating the sum.
    terms = [rf"e^{{{a}}}" for a in love["exact"]["scaled_scores"]]
    assert love["exact"]["Z"] == " + ".join(terms)
    assert love["exact"]["weights"] == [rf"\frac{{{term}}}{{Z}}" for term in terms]
    assert love["exact"]["output"][0] == (r"\frac{\frac{11}{10} " + terms[0] + r" + \frac{18}{25} " + terms[1]
                                          + r" + \frac{83}{50} " + terms[2] + r" + \frac{9}{25} " + terms[3] + "}{Z}")


def test_every_number_has_30_significant_digits():
    data = answers(derive("mt"))

    def numbers(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key != "exact":
                    yield from numbers(value)
        elif isinstance(node, list):
            for value in node:
                yield from numbers(value)
        elif isinstance(node, str) and node[:1] in "-0123456789":
            yield node

    found = list(numbers(data["sections"]))
    assert len(found) > 100
    assert all(significant_digits(n) >= 30 for n in found), [n for n in found if significant_digits(n) < 30]


def test_article_values_in_json():
    love = answers(derive("mt"))["sections"][0]["queries"]["love"]
    assert Decimal(love["weights"][3]).quantize(Decimal("0.0001")) == Decimal("0.3382")
    assert love["weights"][3].startswith("0.33823803839306")


entries = st.integers(-20, 20).map(lambda n: str(Decimal(n) / 10))


@st.composite
def specs(draw):
    n, d, d_k, d_v = (draw(st.integers(1, 4)) for _ in range(4))

    def matrix(rows, cols):
        return [[draw(entries) for _ in range(cols)] for _ in range(rows)]

    return {"sections": [{"kind": "self_attention", "tokens": [f"t{i}" for i in range(n)], "X": matrix(n, d),
                          "W_Q": matrix(d, d_k), "W_K": matrix(d, d_k), "W_V": matrix(d, d_v), "focus": "all"}]}


@settings(max_examples=25, deadline=None)
@given(specs())
def test_json_matches_float_attention(data):
    section = data["sections"][0]
    result = answers(derive_spec(parse_spec(data)))["sections"][0]
    X, WQ, WK, WV = (np.array(section[k], dtype=float) for k in ("X", "W_Q", "W_K", "W_V"))
    Q, K, V = X @ WQ, X @ WK, X @ WV
    S = Q @ K.T
    A = np.exp(S / np.sqrt(WK.shape[1]))
    A /= A.sum(axis=1, keepdims=True)
    for i, token in enumerate(section["tokens"]):
        query = result["queries"][token]
        assert np.allclose(np.array(query["scores"], dtype=float), S[i], atol=1e-12, rtol=0)
        assert np.allclose(np.array(query["weights"], dtype=float), A[i], atol=1e-12, rtol=0)
        assert np.allclose(np.array(query["output"], dtype=float), (A @ V)[i], atol=1e-12, rtol=0)
        with localcontext() as context:
            context.prec = 80  # each weight is within 5e-30 of its exact value (30 significant digits, ≤ 1)
            assert abs(sum(Decimal(w) for w in query["weights"]) - 1) <= Decimal("5e-30") * len(query["weights"])


def test_solve_prints_json(capsys):
    assert main(["solve", "--example", "mt"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["title"] == "I love machine learning"


def test_render_writes_json(tmp_path, capsys):
    assert main(["render", "--example", "mt", "--format", "json", "--out", str(tmp_path)]) == 0
    assert json.loads((tmp_path / "mt.json").read_text(encoding="utf-8"))["sections"][2]["kind"] == "multi_head"


def test_symbolic_numbers_are_null_with_exact_latex():
    data = answers(derive("symbolic"))["sections"][0]
    assert data["Q"][0][0] is None
    assert data["exact"]["Q"][1][0] == r"x_{21} + \frac{x_{22}}{10}"


def _all_tokens_spec(n: int) -> dict:
    """Self-attention over n tokens, every query, with small entries that vary by token."""
    rows = [[f"{(3 * i) % 7 / 10}", f"{(5 * i) % 11 / 10}"] for i in range(n)]
    return {"sections": [{"kind": "self_attention", "tokens": [f"t{i}" for i in range(n)], "X": rows,
                          "W_Q": [["1", "0.2"], ["0.1", "0.9"]], "W_K": [["0.6", "0.1"], ["-0.3", "1"]],
                          "W_V": [["1.2", "0"], ["-0.2", "0.8"]], "focus": "all"}]}


def test_exact_outputs_of_many_keys_refer_to_the_scaled_scores_and_v():
    """Beyond 16 keys an output entry's exact form names its terms instead of writing them out, so the JSON grows
    with the number of answers (n² weights), not n²·d times n; the form means what the decimals say."""
    sizes = {}
    for n in (20, 40):
        text = render_json(derive_spec(parse_spec(_all_tokens_spec(n))))
        section = json.loads(text)["sections"][0]
        sizes[n] = len(text)
        query = section["queries"]["t7"]
        assert query["exact"]["output"] == [rf"\frac{{1}}{{Z}} \sum_{{j=1}}^{{{n}}} V_{{j,{c}}} e^{{a_j}}"
                                            for c in (1, 2)]
        a = np.array(query["scaled_scores"], dtype=float)
        V = np.array(section["V"], dtype=float)
        assert np.allclose(np.array(query["output"], dtype=float), np.exp(a) @ V / np.exp(a).sum(), atol=1e-12)
    assert sizes[40] / sizes[20] < 4.4  # n² answers: 4 × as many, each about as long


def test_exact_outputs_of_few_keys_are_written_out():
    """Up to 16 keys the output's exact form is the sum itself."""
    section = json.loads(render_json(derive_spec(parse_spec(_all_tokens_spec(16)))))["sections"][0]
    output = section["queries"]["t1"]["exact"]["output"][0]
    assert r"\sum" not in output and output.count("e^{") >= 12  # a term per key with a nonzero value
