"""Next-token prediction (kind "next_token"): exact values against an independent numpy float implementation on
random inputs, a small example worked exactly, ties said only where they are, one-line errors, user text escaped
in every format, and both languages rendered to every format.

The PyTorch conventions the float implementation follows (and so the kind must):
- logits = x @ W_vocab + b: nn.Linear(d, |V|) stores its weight as W_vocab.T, so its output is x @ weight.T + bias;
- tied embeddings: lm_head.weight = embedding.weight (E, one row per vocabulary entry), so logits = x @ E.T (+ b);
- temperature: logits / T before the softmax (as Hugging Face's TemperatureLogitsWarper);
- top-k: torch.topk(logits, k), the others set to -inf, softmax again: e^{a_j} / Σ_{top k} e^{a};
- greedy: torch.argmax, which returns the first maximal index when several are maximal.
"""

from __future__ import annotations

import json
import random
from fractions import Fraction

import numpy as np
import pytest
from sympy import E, Rational, exp, simplify

import symattn
from symattn.cli import main
from symattn.render.displayed import displayed_lines

SMALL = {"title": "Tied", "lang": "en", "sections": [{
    "kind": "next_token", "tokens": ["I", "love"], "X": [[1, 0], ["0.5", "0.5"]],
    "vocabulary": ["A", "B", "C", "D"], "tied": True, "embeddings": [[1, 1], [2, 0], [0, 2], [-1, 0]]}]}


def section(**changes) -> dict:
    """A small next-token spec (W_vocab, bias, temperature, top-k) with some keys changed (None: removed)."""
    data = {"kind": "next_token", "tokens": ["<s>", "私は"], "X": [["0.5", "-0.2", "1.0"], ["0.8", "0.4", "-0.6"]],
            "vocabulary": ["猫", "が", "好き", "です", "犬"],
            "W_vocab": [["1.0", "0.5", "-0.3", "0.2", "0"], ["0.2", "1.0", "0.4", "-0.5", "0.1"],
                        ["-0.4", "0.3", "1.2", "0.6", "-1.0"]],
            "b_vocab": ["0.1", 0, 0, "-0.1", "0.2"], "temperature": "0.5", "top_k": 3}
    data.update(changes)
    return {"title": "Next", "lang": "en", "sections": [{k: v for k, v in data.items() if v is not None}]}


def derive(spec: dict, lang: str | None = None) -> symattn.Derivation:
    return symattn.derive_spec(symattn.parse_spec(spec), lang=lang)


def answer(spec: dict) -> dict:
    return symattn.answers(derive(spec))["sections"][0]


# ------------------------------------------------------------ the independent float implementation


def reference(x, W, b, T, k):
    """numpy: logits, probabilities, ranking (stable: equal logits in vocabulary order), top-k renormalised."""
    logits = x @ W + (0 if b is None else b)
    a = logits / T
    p = np.exp(a - a.max())
    p /= p.sum()
    ranking = np.argsort(-logits, kind="stable")
    top = None
    if k is not None:
        kept = ranking[:k]
        q = np.exp(a[kept] - a[kept].max())
        top = (kept, q / q.sum())
    return logits, p, ranking, top


def draw(rng: random.Random):
    """Random inputs as decimal strings (exact in the spec) and their floats."""
    d, size = rng.randint(1, 5), rng.randint(2, 8)

    def number():
        return f"{rng.randint(-300, 300) / 100:.2f}"

    X = [[number() for _ in range(d)] for _ in range(3)]
    tied = rng.random() < 0.5
    weights = [[number() for _ in range(d)] for _ in range(size)] if tied else \
        [[number() for _ in range(size)] for _ in range(d)]
    bias = [number() for _ in range(size)] if rng.random() < 0.5 else None
    T = rng.choice(["1", "0.5", "0.7", "2", "1/3", "1.25"])
    k = rng.choice([None, rng.randint(1, size)])
    data = {"tokens": ["a", "b", "c"], "X": X, "vocabulary": [f"v{i}" for i in range(size)], "temperature": T,
            "top_k": k, "b_vocab": bias, "focus": rng.choice(["a", "b", "c"])}
    data.update({"tied": True, "embeddings": weights, "W_vocab": None} if tied else {"W_vocab": weights})
    floats = np.array(X, dtype=float)[["a", "b", "c"].index(data["focus"])]
    W = np.array(weights, dtype=float)
    return data, floats, (W.T if tied else W), None if bias is None else np.array(bias, dtype=float), \
        float(Fraction(T)), k


@pytest.mark.parametrize("seed", range(30))
def test_the_answers_agree_with_numpy_on_random_inputs(seed):
    data, x, W, b, T, k = draw(random.Random(seed))
    got = answer(section(**data))
    logits, p, ranking, top = reference(x, W, b, T, k)
    np.testing.assert_allclose([float(v) for v in got["logits"]], logits, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose([float(v) for v in got["probabilities"]], p, rtol=1e-9, atol=1e-300)
    assert sum(Fraction(v) for v in got["probabilities"]) == pytest.approx(1, abs=1e-25)
    vocabulary = data["vocabulary"]
    assert got["ranking"] == [vocabulary[i] for i in ranking]
    assert got["predicted"] == vocabulary[int(np.argmax(logits))]  # the first maximal index, as torch.argmax
    if k is None:
        assert "top_k" not in got
    else:
        kept, q = top
        assert got["top_k"]["k"] == k and got["top_k"]["tokens"] == [vocabulary[i] for i in kept]
        np.testing.assert_allclose([float(v) for v in got["top_k"]["probabilities"]], q, rtol=1e-9)
    if T == 1:
        assert "scaled_logits" not in got
    else:
        np.testing.assert_allclose([float(v) for v in got["scaled_logits"]], logits / T, rtol=1e-12, atol=1e-12)


def test_tied_embeddings_are_the_product_with_e_transposed_as_pytorch_weight_tying():
    rng = np.random.default_rng(7)
    E_rows = rng.integers(-9, 10, size=(6, 3)) / 4
    x = np.array([0.25, -1.5, 2.0])
    tied = answer(section(tokens=["t"], X=[[str(v) for v in x]], vocabulary=list("abcdef"), tied=True,
                          embeddings=[[str(v) for v in row] for row in E_rows], W_vocab=None, b_vocab=None,
                          temperature=None, top_k=None))
    untied = answer(section(tokens=["t"], X=[[str(v) for v in x]], vocabulary=list("abcdef"),
                            W_vocab=[[str(v) for v in row] for row in E_rows.T], b_vocab=None, temperature=None,
                            top_k=None))
    assert [float(v) for v in tied["logits"]] == pytest.approx(list(x @ E_rows.T), abs=1e-15)
    assert tied["logits"] == untied["logits"] and tied["probabilities"] == untied["probabilities"]
    assert tied["tied"] is True and untied["tied"] is False


# ------------------------------------------------------------ exact values


def test_a_small_example_exactly():
    derivation = derive(SMALL)
    result = derivation.sections[0].result
    assert result.logits == (1, 1, 1, Rational(-1, 2))  # x = [1/2, 1/2] times E's rows
    weights = result.softmax.weights
    assert simplify(weights[0] - E / (3 * E + exp(Rational(-1, 2)))) == 0
    assert simplify(sum(weights) - 1) == 0
    got = symattn.answers(derivation)["sections"][0]
    assert got["exact"]["logits"] == ["1", "1", "1", r"- \frac{1}{2}"]
    assert got["exact"]["probabilities"][0] == r"\frac{e}{Z}"
    assert got["probabilities"][3].startswith("0.06922778450193099267273427410")
    assert got["ranking"] == ["A", "B", "C", "D"] and got["predicted"] == "A"
    assert got["ties"] == [["A", "B", "C"]]
    assert symattn.kind_of("next_token").outputs(derivation.sections[0].spec, result) is None


def test_top_k_renormalises_over_the_kept_entries_exactly():
    got = answer({**SMALL, "sections": [{**SMALL["sections"][0], "top_k": 2}]})
    assert got["top_k"]["tokens"] == ["A", "B"]
    assert got["top_k"]["exact"]["probabilities"] == [r"\frac{1}{2}", r"\frac{1}{2}"]  # e/(2e): exactly 1/2
    assert got["top_k"]["probabilities"] == ["0.500000000000000000000000000000"] * 2
    one = answer({**SMALL, "sections": [{**SMALL["sections"][0], "top_k": 1}]})
    assert one["top_k"]["exact"]["probabilities"] == ["1"]


def test_every_displayed_line_checks_from_the_numbers_shown():
    for spec in (section(), SMALL, section(temperature="1/3", top_k=None), section(X=[["1/3", "2/7", "0.1"]] * 2)):
        for digits in (2, 4):
            lines = displayed_lines(derive(spec), digits=digits)
            assert lines and all(line.checks() for line in lines)
            assert all(line.result.exact or line.relation == "≈" for line in lines)


def test_the_document_shows_the_logits_term_by_term_and_a_negative_bias_subtracted():
    tex = symattn.render_latex(derive(section()))
    assert r"0.8 \cdot 0.2 + 0.4 \cdot (-0.5) + (-0.6) \cdot 0.6 - 0.1 = -0.5" in tex  # ℓ of です
    assert r"\frac{1.22}{0.5} = 2.44" in tex  # the temperature's division, exact
    assert r"\tilde{Z}" in tex


# ------------------------------------------------------------ ties: said where they are, never otherwise


def text(spec: dict, lang: str = "en") -> str:
    return symattn.render_markdown(derive(spec, lang))


def test_a_tie_at_the_top_is_said_and_argmax_takes_the_first_in_vocabulary_order():
    md = text(SMALL)
    assert "The largest logit is shared by `A`, `B` and `C`" in md and "the next token is `A`" in md
    assert "share a rank" in md
    assert "| $1$ | `C` |" in md and "| $4$ | `D` |" in md  # equal logits share rank 1; D is 4th
    assert "最大のロジットを「`A`」、「`B`」と「`C`」が共有" in text(SMALL, "ja")


def test_no_tie_is_claimed_where_the_logits_differ_even_by_little():
    spec = {**SMALL, "sections": [{**SMALL["sections"][0], "X": [[1, 0], ["0.5", "0.5000000001"]]}]}
    got = answer(spec)
    assert got["ties"] == [] and got["ranking"] == ["C", "A", "B", "D"] and got["predicted"] == "C"
    md = text(spec)
    assert "shared by" not in md and "share a rank" not in md and "inside a tie" not in md
    assert "Greedy decoding takes the entry with the largest probability: the next token is `C`" in md


def test_a_tie_cut_by_the_kth_place_is_said_and_one_not_cut_is_not():
    cut = text({**SMALL, "sections": [{**SMALL["sections"][0], "top_k": 2}]})
    assert "The k-th place falls inside a tie: `A`, `B` and `C` have equal logits" in cut
    whole = text({**SMALL, "sections": [{**SMALL["sections"][0], "top_k": 3}]})
    assert "inside a tie" not in whole and "The largest logit is shared" in whole


# ------------------------------------------------------------ errors


@pytest.mark.parametrize("changes, field, problem", [
    ({"tied": True, "embeddings": [[1, 0, 0]] * 5}, "W_vocab", "give either W_vocab or tied = true"),
    ({"W_vocab": [["1", "0", "0", "0", "0"]] * 2}, "W_vocab", "2 rows, but there are 3 X columns"),
    ({"W_vocab": [["1", "0", "0", "0"]] * 3}, "W_vocab", "4 columns, but there are 5 vocabulary entries"),
    ({"W_vocab": None, "tied": True, "embeddings": [[1, 0, 0]] * 4}, "embeddings", "4 rows, but there are 5"),
    ({"W_vocab": None, "tied": True, "embeddings": [[1, 0]] * 5}, "embeddings", "2 columns, but X has 3"),
    ({"W_vocab": None, "tied": True}, "embeddings", "missing"),
    ({"embeddings": [[1, 0, 0]] * 5}, "embeddings", "applies with tied = true"),
    ({"tied": "yes"}, "tied", "expected true or false"),
    ({"b_vocab": [0, 0]}, "b_vocab", "2 entries, but there are 5 vocabulary entries"),
    ({"b_vocab": [0, 0, "x y", 0, 0]}, "b_vocab[2]", "expected a number"),
    ({"b_vocab": [[0, 0, 0, 0, 0]]}, "b_vocab", "expected a non-empty list of numbers"),
    ({"focus": "私"}, "focus", "no token '私' in tokens (did you mean '私は'?)"),
    ({"focus": ["私は"]}, "focus", "expected one token name"),
    ({"vocabulary": ["猫", "が", "好き", "猫", "犬"]}, "vocabulary[3]", "duplicate token '猫'"),
    ({"vocabulary": ["猫", "", "好き", "です", "犬"]}, "vocabulary[1]", "non-empty string"),
    ({"temperature": 0}, "temperature", "expected a number above 0, got 0"),
    ({"temperature": "-0.5"}, "temperature", "expected a number above 0"),
    ({"top_k": 0}, "top_k", "expected a positive whole number up to 5"),
    ({"top_k": 6}, "top_k", "expected a positive whole number up to 5"),
    ({"X": [["a", "0", "1"], ["0", "1", "0"]]}, "X", "expected numbers"),
    ({"X": [["1", "0", "1"]]}, "X", "1 rows, but there are 2 tokens"),
    ({"top_p": 0.9}, "top_p", "unknown key (did you mean 'top_k'?)"),
])
def test_bad_input_is_one_line_naming_the_field(changes, field, problem):
    with pytest.raises(symattn.SpecError) as error:
        symattn.parse_spec(section(**changes))
    message = str(error.value)
    assert message.startswith(f"sections[0].{field}: ") and problem in message and "\n" not in message


def test_the_command_line_refuses_bad_input_with_exit_2_and_writes_nothing(tmp_path, capsys):
    spec = tmp_path / "bad.json"
    spec.write_text(json.dumps(section(temperature=0)), encoding="utf-8")
    assert main(["render", str(spec), "--format", "md", "--out", str(tmp_path / "out")]) == 2
    assert "sections[0].temperature" in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_a_vocabulary_too_large_to_write_out_is_refused_before_any_work(tmp_path, capsys):
    size = 20000
    spec = tmp_path / "big.json"
    spec.write_text(json.dumps({"sections": [{"kind": "next_token", "tokens": ["t"], "X": [[1]],
                                              "vocabulary": [f"v{i}" for i in range(size)],
                                              "W_vocab": [[1] * size]}]}), encoding="utf-8")
    assert main(["render", str(spec), "--format", "md", "--out", str(tmp_path / "out")]) == 2
    assert "sections[0].vocabulary" in capsys.readouterr().err


# ------------------------------------------------------------ user text and every format


AWKWARD = ["&", "%", "<b>", "a_b", "猫です"]


def awkward() -> dict:
    return section(vocabulary=AWKWARD)


def test_vocabulary_strings_are_escaped_in_every_format():
    derivation = derive(awkward())
    tex = symattn.render_latex(derivation)
    assert r"\tok{\&}" in tex and r"\tok{\%}" in tex and r"\tok{a\_b}" in tex and "猫です" in tex
    html = symattn.render_html(derivation)
    assert "<b>" not in html.replace("<b>Step", "") and "&lt;b&gt;" in html
    md = symattn.render_markdown(derivation)
    assert "`<b>`" in md and "`a_b`" in md
    assert answer(awkward())["vocabulary"] == AWKWARD


@pytest.mark.pdf
@pytest.mark.parametrize("lang", ["ja", "en"])
def test_both_languages_render_to_every_format(tmp_path, lang):
    spec = tmp_path / "next.json"
    spec.write_text(json.dumps(awkward()), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["render", str(spec), "--lang", lang, "--format", "tex,pdf,md,html,json", "--out", str(out)]) == 0
    files = {path.suffix: path for path in out.iterdir() if not path.name.startswith(".")}  # (the manifest)
    assert files[".pdf"].read_bytes().startswith(b"%PDF")
    heading = {"ja": "次トークン予測", "en": "Next-token prediction"}[lang]
    for suffix in (".md", ".html"):
        assert heading in files[suffix].read_text(encoding="utf-8")
    # LaTeX keeps a heading's words whole: \mbox{トークン}, Next{-}token
    assert {"ja": r"次\mbox{トークン}予測", "en": "Next{-}token prediction"}[lang] in files[".tex"].read_text("utf-8")
    assert json.loads(files[".json"].read_text(encoding="utf-8"))["sections"][0]["predicted"] == "&"
