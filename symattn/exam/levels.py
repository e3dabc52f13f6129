"""What each exam difficulty allows, and the words exam problems are made of."""

from __future__ import annotations

import random
from dataclasses import dataclass

DIFFICULTIES = ("easy", "standard")
MAX_LOGIT = 3  # scaled scores within ±3: e^x stays a friendly number
MIN_WEIGHT = 0.02  # no weight that rounds away

VOCABULARY = {
    "en": ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "big", "red", "sun", "sky", "we", "see", "it"],
    "ja": ["猫", "犬", "鳥", "川", "見た", "走る", "空", "青い", "私", "本", "読む", "赤い", "海", "山", "花"],
}


@dataclass(frozen=True)
class Level:
    """What a difficulty allows: value sets for inputs and weights, token counts, d_k choices."""

    inputs: tuple[str, ...]
    weights: tuple[str, ...]
    tokens: tuple[int, ...]
    d_k: tuple[int, ...]


LEVELS = {
    # X: integers or one decimal (|x| ≤ 3); W: small integers, so Q, K, V have at most one decimal, raw scores at
    # most two, and √d_k is an integer (d_k ∈ {1, 4}).
    "easy": Level(inputs=("-1", "-0.5", "0", "0.5", "1", "1.5"), weights=("-1", "0", "1"),
                  tokens=(3,), d_k=(1, 4)),
    # One-decimal inputs and weights; d_k = 2, so the scaling is by √2; three or four tokens.
    "standard": Level(inputs=tuple(f"{v / 10:.1f}" for v in range(-15, 16, 5)) + ("0.2", "-0.2", "0.8"),
                      weights=("-1", "-0.5", "0", "0.5", "1", "0.2", "-0.2", "0.8"), tokens=(3, 4), d_k=(2,)),
}


def random_matrix(rng: random.Random, rows: int, cols: int, values: tuple[str, ...]) -> list[list[str]]:
    """A rows × cols matrix of values drawn from `values` (exact strings)."""
    return [[rng.choice(values) for _ in range(cols)] for _ in range(rows)]


@dataclass(frozen=True)
class Draw:
    """The sizes and words of one problem: n tokens (and one extra word), d_k, and the focus token."""

    n: int
    d_k: int
    tokens: list[str]
    extra: str
    focus: str


def draw_sizes(rng: random.Random, level: Level, lang: str) -> Draw:
    """The first draws of every problem, in a fixed order: another order would change every seed's problems."""
    n = rng.choice(level.tokens)
    d_k = rng.choice(level.d_k)
    words = rng.sample(VOCABULARY[lang], n + 1)
    tokens, extra = words[:n], words[n]
    return Draw(n, d_k, tokens, extra, rng.choice(tokens))
