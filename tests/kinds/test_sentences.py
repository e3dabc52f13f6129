"""Every sentence true for its input: each conditional sentence of every built-in example and of a causal-mask and a
tied cross-attention spec, in both languages, holds for the facts of its section and query; and the rendered text
says nothing its input makes false (a masked query never "attends to all tokens", one visible key is never "the
largest weight", near-equal weights name no winner)."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from decimal import Decimal

import pytest
from sympy import Rational

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
    """Issue 31 items 5, 6: from the most attended key to the least, each with the weight the softmax line shows."""
    assert ("So `love` attends most to `learning` ($0.3382$), then about equally to itself and `machine` "
            "($0.2472$ and $0.2457$), and least to `I` ($0.1688$).") in _md("mt-en")
    assert ("したがって「`love`」は、「`learning`」に最も強く（$0.3382$）、自分自身と「`machine`」にはそれに次いで"
            "ほぼ同程度に（$0.2472$、$0.2457$）、「`I`」には最も弱く（$0.1688$）注意を向ける。") in _md("mt-ja")


def _term_lengths(section, row: int) -> list[float]:
    """‖w_j v_j‖ of one query, recomputed here in floats from the section's exact weights and values."""
    query = section.result.queries[row]
    V = section.result.V
    return [float(w) * math.sqrt(sum(float(v) ** 2 for v in V.row(j)))
            for j, w in enumerate(query.softmax.weights)]


def test_the_article_says_learning_contributes_most_and_shows_why():
    """Issue 31 item 1: the article's claim stays where it is true, with the lengths ‖w_j v_j‖ that make it true
    (recomputed here: learning's is the longest)."""
    section = next(s for s in DERIVATIONS["mt-en"].sections if s.kind == "self_attention")
    lengths = _term_lengths(section, section.spec.tokens.index("love"))
    assert max(lengths) == lengths[3]
    shown = ", ".join(f"{x:.4f}" for x in lengths)
    assert shown == "0.2260, 0.3512, 0.4908, 0.5769"
    assert ("Here `learning` receives the largest attention weight, and its term in the weighted sum is also the "
            r"longest (the lengths $\lVert w_{j} v_{j} \rVert$: `I` $0.2260$, itself $0.3512$, `machine` $0.4908$ and "
            "`learning` $0.5769$), so it contributes most strongly to the updated representation of `love`.") in _md(
        "mt-en")
    assert ("この例では、「`learning`」が最も大きい attention 重みを受け取り、重み付き和のその項の長さも最も大きい"
            r"（長さ $\lVert w_{j} v_{j} \rVert$：「`I`」は $0.2260$、自分自身は $0.3512$、「`machine`」は $0.4908$、"
            "「`learning`」は $0.5769$）ため、「`love`」の更新された表現に最も強く寄与する。") in _md("mt-ja")


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_largest_weight_is_not_said_to_contribute_most_when_its_term_is_shorter(lang):
    """layer's 私は gives <s> the larger weight (0.5826) but its own term is longer (0.7241 against 0.3105)."""
    text = _md(f"layer-{lang}")
    for phrase in ("contributes most strongly", "最も強く寄与する"):
        assert phrase not in text
    if lang == "en":
        assert ("Although `<s>` receives the largest attention weight, the longest term of the weighted sum is that "
                r"of itself (the lengths $\lVert w_{j} v_{j} \rVert$: `<s>` $0.3105$ and itself $0.7241$)") in text
        assert "So `私は` attends most to `<s>` ($0.5826$) and less to itself ($0.4174$)." in text
    else:
        assert "重み付き和の項の長さが最も大きいのは自分自身の項である（長さ $\\lVert w_{j} v_{j} \\rVert$：「`<s>`」は $0.3105$、自分自身は $0.7241$）" in text
        assert "「`<s>`」に最も強く（$0.5826$）、自分自身にはそれより弱く（$0.4174$）注意を向ける。" in text


def test_every_contribution_sentence_agrees_with_the_recomputed_lengths():
    """Every 'contributes most' and 'although' sentence of every document names the key whose ‖w_j v_j‖,
    recomputed in floats, is the longest."""
    checked = 0
    for derivation in DERIVATIONS.values():
        for step in derivation.steps:
            if isinstance(step, Paragraph) and step.key in ("attend.strongest", "attend.strongest_itself",
                                                            "attend.strongest_not_longest"):
                f = step.facts
                lengths = [float(n) for n in f.norms]
                weights = [float(w) for w in f.weights]
                top_weight, top_length = weights.index(max(weights)), lengths.index(max(lengths))
                assert (top_weight == top_length) == (step.key != "attend.strongest_not_longest"), step.key
                checked += 1
    assert checked >= 4


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
    assert "Here `a` receives the largest attention weight, and its term in the weighted sum is also the longest" in en
    assert "So `du` attends most to `a` ($0.8044$) and less to `b` ($0.1956$)." in en


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


def with_values(f: Facts, norms: list[str]) -> Facts:
    """The facts with the lengths ‖w_j v_j‖ of their terms (the weights' values given)."""
    return replace(f, norms=tuple(Decimal(n) for n in norms), norm_values=tuple(Rational(n) for n in norms),
                   shown=tuple(Rational(str(w)) for w in f.weights))


@pytest.mark.parametrize(("case", "keys"), [
    (facts(["0.1", "0.2", "0.3", "0.4"]), ["attend.pattern"]),  # no values: nothing said of contributions
    (with_values(facts(["0.1", "0.2", "0.3", "0.4"]), ["0.1", "0.2", "0.3", "0.4"]),
     ["attend.pattern", "attend.strongest"]),
    (with_values(facts(["0.1", "0.2", "0.3", "0.4"]), ["0.1", "0.2", "0.5", "0.4"]),
     ["attend.pattern", "attend.strongest_not_longest"]),  # c's term is longer than d's
    (with_values(facts(["0.4", "0.2", "0.3", "0.1"]), ["0.4", "0.2", "0.3", "0.1"]),
     ["attend.pattern", "attend.strongest_itself"]),  # the query is a
    (facts(["0.25", "0.25", "0.25", "0.25"]), ["attend.all_equal"]),
    (facts(["0.245", "0.25", "0.25", "0.255"]), ["attend.nearly_equal"]),
    (facts(["0.1", "0.1", "0.4", "0.4"]), ["attend.pattern"]),  # two on top: no single winner
    (facts(["1"], hidden=("b", "c", "d")), ["attend.single"]),
    (with_values(facts(["0.3", "0.7"], hidden=("c", "d")), ["0.3", "0.7"]),
     ["attend.pattern_masked", "attend.strongest"]),
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
    en, ja = _md("causal-en"), _md("causal-ja")
    assert ("So `love` attends most to itself ($0.5927$) and less to `I` ($0.4073$); it does not attend to `cats` at "
            "all (masked).") in en
    assert ("したがって「`love`」は、自分自身に最も強く（$0.5927$）、「`I`」にはそれより弱く（$0.4073$）注意を向け、"
            "「`cats`」には（マスクにより）まったく注意を向けない。") in ja
    assert "`love` receives the largest" not in en
    f = facts(["0.3", "0.7"], hidden=("c", "d"))
    pattern = weight_sentences(f, itself=True)[0]
    assert [p.key for p in pattern.params["parts"].items] == ["attend.most", "attend.less"]
    assert pattern.params["masked"].names == ("c", "d")
    three = weight_sentences(facts(["0.1", "0.2", "0.3", "0.4"]), True)[0].params["parts"].items
    assert [p.key for p in three] == ["attend.most", "attend.then_groups", "attend.least"]  # one "then" for b, c


def test_ordering_sentences_read_as_a_lecturer_writes_them():
    """Issue 31 item 6: "most …, then … and …, and least …", never "less …, more …, more …, and most …"; two keys
    "most … and less …"; nearly equal keys "about equally", with each weight."""
    en, ja = _md("layer-en"), _md("layer-ja")
    assert ("So `love` attends most to `I` ($0.3311$), then to `machine` ($0.2564$) and itself ($0.2235$), and least "
            "to `learning` ($0.1890$).") in en
    assert ("したがって「`love`」は、「`I`」に最も強く（$0.3311$）、「`machine`」（$0.2564$）、自分自身（$0.2235$）の順に"
            "それに次いで、「`learning`」には最も弱く（$0.1890$）注意を向ける。") in ja
    assert ("So `私は` attends most, and about equally, to `love` and `learning` ($0.3133$ and $0.3060$), then to "
            "`I` ($0.2034$), and least to `machine` ($0.1774$).") in en
    for text in (en, _md("mt-en"), _md("causal-en")):
        assert "more to" not in text and "a little to" not in text and ", and most" not in text
    for text in (ja, _md("mt-ja")):
        assert "それより多く" not in text and "やや少なく" not in text


def test_the_weights_in_sentences_take_the_weights_decimals(tmp_path):
    """With digits.weights = 3 the sentence prints the weights as the softmax line does."""
    spec = dict(CAUSAL, digits={"weights": 3})
    en = render_markdown(derive_spec(parse_spec(spec), lang="en"))
    assert "So `love` attends most to itself ($0.593$) and less to `I` ($0.407$)" in en


def test_keys_that_tie_exactly_are_attended_to_equally_not_about_equally(tmp_path):
    """Two encoder outputs alike give the same weight: 'equally' (同じ重みで), not 'about equally', and no key is
    said to receive the largest weight; a masked key in Japanese is 注意を向けず, a whole clause."""
    spec = tmp_path / "tie.toml"
    spec.write_text('[[sections]]\nkind = "cross_attention"\ntokens = ["q"]\nX = [[1.0, 0.0]]\n'
                    'memory_tokens = ["the", "cat", "sat"]\nmemory = [[1.0, 2.0], [1.0, 2.0], [0.5, 0.5]]\n'
                    'W_Q = [[1, 0], [0, 1]]\nW_K = [[1, 0], [0, 1]]\nW_V = [[1, 0], [0, 1]]\nfocus = "q"\n',
                    encoding="utf-8")
    en, ja = (render_markdown(derive(spec, lang=lang)) for lang in ("en", "ja"))
    assert "So `q` attends most, and equally, to `the` and `cat` ($0.3701$ each) and less to `sat` ($0.2599$)." in en
    assert "largest attention weight" not in en
    assert "「`the`」と「`cat`」に最も強く、同じ重みで（各 $0.3701$）、「`sat`」にはそれより弱く（$0.2599$）注意を向ける。" in ja
