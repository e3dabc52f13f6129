"""Certified digits of a full carry (symattn.numbers.certify): every kind's error bound holds when its carried rows are
moved, the answers of a full chain are the true, unrounded chain's to every figure they give (arb balls), and a page
whose rounding the bound cannot certify is refused."""

from __future__ import annotations

import json
import random
import re
from decimal import Decimal, localcontext

import pytest

import symattn
from symattn.examples import source

EPSILON = Decimal("1e-20")  # how far the perturbed rows move: far above the answers' 30-figure resolution
_DECIMAL = re.compile(r"-?[0-9]+(\.[0-9]+)?(E[+-][0-9]+)?")


def _parse(text: str) -> symattn.Spec:
    return symattn.parse_spec(symattn.read_spec_text(text, "toml", "spec.toml"))


def _answers_and_section(text: str):
    spec = _parse(text)
    derivation = symattn.derive_spec(spec, steps=False)
    return symattn.answers(derivation)["sections"][0], spec.sections[0], derivation.sections[0].result


def _rows(rows: list[list[Decimal]]) -> str:
    return "[" + ", ".join("[" + ", ".join(str(v) for v in row) + "]" for row in rows) + "]"


def _perturbed(rows: list[list[str]], rng: random.Random) -> list[list[Decimal]]:
    return [[Decimal(v) + EPSILON * Decimal(rng.randint(-1000, 1000)) / 1000 for v in row] for row in rows]


def _pairs(a, b, key=None):
    """The computed decimals of two answers of the same shape, side by side (given inputs left out)."""
    if key in {"eps", "gamma", "beta", "temperature", "d_k", "scale", "exact", "tokens", "ranking", "vocabulary",
               "predicted", "memory_tokens", "past_tokens", "focus", "ties", "name"}:
        return
    if isinstance(a, dict):
        for k in a:
            yield from _pairs(a[k], b[k], k)
    elif isinstance(a, list):
        for u, v in zip(a, b, strict=True):
            yield from _pairs(u, v, key)
    elif isinstance(a, str) and _DECIMAL.fullmatch(a):
        yield key, Decimal(a), Decimal(b)


X = [["0.8", "-0.3", "0.5", "0.1"], ["0.2", "0.9", "-0.4", "0.6"], ["-0.7", "0.4", "0.3", "1.1"]]
W = "[[0.5, -0.2, 0.1, 0.3], [0.4, 0.6, -0.5, 0.2], [-0.3, 0.1, 0.7, 0.4], [0.2, -0.6, 0.3, 0.8]]"
W2 = "[[0.1, 0.7, -0.4, 0.2], [-0.5, 0.3, 0.6, 0.1], [0.4, -0.2, 0.2, 0.9], [0.6, 0.5, -0.1, -0.3]]"
TOKENS = 'tokens = ["a", "b", "c"]\n'
ATTENTION = f'W_Q = {W}\nW_K = {W2}\nW_V = {W}\nfocus = "all"\n'
MEMORY = 'memory_tokens = ["p", "q"]\nmemory = [[0.3, 0.2, -0.1, 0.5], [0.9, -0.4, 0.2, 0.1]]\n'
CASES = {
    "self_attention": 'kind = "self_attention"\n' + TOKENS + ATTENTION,
    "masked_rope_online": 'kind = "self_attention"\n' + TOKENS + ATTENTION
                          + 'mask = "causal"\nrope = true\nsoftmax = "online"\n',
    "sinusoidal": 'kind = "self_attention"\npositional_encoding = "sinusoidal"\n' + TOKENS + ATTENTION,
    "cache": 'kind = "self_attention"\n' + TOKENS + ATTENTION + 'past_tokens = ["x"]\n'
             'past_K = [[0.2, 0.1, -0.3, 0.4]]\npast_V = [[1.0, 0.5, 0.2, -0.1]]\n',
    "cross_attention": 'kind = "cross_attention"\n' + TOKENS + MEMORY + ATTENTION,
    "multi_head": 'kind = "multi_head"\n' + TOKENS + 'focus = "all"\n'
                  f'W_O = {W2}\nheads = [{{ W_Q = [[0.5, 0.1], [0.2, 0.7], [-0.3, 0.4], [0.6, 0.2]], '
                  'W_K = [[0.3, 0.4], [-0.2, 0.9], [0.1, 0.1], [0.5, -0.6]], '
                  'W_V = [[1.0, 0.3], [0.1, 0.6], [0.2, -0.4], [0.3, 0.3]] }, '
                  '{ W_Q = [[0.2, 0.3], [0.1, -0.5], [0.4, 0.2], [0.1, 0.9]], '
                  'W_K = [[0.6, 0.1], [0.2, 0.2], [-0.3, 0.5], [0.4, 0.4]], '
                  'W_V = [[0.5, -0.2], [0.3, 0.8], [0.1, 0.1], [-0.6, 0.2]], mask = "causal" }]\n',
    "grouped_query": 'kind = "grouped_query"\n' + TOKENS + 'focus = "all"\nmask = "causal"\nrope = true\n'
                     f'W_O = {W2}\nheads = [{{ W_Q = [[0.5, 0.1], [0.2, 0.7], [-0.3, 0.4], [0.6, 0.2]] }}, '
                     '{ W_Q = [[0.2, 0.3], [0.1, -0.5], [0.4, 0.2], [0.1, 0.9]] }]\n'
                     'kv_heads = [{ W_K = [[0.3, 0.4], [-0.2, 0.9], [0.1, 0.1], [0.5, -0.6]], '
                     'W_V = [[1.0, 0.3], [0.1, 0.6], [0.2, -0.4], [0.3, 0.3]] }]\n',
    "add_norm": 'kind = "add_norm"\n' + TOKENS + 'Y = [[0.1, 0.2, 0.3, 0.4], [0.5, -0.5, 0.5, -0.5], '
                '[0.0, 0.1, 0.0, 0.1]]\ngamma = [1.5, 0.5, -1.0, 2.0]\nbeta = [0.1, 0.0, -0.2, 0.3]\n',
    "rms": 'kind = "norm"\nnorm = "rms"\n' + TOKENS,
    "relu": 'kind = "feed_forward"\n' + TOKENS + f'W_1 = {W}\nb_1 = [0.1, -0.1, 0.2, 0.0]\nW_2 = {W2}\n'
            'b_2 = [0.0, 0.5, -0.5, 0.1]\n',
    "gelu": 'kind = "feed_forward"\nactivation = "gelu"\n' + TOKENS + f'W_1 = {W}\nW_2 = {W2}\n',
    "gelu_tanh": 'kind = "feed_forward"\nactivation = "gelu_tanh"\n' + TOKENS + f'W_1 = {W}\nW_2 = {W2}\n',
    "swiglu": 'kind = "feed_forward"\nactivation = "swiglu"\n' + TOKENS + f'W_1 = {W}\nW_3 = {W2}\nW_2 = {W}\n',
    "next_token": 'kind = "next_token"\n' + TOKENS + 'vocabulary = ["u", "v", "w", "z"]\n'
                  f'W_vocab = {W}\nb_vocab = [0.1, 0.0, -0.1, 0.2]\ntemperature = 0.7\ntop_k = 2\n',
    "tied": 'kind = "next_token"\n' + TOKENS + 'vocabulary = ["u", "v"]\ntied = true\n'
            'embeddings = [[0.5, 0.1, -0.2, 0.3], [0.2, 0.6, 0.1, -0.4]]\n',
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_kind_s_bound_holds_when_its_carried_rows_move(case):
    """The bound each kind gives for rows within ε of the true ones (Kind.error_bound) holds for every value its
    answers print, with rows moved by up to ε = 1e-20 (first-order effects, seen in 30 figures), and without the
    doubling certify adds for its float arithmetic. It is not vacuous: the largest change is within 10^6 of it."""
    rng = random.Random(case)
    template = "[[sections]]\n" + CASES[case]
    fields = {"X": X, "Y": None, "memory": None}
    if case == "add_norm":
        fields["Y"] = [["0.1", "0.2", "0.3", "0.4"], ["0.5", "-0.5", "0.5", "-0.5"], ["0.0", "0.1", "0.0", "0.1"]]
    if case == "cross_attention":
        fields["memory"] = [["0.3", "0.2", "-0.1", "0.5"], ["0.9", "-0.4", "0.2", "0.1"]]

    def spec_text(rows: dict) -> str:
        text = template
        for key in ("Y", "memory"):
            if rows.get(key) is not None:
                text = re.sub(rf"(?m)^{key} = .*$", f"{key} = {_rows(rows[key])}", text)
        return text + f"X = {_rows(rows['X'])}\n"

    base, section, result = _answers_and_section(spec_text({k: v for k, v in fields.items()}))
    moved = {k: None if v is None else _perturbed(v, rng) for k, v in fields.items()}
    other, _, _ = _answers_and_section(spec_text(moved))
    errors = {k: float(EPSILON) for k, v in fields.items() if v is not None}
    bound = symattn.kind_of(section.kind).error_bound(section, result, errors)
    worst = 0.0
    with localcontext() as c:
        c.prec = 60
        for key, a, b in _pairs(base, other):
            allowed = bound.absolute + bound.relative * float(abs(a)) + 1e-29 * float(abs(a))
            assert float(abs(a - b)) <= allowed, (key, a, b, bound)
            worst = max(worst, float(abs(a - b)) / max(allowed, 1e-300))
    assert worst > 1e-6, (worst, bound)


def _layer_full() -> str:
    return 'carry = "full"\n' + source("layer")


def test_a_full_chain_s_answers_are_certified_figures():
    """Every section of the layer example with a full carry: each computed decimal has at most 30 figures; a value
    whose figures are all within the bound of 0 (ReLU's zeros, computed from 90-digit rows) is written 0E-k, and
    the given inputs (γ, β, ε) keep their 30 figures."""
    answers = json.loads(symattn.render_json(symattn.derive_spec(_parse(_layer_full()), steps=False)))
    ffn = next(s for s in answers["sections"] if s["kind"] == "feed_forward")
    zeros = [v for row in ffn["rows"].values() for v in row["activated"] if Decimal(v) == 0]
    assert zeros and all(re.fullmatch(r"0E-[0-9]{2}", v) and int(v[3:]) >= 70 for v in zeros)
    norm = next(s for s in answers["sections"] if s["kind"] == "add_norm")
    assert norm["gamma"][0] == "1." + "0" * 29 and norm["eps"] == "0.0000100000000000000000000000000000"
    figures = [len(re.sub(r"\D", "", v.split("E")[0]).lstrip("0")) for s in answers["sections"]
               for _, v, _ in _pairs(s, s) for v in [str(v)]]
    assert max(figures) <= 30


def test_a_page_the_bound_cannot_certify_is_refused(tmp_path):
    """b_2 = 0.00005 after a ReLU that zeroes every entry: the output is 0.00005 exactly, a rounding boundary at 4
    decimals, and from 90-digit rows the bound cannot say which side the true chain is on. `render` refuses it
    with one line (exit 2, nothing written); `solve` gives the figures it can certify."""
    text = ('carry = "full"\n[[sections]]\nkind = "self_attention"\nname = "a"\ntokens = ["x", "y"]\n'
            'X = [[1, 0], [0, 1]]\nW_Q = [[1, 0], [0, 1]]\nW_K = [[1, 0], [0, 1]]\nW_V = [[1, 0], [0, 1]]\n'
            'focus = "all"\n[[sections]]\nkind = "feed_forward"\nX = "from:a"\nW_1 = [[-1, -1], [-1, -1]]\n'
            'W_2 = [[1, 0], [0, 1]]\nb_2 = [0.00005, 0.5]\n')
    spec_file = tmp_path / "edge.toml"
    spec_file.write_text(text, encoding="utf-8")
    from symattn.cli import main

    out = tmp_path / "out"
    assert main(["render", str(spec_file), "--format", "md", "--out", str(out)]) == 2
    assert not out.exists()
    with pytest.raises(symattn.SpecError, match=r"sections\[1\]: with carry = \"full\", 0\.00005 is within .* of a "
                                                r"rounding boundary: it cannot be certified to 4 decimals"):
        symattn.derive_spec(_parse(text))
    answers = symattn.answers(symattn.derive_spec(_parse(text), steps=False))
    assert answers["sections"][1]["rows"]["x"]["output"][0] == "0.00005" + "0" * 29


def test_a_ranking_the_bound_cannot_certify_is_refused():
    """Two logits that differ by less than their errors cannot be ranked for the unrounded chain: the kind's bound
    refuses them with a line naming the entries (here logits 0.001 apart, rows moved by up to 0.01; 1e-9 is fine)."""
    text = ('[[sections]]\nkind = "next_token"\ntokens = ["x"]\nX = [[1, 0.5]]\nvocabulary = ["p", "q", "r"]\n'
            'W_vocab = [[1.001, 1, 0], [0, 0, 1]]\n')
    spec = _parse(text)
    result = symattn.derive_spec(spec, steps=False).sections[0].result
    kind = symattn.kind_of("next_token")
    assert kind.error_bound(spec.sections[0], result, {"X": 1e-9}).absolute < 1e-8
    with pytest.raises(symattn.SpecError, match=r"^X: with carry = \"full\", the logits of 'p' and 'q' are too close"):
        kind.error_bound(spec.sections[0], result, {"X": 0.01})


def _true_layer(spec: dict):
    """The layer example's Transformer at 200 digits (mpmath, nothing rounded between sections), as
    tests/test_layer.py's float one: post-norm LayerNorm (biased variance, eps = 1e-5 inside the root), ReLU
    feed-forward, softmax(QKᵀ/√d_k)V with a causal mask in the decoder, logits x·W_vocab. (dec_out rows, p)."""
    import mpmath

    mp = mpmath
    by_name = {s.get("name"): s for s in spec["sections"] if s["kind"] != "text"}

    def m(rows):
        return [[mp.mpf(str(v)) for v in row] for row in rows]

    def product(A, B):
        return [[mp.fsum(A[i][k] * B[k][j] for k in range(len(B))) for j in range(len(B[0]))] for i in range(len(A))]

    def attention(Xq, Xk, s, causal=False):
        Q, K, V = product(Xq, m(s["W_Q"])), product(Xk, m(s["W_K"])), product(Xk, m(s["W_V"]))
        root = mp.sqrt(len(Q[0]))
        out = []
        for i, q in enumerate(Q):
            e = [mp.exp(mp.fsum(a * b for a, b in zip(q, k, strict=True)) / root) if not causal or j <= i else 0
                 for j, k in enumerate(K)]
            total = mp.fsum(e)
            out.append([mp.fsum(e[j] * V[j][c] for j in range(len(V))) / total for c in range(len(V[0]))])
        return out

    def norm(rows):
        out = []
        for x in rows:
            mean = mp.fsum(x) / len(x)
            variance = mp.fsum((v - mean) ** 2 for v in x) / len(x)
            out.append([(v - mean) / mp.sqrt(variance + mp.mpf("1e-5")) for v in x])
        return out

    def add(A, B):
        return [[a + b for a, b in zip(r, s, strict=True)] for r, s in zip(A, B, strict=True)]

    def ffn(x, s):
        return product([[max(v, 0) for v in row] for row in product(x, m(s["W_1"]))], m(s["W_2"]))

    with mpmath.workdps(200):
        X = m(by_name["enc_attn"]["X"])
        h = norm(add(X, attention(X, X, by_name["enc_attn"])))
        H = norm(add(h, ffn(h, by_name["enc_ffn"])))
        Y = m(by_name["dec_attn"]["X"])
        d = norm(add(Y, attention(Y, Y, by_name["dec_attn"], causal=True)))
        d = norm(add(d, attention(d, H, by_name["dec_cross"])))
        d = norm(add(d, ffn(d, by_name["dec_ffn"])))
        next_token = next(s for s in spec["sections"] if s["kind"] == "next_token")
        logits = product([d[-1]], m(next_token["W_vocab"]))[0]
        e = [mp.exp(v) for v in logits]
        return [[mp.nstr(v, 60) for v in row] for row in d], [mp.nstr(v / mp.fsum(e), 60) for v in e]


def test_a_full_chain_prints_the_true_chain_s_figures():
    """The layer example with a full carry, against the same Transformer at 200 digits with nothing rounded
    between its sections: the last Add & Norm's rows and the next-token probabilities solve prints are the true
    values to half a unit of their last certified figure (cut by the bound, at most 30)."""
    import tomllib

    true_rows, true_p = _true_layer(tomllib.loads(source("layer")))
    answers = json.loads(symattn.render_json(symattn.derive_spec(_parse(_layer_full()), steps=False)))
    last_norm = [s for s in answers["sections"] if s["kind"] == "add_norm"][-1]
    printed = [(text, true) for text, true in zip(last_norm["rows"]["私は"]["output"], true_rows[-1], strict=True)]
    predicted = next(s for s in answers["sections"] if s["kind"] == "next_token")
    printed += list(zip(predicted["probabilities"], true_p, strict=True))
    for text, true in printed:
        value = Decimal(text)
        half = Decimal(5).scaleb(value.as_tuple().exponent - 1)
        assert len(value.as_tuple().digits) >= 28
        assert abs(Decimal(true) - value) <= half, (text, true)


def _tiny_weights_chain(size: int) -> str:
    return ('carry = "full"\n[[sections]]\nkind = "self_attention"\nname = "a"\ntokens = ["t1", "t2"]\n'
            f'X = [[{size}, 0], [0, {size}]]\nW_Q = [[1, 0], [0, 1]]\nW_K = [[1, 0], [0, 1]]\n'
            'W_V = [[0.001, 0], [0, 0.001]]\n[[sections]]\nkind = "add_norm"\nname = "n1"\ntokens = ["t1", "t2"]\n'
            'X = [[0, 1], [1, 0]]\nY = "from:a"\neps = "1e-5"\n')


def test_a_full_carry_of_vanishing_weights_stays_short():
    """Weights of e^{-707106} (scores of 10^6 / √2): a full carry keeps the place of the matrix's largest entry's
    90th digit, so those weights carry as 0, not as fractions of 300,000 digits whose square roots SymPy spent
    minutes factoring; the norm's answers are the unrounded chain's (its rows are [0, 1] + [0.001, 0] …)."""
    answers = symattn.answers(symattn.derive_spec(_parse(_tiny_weights_chain(1000)), steps=False))
    norm = answers["sections"][1]
    assert [Decimal(v) for v in norm["rows"]["t1"]["sum"]] == [Decimal(1), Decimal(1)]  # [0, 1] + [1, e^-707106]
    assert all(len(v) < 60 for row in norm["rows"].values() for v in row["sum"])


def test_a_page_is_checked_at_the_decimals_it_shows():
    """A mean of exactly 5.5 (rows [10, 1] and [1, 10] after the residual) is a rounding boundary at 0 decimals,
    but the page writes 4: the document renders (it was refused as uncertifiable 'to 0 decimals')."""
    text = _tiny_weights_chain(10).replace("W_V = [[0.001, 0], [0, 0.001]]", "W_V = [[1, 0], [0, 1]]")
    derivation = symattn.derive_spec(_parse(text))
    assert symattn.render_markdown(derivation)
