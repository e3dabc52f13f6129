"""What each exam difficulty allows, and the words exam problems are made of."""

from __future__ import annotations

import random
from dataclasses import dataclass

DIFFICULTIES = ("easy", "standard")
MAX_LOGIT = 3  # scaled scores within ±3: e^x stays a friendly number
MIN_WEIGHT = 0.02  # no weight that rounds away
MIN_GAP = 0.02  # the two largest weights (probabilities) of every asked softmax differ by at least this, in every kind
TOKEN_COUNTS = range(2, 7)  # what --tokens allows: enough to be attention, few enough for a hand

VOCABULARY = {
    "en": ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "big", "red", "sun", "sky", "we", "see", "it"],
    "ja": ["猫", "犬", "鳥", "川", "見た", "走る", "空", "青い", "私", "本", "読む", "赤い", "海", "山", "花"],
}


@dataclass(frozen=True)
class Level:
    """What a difficulty allows: value sets for inputs and weights, the token counts and d_k an exam draws from
    (once per exam: every version shares them), the d_k --d-k may ask for, and the step of the paper's fixed e^x
    table (every scaled score is a multiple of it; None: no table, a calculator is needed)."""

    inputs: tuple[str, ...]
    weights: tuple[str, ...]
    tokens: tuple[int, ...]
    d_k: tuple[int, ...]
    d_k_allowed: tuple[int, ...] = ()
    exp_step: str | None = None


LEVELS = {
    # X: multiples of 0.5; W: -1, 0, 1, so Q and K are multiples of 0.5, raw scores of 0.25 and, with √d_k = 2
    # (d_k = 4; d_k = 1 only when asked), scaled scores multiples of 0.125: one fixed e^x table serves every paper.
    "easy": Level(inputs=("-1", "-0.5", "0", "0.5", "1", "1.5"), weights=("-1", "0", "1"),
                  tokens=(3,), d_k=(4,), d_k_allowed=(1, 4), exp_step="0.125"),
    # One-decimal inputs and weights; d_k = 2, so the scaling is by √2 and the scaled scores are irrational: no
    # table, a calculator; three or four tokens.
    "standard": Level(inputs=tuple(f"{v / 10:.1f}" for v in range(-15, 16, 5)) + ("0.2", "-0.2", "0.8"),
                      weights=("-1", "-0.5", "0", "0.5", "1", "0.2", "-0.2", "0.8"), tokens=(3, 4), d_k=(2,),
                      d_k_allowed=(1, 2, 3, 4)),
}


def random_matrix(rng: random.Random, rows: int, cols: int, values: tuple[str, ...]) -> list[list[str]]:
    """A rows × cols matrix of values drawn from `values` (exact strings), row by row, each as rng.choice(values)
    draws it: its rejection sampling of getrandbits (Random._randbelow_with_getrandbits) written out, without the
    two Python calls an entry that were most of an exam's drawing time (tests/exam/test_drawing.py compares)."""
    n, getrandbits = len(values), rng.getrandbits
    if not n:  # (rng.choice's IndexError: nothing to draw from)
        raise IndexError("cannot draw from no values")
    bits = n.bit_length()
    matrix = []
    for _ in range(rows):
        row = []
        for _ in range(cols):
            r = getrandbits(bits)
            while r >= n:
                r = getrandbits(bits)
            row.append(values[r])
        matrix.append(row)
    return matrix


@dataclass(frozen=True)
class Draw:
    """The sizes and words of one problem: n tokens (and one extra word), d_k, and the focus token."""

    n: int
    d_k: int
    tokens: list[str]
    extra: str
    focus: str


def draw_sizes(rng: random.Random, level: Level, lang: str) -> Draw:
    """The first draws of every problem, in a fixed order: another order would change every seed's problems.
    The words are drawn as places in the vocabulary, the same in every language: `lang` only names them, so a
    seed gives the same numbers in ja and en."""
    n = rng.choice(level.tokens)
    d_k = rng.choice(level.d_k)
    places = rng.sample(range(len(VOCABULARY["en"])), n + 1)
    focus = rng.randrange(n)
    words = [VOCABULARY[lang][i] for i in places]
    return Draw(n, d_k, words[:n], words[n], words[focus])
