"""Every number the seed article prints in its worked examples, checked at the article's precision.

The values come from the engine and are formatted by numfmt, exactly as the documents print them.
"""

from __future__ import annotations

import pytest

from symattn import engine
from symattn.numbers.display import format_numbers
from symattn.spec.model import Scale


def texts(values, digits=4, decimals=0, uniform=False):
    return [n.text for n in format_numbers(list(values), digits, decimals, uniform=uniform)]


@pytest.fixture(scope="module")
def parts(mt):
    """The example's three attention sections, without its text blocks."""
    return [section for section in mt.sections if section.kind != "text"]


@pytest.fixture(scope="module")
def self_attention(parts):
    s = parts[0]
    love = s.tokens.index("love")
    return engine.attention(s.X.values, s.X.values, s.W_Q.values, s.W_K.values, s.W_V.values,
                               Scale().divisor(s.d_k), (love,))


@pytest.fixture(scope="module")
def cross_attention(parts):
    s = parts[1]
    return engine.attention(s.X.values, s.memory.values, s.W_Q.values, s.W_K.values, s.W_V.values,
                               Scale().divisor(s.d_k), (0,))


def test_self_attention_projection_table(self_attention):
    Q, K, V = self_attention.Q, self_attention.K, self_attention.V
    rows = {token: i for i, token in enumerate(["I", "love", "machine", "learning"])}
    expected = {  # the article's table "すべてのトークンに対する射影後のベクトル"
        "I": (["1.05", "0.65"], ["0.45", "0.60"], ["1.10", "0.40", "0.65"]),
        "love": (["0.92", "1.24"], ["0.12", "1.28"], ["0.72", "0.96", "0.76"]),
        "machine": (["1.57", "0.93"], ["0.69", "0.85"], ["1.66", "0.56", "0.96"]),
        "learning": (["0.78", "1.74"], ["-0.18", "1.86"], ["0.36", "1.44", "0.84"]),
    }
    for token, (q, k, v) in expected.items():
        i = rows[token]
        assert texts(Q.row(i), decimals=2) == q
        assert texts(K.row(i), decimals=2) == k
        assert texts(V.row(i), decimals=2) == v


def test_self_attention_scores_weights_and_output(self_attention):
    love = self_attention.queries[1]
    assert texts(love.scores) == ["1.158", "1.6976", "1.6888", "2.1408"]
    assert all(s.is_Rational for s in love.scores)  # raw scores are exact
    assert texts(love.scaled) == ["0.8188", "1.2004", "1.1942", "1.5138"]
    # The article prints [0.1688, 0.2472, 0.2457, 0.3383]; the exact last weight is 0.338238038..., which
    # rounds to 0.3382. The article's four weights were nudged to add up to 1.0000; symattn prints the
    # correctly rounded value.
    assert texts(love.softmax.weights) == ["0.1688", "0.2472", "0.2457", "0.3382"]
    assert texts(love.output) == ["0.8933", "0.9295", "0.8176"]
    assert texts(love.output, digits=3) == ["0.893", "0.930", "0.818"]  # "Self-attention の結果"


def test_cross_attention(cross_attention):
    q = cross_attention.queries[0]
    assert texts(cross_attention.Q.row(0), decimals=3) == ["1.170", "1.360"]
    keys = [["0.146", "1.103"], ["0.032", "1.210"], ["0.226", "1.060"], ["-0.080", "1.341"]]
    values = [["0.940", "0.819", "0.590"], ["0.764", "0.918", "0.556"], ["1.082", "0.774", "0.628"],
              ["0.606", "1.035", "0.534"]]
    for j in range(4):
        assert texts(cross_attention.K.row(j), decimals=3) == keys[j]
        assert texts(cross_attention.V.row(j), decimals=3) == values[j]
    assert texts(q.scores) == ["1.6709", "1.6830", "1.7060", "1.7302"]
    assert texts(q.scaled) == ["1.1815", "1.1901", "1.2063", "1.2234"]
    assert texts(q.softmax.weights) == ["0.2453", "0.2474", "0.2515", "0.2558"]
    assert texts(q.output) == ["0.8467", "0.8874", "0.5768"]
    assert texts(q.output, digits=3) == ["0.847", "0.887", "0.577"]


def test_multi_head(parts):
    s = parts[2]
    result = engine.combine_heads(tuple(h.output.values for h in s.heads), s.W_O.values)
    assert texts(result.concat, decimals=3) == ["0.893", "0.930", "0.818", "1.020", "0.710", "0.640", "0.640",
                                                "1.210", "0.580"]
    assert texts(result.output, uniform=True) == ["0.8742", "0.9230", "0.6962"]
    assert all(x.is_Rational for x in result.output)  # exact: 4371/5000, 923/1000, 3481/5000


def test_first_head_is_the_self_attention_output_rounded(parts, self_attention):
    head = parts[2].heads[0].output.values
    assert texts(self_attention.queries[1].output, digits=3) == texts(head, decimals=3)
