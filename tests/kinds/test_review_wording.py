"""Sentences whose condition depends on the counts or on RoPE, read as a lecturer would: each is checked on the
input it is true for and on one where it would be false (grouped-query head counts, the d_k sentence with RoPE)."""

from __future__ import annotations

import pytest

from symattn import derive_spec, parse_spec, render_markdown


def text(data: dict, lang: str = "en") -> str:
    return render_markdown(derive_spec(parse_spec({"sections": [data]}), lang=lang)).replace("\\", "")


def gqa(heads: int, kv: int) -> dict:
    eye = [[1, 0], [0, 1]]
    return {"kind": "grouped_query", "tokens": ["A", "B"], "X": [["1", "0.5"], ["0.2", "1.5"]], "focus": "B",
            "heads": [{"W_Q": eye} for _ in range(heads)], "kv_heads": [{"W_K": eye, "W_V": eye} for _ in range(kv)],
            "W_O": [[1, 0] if i % 2 == 0 else [0, 1] for i in range(2 * heads)]}


@pytest.mark.parametrize(("heads", "kv", "says", "never"), [
    (4, 2, ["Query heads (1) and (2) both use K/V head [1]", "each of the 2 K/V heads", "shared within its group"],
     ["(1) to (2)", "no K/V head is shared"]),
    (6, 2, ["Query heads (1) to (3) all use K/V head [1]", "shared within its group"], ["(1) and (3)"]),
    (3, 1, ["Query heads (1) to (3) all use", "once for the single K/V head", "The one K/V head projects"],
     ["each of the 1 K/V heads", "Each K/V head projects"]),
    (2, 2, ["no K/V head is shared", "used by query head (1) alone"], ["shared within its group"]),
    (1, 1, ["nothing is shared or concatenated"], ["shared within its group", "each of the 1 K/V heads"]),
])
def test_grouped_query_words_follow_the_head_counts(heads, kv, says, never):
    page = text(gqa(heads, kv))
    for phrase in says:
        assert phrase in page
    for phrase in never:
        assert phrase not in page
    assert f"r = {heads // kv} query heads" not in page  # "r = 1 query heads" was wrong in number


def test_the_d_k_sentence_names_the_rotated_vectors_with_rope():
    data = {"kind": "self_attention", "tokens": ["a", "b"], "X": [["1", "0.5"], ["0.2", "1.5"]],
            "W_Q": [[1, 0], [0, 1]], "W_K": [[1, 0], [0, 1]], "W_V": [[1, 0], [0, 1]], "focus": "a"}
    plain, rotated = text(data), text({**data, "rope": True})
    assert "The query ${q}_{text{a}}$ and the keys ${k}_{j}$ have 2 entries each" in plain
    assert "The query ${hat{q}}_{text{a}}$ and the keys ${hat{k}}_{j}$ have 2 entries each" in rotated
    assert "${hat{q}}_{text{a}}$ と各 Key ${hat{k}}_{j}$ は 2 次元ベクトル" in text({**data, "rope": True}, "ja")


def given(**extra) -> dict:
    return {"kind": "self_attention", "tokens": ["I", "love", "cats"], "Q": [[1, 0], [0, 1], [1, 1]],
            "K": [[1, 0], [1, 0], [0, 1]], "V": [[1, 2], [3, 4], [5, 6]], **extra}


def test_equal_weights_under_a_mask_are_the_visible_keys_only():
    # cats sees love and itself with equal scores (1, 1); I is masked, its weight 0, not equal to theirs
    page = text(given(mask=[[1, 0, 0], [1, 1, 1], [0, 1, 1]], scale=False, focus="cats"))
    assert "The weights of the keys `cats` may see are all equal: it attends equally to `love` and itself, and " \
           "not at all to `I` (masked)." in page
    assert "All weights are equal" not in page
    ja = text(given(mask=[[1, 0, 0], [1, 1, 1], [0, 1, 1]], scale=False, focus="cats"), "ja")
    assert "「`cats`」が参照できる Key の重みはすべて等しい" in ja and "「`I`」には（マスクにより）" in ja
    unmasked = text(given(K=[[1, 0], [1, 0], [1, 0]], scale=False, focus="I"))  # every score 1: all equal
    assert "All weights are equal: `I` attends equally to itself, `love` and `cats`." in unmasked


def test_the_matrix_form_without_scaling_still_applies_the_mask():
    page = text(given(mask="causal", scale=False, focus="matrix"))
    assert "its scaling" not in page and "(the scores are not scaled)" in page
    assert "S' &= S, qquad S'_{ij} = -infty quad (M_{ij} = 0)" in page
    assert "softmax}_{text{row}}(S')" in page  # the softmax of the masked scores, not of S
    plain = text(given(scale=False, focus="matrix"))
    assert "S'" not in plain and "softmax}_{text{row}}(S)" in plain


@pytest.mark.parametrize("block", [1, 2, 3])
def test_the_online_softmax_counts_its_blocks_without_a_wrong_plural(block):
    data = {"kind": "self_attention", "tokens": ["a", "b", "c"], "X": [["1", "0.5"], ["0.8", "1.2"], ["1.5", "0.7"]],
            "W_Q": [[1, 0], [0, 1]], "W_K": [[1, 0], [0, 1]], "W_V": [[1, 0], [0, 1]], "focus": ["b", "c"],
            "softmax": "online", "block": block}
    page = text(data)
    blocks = -(-3 // block)
    assert f"here of size {block}, so that the number of blocks is B = {blocks}" in page
    assert f"(block size {block}, B = {blocks})" in page
    assert "1 keys" not in page and "1 blocks" not in page
    assert "This query sees no key before this block" in page


def test_one_new_token_is_not_an_example():
    data = {"kind": "self_attention", "past_tokens": ["I", "love"], "past_K": [["1", "0.5"], ["0.2", "1.1"]],
            "past_V": [["0.5", "1"], ["1.5", "-0.5"]], "tokens": ["cats"], "X": [["1", "0.5"]],
            "W_Q": [[1, 0], [0, 1]], "W_K": [[1, 0], [0, 1]], "W_V": [[1, 0], [0, 1]]}
    assert "For the token `cats` the computation goes as follows." in text(data)
    assert "for example" not in text(data) and "例えば" not in text(data, "ja")
    two = {**data, "tokens": ["cats", "too"], "X": [["1", "0.5"], ["0.2", "1.5"]]}
    assert "For the token `cats`, for example, the computation goes as follows." in text(two)


def test_the_rope_figure_moves_an_axis_label_out_of_a_vector_labels_way():
    # the README's half-pairing spec: q̂_love's pair (0, 2) turns to nearly vertical, its label beside x_2's place
    from symattn import render_latex
    data = {"kind": "self_attention", "tokens": ["I", "love"], "focus": "love", "rope": {"pairing": "half"},
            "X": [["1.0", "0.5", "0.2", "-0.1"], ["0.8", "1.2", "0.0", "0.3"]],
            "W_Q": [["1.0", "0.2", "0.0", "0.1"], ["0.1", "0.9", "0.3", "0.0"], ["0.0", "0.4", "1.0", "0.2"],
                    ["0.3", "0.0", "0.1", "1.0"]],
            "W_K": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], "W_V": [[1, 0], [0, 1], [0, 0], [0, 0]]}
    tex = render_latex(derive_spec(parse_spec({"sections": [data]}), lang="en"))
    assert r"\put(23.50,48.00){\makebox(0,0)[tr]{$x_{2}$}}" in tex  # left of the axis, not under q̂'s label


def test_a_pair_along_an_axis_has_its_label_beside_the_axis_not_on_its_label():
    from symattn import render_latex
    data = {"kind": "self_attention", "tokens": ["a", "b"], "focus": "b", "rope": True, "X": [[1, 0], [0, 1]],
            "W_Q": [[1, 0], [0, 1]], "W_K": [[1, 0], [0, 1]], "W_V": [[1, 0], [0, 1]]}
    tex = render_latex(derive_spec(parse_spec({"sections": [data]}), lang="en"))
    assert r"\put(30.00,47.42){\makebox(0,0){${q}_{\mathrm{b}}$}}" in tex  # q_b = (0, 1): moved right of x_1's axis
    assert r"\put(23.50,48.00){\makebox(0,0)[tr]{$x_{1}$}}" in tex  # and x_1 to the left
