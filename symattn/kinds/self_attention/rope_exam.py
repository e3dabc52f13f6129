"""The `rope` exam kind: a self-attention section with RoPE (rope = true), d_k = 2, so one pair of dimensions
turns by the angle m·θ_0 = m radians at position m. The paper gives cos m and sin m of every position in a table;
Q, K and V are exact, the rotations are read off the table, the softmax needs a calculator."""

from __future__ import annotations

import math
import random
from typing import Any, ClassVar

from sympy import Integer

from ... import engine
from ...document.steps import Name, Shown
from ...engine import entries
from ...exercises import drawing
from ...exercises import fairness as checks
from ...exercises import work
from ...exercises.exercise import AnswerTable, AnswerVector, Asked, GivenNamed, GivenTable, focus_params, row
from ...exercises.levels import Level
from ...features.rope import feature as rotary
from .kind import SELF_ATTENTION, SelfAttentionSpec

D_K, WIDTH, D_V = 2, 2, 2  # one rotated pair; X two wide


class RopeExam:
    """The exam hooks of Kind (draw, plausible, friendly, exercise) for self-attention sections with RoPE."""

    name = "rope"

    def claims(self, section: dict[str, Any]) -> bool:
        """Whether a drawn section is one of this exam kind's: self-attention with `rope`."""
        return section.get("kind") == SELF_ATTENTION.name and "rope" in section

    def draw(self, rng: random.Random, level: Level, lang: str) -> dict[str, Any]:
        n = 3 if drawing.easy(level) else 4
        tokens = drawing.words(rng, n, lang)
        return {"kind": SELF_ATTENTION.name, "tokens": tokens,
                "X": drawing.distinct_rows(rng, n, WIDTH, level.inputs),
                "W_Q": drawing.matrix(rng, WIDTH, D_K, level.weights),
                "W_K": drawing.matrix(rng, WIDTH, D_K, level.weights),
                "W_V": drawing.matrix(rng, WIDTH, D_V, level.weights), "focus": tokens[rng.randrange(n)],
                "rope": True}

    def plausible(self, data: dict[str, Any]) -> bool:
        """friendly's checks, exactly in fractions before the rotation and in floats after it (scores, scaled
        scores and weights with margins far above float error; exercises.drawing.softmax_ok)."""
        X = drawing.fractions(data["X"])
        Q, K, V = (drawing.product(X, drawing.fractions(data[key])) for key in ("W_Q", "W_K", "W_V"))
        if not drawing.rows_distinct(X) or not all(drawing.rows_distinct(columns(M)) for M in (Q, K)):
            return False
        if any(all(v == 0 for v in r) for M in (Q, K, V) for r in [*M, *columns(V)]):
            return False
        Qr, Kr = rotated(Q), rotated(K)
        if any(all(abs(v) < 1e-12 for v in c) for M in (Qr, Kr) for c in columns(M)):
            return False
        i = data["tokens"].index(data["focus"])
        return drawing.softmax_ok([sum(a * b for a, b in zip(Qr[i], k, strict=True)) / math.sqrt(D_K) for k in Kr])

    WORK_BAND: ClassVar[dict[str, tuple[int, int]]] = {"easy": (12, 18), "standard": (44, 56)}

    def hand_products(self, data: dict[str, Any]) -> int:
        """Q, K, V of every token, the rotations of the focus query and every key (by the table's cos m and
        sin m: position 0 turns by nothing), q̂ · k̂ and w · v."""
        X = work.matrix(data["X"])
        Q, K, V = (work.times(X, work.matrix(data[key])) for key in ("W_Q", "W_K", "W_V"))
        i = data["tokens"].index(data["focus"])
        pairs = [pair for key in ("W_Q", "W_K", "W_V") for pair in work.product_pairs(X, work.matrix(data[key]))]
        for m, r in [(i, Q[i]), *enumerate(K)]:
            pairs += [(v, t) for v in r for t in (math.cos(m), math.sin(m))] * (1 if m else 0)
        Qr, Kr = rotated(Q), rotated(K)
        pairs += [(a, b) for k in Kr for a, b in zip(Qr[i], k, strict=True)]
        return work.count(pairs + [(0.5, v) for r in V for v in r])

    def work_band(self, difficulty: str) -> tuple[int, int] | None:
        return self.WORK_BAND.get(difficulty)

    def friendly(self, section: SelfAttentionSpec, result: engine.Attention) -> bool:
        """As self-attention (exam.checks, on the rotated Q and K), with distinct inputs, Q and K before the
        rotation without two equal columns or a zero one, and a gap between the two largest weights."""
        X = section.X.values
        plain = rotary.unrotated(X, section.W_Q.values, section.W_K.values, result)
        if not drawing.rows_distinct(entries(X)):
            return False
        for M in (plain.Q, plain.K):
            if not drawing.rows_distinct([list(c) for c in zip(*entries(M), strict=True)]):
                return False
        i = section.tokens.index(section.focus.tokens[0])
        if not checks.friendly_runs([(X, X, result)], i):
            return False
        # the weights' numbers as the engine filed them: an evalf of each quotient of exponentials costs ~1 ms
        return drawing.gap_ok([float(result.known.number(w)) for w in result.queries[i].softmax.weights])

    def exercise(self, section: SelfAttentionSpec, result: engine.Attention, digits: int) -> Asked:
        focus = section.focus.tokens[0]
        i, n, d = section.tokens.index(focus), len(section.tokens), section.X.shape[1]
        known, key = result.known, "exam_kinds.rope_"
        params = focus_params(focus)
        plain = rotary.unrotated(section.X.values, section.W_Q.values, section.W_K.values, result)
        query = result.queries[i]
        qkv = AnswerTable(("table.token", Name("Q"), Name("K"), Name("V")), section.tokens,
                          tuple(Shown(M, known=known) for M in (plain.Q, plain.K, result.V)))
        rotated = [AnswerVector(Name("qh", focus), Shown(result.Q.row(i), known=known)),
                   AnswerTable(("table.token", Name("Kh")), section.tokens, (Shown(result.K, known=known),))]
        scores = [AnswerVector(Name("s"), Shown(row(query.scores), uniform=False, known=known)),
                  AnswerVector(Name("a"), Shown(row(query.scaled), uniform=False, known=known))]
        parts = (
            drawing.scored("qkv", key + "qkv", params, [qkv], n * (2 * D_K + D_V) * d, digits, "scores"),
            drawing.scored("rotation", key + "rotation", params, rotated, (n + 1) * 2 * D_K, digits, "weights"),
            drawing.scored("scores", key + "scores", params, scores, n * D_K + n, digits, "output"),
            drawing.scored("weights", key + "weights", params, [AnswerVector(Name("w"), Shown(
                row(query.softmax.weights), known=known))], 2 * n, digits, "output"),
            drawing.scored("output", key + "output", params, [AnswerVector(Name("z", focus), Shown(
                query.output, known=known))], n * D_V, digits, "output"))
        given = (GivenTable("table.token", "table.embedding", section.tokens, section.X),
                 *(GivenNamed(Name(f"W_{c}"), getattr(section, f"W_{c}")) for c in "QKV"))
        positions = section.rope.at(n)
        angles = tuple(Integer(m) for m in sorted(set(positions)))  # θ_0 = base^0 = 1: the angle is m radians
        task = (key + "task", {"token": params["token"], "d_k": Name("d_k"),
                               "positions": ", ".join(map(str, positions))})
        return Asked((key + "given", {}), given, focus, D_K, parts, (), task=task, angles=angles)


def columns(M: list[list[Any]]) -> list[list[Any]]:
    return [list(c) for c in zip(*M, strict=True)]


def rotated(M: list[list[Any]]) -> list[list[float]]:
    """RoPE's rotation of rows (one pair, θ_0 = 1) at the positions 0, 1, …, in floats."""
    return [[float(a) * math.cos(m) - float(b) * math.sin(m), float(a) * math.sin(m) + float(b) * math.cos(m)]
            for m, (a, b) in enumerate(M)]


ROPE_EXAM = RopeExam()
