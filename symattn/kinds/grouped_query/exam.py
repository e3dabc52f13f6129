"""Grouped-query attention's exam (GroupedQueryKind.exam_module): two query heads sharing one K/V head (multi-query
attention), so K and V are computed once; easy versions have d_k = 4 (scaled scores in eighths, on the fixed e^x
table), standard ones d_k = 2."""

from __future__ import annotations

import math
import random
from typing import Any

from ...document.steps import Name, Shown
from ...engine import entries
from ...exercises import drawing
from ...exercises import fairness as checks
from ...exercises import work
from ...exercises.exercise import AnswerTable, AnswerVector, Asked, GivenNamed, GivenTable, focus_params, row
from ...exercises.levels import Level
from ...numbers.decimals import to_decimal
from .engine import GroupedQuery
from .kind import GroupedQuerySpec

HEADS, WIDTH, D_V = 2, 2, 1  # two query heads over one K/V head; X two wide, each head one value wide


def draw(rng: random.Random, level: Level, lang: str) -> dict[str, Any]:
    easy = drawing.easy(level)
    n, d_k = 3, 4 if easy else 2
    tokens = drawing.words(rng, n, lang)
    return {"kind": GroupedQuerySpec.kind, "tokens": tokens, "X": drawing.distinct_rows(rng, n, WIDTH, level.inputs),
            "focus": tokens[rng.randrange(n)],
            "heads": [{"W_Q": drawing.matrix(rng, WIDTH, d_k, level.weights)} for _ in range(HEADS)],
            "kv_heads": [{"W_K": drawing.matrix(rng, WIDTH, d_k, level.weights),
                          "W_V": drawing.matrix(rng, WIDTH, D_V, level.weights)}],
            "W_O": drawing.matrix(rng, HEADS * D_V, WIDTH, level.weights)}


def plausible(data: dict[str, Any]) -> bool:
    heads, kv = data["heads"], data["kv_heads"][0]
    if heads[0]["W_Q"] == heads[1]["W_Q"] or not drawing.rows_distinct(data["X"]):
        return False
    if not checks.mixes(drawing.fractions(data["W_O"])):
        return False
    (X, W_K, W_V, *W_Q), places = checks.integer_matrices([data["X"], kv["W_K"], kv["W_V"],
                                                           *(h["W_Q"] for h in heads)])
    i = data["tokens"].index(data["focus"])
    K = [[sum(a * b for a, b in zip(x, column, strict=True)) for column in zip(*W_K, strict=True)] for x in X]
    scores = [[sum(a * b for a, b in zip(k, q, strict=True)) for k in K]
              for q in ([sum(a * b for a, b in zip(X[i], column, strict=True)) for column in zip(*W, strict=True)]
                        for W in W_Q)]
    if len({a - b for a, b in zip(*scores, strict=True)}) == 1:
        return False  # both heads would weigh the keys alike (scores equal, or apart by a constant: one softmax)
    scale = 10 ** (4 * places) * math.sqrt(len(W_K[0]))  # the scores are in units of 10^-(4·places)
    return checks.plausible_runs([(X, X, q, W_K, W_V) for q in W_Q], i, places) and all(
        drawing.softmax_ok([s / scale for s in head]) for head in scores)


WORK_BAND = {"easy": (10, 18), "standard": (26, 34)}  # hand_products of a version (exercises.work)


def hand_products(data: dict[str, Any]) -> int:
    """Each head's query of the focus token, K and V once, each head's q · k and w · v, and z · W_O."""
    X, kv, i = work.matrix(data["X"]), data["kv_heads"][0], data["tokens"].index(data["focus"])
    W_K, W_V = work.matrix(kv["W_K"]), work.matrix(kv["W_V"])
    K, V = work.times(X, W_K), work.times(X, W_V)
    pairs = work.product_pairs(X, W_K) + work.product_pairs(X, W_V)
    for head in data["heads"]:
        W_Q = work.matrix(head["W_Q"])
        q = work.times([X[i]], W_Q)[0]
        pairs += work.product_pairs([X[i]], W_Q) + [(a, b) for k in K for a, b in zip(q, k, strict=True)]
        pairs += [(0.5, v) for r in V for v in r]  # a weight is never 0 or ±1
    return work.count(pairs + [(0.5, w) for r in work.matrix(data["W_O"]) for w in r])  # z · W_O


def friendly(section: GroupedQuerySpec, result: GroupedQuery) -> bool:
    """As self-attention for each head (exam.checks), the heads' W_Q and scores different, distinct inputs, W_O
    using both heads for two different outputs (checks.mixes), the head outputs and the final outputs different,
    and a gap between each head's two largest weights."""
    if section.W_Q[0].values == section.W_Q[1].values or not checks.mixes(section.W_O.values.tolist()):
        return False
    if not drawing.rows_distinct(entries(section.X.values)):
        return False
    i = section.tokens.index(section.focus.tokens[0])
    X = section.X.values
    if not checks.friendly_runs([(X, X, a) for a in result.heads], i):
        return False
    if result.heads[0].queries[i].scores == result.heads[1].queries[i].scores:
        return False  # both heads would weigh the keys alike
    rows = result.combined(i)
    known = rows.known
    if len({tuple(to_decimal(v, 12, known=known) for v in z) for z in rows.heads}) < 2 or len(
            {to_decimal(z, 12, known=known) for z in rows.output}) < len(rows.output):
        return False  # the heads' outputs alike, or two final outputs alike
    # the weights' numbers as the engine filed them: an evalf of each quotient of exponentials costs ~1 ms
    return all(drawing.gap_ok([float(a.known.number(w)) for w in a.queries[i].softmax.weights]) for a in result.heads)


def exercise(section: GroupedQuerySpec, result: GroupedQuery, digits: int) -> Asked:
    focus = section.focus.tokens[0]
    i, n = section.tokens.index(focus), len(section.tokens)
    d, d_k = section.X.shape[1], section.d_k
    heads = list(enumerate(result.heads, start=1))
    params, key = {**focus_params(focus), "d_k": Name("d_k")}, "exam_kinds.gqa_"
    rows = result.combined(i)
    known = rows.known
    qkv = [AnswerVector(Name("q", focus, head=h), Shown(a.Q.row(i), known=a.known)) for h, a in heads]
    qkv.append(AnswerTable(("table.token", Name("K", group=1), Name("V", group=1)), section.tokens,
                           (Shown(result.K(0), known=known), Shown(result.V(0), known=known))))
    scores = [AnswerVector(Name("s", head=h), Shown(row(a.queries[i].scores), uniform=False, known=known))
              for h, a in heads]
    scaled = [AnswerVector(Name("a", head=h), Shown(row(a.queries[i].scaled), uniform=False, known=known))
              for h, a in heads]
    weights = [AnswerVector(Name("w", head=h), Shown(row(a.queries[i].softmax.weights), known=known))
               for h, a in heads]
    outputs = [AnswerVector(Name("z", focus, head=h), Shown(z, known=known)) for h, z in enumerate(rows.heads, 1)]
    outputs.append(AnswerVector(Name("z", label="final"), Shown(rows.output, known=known)))
    exact = d_k == 4
    parts = (drawing.scored("qkv", key + "qkv", params, qkv, HEADS * d_k * d + n * (d_k + D_V) * d, digits, "scores"),
             drawing.scored("scores", key + "scores", params, scores, HEADS * n * d_k, digits, "scores"),
             drawing.scored("scaled", key + "scaled", params, scaled, HEADS * n, digits, "scaled"),
             drawing.scored("weights", key + "weights", params, weights, 2 * HEADS * n, digits,
                            "weights" if exact else "output"),
             drawing.scored("output", key + "output", params, outputs, HEADS * n * D_V + HEADS * D_V * d, digits,
                            "output"))
    given = [GivenTable("table.token", "table.embedding", section.tokens, section.X)]
    given += [GivenNamed(Name("W_Q", head=h), W) for h, W in enumerate(section.W_Q, start=1)]
    given += [GivenNamed(Name("W_K", group=1), section.kv_heads[0].W_K),
              GivenNamed(Name("W_V", group=1), section.kv_heads[0].W_V), GivenNamed(Name("W_O"), section.W_O)]
    names = {"WQ": Name("W_Q"), "WK": Name("W_K", group=1), "WV": Name("W_V", group=1), "WO": Name("W_O")}
    return Asked((key + "given", names), tuple(given), focus, d_k, parts,
                 (drawing.EXP_GRID,) if exact else ())
