"""Chained sections (symattn.pipeline.chain): names, "from:NAME" / "input:NAME" references and how values carry, checked
against an independent numpy attention (PyTorch's convention: softmax(Q Kᵀ / √d_k) V row by row, Q = X W_Q,
K = X W_K, V = X W_V, no biases; multi-head: the heads' outputs concatenated, times W_O) and mpmath."""

from __future__ import annotations

import json
import random
from decimal import ROUND_HALF_UP, Decimal

import mpmath
import numpy as np
import pytest
from sympy import Rational

import symattn
from symattn.errors import SpecError
from tests.render.test_displayed_lines import check

CHAIN = """
{top}
[[sections]]
kind = "self_attention"
name = "enc"
tokens = ["I", "love", "machine", "learning"]
X   = [[1.0, 0.5], [0.8, 1.2], [1.5, 0.7], [0.6, 1.8]]
W_Q = [[1.0, 0.2], [0.1, 0.9]]
W_K = [[0.6, 0.1], [-0.3, 1.0]]
W_V = [[1.2, 0.0], [-0.2, 0.8]]
focus = "love"
{first}

[[sections]]
kind = "self_attention"
name = "again"
X = "from:enc"
W_Q = [[0.5, 0.1], [0.2, 0.7]]
W_K = [[0.3, 0.4], [-0.2, 0.9]]
W_V = [[1.0, 0.3], [0.1, 0.6]]
focus = "love"

[[sections]]
kind = "cross_attention"
tokens = ["私は"]
X = [[0.800, 1.500]]
memory = "from:again"
W_Q = [[0.9, 0.2], [0.3, 0.8]]
W_K = [[0.5, 0.1], [-0.4, 1.1]]
W_V = [[1.1, 0.0, 0.4], [-0.2, 0.9, 0.2]]
"""


def spec(top: str = "", first: str = "", text: str = CHAIN) -> symattn.Spec:
    return symattn.parse_spec(symattn.read_spec_text(text.format(top=top, first=first), "toml", "chain.toml"))


def attention(X: np.ndarray, W_Q, W_K, W_V, memory: np.ndarray | None = None) -> np.ndarray:
    """softmax(QKᵀ/√d_k)V in float64, keys and values from `memory` (self-attention: X)."""
    source = X if memory is None else memory
    Q, K, V = X @ W_Q, source @ W_K, source @ W_V
    S = Q @ K.T / np.sqrt(K.shape[1])
    A = np.exp(S - S.max(axis=1, keepdims=True))
    return (A / A.sum(axis=1, keepdims=True)) @ V


def as_floats(matrix) -> np.ndarray:
    return np.array(matrix.tolist(), dtype=float)


def rounded(x: float, places: int) -> float:
    return float(Decimal(repr(float(x))).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP))


ENC = [np.array(m) for m in ([[1.0, 0.5], [0.8, 1.2], [1.5, 0.7], [0.6, 1.8]], [[1.0, 0.2], [0.1, 0.9]],
                             [[0.6, 0.1], [-0.3, 1.0]], [[1.2, 0.0], [-0.2, 0.8]])]


def test_from_carries_every_token_rounded_as_shown():
    s = spec()
    second = s.sections[1]
    assert second.tokens == ("I", "love", "machine", "learning")  # the tokens come along
    expected = attention(*ENC)  # every token's row, though the first section derives only love
    carried = as_floats(second.X.values)
    assert np.array_equal(carried, np.vectorize(lambda x: rounded(x, 4))(expected))
    assert second.X.values.row(1).tolist() == [[Rational("0.8933"), Rational("0.9295")]]  # the article's z_love
    assert [c.mode for c in second.carried] == ["shown"] and not second.carried[0].exact


def test_the_first_section_is_shown_as_without_the_chain():
    """The same steps, but for the chain's block figure before them (and so the flow figure's number)."""
    from dataclasses import replace

    from symattn.document.steps import FlowFigure

    def without_block(steps):
        return [replace(s, number=0) if isinstance(s, FlowFigure) else s for s in steps
                if not (isinstance(s, FlowFigure) and s.flavour == "block")]

    chained = symattn.derive_spec(spec(), lang="en")
    alone = symattn.derive_spec(symattn.Spec(sections=spec().sections[:1]), lang="en")
    assert [s.flavour for s in chained.sections[0].steps if isinstance(s, FlowFigure)] == ["block", "self"]
    assert without_block(chained.sections[0].steps) == without_block(alone.sections[0].steps)


def test_the_page_shows_what_is_carried():
    """The second section's X is the first section's printed z_love, and every line of the chain checks."""
    for lang in ("ja", "en"):
        derivation = symattn.derive_spec(spec(), lang=lang)
        page = symattn.render_markdown(derivation)
        assert "0.8933" in page and "0.9295" in page
        for line in symattn.render.displayed.displayed_lines(derivation):
            check(line)


def test_the_document_says_where_the_chain_starts():
    page = symattn.render_markdown(symattn.derive_spec(spec(), lang="en"))
    assert "it is the output of section `enc`, one row per token, rounded as that section shows it (to 4 decimals)" \
        in page
    assert "$H$ is not typed in here: it is the output of section `again`" in page
    ja = symattn.render_markdown(symattn.derive_spec(spec(), lang="ja"))
    assert "セクション「`enc`」の出力（トークンごとに 1 行）を、そのセクションに示した値（小数第 4 位に丸めた値）" in ja


def test_cross_attention_memory_from_a_section():
    s = spec()
    cross, again = s.sections[2], s.sections[1]
    assert cross.memory_tokens == again.tokens
    enc = as_floats(again.X.values)
    W = [np.array(m) for m in ([[0.5, 0.1], [0.2, 0.7]], [[0.3, 0.4], [-0.2, 0.9]], [[1.0, 0.3], [0.1, 0.6]])]
    assert np.array_equal(as_floats(cross.memory.values), np.vectorize(lambda x: rounded(x, 4))(attention(enc, *W)))


def test_result_stage_digits_and_the_digits_option():
    s = spec(top='digits = { default = 4, result = 3 }')
    assert s.sections[1].X.values.row(1).tolist() == [[Rational("0.893"), Rational("0.930")]]  # as the article
    derivation = symattn.derive_spec(spec(), digits=2)
    assert derivation.sections[1].spec.X.values.row(1).tolist() == [[Rational("0.89"), Rational("0.93")]]


def test_full_carries_the_working_precision():
    s = spec(top='carry = "full"')
    second = s.sections[1]
    assert second.carried[0].mode == "full"
    with mpmath.workdps(120):
        X, W_Q, W_K, W_V = (mpmath.matrix([[mpmath.mpf(str(v)) for v in row] for row in m.tolist()]) for m in ENC)
        Q, K, V = X * W_Q, X * W_K, X * W_V
        for t in range(4):
            a = [sum(Q[t, c] * K[j, c] for c in range(2)) / mpmath.sqrt(2) for j in range(4)]
            e = [mpmath.exp(v) for v in a]
            z = [sum(e[j] * V[j, c] for j in range(4)) / sum(e) for c in range(2)]
            for c in range(2):
                carried = second.X.values[t, c]
                assert abs(mpmath.mpf(carried.p) / carried.q - z[c]) < mpmath.mpf(10) ** -85
    page = symattn.render_markdown(symattn.derive_spec(s, lang="en"))
    assert "carried at the working precision (90 significant digits)" in page
    for line in symattn.render.displayed.displayed_lines(symattn.derive_spec(s, lang="en")):
        check(line)


def test_a_section_may_set_its_own_carry():
    s = spec(first='carry = "full"')
    assert [c.mode for c in s.sections[1].carried] == ["full"]
    assert [c.mode for c in s.sections[2].carried] == ["shown"]


POSITIONS = """
[[sections]]
kind = "self_attention"
name = "pe"
tokens = ["a", "b", "c"]
X = [[0.5, 0.25, 1, 0], [0, 1, 0.5, 0.5], [1, 0, 0, 1]]
W_Q = [[1, 0], [0, 1], [1, 0], [0, 1]]
W_K = [[1, 0], [0, 1], [0, 1], [1, 0]]
W_V = [[1, 0], [0, 1], [1, 1], [0, 0]]
positional_encoding = "sinusoidal"
focus = "b"
{first}

[[sections]]
kind = "self_attention"
tokens = ["a", "b", "c"]
X = "input:pe"
W_Q = [[1, 0], [0, 1], [1, 0], [0, 1]]
W_K = [[1, 0], [0, 1], [0, 1], [1, 0]]
W_V = [[1, 0], [0, 1], [1, 1], [0, 0]]
"""


def test_input_after_positional_encoding():
    X = np.array([[0.5, 0.25, 1, 0], [0, 1, 0.5, 0.5], [1, 0, 0, 1]])
    pos, i = np.arange(3)[:, None], np.arange(4)[None, :]
    angle = pos / 10000 ** (2 * (i // 2) / 4)
    P = np.where(i % 2 == 0, np.sin(angle), np.cos(angle))  # PE(pos, 2i) = sin, PE(pos, 2i+1) = cos
    s = spec(text=POSITIONS, first="")
    carried = as_floats(s.sections[1].X.values)
    assert np.array_equal(carried, np.vectorize(lambda x: rounded(x, 4))(X + P))
    assert not s.sections[1].carried[0].exact


def test_exact_values_carry_exactly_and_are_not_called_rounded():
    text = POSITIONS.replace('positional_encoding = "sinusoidal"\n', "")
    s = spec(text=text, first="")
    assert s.sections[1].X.values == s.sections[0].X.values
    assert s.sections[1].carried[0].exact
    page = symattn.render_markdown(symattn.derive_spec(s, lang="en"))
    assert "Every value of it is exact, so it carries over exactly." in page and "rounded as" not in page


HEADS = """
[[sections]]
kind = "multi_head"
name = "mh"
tokens = ["A", "B", "C"]
X = [[1.0, 0.5], [0.2, 1.5], [0.7, 0.3]]
focus = "B"
heads = [ { W_Q = [[1, 0], [0, 1]], W_K = [[1, 0], [0, 1]], W_V = [[1, 0], [0, 1]] },
          { W_Q = [[0.5, 0], [0, 2]], W_K = [[1, 1], [0, 1]], W_V = [[0, 1], [1, 0]] } ]
W_O = [[0.5, 0], [0, 0.5], [0.25, 0], [0, 0.25]]

[[sections]]
kind = "grouped_query"
name = "gq"
X = "from:mh"
heads = [ {{ W_Q = [[1, 0], [0, 1]] }}, {{ W_Q = [[0, 1], [1, 0]] }} ]
kv_heads = [ {{ W_K = [[1, 0], [0, 1]], W_V = [[1, 0], [0, 1]] }} ]
W_O = [[0.5, 0], [0, 0.5], [0.25, 0], [0, 0.25]]
focus = "A"

[[sections]]
kind = "self_attention"
X = "from:gq"
W_Q = [[1, 0], [0, 1]]
W_K = [[1, 0], [0, 1]]
W_V = [[1, 0], [0, 1]]
focus = "A"
"""


def test_multi_head_and_grouped_query_pass_on_their_output_rows():
    s = symattn.parse_spec(symattn.read_spec_text(HEADS.replace("{{", "{").replace("}}", "}"), "toml", "h.toml"))
    X = np.array([[1.0, 0.5], [0.2, 1.5], [0.7, 0.3]])
    I2, swap = np.eye(2), np.array([[0.0, 1.0], [1.0, 0.0]])
    W_O = np.array([[0.5, 0], [0, 0.5], [0.25, 0], [0, 0.25]])
    heads = np.hstack([attention(X, I2, I2, I2), attention(X, np.array([[0.5, 0], [0, 2]]),
                                                           np.array([[1, 1], [0, 1.0]]), swap)])
    mh = np.vectorize(lambda x: rounded(x, 4))(heads @ W_O)
    assert np.array_equal(as_floats(s.sections[1].X.values), mh)
    gq = np.hstack([attention(mh, I2, I2, I2), attention(mh, swap, I2, I2)]) @ W_O
    assert np.array_equal(as_floats(s.sections[2].X.values), np.vectorize(lambda x: rounded(x, 4))(gq))


def test_solve_json_names_the_named_sections():
    answers = json.loads(symattn.render_json(symattn.derive_spec(spec(), steps=False)))
    assert [section.get("name") for section in answers["sections"]] == ["enc", "again", None]
    assert list(answers["sections"][0])[:2] == ["kind", "name"]


def test_random_chains_agree_with_numpy():
    rng = random.Random(18)
    for _ in range(5):
        n, d = rng.randint(2, 4), rng.randint(1, 3)

        def m(rows, cols):
            return [[str(rng.randint(-20, 20) / 10) for _ in range(cols)] for _ in range(rows)]

        X, W1, W2 = m(n, d), [m(d, d) for _ in range(3)], [m(d, d) for _ in range(3)]
        data = {"sections": [
            {"kind": "self_attention", "name": "s1", "tokens": [f"t{i}" for i in range(n)], "X": X,
             "W_Q": W1[0], "W_K": W1[1], "W_V": W1[2], "focus": "t0"},
            {"kind": "self_attention", "X": "from:s1", "W_Q": W2[0], "W_K": W2[1], "W_V": W2[2]}]}
        s = symattn.parse_spec(data)
        first = attention(*(np.array(a, dtype=float) for a in (X, *W1)))
        assert np.array_equal(as_floats(s.sections[1].X.values), np.vectorize(lambda x: rounded(x, 4))(first))
        second = attention(as_floats(s.sections[1].X.values), *(np.array(a, dtype=float) for a in W2))
        answers = json.loads(symattn.render_json(symattn.derive_spec(s, steps=False)))
        z = [[float(v) for v in answers["sections"][1]["queries"][f"t{i}"]["output"]] for i in range(n)]
        assert np.allclose(z, second, atol=1e-12)


def refused(text: str) -> str:
    with pytest.raises(SpecError) as error:
        symattn.parse_spec(symattn.read_spec_text(text, "toml", "chain.toml"))
    message = str(error.value)
    assert "\n" not in message
    return message


SIMPLE = """
[[sections]]
kind = "self_attention"
{first}
tokens = ["A", "B"]
X = [[1, 0], [0, 1]]
W_Q = [[1, 0], [0, 1]]
W_K = [[1, 0], [0, 1]]
W_V = [[1, 0], [0, 1]]

[[sections]]
kind = "self_attention"
{second}
W_Q = [[1, 0], [0, 1]]
W_K = [[1, 0], [0, 1]]
W_V = [[1, 0], [0, 1]]
"""


def simple(first: str, second: str) -> str:
    return SIMPLE.format(first=first, second=second)


@pytest.mark.parametrize(("first", "second", "expected"), [
    ('name = "enc"', 'X = "from:enx"',
     "sections[1].X: 'from:enx' names no section (did you mean 'enc'?); earlier: enc"),
    ('name = "enc"', 'name = "enc"\nX = "from:enc"', "sections[1].name: 'enc' names sections[0] already"),
    ('name = "1st"', 'X = "from:1st"', "sections[0].name: expected a name of letters, digits and _"),
    ('name = "enc"', 'X = "from:"', 'sections[1].X: expected "from:NAME" with the name of an earlier section'),
    ('name = "enc"\ncarry = "all"', 'X = "from:enc"', 'sections[0].carry: expected "shown"'),
    ('name = "enc"', 'X = "from:enc"\ntokens = ["A", "C"]', "sections[1].tokens: ['A', 'C'], but 'from:enc' carries"),
])
def test_bad_references_are_one_line_errors(first, second, expected):
    assert refused(simple(first, second)).startswith(expected)


def test_references_are_checked_before_any_section_is_parsed():
    # the first section's W_V is wrong too: the misdirected reference of the last is refused first, before the
    # first section is parsed or computed
    text = simple('name = "enc"', 'X = "from:enx"').replace("W_V = [[1, 0], [0, 1]]", 'W_V = "nine"', 1)
    assert refused(text).startswith("sections[1].X: 'from:enx' names no section (did you mean 'enc'?)")
    mistyped = simple('name = "enc"', 'X = "FROM:enc"').replace("W_V = [[1, 0], [0, 1]]", 'W_V = "nine"', 1)
    assert refused(mistyped).startswith('sections[1].X: expected a list of rows, or "from:NAME"')


def test_forward_references_and_cycles():
    forward = simple('name = "first"', 'name = "later"').replace(
        'kind = "self_attention"\nname = "first"\ntokens = ["A", "B"]\nX = [[1, 0], [0, 1]]',
        'kind = "self_attention"\nname = "first"\nX = "from:later"')
    assert refused(forward).startswith("sections[0].X: 'from:later' names a later section, sections[1]; "
                                       "references point only backwards; no earlier section has a name")
    cycle = forward.replace('name = "later"', 'name = "later"\nX = "from:first"')
    assert "(and it refers back to this one: a cycle)" in refused(cycle)
    itself = simple('name = "enc"', 'name = "me"\nX = "from:me"')
    assert refused(itself).startswith("sections[1].X: 'from:me' names this section itself; references point only "
                                      "backwards; earlier: enc")


def test_a_section_that_passes_nothing_on():
    text = """
[[sections]]
kind = "self_attention"
name = "sc"
tokens = ["A", "B"]
scores = [[1, 0], [0, 1]]
d_k = 2

[[sections]]
kind = "self_attention"
X = "from:sc"
W_Q = [[1, 0], [0, 1]]
W_K = [[1, 0], [0, 1]]
W_V = [[1, 0], [0, 1]]
"""
    assert refused(text) == "sections[1].X: 'from:sc': section sc (self_attention) passes no output rows on"
    assert refused(text.replace("from:sc", "input:sc")).startswith("sections[1].X: 'input:sc': section sc")
    symbols = simple('name = "s"', 'X = "from:s"').replace("X = [[1, 0], [0, 1]]", 'X = [["a", 0], [0, 1]]')
    assert refused(symbols) == "sections[1].X: 'from:s': section s holds symbols; a chain carries numbers"


def test_widths_are_checked_by_the_receiving_kind():
    text = simple('name = "enc"', 'X = "from:enc"').replace("W_V = [[1, 0], [0, 1]]", "W_V = [[1, 0, 1], [0, 1, 1]]", 1)
    assert refused(text) == ("sections[1].W_Q: 2 rows, but there are 3 X columns (X = 'from:enc', 3 columns)")


def test_name_and_carry_are_accepted_on_every_kind_and_unknown_keys_still_refused():
    text = simple('name = "enc"\ncarry = "full"', 'X = "from:enc"\ncolour = "red"')
    assert refused(text).startswith("sections[1].colour: unknown key")
    assert refused('carry = "none"\n' + simple("", "X = [[1, 0], [0, 1]]\ntokens = ['A', 'B']")).startswith(
        'carry: expected "shown"')


def test_a_chained_section_does_not_call_its_rows_embeddings():
    page = symattn.render_markdown(symattn.derive_spec(spec(), lang="en"))
    second = page.split("## Self-Attention")[2].split("\n## ")[0]
    assert "Step 1: The input rows" in second and "| Token | Input row |" in second
    assert "mbedding" not in second and "ignores positions" not in second
    assert "Suppose the encoder" not in page and "The encoder's representations, the rows" in page  # memory carried
    ja = symattn.render_markdown(symattn.derive_spec(spec(), lang="ja"))
    assert "Step 1: 入力の行" in ja


def test_rational_outputs_carry_exactly_in_either_mode():
    """Tied scores give each query the exact mean of the values (1/3 of three rows): a rational value always
    carries exactly (issue 18), in "full" and in "shown" alike, and the next document says so."""
    text = simple('name = "tie"', 'X = "from:tie"').replace("X = [[1, 0], [0, 1]]", "X = [[1, 0], [1, 0]]")
    text = text.replace("W_V = [[1, 0], [0, 1]]", 'W_V = [["1/3", 0], [0, 1]]', 1)
    full = symattn.parse_spec(symattn.read_spec_text('carry = "full"\n' + text, "toml", "t.toml"))
    assert full.sections[1].X.values.tolist() == [[Rational(1, 3), 0], [Rational(1, 3), 0]]
    assert full.sections[1].carried[0].exact
    page = symattn.render_markdown(symattn.derive_spec(full, lang="en"))
    assert "Every value of it is exact, so it carries over exactly." in page
    shown = symattn.parse_spec(symattn.read_spec_text(text, "toml", "t.toml"))
    assert shown.sections[1].X.values.tolist() == [[Rational(1, 3), 0], [Rational(1, 3), 0]]
    assert shown.sections[1].carried[0].exact
    assert "carries over exactly" in symattn.render_markdown(symattn.derive_spec(shown, lang="en"))


def test_full_carry_answers_are_the_true_chains_to_30_digits():
    """Both sections in arb balls (python-flint) from the exact inputs, nothing rounded between them: the second
    section's output in solve's JSON (30 significant digits, computed from the 90-digit carry) is the true,
    unrounded chain's value to half a unit of its last digit. (The same check fails for carry = "shown".)"""
    from flint import arb, ctx, fmpq

    def ball(value) -> arb:
        exact = Rational(str(value))
        return arb(fmpq(int(exact.p), int(exact.q)))

    def balls(rows):
        return [[ball(v) for v in row] for row in rows]

    def product(A, B):
        return [[sum((A[i][k] * B[k][j] for k in range(len(B))), arb(0)) for j in range(len(B[0]))]
                for i in range(len(A))]

    def attend(X, W_Q, W_K, W_V):
        Q, K, V = product(X, W_Q), product(X, W_K), product(X, W_V)
        root = arb(len(K[0])).sqrt()
        out = []
        for q in Q:
            e = [(sum((a * b for a, b in zip(q, k, strict=True)), arb(0)) / root).exp() for k in K]
            total = sum(e, arb(0))
            out.append([sum((e[j] * V[j][c] for j in range(len(V))), arb(0)) / total for c in range(len(V[0]))])
        return out

    old = ctx.prec
    ctx.prec = 400
    try:
        first = attend(*(balls(m.tolist()) for m in ENC))
        W2 = balls([[0.5, 0.1], [0.2, 0.7]]), balls([[0.3, 0.4], [-0.2, 0.9]]), balls([[1.0, 0.3], [0.1, 0.6]])
        true = attend(first, *W2)[1]  # love
        answers = json.loads(symattn.render_json(symattn.derive_spec(spec(top='carry = "full"'), steps=False)))
        printed = answers["sections"][1]["queries"]["love"]["output"]
        for text, value in zip(printed, true, strict=True):
            digit = Decimal(text).adjusted() - 29  # the last of 30 significant digits
            half = arb(fmpq(1, 2)) * arb(10) ** digit
            assert (value - ball(text)).abs_upper() < half
    finally:
        ctx.prec = old


def test_every_line_of_an_input_chain_checks():
    for first in ("", 'carry = "full"'):
        derivation = symattn.derive_spec(spec(text=POSITIONS, first=first), lang="en")
        lines = symattn.render.displayed.displayed_lines(derivation)
        assert len(lines) > 10
        for line in lines:
            check(line)


def test_the_command_line_renders_a_chain_and_refuses_a_broken_one(tmp_path):
    from symattn.cli import main

    path = tmp_path / "chain.toml"
    path.write_text(CHAIN.format(top="", first=""), encoding="utf-8")
    assert main(["render", str(path), "--format", "md,json", "--out", str(tmp_path / "out"), "--digits", "3"]) == 0
    page = (tmp_path / "out" / "chain.md").read_text(encoding="utf-8")
    assert "小数第 3 位に丸めた値" in page  # --digits 3: carried as the first section now shows z, [0.893, 0.930]
    assert page.count("| `love` | $[0.893,\\ 0.930]$ |") == 1  # the second section's X
    path.write_text(CHAIN.format(top="", first="").replace('"from:enc"', '"from:enx"'), encoding="utf-8")
    assert main(["render", str(path), "--format", "md", "--out", str(tmp_path / "bad")]) == 2
    assert not (tmp_path / "bad").exists()


def test_a_section_computed_for_a_chain_is_not_computed_again():
    s = spec()
    computed = dict((id(section), result) for section, result in s.computed)
    assert set(computed) == {id(s.sections[0]), id(s.sections[1])}  # enc and again are referred to
    derivation = symattn.derive_spec(s, steps=False)
    assert derivation.sections[0].result is computed[id(s.sections[0])]
    assert derivation.sections[1].result is computed[id(s.sections[1])]


def test_names_are_compared_as_nfc_as_token_names_are():
    """é typed as one character and as e + a combining accent is one name: a reference finds it, a second section
    cannot take it."""
    base = {"kind": "self_attention", "tokens": ["a", "b"], "X": [["1", "0.5"], ["0.2", "1"]],
            "W_Q": [[1, 0], [0, 1]], "W_K": [[1, 0], [0, 1]], "W_V": [[1, 0], [0, 1]], "focus": "a"}
    chained = symattn.parse_spec({"sections": [{**base, "name": "é"}, {"kind": "norm", "X": "from:e\u0301"}]})
    assert chained.sections[1].carried[0].source == "é"
    with pytest.raises(symattn.SpecError, match=r"sections\[1\]\.name: 'é' names sections\[0\] already"):
        symattn.parse_spec({"sections": [{**base, "name": "é"}, {**base, "name": "e\u0301"}]})


@pytest.mark.parametrize("typed", ["FROM:enc", "output:enc", "from enc:x"])
def test_a_mistyped_reference_is_named_as_one(typed):
    base = {"kind": "self_attention", "name": "enc", "tokens": ["a", "b"], "X": [["1", "0.5"], ["0.2", "1"]],
            "W_Q": [[1, 0], [0, 1]], "W_K": [[1, 0], [0, 1]], "W_V": [[1, 0], [0, 1]], "focus": "a"}
    with pytest.raises(symattn.SpecError, match=r'sections\[1\]\.Y: expected a list of rows, or "from:NAME" or '
                                                 r'"input:NAME" naming an earlier section'):
        symattn.parse_spec({"sections": [base, {"kind": "add_norm", "X": "input:enc", "Y": typed}]})


def test_a_vector_s_error_names_its_entry():
    """gamma, beta, biases: a flat list, so an entry is gamma[1], not gamma[0][1]."""
    with pytest.raises(symattn.SpecError, match=r"sections\[0\]\.gamma\[1\]: "):
        symattn.parse_spec({"sections": [{"kind": "norm", "tokens": ["a"], "X": [["1", "2"]],
                                          "gamma": ["1", "inf"]}]})


def test_a_document_of_too_many_sections_is_refused_before_any_work(tmp_path, capsys):
    """Each section within its own bounds, but together past MAX_PAGES (a chain of 1,500 norms made 19,500 pages
    and rendered for 100 s): one line naming the sections, exit 2, nothing written; solve is not limited."""
    from symattn.cli import main
    from symattn.render.build import MAX_PAGES

    sections = [{"kind": "norm", "name": "s0", "tokens": ["a", "b"], "X": [["1", "0.5"], ["0.2", "1"]]}]
    sections += [{"kind": "norm", "name": f"s{i}", "X": f"from:s{i - 1}"} for i in range(1, 400)]
    spec = tmp_path / "long.json"
    spec.write_text(json.dumps({"sections": sections}), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["render", str(spec), "--format", "md", "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert "sections: the 400 sections make a document of about" in error and f"at most {MAX_PAGES}" in error
    assert not out.exists()
    assert main(["solve", str(spec)]) == 0
