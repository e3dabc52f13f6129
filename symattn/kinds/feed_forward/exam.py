"""The feed-forward network's exam (FeedForwardKind.exam_module): ReLU networks with small weights, so h, the
zeros ReLU makes and the output are exact short decimals; every token's h has an entry ReLU sets to 0."""

from __future__ import annotations

import random
from typing import Any

from ...document.steps import Name, Shown
from ...engine import entries
from ...exercises import drawing, work
from ...exercises.exercise import AnswerTable, Asked, GivenNamed, GivenTable
from ...exercises.levels import Level
from .engine import FeedForward
from .kind import FeedForwardSpec

# (X, W_1 and W_2, b_1, b_2, d_ff) of each difficulty: d = 2 inputs and outputs, two tokens
VALUES = {
    True: (("-1", "-0.5", "0", "0.5", "1", "1.5"), ("-1", "0", "1"), ("-1", "-0.5", "0", "0.5", "1"),
           ("-0.5", "0", "0.5"), 3),
    False: (("-1.5", "-1", "-0.5", "-0.2", "0", "0.2", "0.5", "0.8", "1", "1.5"),
            ("-1", "-0.5", "-0.2", "0", "0.2", "0.5", "0.8", "1"), ("-0.5", "-0.2", "0", "0.2", "0.5"),
            ("-0.5", "-0.2", "0", "0.2", "0.5"), 4),
}
TOKENS, WIDTH = 2, 2
# the symbols the questions name
NAMES = {"x": Name("x"), "W1": Name("W_1"), "b1": Name("b_1"), "W2": Name("W_2"), "b2": Name("b_2"), "h": Name("h"),
         "a": Name("a"), "f": Name("f")}


def draw(rng: random.Random, level: Level, lang: str) -> dict[str, Any]:
    inputs, weights, b_1, b_2, d_ff = VALUES[drawing.easy(level)]
    return {"kind": FeedForwardSpec.kind, "tokens": drawing.words(rng, TOKENS, lang),
            "X": drawing.distinct_rows(rng, TOKENS, WIDTH, inputs),
            "W_1": drawing.matrix(rng, WIDTH, d_ff, weights), "b_1": drawing.matrix(rng, 1, d_ff, b_1)[0],
            "W_2": drawing.matrix(rng, d_ff, WIDTH, weights), "b_2": drawing.matrix(rng, 1, WIDTH, b_2)[0],
            "activation": "relu"}


def plausible(data: dict[str, Any]) -> bool:
    """friendly's check on the network computed in fractions (a few dozen products)."""
    X, W_1, W_2 = (drawing.fractions(data[key]) for key in ("X", "W_1", "W_2"))
    (b_1,), (b_2,) = drawing.fractions([data["b_1"]]), drawing.fractions([data["b_2"]])
    hidden = [[v + b for v, b in zip(h, b_1, strict=True)] for h in drawing.product(X, W_1)]
    output = [[v + b for v, b in zip(f, b_2, strict=True)]
              for f in drawing.product([[max(v, 0) for v in h] for h in hidden], W_2)]
    return fair(X, hidden, output, W_2)


WORK_BAND = {"standard": (10, 16)}  # hand_products of a version (exercises.work); easy: every product is by 0 or ±1


def hand_products(data: dict[str, Any]) -> int:
    """h = x W_1 and f = a W_2 (a = ReLU(h): its zeros are read off)."""
    X, W_1, W_2 = (work.matrix(data[key]) for key in ("X", "W_1", "W_2"))
    b_1 = work.matrix([data["b_1"]])[0]
    activated = [[max(v + b, 0) for v, b in zip(h, b_1, strict=True)] for h in work.times(X, W_1)]
    return work.count(work.product_pairs(X, W_1) + work.product_pairs(activated, W_2))


def friendly(section: FeedForwardSpec, result: FeedForward) -> bool:
    return fair(entries(section.X.values), entries(result.hidden), entries(result.output), entries(section.W_2.values))


def fair(X, hidden, output, W_2) -> bool:
    """Distinct inputs; every token's h with an entry ReLU zeroes and one it keeps; no all-zero output row; no dead
    hidden unit (one ReLU zeroes for every token: its W_2 row is never used), and W_2's rows all different and
    none zero (a unit the output ignores, or two units it cannot tell apart)."""
    if not drawing.rows_distinct(X) or not drawing.rows_distinct(W_2):
        return False
    if any(all(v <= 0 for v in unit) for unit in zip(*hidden, strict=True)):
        return False
    return all(any(v < 0 for v in h) and any(v > 0 for v in h) and any(v != 0 for v in f)
               for h, f in zip(hidden, output, strict=True))


def exercise(section: FeedForwardSpec, result: FeedForward, digits: int) -> Asked:
    n, d = section.X.shape
    d_ff, d_out = section.W_2.shape
    tokens, key = section.tokens, "exam_kinds.ffn_"

    def table(name: str, values) -> AnswerTable:
        return AnswerTable(("table.token", Name(name)), tokens, (Shown(values, known=result.known),))

    parts = (drawing.scored("hidden", key + "hidden", NAMES, [table("h", result.hidden)], n * d_ff * d, digits,
                            "scores"),
             drawing.scored("activated", key + "activated", NAMES, [table("a", result.activated)], n * d_ff, digits,
                            "scores"),
             drawing.scored("output", key + "output", NAMES, [table("f", result.output)], n * d_ff * d_out, digits,
                            "scores"))
    given = (GivenTable("table.token", key + "input", tokens, section.X),
             *(GivenNamed(Name(name), getattr(section, name)) for name in ("W_1", "b_1", "W_2", "b_2")))
    return Asked((key + "given", NAMES), given, tokens[0], 1, parts, (), task=(key + "task", {}), softmax="")
