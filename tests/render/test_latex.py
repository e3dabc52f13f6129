"""The LaTeX renderer: the article's layout, escaping, line breaking."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from sympy import E, Rational, simplify, sqrt

from symattn import RenderError, derive, derive_spec, parse_spec
from symattn.document.steps import Name, Step
from symattn.numbers.display import format_numbers
from symattn.pipeline.parse import load_example
from symattn.render.escape import escape
from symattn.render.pdf import compile_with_log, overfull_boxes
from symattn.render.latex import LatexRenderer, render_latex, unbroken_words
from symattn.render.markdown import MarkdownRenderer
from symattn.typeset.layout import TABLE_LINES, UNBROKEN_ROWS, column_width, display_rows, visible_width, wrap


@pytest.fixture(scope="module")
def mt_tex():
    return {lang: render_latex(derive("mt", lang=lang)) for lang in ("ja", "en")}


def test_love_query_is_written_out_term_by_term(mt_tex):
    tex = mt_tex["ja"]
    assert r"[0.8 \cdot 1.0 + 1.2 \cdot 0.1,\quad 0.8 \cdot 0.2 + 1.2 \cdot 0.9]" in tex
    assert r"&= [0.92,\  1.24]" in tex
    assert r"0.8 \cdot 0.6 + 1.2 \cdot (-0.3)" in tex  # negative factors in parentheses


def test_every_encoder_key_and_value_product_is_written_out(mt_tex):
    tex = mt_tex["ja"]
    for token in ("I", "love", "machine", "learning"):
        # the encoder outputs are h_j, rows of H; x_love is the self-attention embedding
        assert rf"{{k}}_{{\mathrm{{{token}}}}} &= {{h}}_{{\mathrm{{{token}}}}} \cdot W_K" in tex
        assert rf"{{v}}_{{\mathrm{{{token}}}}} &= {{h}}_{{\mathrm{{{token}}}}} \cdot W_V" in tex
    assert r"[-0.080,\  1.341]" in tex


def test_scores_scaling_softmax_and_sum(mt_tex):
    tex = mt_tex["ja"]
    assert r"0.92 \cdot 0.45 + 1.24 \cdot 0.60 = 1.158" in tex
    assert r"\frac{1.158}{\sqrt{2}} \approx 0.8188" in tex
    assert r"\approx [0.1688,\  0.2472,\  0.2457,\  0.3382]" in tex
    assert r"&+ 0.338238 \cdot [0.36,\  1.44,\  0.84]" in tex  # with the decimals the sum needs
    assert r"\approx [0.8933,\  0.9295,\  0.8176]" in tex
    assert r"\approx [0.8467,\  0.8874,\  0.5768]" in tex
    assert r"= [0.8742,\  0.9230,\  0.6962]" in tex


def test_article_headings_in_both_languages(mt_tex):
    headings = ("Step 1: トークン埋め込み", "Step 7: 重み付き和", "Step 3: 最終射影", "Cross-Attention（デコーダ）")
    for heading in headings:  # a katakana word in a heading is one unbreakable box
        assert unbroken_words(escape(heading)) in mt_tex["ja"]
    assert r"Step 1: \mbox{トークン}埋め込み" in mt_tex["ja"]
    for heading in ("Step 1: Token embeddings", "Step 7: Weighted sum", "Step 3: Final projection"):
        assert heading in mt_tex["en"]
    assert "トークン" not in mt_tex["en"].split(r"\begin{document}")[1].replace("私は", "")


def test_user_text_is_escaped():
    nasty = r"\input{/etc/hostname}}$%#&_^~\directlua{os.exit(1)}"
    spec = parse_spec({"title": nasty, "sections": [{
        "kind": "self_attention", "tokens": [nasty, "b"], "X": [["1", "0"], ["0", "1"]],
        "W_Q": [["1", "0"], ["0", "1"]], "W_K": [["1", "0"], ["0", "1"]], "W_V": [["1"], ["2"]], "focus": nasty,
    }]})
    tex = render_latex(derive_spec(spec, lang="en"))
    assert r"\input{" not in tex and r"\directlua{" not in tex
    assert (r"\textbackslash{}input\{/etc/hostname\}\}\$\%\#\&\_\textasciicircum{}\textasciitilde{}"
            r"\textbackslash{}directlua") in tex
    assert escape("私は") == "私は"


def test_subscript_words_are_mathrm_when_plain_ascii_else_escaped_text():
    latex = LatexRenderer(lang="en")
    assert latex.name(Name("Q", token="love2")) == r"{Q}_{\mathrm{love2}}"
    assert latex.name(Name("z", label="concat")) == r"{z}_{\mathrm{concat}}"
    # a Japanese word at a readable size in a subscript (\cjksub of the preamble); the other formats' \text
    assert latex.name(Name("x", token="私は")) == r"{x}_{\cjksub{私は}}"
    assert MarkdownRenderer(lang="ja").name(Name("x", token="私は")) == r"{x}_{\text{私は}}"
    assert latex.name(Name("x", token="a b")) == r"{x}_{\text{a b}}"  # \mathrm would drop the space
    assert latex.name(Name("x", token="a_b$")) == r"{x}_{\text{a\_b\$}}"
    assert MarkdownRenderer(lang="en").name(Name("Q", token="love")) == r"{Q}_{\text{love}}"  # MathJax, KaTeX


def test_short_derivations_are_one_display_and_tall_ones_may_break_across_pages():
    """amsmath typesets an align* twice (once to measure it); a derivation short enough never to need a page
    break is one `aligned` display instead, and a matrix counts as tall as its rows."""
    latex = LatexRenderer(lang="en")

    def matrix(rows: int) -> str:
        return "\\begin{bmatrix}\n" + " \\\\\n".join(["1 & 2"] * rows) + "\n\\end{bmatrix}"

    assert display_rows(["a &= b", f"W &= {matrix(10)}", f"&= {matrix(10)} {matrix(11)}"]) == 1 + 10 + 11
    assert display_rows([r"a &= \frac{1}{2}", r"b &= \frac{1}{2} " + matrix(3)]) == 2 + 3  # a fraction: two rows
    short = [f"x_{i} &= {i}" for i in range(UNBROKEN_ROWS)]
    assert latex.align(short) == "\\[\\begin{aligned}\n" + " \\\\\n".join(short) + "\n\\end{aligned}\\]"
    assert latex.align([*short, "y &= 1"]).startswith("\\begin{align*}\n")
    half = UNBROKEN_ROWS // 2
    assert latex.align([f"W &= {matrix(half + 1)}", f"V &= {matrix(half)}"]).startswith("\\begin{align*}\n")
    tex = render_latex(derive("mt"))
    assert tex.count("\\begin{aligned}") == 38 and tex.count("\\begin{align*}") == 0  # the softmax of 4 keys too


def test_tables_taller_than_a_page_may_break_across_pages():
    """A tabular is one box: a table taller than TABLE_LINES is a longtable, whose columns all share one width (one
    chunk, so the one LaTeX pass gets them right); a column of wrapped vectors is flush left."""
    latex = LatexRenderer(lang="en")
    short = latex.table(["Token", "$x$"], ["a", "b"], [["$1$", "$2$"]])
    assert short.startswith("\\begin{center}\n\\begin{tabular}{lc}")
    wrapped = latex.cell_lines(["$[1,$", "$2]$"])
    tokens = [f"t{i}" for i in range(TABLE_LINES // 2 + 1)]  # two lines each
    tall = latex.table(["Token", "$x$"], tokens, [[wrapped] * len(tokens)])
    assert tall.startswith("\\begin{longtable}{ll}") and tall.endswith("\\bottomrule\n\\end{longtable}")
    assert latex.table(["Token", "$x$"], tokens[:-1], [[wrapped] * (len(tokens) - 1)]).startswith("\\begin{center}")


def test_matrices_taller_than_a_page_are_shown_in_labelled_bands_of_rows():
    """One bmatrix is one box: a matrix of more than `matrix_rows` rows is split into bands of nearly equal
    height, each labelled; with its columns split too, each column block is shown band by band. Markdown and
    HTML have no page foot and keep it whole."""
    from sympy import ImmutableMatrix

    from symattn.document.steps import Shown

    latex = LatexRenderer(lang="en")
    assert latex.settings["matrix_rows"] == 22
    tall = Shown(ImmutableMatrix(45, 2, range(90)))
    blocks = latex.matrix_blocks(tall, 80)
    assert [b.count("\\\\") + 1 for b in blocks] == [15, 15, 15]
    assert [b.split(r"\text")[1] for b in blocks] == ["{(rows 1–15)}", "{(rows 16–30)}", "{(rows 31–45)}"]
    assert blocks[1].startswith("\\begin{bmatrix}\n30 & 31 \\\\\n")
    wide = Shown(ImmutableMatrix(23, 40, [i % 7 for i in range(23 * 40)]))
    labels = [b.split(r"\text")[1] for b in latex.matrix_blocks(wide, 80)]
    # 20 digit columns and "(rows 12–23, columns 21–40)" would take 478 pt of the 470: 14 + 13 + 13
    assert labels[:3] == ["{(rows 1–11, columns 1–14)}", "{(rows 12–23, columns 1–14)}", "{(rows 1–11, columns 15–27)}"]
    assert LatexRenderer(lang="ja").block_label(range(0, 11), None) == "（第 1〜11 行）"
    assert MarkdownRenderer(lang="en").matrix_blocks(tall, 80) == [MarkdownRenderer(lang="en").bmatrix(tall)]
    fits = Shown(ImmutableMatrix(22, 2, range(44)))
    assert latex.matrix_blocks(fits, 80) == [latex.bmatrix(fits)]


def test_a_display_right_after_a_heading_has_no_empty_line_above_it(mt_tex):
    """A display that starts a paragraph gets an empty line above it from TeX; after a heading the renderer takes
    that line back. After a sentence the display continues its paragraph, as before."""
    tex = mt_tex["ja"]
    assert re.search(r"\\subsection\*\{\\headingwords \\marksection\{s\d+\}\{2\}\{Step 4: Softmax\}\}\n"
                     r"\\vspace\*\{-\\baselineskip\}\n\\\[\\begin\{aligned\}", tex)
    assert tex.count("\\vspace*{-\\baselineskip}") == 3  # Step 4 and Step 6 (softmax), Step 3 of the decoder
    assert "の Query：\n\\[\\begin{aligned}" in tex


def test_a_sentence_introducing_what_follows_stays_on_its_page(mt_tex):
    """A sentence ending in a colon is kept on the page of the paragraph or table it introduces (a display already
    continues its paragraph); after the sentence's text \\nopagebreak would not hold, so it comes after \\par."""
    tex = mt_tex["ja"]
    assert "でスケーリングする：\\keepwithnext\n\n${q}_{\\mathrm{love}}$ と各 Key ${k}_{j}$ は 2 次元" in tex
    assert "射影後のベクトル：\\keepwithnext\n\n\\begin{center}" in tex
    assert "Scale them by $\\sqrt{d_k} = \\sqrt{2}$:\\keepwithnext\n\n" in mt_tex["en"]
    assert "セルの色が濃いほど重みが大きい。\\keepwithnext\n\n\\begin{center}" in tex  # and a heatmap
    assert "を生成したと仮定する。\\keepwithnext\n\n" in tex  # a heading's one sentence before a table
    # a label stays with the display it names, its note between them too (issue 31 item 15: mt en p.3 -> 4)
    assert "「\\tok{love}」の Value\\keepwithnext\n\n\\note{" in tex
    assert "left out.}\\nopagebreak\n\\[" in mt_tex["en"]
    assert tex.split("\\begin{document}")[1].count("\\keepwithnext") == 9


def test_wide_rows_break_across_lines():
    pieces = [f"{i}.123 \\cdot 4.567 +" for i in range(30)]
    lines = wrap(pieces, 60)
    assert len(lines) > 1
    assert all(visible_width(line) <= 60 for line in lines)


def test_a_continued_line_starting_with_a_negative_number_keeps_its_sign_unspaced():
    latex = LatexRenderer(lang="en")
    lines = latex.continued("x &= ", latex.vector_pieces(format_numbers([Rational(-i, 3) for i in range(1, 30)])), 40)
    assert len(lines) > 1 and all(line.startswith(r"&\qquad {-}") for line in lines[1:])
    assert lines[0].startswith("x &= [-0.3333,")


def test_long_products_are_wrapped_in_the_document():
    n = 12
    row = [[str(Rational(i + 1, 10)) for i in range(n)]]
    W = [[f"0.{(i + j) % 9 + 1}" for j in range(3)] for i in range(n)]
    spec = parse_spec({"sections": [{"kind": "multi_head", "focus": "t", "heads": [{"output": row[0]}],
                                     "W_O": W}]})
    tex = render_latex(derive_spec(spec))
    for line in tex.splitlines():  # the products wrap; the row of 12 short entries stays whole (issue 31 item 14)
        if r"\cdot" in line and r"\cdot W_O = [0.1," not in line:
            assert visible_width(line) <= 90, line
    assert r"\cdot W_O = [0.1,\  0.2,\  0.3,\  0.4,\  0.5,\  0.6,\  0.7,\  0.8,\  0.9,\  1.0,\  1.1,\  1.2] \cdot W_O" in tex
    assert overfull_boxes(compile_with_log(tex, jobname="long")[1]) == []  # and it fits the page


def test_unknown_step_type_is_an_error_not_str():
    @dataclass(frozen=True)
    class Mystery(Step):
        pass

    with pytest.raises(RenderError, match="no method for step type Mystery"):
        LatexRenderer().render(Mystery())


def test_unknown_setting_is_rejected():
    with pytest.raises(RenderError, match="unknown LaTeX renderer setting"):
        LatexRenderer(colour="red")


def test_digits_setting_changes_rounding_only():
    tex = render_latex(derive("mt", digits=6))
    assert r"\approx [0.168815,\  0.247240,\  0.245706,\  0.338238]" in tex
    assert r"= 1.158" in tex


def test_computed_heads_are_derived():
    identity = [["1", "0"], ["0", "1"]]
    spec = parse_spec({"sections": [{
        "kind": "multi_head", "focus": "a", "tokens": ["a", "b"], "X": [["1", "0"], ["0", "1"]],
        "heads": [{"W_Q": identity, "W_K": identity, "W_V": identity}, {"output": ["1", "2"]}],
        "W_O": [["1"], ["0"], ["0"], ["1"]],
    }]})
    derivation = derive_spec(spec)
    result = derivation.sections[0].result
    # head 1 (identity weights): scores [1, 0], scaled by √2; output_0 = w_a·1 + w_b·0 = e^{1/√2} / (e^{1/√2} + 1).
    # W_O picks head 1's first entry and head 2's second entry (2): the final value is w_a + 2, exactly.
    w_a = E ** (1 / sqrt(2)) / (E ** (1 / sqrt(2)) + 1)
    assert result.output.shape == (1, 1)
    assert simplify(result.output[0] - (w_a + 2)) == 0
    tex = render_latex(derivation)
    assert r"W_Q^{(1)}" in tex and r"{z}^{(2)}_{\mathrm{a}}" in tex


def _tex(**overrides):
    base = {"kind": "self_attention", "tokens": ["a", "b"], "X": [["1", "0"], ["0", "1"]],
            "W_Q": [["1", "0"], ["0", "1"]], "W_K": [["1", "0"], ["0", "1"]], "W_V": [["1"], ["2"]], "focus": "a"}
    base.update(overrides)
    return render_latex(derive_spec(parse_spec({"sections": [base]}), lang="en"))


def test_unscaled_scores_skip_the_scaling():
    tex = _tex(scale=False)
    assert "does not scale the scores" in tex
    assert r"\sqrt{d_k} = " not in tex  # (the flow figure still names ÷√d_k)
    assert r"\operatorname{softmax}\bigl([1,\  0]" in tex  # the raw scores go straight into softmax


def test_scale_by_a_given_number():
    tex = _tex(scale="2.5")
    assert "dividing them by $2.5$" in tex
    assert r"{a}_{\mathrm{a}} &= \frac{1}{2.5} = 0.4" in tex


def test_d_k_4_scales_by_2():
    tex = _tex(d_k=4)
    assert r"\sqrt{d_k} = \sqrt{4} = 2" in tex
    assert r"\frac{1}{2} = 0.5" in tex


def test_exact_mode_shows_surds_and_exponents():
    tex = render_latex(derive("mt"), exact=True)
    assert r"\frac{1.158}{\sqrt{2}} = \frac{579 \sqrt{2}}{1000} \approx 0.8188" in tex
    assert r"e^{{a}_{\mathrm{I}}} &= e^{\frac{579 \sqrt{2}}{1000}} \approx 2.2678" in tex
    assert r"\frac{579 \sqrt{2}}{1000}" not in render_latex(derive("mt"))


def test_matrix_form_for_all_tokens():
    tex = render_latex(derive("matrix"))
    assert r"S &= Q K^{\top} = " in tex
    assert "3 & 8 & 8" in tex  # the first row of QKᵀ
    assert r"\operatorname{Attention}(Q, K, V) &= A V" in tex
    assert r"\sqrt{d_k} = \sqrt{4} = 2" in tex


def test_symbolic_mode_gives_the_general_formulas():
    tex = render_latex(derive("symbolic"))
    assert r"{q}_{\mathrm{love}} &= [x_{21} + 0.1 x_{22},\  0.2 x_{21} + 0.9 x_{22}]" in tex
    assert r"0.62 x_{21}^{2} + 0.05 x_{21} x_{22} + 0.87 x_{22}^{2}" in tex  # q_love · k_love, expanded
    assert r"{w}_{\mathrm{love}} &= \frac{e^{{a}_{\mathrm{love}}}}{Z}" in tex
    assert r"\approx" not in tex.split(r"\begin{document}")[1]  # nothing is rounded


def test_inputs_are_shown_as_typed():
    tex = _tex(X=[["1/3", "0.50"], ["2", "-1/4"]], focus="b")
    assert r"{x}_{\mathrm{b}} &= [2,\  -\tfrac{1}{4}]" in tex
    assert r"\tok{a} & $[\tfrac{1}{3},\ 0.50]$" in tex  # the embedding table row of a
    assert r"[2 \cdot 1,\quad (-\tfrac{1}{4}) \cdot 1]" in tex  # the zero terms of W_Q left out
    assert r"{q}_{\mathrm{a}} &= {x}_{\mathrm{a}}" not in tex  # focus is b only


def test_exact_mode_writes_rationals_as_fractions():
    spec = parse_spec({"sections": [{"kind": "self_attention", "tokens": ["a", "b"], "X": [["1/3", "0"], ["0", "1"]],
                                     "W_Q": [["1", "0"], ["0", "1"]], "W_K": [["2", "0"], ["0", "1"]],
                                     "W_V": [["1"], ["1"]], "focus": "a"}]})
    plain = render_latex(derive_spec(spec))
    exact = render_latex(derive_spec(spec), exact=True)
    assert r"&\approx [0.6667,\  0.0000]" in plain  # K_a = [2/3, 0], rounded, one column width
    assert r"&= [\tfrac{2}{3},\  0]" in exact


def test_large_values_are_a_power_of_ten_and_many_digits_do_not_crash():
    tex = _tex(X=[["7", "7"], ["1", "0"]], focus="a")  # a score of 98/√2: e^{69.3} ≈ 1.2e30
    assert r"e^{{a}_{\mathrm{a}}} &\approx 1.2447 \times 10^{30}" in tex
    assert r"\approx [0.168815323768742133610818221426" in render_latex(derive("mt", digits=30))


def test_equal_weights_claim_no_winner():
    tex = _tex(X=[["0", "0"], ["0", "0"]], W_V=[["1"], ["1"]])
    assert "receives the largest attention weight" not in tex
    assert r"Z = \sum_{k} e^{a_{k}} &= 1 + 1 = 2" in tex  # exact when every e^{a} is


def test_a_given_d_k_is_explained_as_given():
    tex = _tex(d_k=4)
    assert "Here $d_k = 4$ is given (${q}_{\\mathrm{a}}$ and ${k}_{j}$ are vectors of 2 entries)." in tex
    assert "vectors of 4 entries" not in tex


def test_rounded_factors_give_approx():
    tex = _tex(X=[["1/3", "0"], ["0", "1"]], W_K=[["3", "0"], ["0", "1"]], focus="a")
    # q_a = [0.3333, 0] is rounded, so the written-out dot product is only approximately the exact 1/3; K shares
    # the decimals of Q and V (one count for the table of projected vectors)
    assert (r"{q}_{\mathrm{a}} \cdot {k}_{\mathrm{a}} &\approx 0.3333 \cdot 1.0000 + 0.0000 \cdot 0.0000 \approx 0.3333"
            in tex)
    # rounded factors that still give the result exactly: "="
    assert r"{q}_{\mathrm{a}} \cdot {k}_{\mathrm{b}} &\approx 0.3333 \cdot 0.0000 + 0.0000 \cdot 1.0000 = 0" in tex


def test_rows_share_their_matrix_decimals():
    tex = _tex(X=[["0.9", "0"], ["0.125", "1"]], focus="a")
    assert r"{k}_{\mathrm{a}} &= {x}_{\mathrm{a}} \cdot W_K" in tex
    assert r"&= [0.900,\  0.000]" in tex  # K_a as in the table of all keys (0.125 sets three decimals)


def test_computed_heads_show_the_embeddings_they_use():
    identity = [["1", "0"], ["0", "1"]]
    spec = parse_spec({"sections": [{
        "kind": "multi_head", "focus": "a", "tokens": ["a", "b"], "X": [["1.5", "0"], ["0", "1"]],
        "heads": [{"W_Q": identity, "W_K": identity, "W_V": identity}], "W_O": [["1"], ["1"]]}]})
    tex = render_latex(derive_spec(spec), lang="en")
    assert "Each head projects the embeddings $X$ below" in tex
    assert r"\tok{a} & $[1.5,\ 0]$" in tex


def test_symbolic_documents_do_not_speak_of_rounding():
    tex = render_latex(derive("symbolic"))
    assert "in symbols (the general formulas)" in tex
    assert "only the display is rounded" not in tex and "rounded to 4 places" not in tex
    assert "dummy values keep the computation" in tex  # the weights are still the article's dummies ...
    assert "Note: in practice the embeddings are learned" not in tex  # ... but X is symbolic


def test_several_decoder_tokens_name_their_steps():
    spec = parse_spec({"sections": [{
        "kind": "cross_attention", "tokens": ["私は", "猫"], "X": [["1", "0"], ["0", "1"]],
        "memory_tokens": ["a", "b"], "memory": [["1", "0"], ["0", "1"]], "W_Q": [["1", "0"], ["0", "1"]],
        "W_K": [["1", "0"], ["0", "1"]], "W_V": [["1"], ["2"]], "focus": ["私は", "猫"]}]})
    tex = render_latex(derive_spec(spec, lang="en"))
    # each token's steps continue the numbers, so "Step 5" names one step
    for first, token in ((5, "私は"), (8, "猫")):
        assert rf"Step {first}: Attention scores (\tok{{{token}}})" in tex
        assert rf"Step {first + 2}: Weighted sum (\tok{{{token}}})" in tex
    assert "Step 6: Softmax}" not in tex and tex.count("Step 5:") == 1
    assert r"$a$ = $s$ goes into the softmax" in _tex(scale=False)


def test_the_preamble_allows_as_many_matrix_columns_as_the_widest_matrix_has():
    """amsmath sets a matrix of at most MaxMatrixCols (10) columns, and every matrix costs in proportion to the
    setting: the preamble raises it only for a wider matrix, to exactly its width."""
    from symattn.typeset.layout import matrix_columns, matrix_columns_setting

    def bmatrix(cols: int) -> str:
        return "\\begin{bmatrix}\n" + " & ".join("1" * cols) + " \\\\\n" + " & ".join("2" * cols) + "\n\\end{bmatrix}"

    body = rf"\[ {bmatrix(3)} \] and \[ {bmatrix(12)} \quad \text{{a \& b}} \]"
    assert matrix_columns(body) == 12 and matrix_columns("no matrix") == 0
    assert matrix_columns_setting(body) == r"\setcounter{MaxMatrixCols}{12}"
    assert matrix_columns_setting(bmatrix(10)) == ""
    assert r"\setcounter{MaxMatrixCols}" not in _tex()


def test_user_text_composes_accents_and_builds_the_letters_latex_lacks():
    assert escape("e\u0301t\u00e9") == "été"  # a decomposed é, as macOS pastes it, composed
    assert escape("café Łódź") == "café Łódź"  # LaTeX's own tables have these
    assert escape("tiếng") == r"ti\'{\^{e}}ng"
    assert escape("Việt") == r"Vi\d{\^{e}}t"  # the accent above first: ê is a glyph, which takes one below
    assert escape("ǐ ị ǎ") == r"\v{\i} \d{i} \v{a}"
    assert escape("x\u0301") == r"\'{x}"  # no precomposed form
    assert escape("x\u200by\ufeff") == "xy"
    assert escape("私は が ħ λόγος 😀") == "私は が ħ λόγος 😀"  # left to LaTeX and the fonts
    assert escape("a_b% {x}") == r"a\_b\% \{x\}"


def test_a_matrix_column_is_as_wide_as_its_widest_entry_and_the_gap():
    """The room of a column in characters of the line (470 pt / 80): a number by its glyphs (digit 5.5 pt, minus
    8.5 pt, point 3 pt), the gap between columns (2 \\arraycolsep, up to 10.95 pt) 1.86. Counting every glyph as a
    character and the gap as 1 let a 16-column score matrix of entries like -154 run 37 pt into the margin."""
    from sympy import ImmutableMatrix

    from symattn.document.steps import Shown

    assert column_width(["-17.86", "2.5", "7"]) == pytest.approx(1.45 + 4 * 0.93 + 0.52 + 1.86)
    assert column_width([r"-\tfrac{1}{3}", "2"]) == pytest.approx(4 + 0.5 + 1.86)
    scores = Shown(ImmutableMatrix(16, 16, [-10 - i % 90 for i in range(256)]))  # -10 ... -99: 472 pt
    assert len(LatexRenderer(lang="en").matrix_blocks(scores, 73)) == 2
    weights = Shown(ImmutableMatrix(16, 16, [Rational(-999 + 7 * i, 100) for i in range(256)]))  # -9.99: 8 fit
    assert len(LatexRenderer(lang="en").matrix_blocks(weights, 72)) == 2


def test_the_page_geometry_is_defined_once_in_layout():
    """preamble-article.tex takes its geometry options from layout.py, whose widths the line breaking assumes."""
    from symattn.render.latex import shared_preamble
    from symattn.render.templates import read_template
    from symattn.typeset.layout import CHARACTER_PT, LINE_CHARACTERS, TEXT_WIDTH_PT, geometry_options

    assert "@GEOMETRY@" in read_template("preamble-article.tex")
    assert geometry_options() == "a4paper,margin=22mm"
    assert rf"\usepackage[{geometry_options()}]{{geometry}}" in shared_preamble("en", "")[0]
    assert TEXT_WIDTH_PT == pytest.approx(472.3, abs=0.1) and LINE_CHARACTERS == LatexRenderer().width
    assert CHARACTER_PT == pytest.approx(5.9, abs=0.01)


def test_a_scaling_line_too_wide_for_the_page_puts_its_result_below():
    """--digits 30 with --exact: a score of 30 digits over √2, then its 30-digit quotient, ran 117 pt into the
    margin; the result goes on a line of its own, the article's lines stay as they were."""
    wide = render_latex(derive_spec(load_example("decoder"), digits=30), exact=True)
    assert re.search(r"\\frac\{2\.607844776901044072498813166295\}\{\\sqrt\{2\}\} \\\\\n&\\approx 1\.8440247", wide)
    assert r"\frac{1.158}{\sqrt{2}} \approx 0.8188 \\" in render_latex(derive_spec(load_example("mt"), lang="en"))
