"""Add & Norm's exam (ADD_NORM.exam_module): LayerNorm of x_t + y_t. Easy versions have ε = 0 and a variance
that is the square of a short decimal, so √σ², the normalised rows and the outputs are exact by hand."""

from __future__ import annotations

import random
from fractions import Fraction
import math
from math import isqrt
from typing import Any

from sympy import ImmutableMatrix, Rational

from ...document.steps import Name, Shown
from ...exercises import drawing, work
from ...exercises import fairness as checks
from ...exercises.exercise import AnswerTable, Asked, GivenNamed, GivenTable
from ...exercises.levels import Level
from ...numbers.display import format_number
from .engine import NormResult
from .spec import AddNormSpec

# (X, Y, gamma, beta, eps) of each difficulty; two tokens of width four
VALUES = {
    True: (("-1", "-0.5", "0", "0.5", "1", "1.5"), ("-1", "-0.5", "0", "0.5", "1"), ("0.5", "1", "2"),
           ("-1", "-0.5", "0", "0.5", "1"), "0"),
    False: (("-1.5", "-1", "-0.5", "-0.2", "0", "0.2", "0.5", "0.8", "1", "1.5"),
            ("-1", "-0.5", "-0.2", "0", "0.2", "0.5", "1"), ("0.5", "0.8", "1", "1.5", "2"),
            ("-0.5", "-0.2", "0", "0.2", "0.5"), "1e-5"),
}
TOKENS, WIDTH = 2, 4
# the symbols the questions name
NAMES = {key: Name(key) for key in ("x", "y", "u", "uh", "mu", "eps", "gamma", "beta", "o")}
NAMES["var"] = Name("var_layer")


def short_square(variance: Rational | Fraction) -> bool:
    """Whether σ² is the square of a terminating decimal (p/q with p, q squares, √p and √q of 2s and 5s only)."""
    if variance <= 0:
        return False
    p, q = int(variance.numerator), int(variance.denominator)
    if isqrt(p) ** 2 != p or isqrt(q) ** 2 != q:
        return False
    for root in (isqrt(p), isqrt(q)):  # σ and 1/σ terminating decimals: every division by σ ends
        for prime in (2, 5):
            while root % prime == 0:
                root //= prime
        if root != 1:
            return False
    return True


def sums(X: list[list[str]], Y: list[list[str]]) -> tuple[list[list[int]], int]:
    """The rows of X + Y in integers of 10^-places (exam.checks.integer_matrices), and places: exact, and
    cheaper than SymPy's or Python's fractions (the easy draw tries dozens of y rows a version)."""
    (X, Y), places = checks.integer_matrices([X, Y])
    return [[a + b for a, b in zip(x, y, strict=True)] for x, y in zip(X, Y, strict=True)], places


def variance(row: list[int], places: int) -> Fraction:
    """The biased variance of a row of integers of 10^-places: (n Σv² − (Σv)²) / n², exactly the mean square
    deviation."""
    n, total = len(row), sum(row)
    return Fraction(n * sum(v * v for v in row) - total * total, n * n * 10 ** (2 * places))


def draw(rng: random.Random, level: Level, lang: str) -> dict[str, Any]:
    inputs, outputs, gamma, beta, eps = VALUES[easy := drawing.easy(level)]
    X = drawing.distinct_rows(rng, TOKENS, WIDTH, inputs)
    Y = []
    for x in X:  # easy: each y drawn until σ² of x + y is a short square (bounded; plausible rejects a miss)
        for _ in range(drawing.MAX_TRIES):
            y = drawing.matrix(rng, 1, WIDTH, outputs)[0]
            (u,), places = sums([x], [y])
            spread = variance(u, places)
            if short_square(spread) or not easy and spread > 0:
                break
        Y.append(y)
    return {"kind": AddNormSpec.kind, "tokens": drawing.words(rng, TOKENS, lang), "X": X, "Y": Y, "norm": "layer",
            "eps": eps, "gamma": drawing.matrix(rng, 1, WIDTH, gamma)[0],
            "beta": drawing.matrix(rng, 1, WIDTH, beta)[0]}


WORK_BAND = {"easy": (6, 10), "standard": (12, 16)}  # hand_products of a version (exercises.work)


def hand_products(data: dict[str, Any]) -> int:
    """The squares (u − μ)² of the variance and γ ⊙ the normalised rows (those in floats: √ of the variance)."""
    pairs = []
    gamma = work.matrix([data["gamma"]])[0]
    eps = Fraction(data["eps"])
    for x, y in zip(work.matrix(data["X"]), work.matrix(data["Y"]), strict=True):
        u = [a + b for a, b in zip(x, y, strict=True)]
        d = [v - sum(u) / len(u) for v in u]
        sigma = math.sqrt(sum(v * v for v in d) / len(d) + eps) or 1.0
        pairs += [(v, v) for v in d] + [(g, float(v) / sigma) for g, v in zip(gamma, d, strict=True)]
    return work.count(pairs)


def plausible(data: dict[str, Any]) -> bool:
    rows, places = sums(data["X"], data["Y"])
    if not drawing.rows_distinct(data["X"]) or not drawing.rows_distinct(rows):
        return False
    return all(short_square(variance(u, places)) if Rational(data["eps"]) == 0 else variance(u, places) > 0
               for u in rows)


def friendly(section: AddNormSpec, result: NormResult) -> bool:
    """Distinct rows and sums; with ε = 0 (easy) σ² of every sum a short square; otherwise σ² > 0."""
    rows = [list(row.values) for row in result.rows]
    if not drawing.rows_distinct([list(r) for r in section.X.values.tolist()]) or not drawing.rows_distinct(rows):
        return False
    return all(short_square(row.variance) if section.eps == 0 else row.variance > 0 for row in result.rows)


def exercise(section: AddNormSpec, result: NormResult, digits: int) -> Asked:
    n, d = section.X.shape
    tokens, known, key = section.tokens, result.numbers, "exam_kinds.norm_"

    def table(names: tuple[str, ...], *columns) -> list[AnswerTable]:
        shown = tuple(Shown(ImmutableMatrix([list(v) if isinstance(v, tuple) else [v] for v in values]), known=known)
                      for values in columns)
        return [AnswerTable(("table.token", *(Name(name) for name in names)), tokens, shown)]

    rows = result.rows
    exact = section.eps == 0  # easy: every answer exact; else √(σ² + ε) is rounded on the way
    parts = (
        drawing.scored("sum", key + "sum", NAMES, table(("u",), [r.values for r in rows]), n * d // 2, digits,
                       "scores"),
        drawing.scored("stats", key + "stats", NAMES, table(("mu", "var_layer"), [r.mean for r in rows],
                                                            [r.variance for r in rows]), 2 * n * d, digits, "scores"),
        drawing.scored("normalised", key + "normalised", NAMES, table(("uh",), [r.normalised for r in rows]), n * d,
                       digits, "scores" if exact else "output"),
        drawing.scored("output", key + "output", NAMES, table(("o",), [r.output for r in rows]), n * d, digits,
                       "scores" if exact else "output"),
    )
    given = (GivenTable("table.token", "exam_kinds.norm_x", tokens, section.X),
             GivenTable("table.token", "exam_kinds.norm_y", tokens, section.Y),
             GivenNamed(Name("gamma"), section.gamma), GivenNamed(Name("beta"), section.beta))
    task = (key + "task", {**NAMES, "value": format_number(section.eps, 10).text})
    return Asked((key + "given", NAMES), given, tokens[0], 1, parts, (), task=task, softmax="")
