"""Issue 31, a lecturer's review of the handouts: sentences that say only what the page establishes (the KV cache's
check, the FFN's vector–matrix product, the predicted token's probability printed) and text set as a page sets it
(positions as numbers, Greek letters and d = 4 as math), in both languages."""

from __future__ import annotations

from importlib.resources import files

import pytest

from symattn import answers, derive, derive_spec, parse_spec, render_latex, render_markdown
from symattn.cli import main

DOCS = {(name, lang): render_markdown(derive(name, lang=lang)) for name in ("layer", "modern") for lang in ("en", "ja")}


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_kv_cache_check_says_what_it_checks(lang):
    """Item 2: the cache gives past_K/past_V only, so nothing earlier can be recomputed: the check is of the mask."""
    text = DOCS["modern", lang]
    for circular in ("the same as recomputing the whole sequence", "the model would recompute",
                     "系列全体を再計算した場合と同じ", "モデルは系列全体を再計算する"):
        assert circular not in text
    if lang == "en":
        assert "### Check: the offset mask against the whole sequence's causal attention" in text
        assert "not the embeddings they came from, so the earlier positions cannot be recomputed here" in text
    else:
        assert "### 確認：オフセット付きマスクと系列全体の因果 attention" in text
        assert "それらを計算した埋め込みはないので、ここで前の位置を計算し直すことはできない" in text


def test_the_first_product_of_the_ffn_is_a_vector_matrix_product():
    """Item 3: not "entry by entry", which reads as an element-wise product."""
    en, ja = DOCS["layer", "en"], DOCS["layer", "ja"]
    assert "first weight matrix, entry by entry" not in en
    assert ("The row ${x}_{\\text{love}}$ is multiplied by the first weight matrix (a vector–matrix product): each "
            "entry of the result is the dot product of ${x}_{\\text{love}}$ with one column of the matrix:") in en
    assert "成分ごとに書くと" not in ja and "（ベクトルと行列の積）" in ja


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_predicted_token_is_named_with_its_probability(lang):
    """Item 5: a sentence naming p_機械学習 prints it, as the softmax line shows it (0.4959, inexact: ≈)."""
    last = answers(derive("layer", lang=lang))["sections"][-1]
    probability = dict(zip(last["vocabulary"], last["probabilities"], strict=True))["機械学習"]
    assert f"{float(probability):.4f}" == "0.4959"
    said = r"${p}_{\text{機械学習}} \approx 0.4959$"
    sentence = ("the next token is `機械学習`, with probability " if lang == "en" else "（確率 ") + said
    assert sentence in DOCS["layer", lang]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_positions_are_numbers_and_widths_are_math(lang):
    """Item 13: RoPE's positions as 2 and 3, not the vectors [2], [3]; d = 4 and γ, β in text set as math."""
    modern, layer = DOCS["modern", lang], DOCS["layer", lang]
    assert "| `machine` | $2$ |" in modern and "| `learning` | $3$ |" in modern
    assert "$[2]$" not in modern and "$[3]$" not in modern
    assert "$d = 4$" in layer and " d = 4" not in layer.replace("\\quad d = 4", "")
    assert "$d - 1$" in layer and "d − 1" not in layer
    assert "γ" not in layer and "β" not in layer  # the example's text writes $\gamma$, $\beta$


def test_greek_letters_in_english_latex_text_are_math_letters():
    """Item 13: upLaTeX would set a γ typed in English text full width from the Japanese font; the English
    preamble makes it math's γ (a user's text block may hold one)."""
    tex = render_latex(derive("layer", lang="en"))
    for code, command in (("03B3", "gamma"), ("03B2", "beta"), ("03A3", "Sigma")):
        assert f'\\kcatcode"{code}=15 \\DeclareUnicodeCharacter{{{code}}}{{\\ensuremath{{\\{command}}}}}' in tex


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_prose_plain_drops_the_interpretations_and_none_every_sentence(lang, tmp_path):
    """Item 7: `prose` (spec) and --prose: plain keeps definitions and step text, drops what the weights 'say'
    and what a result 'means'; none keeps headings, math and tables."""
    full = render_markdown(derive("mt", lang=lang))
    plain = render_markdown(derive("mt", lang=lang, prose="plain"))
    none = render_markdown(derive("mt", lang=lang, prose="none"))
    interpretations = (("So `love` attends most", "contributes most strongly", "This vector carries information")
                       if lang == "en" else ("したがって「`love`」は", "最も強く寄与する", "このベクトルには"))
    definitions = ("The query of `love`:", "Its dot product with each key") if lang == "en" else (
        "「`love`」の Query：", "各 Key とのドット積")
    for phrase in interpretations:
        assert phrase in full and phrase not in plain and phrase not in none
    for phrase in definitions:
        assert phrase in full and phrase in plain and phrase not in none
    for kept in ("### Step 4: Softmax", r"\approx [0.8933,\  0.9295,\  0.8176]", "| `love` | $[0.92,\\ 1.24]$ |"):
        assert kept in none
    spec = tmp_path / "plain.toml"
    spec.write_text((files("symattn.examples") / "mt.toml").read_text(encoding="utf-8").replace(
        'title = ', 'prose = "plain"\ntitle = ', 1), encoding="utf-8")
    assert render_markdown(derive(spec, lang=lang)) == plain


def test_prose_on_the_command_line_and_a_bad_value(tmp_path, capsys):
    assert main(["render", "--example", "mt", "--lang", "en", "--format", "md", "--prose", "none",
                 "--out", str(tmp_path)]) == 0
    assert "So `love` attends" not in (tmp_path / "mt.md").read_text(encoding="utf-8")
    bad = tmp_path / "bad.toml"
    bad.write_text('prose = "terse"\n[[sections]]\nkind = "text"\nparagraphs = ["a"]\n', encoding="utf-8")
    assert main(["render", str(bad), "--format", "md", "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.strip() == ("symattn: error: prose: expected \"full\", \"plain\" or \"none\", "
                                               "got 'terse'")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_grouped_query_attention_derives_the_rotation_once_and_labels_rotated_vectors(lang):
    """Item 4: modern's RoPE rotation is worked out once (q^(1) of learning at m = 3, cos 3, sin 3) and the tables
    and dot products name the rotated vectors q̂, K̂."""
    text = DOCS["modern", lang]
    assert r"{q}^{(1)}_{\text{learning}} &= [0.5,\  1.0]" in text
    assert r"\varphi_{0} &= 3 \cdot 1 = 3, \quad \cos(3) \approx -0.98999, \quad \sin(3) \approx 0.14112" in text
    assert r"&\approx [-0.6361,\  -0.9194]" in text
    assert r"| $\hat{K}^{[1]}$ |" in text and r"| $\hat{Q}^{(1)}$ |" in text
    assert r"{\hat{q}}^{(1)}_{\text{learning}} \cdot {\hat{k}}^{[1]}_{\text{I}}" in text
    assert r"| $K^{[1]}$ |" not in text and r"{q}^{(1)}_{\text{learning}} \cdot" not in text
    assert "$b = 10000$" in text


def test_an_exact_score_carries_equals():
    """Item 8: q̂·k̂ at equal positions is exactly 1 (cos² + sin²): '= 1', then '≈' the rounded operands."""
    text = DOCS["modern", "en"]
    assert (r"{\hat{q}}^{(1)}_{\text{learning}} \cdot {\hat{k}}^{[1]}_{\text{learning}} &= 1 \approx (-0.6361) \cdot "
            r"(-0.1411) + (-0.9194) \cdot (-0.9900)") in text
    assert r"\approx 1 \\" not in text and not text.count("\\approx 1\n")


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_exact_zeros_are_zeros_and_add_no_terms(lang):
    """Item 11: ReLU's exact zeros are 0 beside the rounded 0.8660, and the second product leaves their terms out."""
    text = DOCS["layer", lang]
    assert r"&\approx [0,\  0,\  0,\  0.8660]" in text
    assert r"&\approx [0.8660 \cdot (-0.9),\quad 0.8660 \cdot 0.6,\quad 0.8660 \cdot 0.8,\quad 0.8660 \cdot 0.4]" in text
    assert r"0.0000 \cdot" not in text
    note = ("Note: terms with a factor exactly 0 (an entry of a given matrix, or of the row) are left out."
            if lang == "en" else "注：因数がちょうど 0 である項（与えられた行列の成分、または行の成分が 0 のもの）は省略している。")
    assert note in text


def test_the_softmax_line_shows_the_scores_at_the_scores_decimals():
    """Item 9: with digits.scores = 3 the scaled scores are 3 decimals, and so are they inside softmax([...])."""
    spec = {"digits": {"scores": 3}, "sections": [{
        "kind": "self_attention", "tokens": ["I", "love", "cats"], "X": [["1", "0"], ["0.5", "1"], ["1", "1"]],
        "W_Q": [["1", "0.3"], ["0.2", "1"]], "W_K": [["1", "0.1"], ["0.4", "1"]], "W_V": [["1", "0"], ["0", "1"]],
        "focus": ["cats"]}]}
    text = render_markdown(derive_spec(parse_spec(spec), lang="en"))
    scaled = text.split(r"a &\approx [")[1].split("]")[0]
    inside = text.split(r"\operatorname{softmax}\bigl([")[1].split("]")[0]
    assert scaled == inside
    assert all(len(x.strip().split(".")[1]) == 3 for x in inside.split(r",\ "))


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_given_cache_is_shown_as_typed(lang):
    """Item 10: modern's past_K/past_V are typed [1, 0], [0.5, 0.5], …: the cache before the step shows them so,
    not [1.0000, 0.0000]; a self-attention cache typed [1.0, 0.5] stays [1.0, 0.5]."""
    assert r"| `I` | $0$ | $[1,\ 0]$ | $[1,\ 1]$ |" in DOCS["modern", lang]
    assert r"| `love` | $1$ | $[0.5,\ 0.5]$ | $[0,\ 1]$ |" in DOCS["modern", lang]
    spec = {"sections": [{
        "kind": "self_attention", "tokens": ["c"], "X": [["1", "1"]], "W_Q": [["1", "0"], ["0", "1"]],
        "W_K": [["1", "0"], ["0", "1"]], "W_V": [["1", "0"], ["0", "1"]], "past_tokens": ["a", "b"],
        "past_K": [["1.0", "0.5"], ["0.25", "1.0"]], "past_V": [["1.0", "0.0"], ["0.0", "1.0"]], "focus": ["c"]}]}
    text = render_markdown(derive_spec(parse_spec(spec), lang=lang))
    assert r"| `a` | $0$ | $[1.0,\ 0.5]$ | $[1.0,\ 0.0]$ |" in text
    assert r"| `b` | $1$ | $[0.25,\ 1.0]$ | $[0.0,\ 1.0]$ |" in text
