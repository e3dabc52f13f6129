"""ALiBi (Press et al., 2021, arXiv:2108.12409), through the public API: an independent float implementation agrees
with the exact answers; the paper's geometric slopes are exact; bad input is one line naming its field (exit 2,
nothing written); the example renders to every format in both languages; every line the page shows checks."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from sympy import Rational

import symattn
from symattn.cli import main
from symattn.render.displayed import displayed_lines

# ------------------------------------------------------------ ALiBi in floats, from the paper


def alibi_float(X, heads, slopes, d_k=None, W_O=None):
    """softmax(q_i K^T / √d_k + m·[−(i−1), …, −1, 0]) V per head, causal (query i sees keys j ≤ i); the heads'
    outputs side by side, times W_O if given. Returns per head (scaled, biased, weights, output), and the rows."""
    X = np.asarray(X, float)
    n = X.shape[0]
    i, j = np.indices((n, n))
    per_head, outputs = [], []
    for (W_Q, W_K, W_V), m in zip(heads, slopes, strict=True):
        Q, K, V = X @ np.asarray(W_Q, float), X @ np.asarray(W_K, float), X @ np.asarray(W_V, float)
        scaled = Q @ K.T / np.sqrt(d_k or K.shape[1])
        biased = np.where(j <= i, scaled - m * (i - j), -np.inf)
        e = np.exp(biased - biased.max(axis=1, keepdims=True))
        A = e / e.sum(axis=1, keepdims=True)
        per_head.append((np.where(j <= i, scaled, -np.inf), biased, A, A @ V))
        outputs.append(A @ V)
    joined = np.hstack(outputs)
    return per_head, joined if W_O is None else joined @ np.asarray(W_O, float)


def floats(texts):
    return np.array([[float(t) for t in row] for row in texts]) if isinstance(texts[0], list) \
        else np.array([float(t) for t in texts])


def random_matrix(rng, rows, cols):
    return [[str(rng.choice([-1, 1]) * rng.randint(0, 20) / 10) for _ in range(cols)] for _ in range(rows)]


def random_section(rng):
    n, d, d_k, d_v = rng.randint(1, 5), rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 3)
    section = {"kind": "alibi", "tokens": [f"t{t}" for t in range(n)], "X": random_matrix(rng, n, d),
               "focus": "all"}

    def weights():
        return {"W_Q": random_matrix(rng, d, d_k), "W_K": random_matrix(rng, d, d_k), "W_V": random_matrix(rng, d, d_v)}

    shape = rng.choice(["slope", "one_of_H", "heads", "heads_slopes"])
    if shape == "slope":
        section.update(weights(), slope=rng.choice(["0.5", "1/3", "2", "0.125", "3/7"]))
        return section, None
    if shape == "one_of_H":
        H = rng.choice([1, 2, 3, 5, 8, 12])
        section.update(weights(), heads=H, head=rng.randint(1, H))
        return section, None
    H = rng.randint(1, 4)
    section["heads"] = [weights() for _ in range(H)]
    if shape == "heads_slopes":
        section["slopes"] = [rng.choice(["0.5", "1/3", "0.25", "1"]) for _ in range(H)]
    if rng.random() < 0.5:
        section["W_O"] = random_matrix(rng, H * d_v, rng.randint(1, 3))
    return section, H


def expected_slopes(section, H):
    if "slope" in section:
        return [float(Rational(section["slope"]))]
    if "slopes" in section:
        return [float(Rational(m)) for m in section["slopes"]]
    if H is None:
        return [2.0 ** (-8 * section["head"] / section["heads"])]
    return [2.0 ** (-8 * h / H) for h in range(1, H + 1)]


@pytest.mark.parametrize("seed", range(20))
def test_a_float_implementation_of_the_paper_agrees_with_the_exact_answers(seed):
    rng = random.Random(seed)
    section, H = random_section(rng)
    answers = symattn.answers(symattn.derive_spec(symattn.parse_spec({"sections": [section]})))["sections"][0]
    slopes = expected_slopes(section, H)
    heads = [(section["W_Q"], section["W_K"], section["W_V"])] if H is None else [
        (h["W_Q"], h["W_K"], h["W_V"]) for h in section["heads"]]
    per_head, rows = alibi_float(floats(section["X"]), [tuple(map(floats, h)) for h in heads], slopes,
                                 W_O=None if "W_O" not in section else floats(section["W_O"]))
    assert np.allclose(floats(answers["slopes"]), slopes, rtol=0, atol=1e-12)
    found = [answers] if H is None else answers["heads"]
    assert len(found) == len(per_head)
    for head, (scaled, biased, A, Z), m in zip(found, per_head, slopes, strict=True):
        n = len(section["tokens"])
        bias = floats(head["bias"])
        i, j = np.indices((n, n))
        assert np.array_equal(np.isinf(bias), j > i)
        assert np.allclose(bias[j <= i], (-m * (i - j))[j <= i], rtol=0, atol=1e-12)
        for t, token in enumerate(section["tokens"]):
            query = head["queries"][token]
            for key, want in (("scaled_scores", scaled[t]), ("biased_scores", biased[t]), ("weights", A[t]),
                              ("output", Z[t])):
                got = floats(query[key])
                assert np.array_equal(np.isinf(got), np.isinf(want)), (key, got, want)
                finite = ~np.isinf(want)
                assert np.allclose(got[finite], want[finite], rtol=0, atol=1e-9), (token, key, got, want)
            if t == 0:  # the first query sees only itself
                assert query["exact"]["weights"][0] == "1"
    if H is not None:
        key = "output" if "W_O" in section else "concat"
        for t, token in enumerate(section["tokens"]):
            assert np.allclose(floats(answers[key][token]), rows[t], rtol=0, atol=1e-9)


def test_the_first_query_sees_only_itself_with_weight_exactly_one():
    section, _ = random_section(random.Random(3))
    answers = symattn.answers(symattn.derive_spec(symattn.parse_spec({"sections": [section]})))["sections"][0]
    first = (answers if "queries" in answers else answers["heads"][0])["queries"][section["tokens"][0]]
    assert first["exact"]["weights"][0] == "1" and set(first["exact"]["weights"][1:]) <= {"0"}


# ------------------------------------------------------------ the paper's geometric slopes, exactly


def one_head(**keys):
    return {"kind": "alibi", "tokens": ["a", "b"], "X": [["1", "0"], ["0", "1"]], "W_Q": [["1", "0"], ["0", "1"]],
            "W_K": [["1", "0"], ["0", "1"]], "W_V": [["1", "0"], ["0", "1"]], **keys}


def several(count, **keys):
    """A section of `count` heads, each with one_head's weights."""
    weights = {k: v for k, v in one_head().items() if k.startswith("W_")}
    rest = {k: v for k, v in one_head().items() if not k.startswith("W_")}
    return {**rest, "heads": [weights] * count, **keys}


def slopes_of(section):
    return symattn.parse_spec({"sections": [section]}).sections[0].heads


def test_geometric_slopes_for_eight_heads_are_halves_down_to_one_256th():
    from symattn.kinds.alibi.spec import geometric_slope

    assert [geometric_slope(h, 8) for h in range(1, 9)] == [Rational(1, 2**h) for h in range(1, 9)]
    heads = slopes_of(several(8))
    assert [h.slope for h in heads] == [Rational(1, 2**h) for h in range(1, 9)]
    assert all(h.slope.is_Rational for h in heads)
    # one head of eight: head 3's slope is 1/8
    assert slopes_of(one_head(heads=8, head=3))[0].slope == Rational(1, 8)


def test_geometric_slopes_for_three_heads_are_exact_powers_of_two():
    from sympy import Integer

    heads = slopes_of(several(3))
    want = [Integer(2) ** Rational(-8, 3), Integer(2) ** Rational(-16, 3), Rational(1, 256)]
    assert [h.slope for h in heads] == want
    assert [h.slope.is_Rational for h in heads] == [False, False, True]
    assert heads[0].slope ** 3 == Rational(1, 256)  # 2^(-8/3), cubed, is 2^(-8) exactly
    answers = symattn.answers(symattn.derive_spec(symattn.parse_spec(
        {"sections": [one_head(heads=3, head=1)]})))["sections"][0]
    assert answers["geometric_heads"] == 3
    assert answers["slopes"][0].startswith("0.157490131236")  # 2^(-8/3) = 0.15749013123685915...
    assert answers["exact"]["slope"] == r"\frac{\sqrt[3]{2}}{8}"


def test_a_given_slope_is_exact():
    heads = slopes_of(one_head(slope="1/3"))
    assert heads[0].slope == Rational(1, 3)
    answers = symattn.answers(symattn.derive_spec(symattn.parse_spec({"sections": [one_head(slope="1/3")]})))
    section = answers["sections"][0]
    assert section["exact"]["bias"] == [["0", r"-\infty"], [r"- \frac{1}{3}", "0"]]
    assert section["bias"][1][0].startswith("-0.33333333333")


# ------------------------------------------------------------ bad input: one line naming the field, exit 2


BAD = [
    (one_head(slope="0"), "sections[0].slope", "above 0"),
    (one_head(slope="-0.5"), "sections[0].slope", "above 0"),
    (one_head(slope="half"), "sections[0].slope", "expected a positive number such as 0.5"),
    (one_head(), "sections[0].slope", "missing"),
    (one_head(slope="0.5", heads=8, head=1), "sections[0].heads", "not both"),
    (one_head(heads=8), "sections[0].head", "missing"),
    (one_head(heads=8, head=9), "sections[0].head", "up to 8"),
    (one_head(head=2), "sections[0].heads", "needs heads"),
    (one_head(heads=0, head=1), "sections[0].heads", "positive whole number"),
    ({**{k: v for k, v in one_head().items() if not k.startswith("W_")},
      "heads": [{"W_Q": [["1"], ["0"]], "W_K": [["1"], ["0"]], "W_V": [["1"], ["0"]]}] * 2,
      "slopes": ["0.5"]}, "sections[0].slopes", "1 slopes, but there are 2 heads"),
    ({**{k: v for k, v in one_head().items() if not k.startswith("W_")},
      "heads": [{"W_Q": [["1"], ["0"]], "W_K": [["1"], ["0"]], "W_V": [["1"], ["0"]]}] * 2,
      "slopes": ["0.5", "x"]}, "sections[0].slopes[1]", "expected a positive number"),
    ({**{k: v for k, v in one_head().items() if not k.startswith("W_")},
      "heads": [{"W_Q": [["1"], ["0"]], "W_K": [["1"], ["0"]], "W_V": [["1"], ["0"]]}] * 2,
      "slopes": "0.5"}, "sections[0].slopes", "expected a list"),
    ({**{k: v for k, v in one_head().items() if not k.startswith("W_")},
      "heads": [{"W_Q": [["1"], ["0"]], "W_K": [["1"], ["0"]], "W_V": [["1"], ["0"]], "slope": "1"}]},
     "sections[0].heads[0].slope", "unknown key"),
    ({**{k: v for k, v in one_head().items() if not k.startswith("W_")},
      "heads": [{"W_Q": [["1"], ["0"]], "W_K": [["1"], ["0"]], "W_V": [["1"], ["0"]]}] * 2,
      "W_O": [["1"]]}, "sections[0].W_O", "1 rows, but there are 2"),
    (one_head(slope="0.5", slopes=["0.5"]), "sections[0].slopes", "applies to a list of heads"),
    (one_head(slope="0.5", X=[["1", "0"]]), "sections[0].X", "1 rows, but there are 2 tokens"),
    (one_head(slope="0.5", X=[["a", "0"], ["0", "1"]]), "sections[0].X", "no symbols"),
    (one_head(slope="0.5", focus="z"), "sections[0].focus", "no token 'z'"),
]


@pytest.mark.parametrize("section, field, problem", BAD, ids=[f"{b[1]}:{b[2]}" for b in BAD])
def test_bad_input_is_one_line_naming_its_field(section, field, problem):
    with pytest.raises(symattn.SpecError) as error:
        symattn.parse_spec({"sections": [section]})
    assert error.value.field == field, str(error.value)
    assert problem in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize("section, field, problem", BAD[:4], ids=[b[1] + ":" + b[2] for b in BAD[:4]])
def test_the_command_line_exits_2_and_writes_nothing(section, field, problem, tmp_path, capsys):
    spec = tmp_path / "bad.json"
    spec.write_text(json.dumps({"sections": [section]}), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["render", str(spec), "--format", "tex,md,html,json", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and field in err and problem in err
    assert not out.exists() or not any(out.iterdir())


# ------------------------------------------------------------ the example in every format; what the page shows

FORMATS = ("tex", "md", "html", "json")


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_example_renders_to_every_text_format(lang, tmp_path):
    assert main(["render", "--example", "alibi", "--lang", lang, "--format", ",".join(FORMATS),
                 "--out", str(tmp_path)]) == 0
    heading = {"ja": "ALiBi：線形バイアス付きアテンション", "en": "ALiBi: Attention with Linear Biases"}[lang]
    for fmt in ("tex", "md", "html"):
        text = (tmp_path / f"alibi.{fmt}").read_text(encoding="utf-8")
        assert heading in text or fmt == "tex"  # (LaTeX keeps katakana words together: \\mbox{バイアス})
        assert "ALiBi" in text
        assert "0.4075" in text and "0.8625" in text
        if fmt != "html":  # (HTML writes the math as MathML)
            assert "0.9075 - 0.5 = 0.4075" in text  # a_私は of 猫が: 1.815/2 − 0.5, exactly
            assert "+ 0 = 0.8625" in text  # 私は's own score: B_ii = 0
    answers = json.loads((tmp_path / "alibi.json").read_text(encoding="utf-8"))["sections"][0]
    assert answers["kind"] == "alibi" and answers["slopes"][0].startswith("0.5000")
    assert answers["exact"]["bias"][2] == ["-1", r"- \frac{1}{2}", "0"]
    assert answers["queries"]["猫が"]["exact"]["biased_scores"] == [r"\frac{163}{400}", r"\frac{2729}{2000}",
                                                                  r"-\infty"]


@pytest.mark.pdf
@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_example_compiles_to_pdf(lang, tmp_path):
    assert main(["render", "--example", "alibi", "--lang", lang, "--format", "tex,md,html,json,pdf",
                 "--out", str(tmp_path)]) == 0
    assert (tmp_path / "alibi.pdf").read_bytes().startswith(b"%PDF")


GEOMETRIC = several(3, tokens=["a", "b", "c"], X=[["1.0", "0.5"], ["0.2", "1.5"], ["0.7", "0.3"]],
                    W_O=[["0.5", "0"], ["0", "0.5"], ["0.25", "0"], ["0", "0.25"], ["0.5", "0"], ["0", "0.5"]],
                    focus="all")
SPECS = {
    "example": "alibi",
    "one_of_three": {"sections": [{**one_head(heads=3, head=1), "tokens": ["a", "b", "c"],
                                   "X": [["1.0", "0.5"], ["0.2", "1.5"], ["0.7", "0.3"]], "focus": ["b", "c"]}]},
    "third": {"sections": [{**one_head(slope="1/3", scale="0.5"), "X": [["0.3", "1.2"], ["0.9", "0.4"]]}]},
    "unscaled": {"sections": [{**one_head(slope="0.25", scale=False), "X": [["0.3", "1.2"], ["0.9", "0.4"]]}]},
    "geometric_heads": {"sections": [GEOMETRIC]},
    "given_slopes": {"sections": [{**GEOMETRIC, "slopes": ["1/2", "1/3", "0.125"], "focus": "c"}]},
}


def derivation(name, lang="en", digits=None):
    spec = SPECS[name]
    if isinstance(spec, str):
        return symattn.derive(spec, lang=lang, digits=digits)
    return symattn.derive_spec(symattn.parse_spec({"lang": lang, **spec, **({"digits": digits} if digits else {})}))


@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("name", list(SPECS))
def test_every_spec_renders_in_every_format(name, lang):
    found = derivation(name, lang)
    for text in (symattn.render_latex(found), symattn.render_markdown(found)):
        assert "B_{ij}" in text and "-\\infty" in text and "ALiBi" in text
    html = symattn.render_html(found)
    assert "ALiBi" in html and "<math" in html and "<svg" in html  # MathML, and the flow figure drawn in SVG
    assert json.loads(symattn.render_json(found))["sections"][0]["kind"] == "alibi"


@pytest.mark.parametrize("digits", [None, 3])
@pytest.mark.parametrize("name", list(SPECS))
def test_every_displayed_line_checks(name, digits):
    from tests.render.test_displayed_lines import check

    lines = displayed_lines(derivation(name, digits=digits))
    assert len(lines) > 10
    for line in lines:
        check(line)
        assert line.checks()


def test_the_biased_score_lines_are_on_the_page():
    """Each visible key of a query has its line a_j = s_j / √d_k + B_ij, the diagonal's with B_ii = 0; the first
    query's weight is exactly 1, said so once, and only of it."""
    found = derivation("example", lang="ja")
    lines = displayed_lines(found)
    whats = [line.what for line in lines]
    # the focus queries 私は, 猫が, 好き see 1, 2 and 3 keys: 1 + 3 + 5 lines (each off-diagonal key: scaling, bias)
    biased = [w for w in whats if w.startswith(r"\frac{s}") or w.startswith("{a}_")]
    assert len(biased) == 1 + 3 + 5
    first = [line for line in lines if line.what.startswith(r"{w}_{\cjksub{私は}}")]
    assert first[0].result.text == "1" and first[0].relation == "="
    text = symattn.render_markdown(found)
    assert text.count("その重みはちょうど 1 である") == 1


def test_an_irrational_slope_is_shown_rounded_with_approximately():
    text = symattn.render_markdown(derivation("one_of_three"))
    assert r"m &= 2^{-8 \cdot 1/3} = 2^{-8/3} \approx 0.1575" in text
    assert r"B &\approx" in text
    assert "3 does not divide 8" in text
    text = symattn.render_markdown(derivation("example"))
    assert "m &= 0.5" in text and "B &= " in text and "does not divide" not in text


def test_chained_rows_are_refused_with_one_line_for_now(tmp_path, capsys):
    """An alibi section neither takes an earlier section's rows (its sentences call X embeddings) nor passes its
    own on: both are refused, naming the field, rather than worded falsely."""
    first = {"name": "first", "kind": "self_attention", "tokens": ["a", "b"], "X": [["1", "0"], ["0", "1"]],
             "W_Q": [["1", "0"], ["0", "1"]], "W_K": [["1", "0"], ["0", "1"]], "W_V": [["1", "0"], ["0", "1"]],
             "focus": "a"}
    with pytest.raises(symattn.SpecError) as error:
        symattn.parse_spec({"sections": [first, {**one_head(slope="0.5"), "X": "from:first"}]})
    assert error.value.field == "sections[1].X" and "not supported yet" in str(error.value)
    with pytest.raises(symattn.SpecError) as error:
        symattn.parse_spec({"sections": [{**one_head(slope="0.5"), "name": "third"},
                                         {**first, "name": "next", "X": "from:third"}]})
    assert error.value.field == "sections[1].X" and "passes no output rows on" in str(error.value)


# ------------------------------------------------------------ the engine's generic bias


@pytest.mark.parametrize("divisor", ["2", "sqrt2"])
@pytest.mark.parametrize("slope", ["1/2", "2^(-8/3)"])
def test_the_engine_adds_a_bias_to_the_scaled_scores_on_both_paths(divisor, slope):
    """attention_of(bias=B): the logits are s / divisor + B_ij, masked keys −∞, on the fractions path (rational
    divisor and bias) and on the SymPy path (a surd or an irrational bias) alike; without a bias, as before."""
    from sympy import ImmutableMatrix, Integer, S, sqrt

    from symattn.engine.pipeline import attention_of
    from symattn.spec.model import Mask

    Q, K, V = (ImmutableMatrix(m) for m in ([[1, 0], [0, 1], [1, 1]], [[1, 2], [0, 1], [1, 0]],
                                             [[1, 0], [0, 1], [1, 1]]))
    d = Integer(2) if divisor == "2" else sqrt(2)
    m = Rational(1, 2) if slope == "1/2" else Integer(2) ** Rational(-8, 3)
    B = ImmutableMatrix(3, 3, lambda i, j: -m * (i - j) if j <= i else 0)
    mask = Mask.causal(3).values
    biased = attention_of({"Q": Q, "K": K, "V": V}, d, (0, 1, 2), mask, bias=B)
    plain = attention_of({"Q": Q, "K": K, "V": V}, d, (0, 1, 2), mask)
    S_ = Q * K.T
    for i in range(3):
        want = tuple(S_[i, j] / d + B[i, j] if j <= i else S.NegativeInfinity for j in range(3))
        assert all((a - b).simplify() == 0 if b is not S.NegativeInfinity else a is b
                   for a, b in zip(biased.queries[i].scaled, want, strict=True))
        assert plain.queries[i].scaled == tuple(S_[i, j] / d if j <= i else S.NegativeInfinity for j in range(3))
        weights = [float(w) for w in biased.queries[i].softmax.weights]
        logits = np.array([float(a) for a in want[:i + 1]])
        e = np.exp(logits - logits.max())
        assert np.allclose(weights[:i + 1], e / e.sum(), atol=1e-12) and weights[i + 1:] == [0.0] * (2 - i)
    rational = divisor == "2" and slope == "1/2"
    assert (biased.queries[2].softmax.fractions is not None) == rational  # the fractions path where it can be


# ------------------------------------------------------------ review findings: what the page says is true


def markdown(section, lang="en"):
    return symattn.render_markdown(symattn.derive_spec(symattn.parse_spec({"lang": lang, "sections": [section]})))


DIFFERENT = {"en": "prefers nearby tokens to a different degree", "ja": "度合いがヘッドごとに異なる"}
SAME = {"en": "all have the same slope", "ja": "傾きはすべて同じ"}
SOME = {"en": "some heads share a slope", "ja": "傾きが同じヘッドもあり"}


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("slopes, says", [(["0.5", "0.5"], SAME), (["1/2", "0.5"], SAME), (["0.5", "0.25"], DIFFERENT),
                                          (["0.5", "0.5", "0.25"], SOME), (None, DIFFERENT)])
def test_heads_prefer_nearby_tokens_to_different_degrees_only_when_their_slopes_differ(slopes, says, lang):
    section = several(len(slopes or "abc"), **({"slopes": slopes} if slopes else {}))
    text = markdown(section, lang)
    assert says[lang] in text
    for other in (DIFFERENT, SAME, SOME):
        if other is not says:
            assert other[lang] not in text


@pytest.mark.parametrize("example", ["alibi", "alibi_heads"])
def test_japanese_step_headings_and_figure_labels_follow_the_other_kinds(example):
    """The package writes "Step 1: …" and "図 1：…" in Japanese (symattn/locales/ja.toml, every kind's locale)."""
    import re

    other = symattn.render_markdown(symattn.derive("sliding_window", lang="ja"))
    assert re.search(r"^### Step 1: ", other, re.M) and re.search(r"^図 1：", other, re.M)
    text = symattn.render_markdown(symattn.derive(example, lang="ja"))
    headings = re.findall(r"^#+ (.*)$", text, re.M)
    numbered = [h for h in headings if re.search(r"\d+[：:]", h)]
    assert numbered and all(re.match(r"Step \d+: \S", h) for h in numbered), numbered
    assert "ステップ" not in text
    assert re.search(r"^図 1：", text, re.M) and not re.search(r"図\d", text)


EXAMPLES = symattn.__path__[0] + "/kinds/alibi/examples/"


@pytest.mark.parametrize("line, field, message", [
    ("slope = 1e400", "sections[0].slope", "got '1e400'"),
    ("slope = -1e3", "sections[0].slope", "above 0 (ALiBi's m > 0), got -1e3"),
    ("slope = -0.5", "sections[0].slope", "above 0 (ALiBi's m > 0), got -0.5"),
    ('slope = "abc"', "sections[0].slope", "expected a positive number such as 0.5, 2 or 1/3, got 'abc'"),
    ("slopes = 0.5", "sections[0].slopes", "positive numbers (one per head), got 0.5"),
    ("slopes = [0.5, 1e400, 1]", "sections[0].slopes[1]", "got '1e400'"),
    ('slopes = [0.5, "x", 1]', "sections[0].slopes[1]", "expected a positive number such as 0.5"),
])
def test_a_bad_slope_is_shown_as_the_spec_wrote_it(line, field, message, tmp_path, capsys):
    """The slope's error quotes the spec's own text (1e400, not Python's 1E+400 or Decimal('0.5')), and suggests
    only numbers a slope may be (positive ones)."""
    example = "alibi_heads.toml" if line.startswith("slopes") else "alibi.toml"
    with open(EXAMPLES + example, encoding="utf-8") as f:
        text = f.read()
    text = text.replace("W_O =", line + "\nW_O =") if line.startswith("slopes") else text.replace("slope = 0.5", line)
    spec = tmp_path / "bad.toml"
    spec.write_text(text, encoding="utf-8")
    assert main(["render", str(spec), "--format", "md", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and field + ":" in err and message in err, err
    assert "E+" not in err and "Decimal" not in err and "-1.25" not in err


AUTHORS = {"en": "The authors' released code uses a different set of slopes", "ja": "著者らが公開したコードは"}


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("section, said", [
    (several(3), True), (several(6), True), (one_head(heads=12, head=1), True), (one_head(heads=3, head=3), True),
    (several(8), False), (several(4), False), (several(1), False), (one_head(heads=16, head=2), False),
    (several(3, slopes=["0.5", "0.25", "0.125"]), False), (one_head(slope="0.5"), False),
])
def test_the_authors_code_is_noted_only_when_the_heads_are_not_a_power_of_two(section, said, lang):
    """2^(−8h/H) is the paper's rule; the authors' get_slopes differs from it when H is not a power of two."""
    text = markdown(section, lang)
    assert (AUTHORS[lang].lower() in text.lower()) == said


def test_the_heads_example_says_which_of_its_slopes_are_irrational(capsys):
    assert main(["examples"]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("alibi_heads "))
    assert "(two of them irrational, kept exact)" in line  # 2^(-8/3), 2^(-16/3); 2^(-8) = 1/256 is rational
    assert "(irrational, exact)" not in line


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_each_heads_vectors_and_steps_carry_its_index(lang):
    """A symbol has one value on a page: q_cats of head 1 and of head 2 differ, so they are q^(1)_cats and
    q^(2)_cats (k and v likewise), and the steps' headings name the head."""
    import re

    text = symattn.render_markdown(symattn.derive("alibi_heads", lang=lang))
    headings = re.findall(r"^### (.*)$", text, re.M)
    assert len(headings) == len(set(re.sub(r"Step \d+: ", "", h) for h in headings))  # no two steps alike
    for h in (1, 2, 3):
        assert rf"{{q}}^{{({h})}}_{{\text{{cats}}}} &= " in text
        assert rf"{{q}}^{{({h})}}_{{\text{{cats}}}} \cdot {{k}}^{{({h})}}_{{\text{{I}}}} &= " in text
        assert rf"{{v}}^{{({h})}}_{{\text{{love}}}} &= " in text
        word = {"en": f", head {h})", "ja": f"、ヘッド {h}）"}[lang]
        assert sum(("Softmax" in x or "Value" in x or "values" in x) and word in x for x in headings) == 2
    assert r"{q}_{\text{cats}}" not in text and r"{k}_{j}" not in text and r"{v}_{\text{I}}" not in text
    one = symattn.render_markdown(symattn.derive("alibi", lang=lang))  # one head: no index
    assert r"{q}_{\text{好き}}" in one and "^{(1)}" not in one
