"""--versions N --seed S: the spec's numbers redrawn in its own style, N times. Each matrix of decimals the spec
types is drawn again with the same shape and decimals from the multiples of its last decimal between its least and
largest entry (0.1 … 1.8 stays 0.1 … 1.8), rows distinct and none all zero (the exam generator's
exercises.drawing); a whole-number matrix (a mask, an identity) is kept. A version is taken when every section
computes and each section of an examinable kind passes its exam's fairness checks (Kind.friendly: one clear largest
weight, no weight below 0.02, no zero column of Q, K or V, ...) where they apply."""

from __future__ import annotations

import copy
import random
from decimal import Decimal
from typing import Any

from ..errors import SpecError, SymattnError
from ..exercises.drawing import MAX_TRIES, distinct_rows
from ..kinds import kind_of
from ..pipeline.derive import derive_spec
from ..pipeline.parse import parse_spec
from ..spec.model import Spec

MAX_VERSIONS = 100
MAX_VALUES = 400  # a matrix spanning more multiples of its last decimal is kept (0.001 … 9.999 is no hand drill)


def check_versions(count: int | None) -> None:
    if count is not None and not 1 <= count <= MAX_VERSIONS:
        raise SpecError("--versions", f"expected a whole number from 1 to {MAX_VERSIONS}, got {count}")


def redrawn(data: dict[str, Any], name: str, count: int, seed: int) -> list[Spec]:
    """`count` versions of the spec's data, the same seed always giving the same ones; SpecError naming
    --versions when no fair version is found in MAX_TRIES draws."""
    specs = []
    held = _fairness(data, name)  # the checks the spec's own numbers pass: each version must pass them too
    for n in range(1, count + 1):
        rng = random.Random(f"symattn worksheet {seed} {n}")  # a string seed: the same on every platform
        for _ in range(MAX_TRIES):
            version = _drawn(data, rng)
            spec = _fair(version, name, held)
            if spec is not None:
                specs.append(spec)
                break
        else:
            raise SpecError("--versions", f"no fair version {n} found in {MAX_TRIES} draws of this spec's numbers "
                                          f"(try another --seed)")
    return specs


def _drawn(data: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    drawn = copy.deepcopy(data)
    for section in drawn.get("sections", []):
        if isinstance(section, dict) and section.get("kind") != "text":
            _redraw_in(section, rng)
    return drawn


def _redraw_in(table: dict[str, Any], rng: random.Random) -> None:
    """Every matrix of decimals in a section's table (heads' tables included), in the order of its keys."""
    for key, value in table.items():
        if isinstance(value, dict):
            _redraw_in(value, rng)
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for item in value:
                _redraw_in(item, rng)
        elif _is_matrix(value):
            table[key] = _redrawn_matrix(value, rng)


def _is_matrix(value: Any) -> bool:
    return (isinstance(value, list) and bool(value) and all(isinstance(row, list) and row for row in value)
            and all(isinstance(v, Decimal) for row in value for v in row))


def _redrawn_matrix(rows: list[list[Decimal]], rng: random.Random) -> list[list[Any]]:
    places = max(-v.as_tuple().exponent for row in rows for v in row)
    if places <= 0:
        return rows
    unit = Decimal(1).scaleb(-places)
    low, high = min(min(row) for row in rows), max(max(row) for row in rows)
    steps = int((high - low) / unit)
    if steps < 1 or steps > MAX_VALUES:
        return rows
    values = tuple(str((low + k * unit).quantize(unit)) for k in range(steps + 1))
    return [[Decimal(v) for v in row] for row in distinct_rows(rng, len(rows), len(rows[0]), values)]


def _fairness(data: dict[str, Any], name: str) -> tuple[bool, ...]:
    """For each section of the spec as given, whether its numbers pass their kind's fairness checks."""
    derivation = derive_spec(parse_spec(data, name=name), steps=False)
    return tuple(_friendly(section) for section in derivation.sections)


def _fair(data: dict[str, Any], name: str, held: tuple[bool, ...]) -> Spec | None:
    """The version as a Spec when it computes and passes the checks the spec's own numbers pass, else None."""
    try:
        spec = parse_spec(data, name=name)
        derivation = derive_spec(spec, steps=False)
    except SymattnError:  # (a drawn matrix the spec's rules refuse: a singular one, say)
        return None
    return spec if all(_friendly(section) for section, kept in zip(derivation.sections, held, strict=True)
                       if kept) else None


def _friendly(section: Any) -> bool:
    """The kind's exam fairness checks, where they apply: they are written for the exam's own shapes (one focus
    query, no mask), and a section of another shape (a causal mask's -oo scores, a head given as outputs) that they
    cannot read is taken as it is."""
    kind = kind_of(section.kind)
    if not kind.examinable:
        return True
    try:
        return bool(kind.friendly(section.spec, section.result))
    except (AttributeError, TypeError, ValueError, IndexError, KeyError):
        return True
