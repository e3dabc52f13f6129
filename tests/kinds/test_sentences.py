"""Every sentence true for its input: each conditional sentence of every built-in example and of a causal-mask and a
tied cross-attention spec, in both languages, holds for the facts of its section and query; and the rendered text
says nothing its input makes false (a masked query never "attends to all tokens", one visible key is never "the
largest weight", near-equal weights name no winner)."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest

from symattn import derive, derive_spec, examples, parse_spec, render_markdown
from symattn.document.sentences import CONDITIONS, NEARLY_EQUAL, groups, query_facts, section_facts, weight_sentences
from symattn.document.steps import Facts, Heading, Paragraph

EXAMPLES = tuple(examples.names())

CAUSAL = {"sections": [{
    "kind": "self_attention", "tokens": ["I", "love", "cats"], "X": [["1", "0"], ["0.5", "1"], ["1", "1"]],
    "W_Q": [["1", "0", "1", "0"], ["0", "1", "0", "1"]], "W_K": [["1", "1", "0", "0"], ["0", "0", "1", "1"]],
    "W_V": [["1", "0"], ["0", "1"]], "mask": "causal", "focus": "all"}]}
# The query of "ich" is [1, 1]: both keys score 1, an exact tie; "du" sees a over b.
CROSS_TIE = {"sections": [{
    "kind": "cross_attention", "tokens": ["ich", "du"], "X": [["1", "1"], ["2", "0"]],
    "memory_tokens": ["a", "b"], "memory": [["1", "0"], ["0", "1"]], "W_Q": [["1", "0"], ["0", "1"]],
    "W_K": [["1", "0"], ["0", "1"]], "W_V": [["1"], ["2"]], "focus": ["ich", "du"]}]}


def derivations():
    for lang in ("ja", "en"):
        for name in EXAMPLES:
            yield f"{name}-{lang}", derive(name, lang=lang)
        yield f"causal-{lang}", derive_spec(parse_spec(CAUSAL), lang=lang)
        yield f"cross-tie-{lang}", derive_spec(parse_spec(CROSS_TIE), lang=lang)


DERIVATIONS = dict(derivations())


@pytest.mark.parametrize("name", DERIVATIONS)
def test_no_conditional_sentence_where_its_condition_is_false(name):
    said = 0
    for step in DERIVATIONS[name].steps:
        if isinstance(step, Paragraph | Heading) and step.key in CONDITIONS:
            assert step.facts is not None, step.key
            assert CONDITIONS[step.key](step.facts), (step.key, step.facts)
            said += 1
    assert said > 0


def test_the_recorded_facts_are_those_of_the_query():
    """The facts a sentence carries are the query's own, as section_facts and query_facts compute them."""
    derivation = DERIVATIONS["causal-en"]
    section = derivation.sections[0]
    whole = section_facts("self_attention", masked=True)
    for i, token in enumerate(("I", "love", "cats")):
        facts = query_facts(whole, token, ("I", "love", "cats"), section.result.queries[i], first=i == 0)
        assert facts.visible == ("I", "love", "cats")[:i + 1]  # the causal mask: itself and the tokens before it
        recorded = [s.facts for s in section.steps if isinstance(s, Heading) and s.key.startswith("self.step3")
                    and s.facts.token == token]
        assert recorded and recorded[0].visible == facts.visible and recorded[0].weights == facts.weights


def _md(name: str) -> str:
    return render_markdown(DERIVATIONS[name])


def test_a_causal_document_never_says_a_query_sees_what_it_cannot():
    """Only the last token, cats, sees the whole sentence; what I and love see is said of what they see."""
    en, ja = _md("causal-en"), _md("causal-ja")
    blind_en, cats_en = en.split("### Step 9")
    blind_ja, cats_ja = ja.split("### Step 9")
    for phrase in ("whole sentence", "all tokens (itself included)", "every token looks at all tokens",
                   "receives the largest attention weight"):
        assert phrase not in blind_en, phrase
    for phrase in ("文全体", "すべてのトークン（自分自身を含む）", "最も大きい attention 重みを受け取る"):
        assert phrase not in blind_ja, phrase
    assert "for all tokens (itself included)" in cats_en and "from the whole sentence" in cats_en
    assert "文全体" in cats_ja
    assert "`I` may see only itself: its weight is exactly 1." in en
    assert "「`I`」が参照できるのは自分自身だけなので、その重みはちょうど 1 である。" in ja
    assert "Step 3: Attention scores of the token `I`, with a mask" in en
    assert "information from the tokens `love` may see (`I` and itself)" in en


def test_the_decoder_example_calls_x_plus_p_the_input_not_the_embedding():
    en = _md("decoder-en")
    assert "The embedding of" not in en  # [0.8, 2.5] is X + P; the embedding of 私は is [0.8, 1.5]
    assert "The input of `私は`, its row of $\\tilde{X}$ (embedding plus positional encoding), is:" in en
    assert r"$\tilde{X} = X + P$" in en


def test_the_article_list_after_the_softmax():
    assert ("So `love` attends a little to `I`, about equally to itself and `machine`, and most to `learning`."
            in _md("mt-en"))
    assert ("したがって「`love`」は、「`I`」には少しだけ、自分自身と「`machine`」にはほぼ同程度に、"
            "「`learning`」に最も強く注意を向ける。") in _md("mt-ja")
    assert "Here `learning` receives the largest attention weight" in _md("mt-en")


def test_near_equal_cross_attention_weights_name_no_winner():
    """The article's cross-attention weights are 0.2453 to 0.2558: nearly equal, so no key 'contributes most'."""
    en = _md("mt-en")
    cross = en[en.index("## Cross-Attention"):en.index("## Multi-head")]
    assert "receives the largest attention weight" not in cross
    assert ("The weights are nearly equal (each is at least 95% of the largest): `私は` attends about equally to "
            "`I`, `love`, `machine` and `learning`, and no key stands out.") in cross
    assert "最も大きい attention 重みを受け取る" not in _md("mt-ja").split("Cross-Attention")[1].split("Multi-head")[0]


def test_an_exact_tie_and_a_winner_in_one_cross_attention():
    en = _md("cross-tie-en")
    assert "All weights are equal: `ich` attends equally to `a` and `b`." in en
    assert "Here `a` receives the largest attention weight, so it contributes most strongly to the updated " \
           "representation of `du`." in en
    assert "So `du` attends a little to `b`, and most to `a`." in en


def test_step_numbers_increase_and_for_example_is_said_once():
    en = _md("matrix-en")
    numbers = [int(n) for n in re.findall(r"^### Step (\d+)", en, flags=re.M)]
    assert numbers == [1, 2, *range(3, 12)]  # the, cat, sat: Steps 3-5, 6-8, 9-11
    assert en.count("for example") == 1 and en.count("The same computation for the token") == 2
    assert _md("matrix-ja").count("例えば") == 1


def test_the_symbolic_result_is_its_formula():
    en = _md("symbolic-en")
    assert "$$\n{z}_{\\text{love}} = \\sum_{j} w_{j}\\, v_{j}\n$$" in en
    assert "is the weighted sum of Step 5 itself" in en


def facts(weights: list[str], keys: tuple[str, ...] = ("a", "b", "c", "d"), hidden: tuple[str, ...] = ()) -> Facts:
    visible = tuple(k for k in keys if k not in hidden)
    return Facts("self_attention", "a", keys, visible, tuple(Decimal(w) for w in weights), masked=bool(hidden))


@pytest.mark.parametrize(("case", "keys"), [
    (facts(["0.1", "0.2", "0.3", "0.4"]), ["attend.pattern", "attend.strongest"]),
    (facts(["0.4", "0.2", "0.3", "0.1"]), ["attend.pattern", "attend.strongest_itself"]),  # the query is a
    (facts(["0.25", "0.25", "0.25", "0.25"]), ["attend.all_equal"]),
    (facts(["0.245", "0.25", "0.25", "0.255"]), ["attend.nearly_equal"]),
    (facts(["0.1", "0.1", "0.4", "0.4"]), ["attend.pattern"]),  # two on top: no single winner
    (facts(["1"], hidden=("b", "c", "d")), ["attend.single"]),
    (facts(["0.3", "0.7"], hidden=("c", "d")), ["attend.pattern", "attend.strongest"]),
])
def test_weight_sentences_are_true_for_any_weights(case, keys):
    steps = weight_sentences(case, itself=True)
    assert [s.key for s in steps] == keys
    for step in steps:
        assert CONDITIONS[step.key](step.facts)


def test_nearly_equal_groups_use_the_documented_threshold():
    assert NEARLY_EQUAL == Decimal("0.95")
    assert groups(facts(["0.1688", "0.2472", "0.2457", "0.3383"])) == (("a",), ("b", "c"), ("d",))
    assert groups(facts(["0.2453", "0.2558", "0.25", "0.2489"])) == (("a", "b", "c", "d"),)


def test_masked_keys_are_listed_as_not_attended():
    en = _md("causal-en")
    assert "So `love` attends not at all to `cats` (masked), less to `I`, and most to itself." in en
    assert "Here `love` gives the largest attention weight to itself" in en
    assert "`love` receives the largest" not in en
    f = facts(["0.3", "0.7"], hidden=("c", "d"))
    pattern = weight_sentences(f, itself=True)[0]
    parts = [p.key for p in pattern.params["parts"].items]
    assert parts == ["attend.masked_part", "attend.little", "attend.most"]
    assert [p.key for p in weight_sentences(facts(["0.45", "0.55"], ("a", "b")), True)[0].params["parts"].items] == [
        "attend.less", "attend.most"]  # 0.45 is not "a little" beside 0.55


def test_keys_that_tie_exactly_are_attended_to_equally_not_about_equally(tmp_path):
    """Two encoder outputs alike give the same weight: 'equally' (同じ重みで), not 'about equally', and no key is
    said to receive the largest weight; a masked key in Japanese is 注意を向けず, a whole clause."""
    spec = tmp_path / "tie.toml"
    spec.write_text('[[sections]]\nkind = "cross_attention"\ntokens = ["q"]\nX = [[1.0, 0.0]]\n'
                    'memory_tokens = ["the", "cat", "sat"]\nmemory = [[1.0, 2.0], [1.0, 2.0], [0.5, 0.5]]\n'
                    'W_Q = [[1, 0], [0, 1]]\nW_K = [[1, 0], [0, 1]]\nW_V = [[1, 0], [0, 1]]\nfocus = "q"\n',
                    encoding="utf-8")
    en, ja = (render_markdown(derive(spec, lang=lang)) for lang in ("en", "ja"))
    assert "So `q` attends less to `sat`, and most, and equally, to `the` and `cat`." in en
    assert "largest attention weight" not in en
    assert "「`the`」と「`cat`」に最も強く、同じ重みで注意を向ける。" in ja
    assert "には（マスクにより）まったく注意を向けず、" in _md("causal-ja")
