"""Random, hand-friendly, reproducible attention problems; each is just a spec (plain data, exact strings)."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from ..errors import SpecError
from ..spec import Spec
from ..validate import parse_spec

KINDS = ("self_attention", "cross_attention", "multi_head")
DIFFICULTIES = ("easy", "standard")
MAX_COUNT = 1000
MAX_LOGIT = 3
MIN_WEIGHT = 0.02

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


@dataclass(frozen=True)
class Version:
    """One version of the exam: its label, its spec as data (what exam.json stores) and the parsed Spec."""

    label: str
    data: dict[str, Any]
    spec: Spec


def check_request(count: int, kind: str, difficulty: str, digits: int = 4) -> None:
    """Impossible requests fail before any work, with the option named."""
    if not 2 <= digits <= 10:
        raise SpecError("--digits", f"expected 2 to 10 decimals for an exam's answers, got {digits}")
    if not 1 <= count <= MAX_COUNT:
        raise SpecError("--count", f"expected a whole number of versions from 1 to {MAX_COUNT}, got {count}")
    if kind not in (*KINDS, "mixed"):
        raise SpecError("--kind", f"expected one of {', '.join((*KINDS, 'mixed'))}, got {kind!r}")
    if difficulty not in DIFFICULTIES:
        raise SpecError("--difficulty", f"expected one of {', '.join(DIFFICULTIES)}, got {difficulty!r}")


def generate(count: int, seed: int, kind: str = "self_attention", difficulty: str = "easy",
             lang: str = "en") -> list[Version]:
    """`count` different hand-friendly problems; the same arguments always give the same problems."""
    check_request(count, kind, difficulty)
    rng = random.Random(f"symattn-exam:{seed}:{kind}:{difficulty}:{lang}")
    level = LEVELS[difficulty]
    versions: list[Version] = []
    seen: set[str] = set()
    width = max(2, len(str(count)))
    while len(versions) < count:
        section_kind = KINDS[len(versions) % len(KINDS)] if kind == "mixed" else kind
        data = _problem(rng, section_kind, level, lang)
        key = json.dumps(data["sections"], sort_keys=True)
        if key in seen:
            continue
        label = f"{len(versions) + 1:0{width}d}"
        data = {"title": f"Version {label}", "lang": lang, **data}
        spec = parse_spec(data, name=f"version-{label}")
        if not _hand_friendly(spec):
            continue
        seen.add(key)
        versions.append(Version(label, data, spec))
    return versions


def _matrix(rng: random.Random, rows: int, cols: int, values: tuple[str, ...]) -> list[list[str]]:
    return [[rng.choice(values) for _ in range(cols)] for _ in range(rows)]


def _problem(rng: random.Random, kind: str, level: Level, lang: str) -> dict[str, Any]:
    n = rng.choice(level.tokens)
    d_k = rng.choice(level.d_k)
    d, d_v = 2, 2
    words = rng.sample(VOCABULARY[lang], n + 1)
    tokens, extra = words[:n], words[n]
    focus = rng.choice(tokens)
    if kind == "self_attention":
        section = {"kind": kind, "tokens": tokens, "X": _matrix(rng, n, d, level.inputs),
                   "W_Q": _matrix(rng, d, d_k, level.weights), "W_K": _matrix(rng, d, d_k, level.weights),
                   "W_V": _matrix(rng, d, d_v, level.weights), "focus": focus}
    elif kind == "cross_attention":
        section = {"kind": kind, "tokens": [extra], "X": _matrix(rng, 1, d, level.inputs),
                   "memory_tokens": tokens, "memory": _matrix(rng, n, d, level.inputs),
                   "W_Q": _matrix(rng, d, d_k, level.weights), "W_K": _matrix(rng, d, d_k, level.weights),
                   "W_V": _matrix(rng, d, d_v, level.weights), "focus": extra}
    else:
        head_d_k = 1 if d_k == 4 else d_k  # two small heads: d_k = 1 (easy) or 2 (standard), one value each
        heads = [{"W_Q": _matrix(rng, d, head_d_k, level.weights), "W_K": _matrix(rng, d, head_d_k, level.weights),
                  "W_V": _matrix(rng, d, 1, level.weights)} for _ in range(2)]
        section = {"kind": kind, "tokens": tokens, "X": _matrix(rng, n, d, level.inputs), "focus": focus,
                   "heads": heads, "W_O": _matrix(rng, 2, 2, level.weights)}
    return {"sections": [section]}


def _hand_friendly(spec: Spec) -> bool:
    """No all-zero rows anywhere and no all-zero column in Q, K or V; for every query asked about, one clear
    largest weight, scaled scores within ±MAX_LOGIT (so e^x stays a friendly number) and no weight that rounds
    away (each at least MIN_WEIGHT)."""
    from ..attention import attention
    from ..derivation import divisor

    section = spec.sections[0]
    if section.kind == "multi_head":
        X = section.X.values
        runs = [(X, X, head.W_Q.values, head.W_K.values, head.W_V.values, divisor(head.scale, head.d_k))
                for head in section.heads]
        focus = section.tokens.index(section.focus)
        if all(v == 0 for v in section.W_O.values):
            return False
    else:
        source = section.memory.values if section.kind == "cross_attention" else section.X.values
        runs = [(section.X.values, source, section.W_Q.values, section.W_K.values, section.W_V.values,
                 divisor(section.scale, section.d_k))]
        focus = section.tokens.index(section.focus[0])
    for X, source, W_Q, W_K, W_V, scale in runs:
        result = attention(X, source, W_Q, W_K, W_V, scale, (focus,))
        for matrix in (X, source, result.Q, result.K, result.V):
            if any(all(v == 0 for v in matrix.row(i)) for i in range(matrix.rows)):
                return False
        for matrix in (result.Q, result.K, result.V):  # a zero column makes an answer identically 0
            if any(all(v == 0 for v in matrix.col(j)) for j in range(matrix.cols)):
                return False
        query = result.queries[focus]
        if list(query.scores).count(max(query.scores)) > 1:
            return False
        if any(abs(a) > MAX_LOGIT for a in query.scaled) or any(w < MIN_WEIGHT for w in query.softmax.weights):
            return False
    return True
