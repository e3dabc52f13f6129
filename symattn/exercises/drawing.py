"""What the newer kinds' exams (kinds/*_exam.py) share: words and numbers drawn the same way in every language,
rows drawn without duplicates, the fixed e^x table, and parts whose points follow their work."""

from __future__ import annotations

import math
import random
from fractions import Fraction
from functools import lru_cache
from typing import Any

from sympy import Rational

from .exercise import Answer, Part, Work, tolerance
from .levels import LEVELS, MAX_LOGIT, MIN_GAP, MIN_WEIGHT, VOCABULARY, Level, random_matrix

# The fixed e^x table of easy papers: x from −3 to 3 in steps of 0.125, whatever the version asks.
EXP_GRID = tuple(Rational(k, 8) for k in range(-24, 25))
MAX_TRIES = 200  # a distinct matrix is drawn at most this many times; then the last one (plausible rejects it)


def easy(level: Level) -> bool:
    """Whether a level is the easy one (the newer kinds draw their own value sets for each difficulty)."""
    return level == LEVELS["easy"]


def words(rng: random.Random, n: int, lang: str) -> list[str]:
    """n different words: their places in the vocabulary are drawn, so every language gets the same draws."""
    return [VOCABULARY[lang][i] for i in rng.sample(range(len(VOCABULARY["en"])), n)]


matrix = random_matrix  # a rows × cols matrix of `values` (exact strings)


def distinct_rows(rng: random.Random, rows: int, cols: int, values: tuple[str, ...]) -> list[list[str]]:
    """A matrix whose rows are all different and none all zero (tokens that can be told apart)."""
    drawn = matrix(rng, rows, cols, values)
    for _ in range(MAX_TRIES):
        if rows_distinct(drawn):
            break
        drawn = matrix(rng, rows, cols, values)
    return drawn


def rows_distinct(rows: list[list[Any]]) -> bool:
    """No two rows with equal values and no all-zero row (strings compared as numbers: "0.5" = ".50")."""
    numbers = [tuple(_rational(str(v)) for v in row) for row in rows]
    return len(set(numbers)) == len(numbers) and all(any(v != 0 for v in row) for row in numbers)


@lru_cache(maxsize=1024)  # the value sets' strings and their sums: SymPy parses each in ~20 µs
def _rational(text: str) -> Rational:
    return Rational(text)


def fractions(rows: list[list[str]]) -> list[list[Fraction]]:
    """A drawn matrix (exact strings) as fractions, for the quick checks."""
    return [[Fraction(v) for v in row] for row in rows]


def product(left: list[list[Any]], right: list[list[Any]]) -> list[list[Any]]:
    """A matrix product of lists of rows (fractions or floats)."""
    return [[sum(a * b for a, b in zip(row, column, strict=True)) for column in zip(*right, strict=True)]
            for row in left]


def scored(key: str, question: str, params: dict[str, Any], answers: list[Answer], work: int, digits: int,
           accuracy: str) -> Part:
    """A part of `work` scalar products (its points follow from it: exam/points.py), with the tolerance of the
    existing part `accuracy` whose answers are reached the same way (exercises.exercise.tolerance: "scores" exact,
    "weights" from rounded table values, "output" through rounded intermediates)."""
    return Part(key, question, params, tuple(answers), 0, "", tolerance(digits, accuracy), Work(work, work),
                accuracy)


def softmax_ok(scaled: list[float]) -> bool:
    """The quick check, in floats, of a softmax's inputs: one clear largest, every input within ±MAX_LOGIT, every
    weight at least MIN_WEIGHT and the two largest MIN_GAP apart; with margins far above float error, so that it
    rejects only what the exact checks reject."""
    top = sorted(scaled, reverse=True)
    if len(top) > 1 and top[0] - top[1] < 1e-12 or any(abs(a) > MAX_LOGIT + 1e-9 for a in scaled):
        return False
    exps = [math.exp(a - top[0]) for a in scaled]
    weights = [e / sum(exps) for e in exps]
    return min(weights) >= MIN_WEIGHT - 1e-9 and gap_ok([w + 1e-9 * (w == max(weights)) for w in weights])


def gap_ok(values: list[float]) -> bool:
    """The two largest of `values` (weights or probabilities) at least MIN_GAP apart."""
    top = sorted(values, reverse=True)
    return len(top) < 2 or top[0] - top[1] >= MIN_GAP
