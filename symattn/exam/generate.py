"""Random, hand-friendly, reproducible attention problems; each is just a spec (plain data, exact strings)."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache, partial
from typing import Any, TypeVar

from ..errors import SpecError
from ..spec import SectionSpec, Spec
from ..validate import parse_spec

KINDS = ("self_attention", "cross_attention", "multi_head")
DIFFICULTIES = ("easy", "standard")
MAX_COUNT = 1000
MAX_LOGIT = 3
MIN_WEIGHT = 0.02
T = TypeVar("T")

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
    results: tuple = ()  # the engine's result of each section, computed once for the filter and the derivation


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


@dataclass(frozen=True)
class Candidate:
    """A problem that passed the pre-check, labelled as the next version if it is accepted."""

    label: str
    data: dict[str, Any]


def generate(count: int, seed: int, kind: str = "self_attention", difficulty: str = "easy",
             lang: str = "en") -> list[Version]:
    """`count` different hand-friendly problems; the same arguments always give the same problems."""
    return [version for _, version in search(count, seed, kind, difficulty, lang, partial(map, check))]


def search(count: int, seed: int, kind: str, difficulty: str, lang: str,
           run: Callable[[Iterator[Candidate]], Iterable[T | None]]) -> Iterator[tuple[Candidate, T]]:
    """The accepted candidates in order, each with what `run` made of it.

    `run` maps candidates to results, or None for one the exact check rejects, in order; it may work ahead
    (in other processes), as every candidate is labelled as if all before it were accepted. After a rejection
    the search resumes right after the rejected candidate: the versions are those of a one-at-a-time search.
    """
    check_request(count, kind, difficulty)
    state = random.Random(f"symattn-exam:{seed}:{kind}:{difficulty}:{lang}").getstate()
    accepted: list[str] = []  # the keys of the accepted problems, in order
    while len(accepted) < count:
        drawn: list[tuple[Candidate, str, tuple]] = []
        stream = _candidates(state, count, kind, LEVELS[difficulty], lang, tuple(accepted), drawn)
        for i, result in enumerate(run(stream)):
            _, key, state = drawn[i]
            if result is None:
                break  # resume after the rejected candidate, with the versions accepted so far
            accepted.append(key)
            yield drawn[i][0], result


def _candidates(state: tuple, count: int, kind: str, level: Level, lang: str, accepted: tuple[str, ...],
                drawn: list[tuple[Candidate, str, tuple]]) -> Iterator[Candidate]:
    """The candidates from generator state `state` on, each filed in `drawn` with its key (for telling
    problems apart) and the generator's state after it."""
    rng = random.Random()
    rng.setstate(state)
    seen = set(accepted)
    width = max(2, len(str(count)))
    for position in range(len(accepted), count):
        section_kind = KINDS[position % len(KINDS)] if kind == "mixed" else kind
        while True:
            data = _problem(rng, section_kind, level, lang)
            if _plausible(data["sections"][0]) and (key := json.dumps(data["sections"], sort_keys=True)) not in seen:
                break
        seen.add(key)
        label = f"{position + 1:0{width}d}"
        candidate = Candidate(label, {"title": f"Version {label}", "lang": lang, **data})
        drawn.append((candidate, key, rng.getstate()))
        yield candidate


def check(candidate: Candidate) -> Version | None:
    """The candidate as a version, or None if the exact check rejects it."""
    from ..derivation import compute

    spec = parse_spec(candidate.data, name=f"version-{candidate.label}")
    result = compute(spec.sections[0])  # kept: the derivation reuses it
    if not _hand_friendly(spec.sections[0], result):
        return None
    return Version(candidate.label, candidate.data, spec, (result,))


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


def _plausible(section: dict[str, Any]) -> bool:
    """A quick pre-check that throws out most unfriendly candidates before the SymPy parse and computation
    (about 9 in 10 are rejected). It rejects only what _hand_friendly rejects too: a zero W_O, zero rows and
    columns and tied scores are found exactly in integers, and the float checks of scaled scores and weights
    keep margins far above float error. What passes it practically always passes _hand_friendly too."""
    # Every entry as an integer count of 10^-places: products and sums stay exact, in plain integers.
    matrices = [section["X"], *(section[k] for k in ("memory", "W_Q", "W_K", "W_V") if k in section),
                *(h[k] for h in section.get("heads", ()) for k in ("W_Q", "W_K", "W_V"))]
    places = max(len(v.partition(".")[2]) for matrix in matrices for row in matrix for v in row)

    def exact(matrix: list[list[str]]) -> list[list[int]]:
        return [[_units(v, places) for v in row] for row in matrix]

    def product(left: list[list[int]], right: list[list[int]]) -> list[list[int]]:
        return [[sum(a * b for a, b in zip(row, column, strict=True)) for column in zip(*right, strict=True)]
                for row in left]

    X = exact(section["X"])
    if section["kind"] == "multi_head":
        if all(v == 0 for row in exact(section["W_O"]) for v in row):
            return False
        runs = [(X, X, exact(h["W_Q"]), exact(h["W_K"]), exact(h["W_V"])) for h in section["heads"]]
    else:
        source = exact(section["memory"]) if section["kind"] == "cross_attention" else X
        runs = [(X, source, exact(section["W_Q"]), exact(section["W_K"]), exact(section["W_V"]))]
    focus = section["tokens"].index(section["focus"])
    for queries, source, W_Q, W_K, W_V in runs:
        Q, K, V = product(queries, W_Q), product(source, W_K), product(source, W_V)
        for matrix in (queries, source, Q, K, V):
            if any(all(v == 0 for v in row) for row in matrix):
                return False
        for matrix in (Q, K, V):
            if any(all(v == 0 for v in column) for column in zip(*matrix, strict=True)):
                return False
        scores = [sum(a * b for a, b in zip(Q[focus], k, strict=True)) for k in K]  # × 10^(4·places)
        if scores.count(max(scores)) > 1:
            return False
        scaled = [s / 10 ** (4 * places) / math.sqrt(len(W_K[0])) for s in scores]
        if any(abs(a) > MAX_LOGIT + 1e-9 for a in scaled):
            return False
        exps = [math.exp(a - max(scaled)) for a in scaled]
        if any(e / sum(exps) < MIN_WEIGHT - 1e-9 for e in exps):
            return False
    return True


@lru_cache(maxsize=256)  # a level has a dozen values
def _units(value: str, places: int) -> int:
    """A decimal string as an integer count of 10^-places."""
    return int(Decimal(value).scaleb(places))


def _hand_friendly(section: SectionSpec, result: Any) -> bool:
    """No all-zero rows anywhere and no all-zero column in Q, K or V; for every query asked about, one clear
    largest weight, scaled scores within ±MAX_LOGIT (so e^x stays a friendly number) and no weight that rounds
    away (each at least MIN_WEIGHT). Judged on the section's computed result, which the version then keeps."""
    from ..engine import MultiHead, entries, flat_entries
    from ..numfmt import to_decimal

    if isinstance(result, MultiHead):
        if all(v == 0 for v in flat_entries(section.W_O.values)):
            return False
        runs = [(section.X.values, section.X.values, attention) for attention in result.attentions]
        focus = section.tokens.index(section.focus)
    else:
        source = section.memory.values if section.kind == "cross_attention" else section.X.values
        runs = [(section.X.values, source, result)]
        focus = section.tokens.index(section.focus[0])
    for X, source, attention in runs:
        for matrix in (X, source, attention.Q, attention.K, attention.V):
            rows = entries(matrix)
            if any(all(v == 0 for v in row) for row in rows):
                return False
            computed = matrix is attention.Q or matrix is attention.K or matrix is attention.V
            if computed and any(all(v == 0 for v in column) for column in zip(*rows, strict=True)):
                return False  # a zero column of Q, K or V makes an answer identically 0
        query = attention.queries[focus]
        if list(query.scores).count(max(query.scores)) > 1:
            return False
        # Compared as decimals (12 places): exact comparisons of surds and softmax quotients cost an evalf each.
        if any(abs(to_decimal(a, 12)) > MAX_LOGIT for a in query.scaled):
            return False
        if any(to_decimal(w, 12) < Decimal(str(MIN_WEIGHT)) for w in query.softmax.weights):
            return False
    return True
