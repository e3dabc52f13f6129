"""Next-token prediction's exam (NextTokenKind.exam_module): one state, a vocabulary of four, logits, the softmax
and the ranking. Easy logits are multiples of 0.25 within ±3, so the paper's fixed e^x table serves them."""

from __future__ import annotations

import random
from decimal import Decimal
from typing import Any

from sympy import ImmutableMatrix, Rational

from ...document.steps import Name, Shown, Token, Tokens
from ...exercises import drawing, work
from ...exercises.exercise import AnswerTable, AnswerVector, Asked, GivenNamed, GivenVector, row
from ...exercises.levels import MAX_LOGIT, MIN_WEIGHT, Level
from ...numbers.decimals import to_decimal
from ...numbers.display import format_number
from .engine import Prediction
from .kind import NextTokenSpec

# (x, W_vocab, b_vocab, temperatures) of each difficulty: d = 3, a vocabulary of four
VALUES = {
    True: (("-1", "-0.5", "0", "0.5", "1", "1.5"), ("-1", "-0.5", "0", "0.5", "1"), ("-0.5", "0", "0.5"), ("1",)),
    False: (("-1.5", "-1", "-0.5", "-0.2", "0", "0.2", "0.5", "0.8", "1", "1.5"),
            ("-1", "-0.5", "-0.2", "0", "0.2", "0.5", "0.8", "1"), ("-0.5", "-0.2", "0", "0.2", "0.5"), ("0.5", "2")),
}
WIDTH, VOCABULARY = 3, 4
# the symbols the questions name
NAMES = {"x": Name("x"), "W": Name("W_vocab"), "b": Name("b"), "l": Name("l"), "a": Name("a"), "T": Name("T"),
         "p": Name("p")}


def draw(rng: random.Random, level: Level, lang: str) -> dict[str, Any]:
    state, weights, bias, temperatures = VALUES[drawing.easy(level)]
    token, *vocabulary = drawing.words(rng, 1 + VOCABULARY, lang)
    data = {"kind": NextTokenSpec.kind, "tokens": [token], "X": drawing.matrix(rng, 1, WIDTH, state),
            "vocabulary": vocabulary, "W_vocab": drawing.matrix(rng, WIDTH, VOCABULARY, weights),
            "b_vocab": drawing.matrix(rng, 1, VOCABULARY, bias)[0], "focus": token}
    temperature = rng.choice(temperatures)
    if temperature != "1":
        data["temperature"] = temperature
    return data


WORK_BAND = {"easy": (1, 4), "standard": (4, 7)}  # hand_products of a version (exercises.work)


def hand_products(data: dict[str, Any]) -> int:
    """The logits x W_vocab (a temperature divides, it multiplies nothing)."""
    return work.count(work.product_pairs(work.matrix(data["X"]), work.matrix(data["W_vocab"])))


def plausible(data: dict[str, Any]) -> bool:
    """Logits (over T) distinct and within ±MAX_LOGIT, in floats (the margins are far above their error), every
    probability at least MIN_WEIGHT and a gap between the two largest."""
    x = [float(v) for v in data["X"][0]]
    T = float(data.get("temperature", 1))
    logits = [(sum(a * float(w) for a, w in zip(x, column, strict=True)) + float(b)) / T
              for column, b in zip(zip(*data["W_vocab"], strict=True), data["b_vocab"], strict=True)]
    return len({round(a, 9) for a in logits}) == len(logits) and drawing.softmax_ok(logits)


def friendly(section: NextTokenSpec, result: Prediction) -> bool:
    if any(a == b for i, a in enumerate(result.scaled) for b in result.scaled[:i]):
        return False
    if any(abs(Rational(a)) > MAX_LOGIT for a in result.scaled):
        return False
    p = [to_decimal(w, 12, known=result.known) for w in result.softmax.weights]
    top = sorted(p, reverse=True)
    return min(p) >= Decimal(str(MIN_WEIGHT)) and top[0] - top[1] >= Decimal(str(drawing.MIN_GAP))


def exercise(section: NextTokenSpec, result: Prediction, digits: int) -> Asked:
    size, d = len(section.vocabulary), section.X.shape[1]
    known, key = result.known, "exam_kinds.next_"
    ranks = [0] * size
    for place, j in enumerate(result.ranking, start=1):
        ranks[j] = place
    logits = [AnswerVector(Name("l"), Shown(row(result.logits), uniform=False, known=known))]
    if section.temperature != 1:
        logits.append(AnswerVector(Name("a"), Shown(row(result.scaled), uniform=False, known=known)))
    ranking = AnswerTable(("next_token.token", "next_token.rank"), section.vocabulary,
                          (Shown(ImmutableMatrix([[r] for r in ranks])),))
    easy = section.temperature == 1 and all(Rational(a).q in (1, 2, 4, 8) for a in result.scaled)
    parts = (drawing.scored("logits", key + ("logits" if section.temperature == 1 else "logits_t"),
                            NAMES, logits, d * size + (section.temperature != 1) * size, digits, "scores"),
             drawing.scored("probabilities", key + "probabilities", NAMES, [AnswerVector(Name("p"), Shown(
                 row(result.softmax.weights), known=known))], 2 * size, digits, "weights" if easy else "output"),
             drawing.scored("ranking", key + "ranking", {}, [ranking], size, digits, "scores"))
    given = (GivenVector(Name("x", section.focus), section.focus, section.X),
             GivenNamed(Name("W_vocab"), section.weights), GivenNamed(Name("b"), section.bias))
    task = (key + ("task" if section.temperature == 1 else "task_t"),
            {**NAMES, "token": Token(section.focus), "value": format_number(section.temperature, 10).text,
             "vocabulary": Tokens(section.vocabulary)})
    return Asked((key + "given", {**NAMES, "token": Token(section.focus)}), given, section.focus, 1 if easy else 2,
                 parts, (drawing.EXP_GRID,) if easy else (), task=task, softmax="exam_kinds.next")
