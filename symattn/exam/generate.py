"""Random, hand-friendly, reproducible attention problems; each is just a spec (plain data, exact strings), drawn
and checked by its kind."""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from functools import partial
from typing import Any, TypeVar

from ..errors import SpecError
from ..exercises.levels import DIFFICULTIES, Level
from ..kinds import EXAM_DEFAULT
from ..numbers.display import DEFAULT_DIGITS
from ..pipeline.derive import compute
from ..pipeline.parse import parse_spec
from ..spec.model import Spec
from .examiners import exam_kinds, examiner, examiner_of
from .fair import check_shape, exam_level

MAX_COUNT = 1000
MAX_STRICT_DRAWS = 20000  # draws of one version within its kind's work band and with new weights, at most
T = TypeVar("T")


@dataclass(frozen=True)
class Version:
    """One version of the exam: its label, its spec as data (what exam.json stores) and the parsed Spec."""

    label: str
    data: dict[str, Any]
    spec: Spec
    results: tuple = ()  # the engine's result of each section, computed once for the check and the derivation


def check_request(count: int, kind: str, difficulty: str, digits: int = DEFAULT_DIGITS, tokens: int | None = None,
                  d_k: int | None = None) -> None:
    """Impossible requests fail before any work, with the option named."""
    if not 2 <= digits <= 10:
        raise SpecError("--digits", f"expected 2 to 10 decimals for an exam's answers, got {digits}")
    if not 1 <= count <= MAX_COUNT:
        raise SpecError("--count", f"expected a whole number of versions from 1 to {MAX_COUNT}, got {count}")
    if kind not in (*exam_kinds(), "mixed"):
        raise SpecError("--kind", f"expected one of {', '.join((*exam_kinds(), 'mixed'))}, got {kind!r}")
    if difficulty not in DIFFICULTIES:
        raise SpecError("--difficulty", f"expected one of {', '.join(DIFFICULTIES)}, got {difficulty!r}")
    check_shape(difficulty, tokens, d_k)
    if kind != "mixed" and not getattr(examiner(kind), "exam_shaped", False):
        for option, value in (("--tokens", tokens), ("--d-k", d_k)):
            if value is not None:
                raise SpecError(option, f"the {kind} exam has a fixed hand-sized shape; {option} sets that of self-, "
                                        "cross- and multi-head attention exams (and of those in a mixed one)")


@dataclass(frozen=True)
class Candidate:
    """A problem that passed the pre-check, labelled as the next version if it is accepted."""

    label: str
    data: dict[str, Any]


def generate(count: int, seed: int, kind: str = EXAM_DEFAULT, difficulty: str = "easy",
             lang: str = "en", tokens: int | None = None, d_k: int | None = None) -> list[Version]:
    """`count` different hand-friendly problems; the same arguments always give the same problems, and the
    same numbers in every language."""
    return [version for _, version in search(count, seed, kind, difficulty, lang, partial(map, check), tokens, d_k)]


def search(count: int, seed: int, kind: str, difficulty: str, lang: str,
           run: Callable[[Iterator[Candidate]], Iterable[T | None]], tokens: int | None = None,
           d_k: int | None = None) -> Iterator[tuple[Candidate, T]]:
    """The accepted candidates in order, each with what `run` made of it. Every version has the exam's token
    count and d_k (exam_level); the draws do not depend on `lang`, which only names the tokens.

    `run` maps candidates to results, or None for one the exact check rejects, in order; it may work ahead
    (in other processes), as every candidate is labelled as if all before it were accepted. After a rejection
    the search resumes right after the rejected candidate: the versions are those of a one-at-a-time search.
    """
    check_request(count, kind, difficulty, tokens=tokens, d_k=d_k)
    level = exam_level(seed, kind, difficulty, tokens, d_k)
    state = random.Random(f"symattn-exam:{seed}:{kind}:{difficulty}").getstate()
    accepted: list[str] = []  # the keys of the accepted problems, in order
    while len(accepted) < count:
        drawn: list[tuple[Candidate, str, tuple]] = []
        stream = _candidates(state, count, kind, level, lang, tuple(accepted), drawn, difficulty)
        for i, result in enumerate(run(stream)):
            _, key, state = drawn[i]
            if result is None:
                break  # resume after the rejected candidate, with the versions accepted so far
            accepted.append(key)
            yield drawn[i][0], result


def draw(rng: random.Random, kind: str, level: Level, lang: str) -> dict[str, Any]:
    """One random problem of a kind, as spec data with one section."""
    return {"sections": [examiner(kind).draw(rng, level, lang)]}


def plausible(data: dict[str, Any]) -> bool:
    """The quick pre-check of a drawn problem: what fails it would fail the exact check too."""
    section = data["sections"][0]
    return examiner_of(section).plausible(section)


def _candidates(state: tuple, count: int, kind: str, level: Level, lang: str, accepted: tuple[str, ...],
                drawn: list[tuple[Candidate, str, tuple]], difficulty: str) -> Iterator[Candidate]:
    """The candidates from generator state `state` on, each filed in `drawn` with its key (for telling
    problems apart) and the generator's state after it. Each is a problem not drawn before, with the products
    worked by hand within its kind's band (Kind.work_band) and weights that are no earlier version's, not even
    with their rows or columns in another order."""
    rng = random.Random()
    rng.setstate(state)
    seen = set(accepted)
    weight_sets = {weight_set(json.loads(key)[0]) for key in accepted}
    width = max(2, len(str(count)))
    kinds = exam_kinds()
    for position in range(len(accepted), count):
        section_kind = kinds[position % len(kinds)] if kind == "mixed" else kind
        band = examiner(section_kind).work_band(difficulty)
        for tries in itertools.count():
            data = draw(rng, section_kind, level, lang)
            section = data["sections"][0]
            strict = tries < MAX_STRICT_DRAWS  # then the band and the weight sets give way: never a hang (a shape
            # --tokens or --d-k gives may have no problem in the band, or few weight sets)
            if (plausible(data) and (key := json.dumps(data["sections"], sort_keys=True)) not in seen
                    and (not strict or band is None
                         or band[0] <= examiner_of(section).hand_products(section) <= band[1])
                    and ((weights := weight_set(section)) == () or weights not in weight_sets or not strict)):
                break  # (a kind without weight matrices, add_norm: its inputs tell its problems apart)
        seen.add(key)
        weight_sets.add(weights)
        label = f"{position + 1:0{width}d}"
        candidate = Candidate(label, {"title": f"Version {label}", "lang": lang, **data})
        drawn.append((candidate, key, rng.getstate()))
        yield candidate


def weight_set(section: dict[str, Any]) -> tuple:
    """A problem's weight matrices (every W_ key, in heads too), each up to the order of its rows and columns: two
    problems with the same weight set are the same exercise with the inputs renamed or permuted."""
    found: list[tuple[str, tuple]] = []
    _weights(section, "", found)
    return tuple(sorted(found))


def _weights(value: Any, path: str, found: list[tuple[str, tuple]]) -> None:
    """The W_ matrices under `value`, filed in `found` by path (a module function: a recursive closure would be a
    reference cycle per call, left to the cyclic collector a batch runs without)."""
    if isinstance(value, dict):
        for name, item in value.items():
            if name.startswith("W_") and isinstance(item, list):
                found.append((path + name, _unordered(item)))
            else:
                _weights(item, f"{path}{name}.", found)
    elif isinstance(value, list):
        for k, item in enumerate(value):
            _weights(item, f"{path}{k}.", found)


def _unordered(rows: list[list[Any]]) -> tuple:
    """A matrix of exact strings up to the order of its rows and of its columns (the least of its row orders'
    sorted columns)."""
    numbers = [tuple(Fraction(str(v)) for v in row) for row in rows]
    return min(tuple(sorted(zip(*order, strict=True))) for order in itertools.permutations(numbers))


def check(candidate: Candidate) -> Version | None:
    """The candidate as a version, or None if the exact check rejects it."""
    spec = parse_spec(candidate.data, name=f"version-{candidate.label}")
    section = spec.sections[0]
    result = compute(section)  # kept: the derivation reuses it
    if not examiner_of(candidate.data["sections"][0]).friendly(section, result):
        return None
    return Version(candidate.label, candidate.data, spec, (result,))
