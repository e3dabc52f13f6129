"""Which exam kind draws, checks and asks a section: the kind of section itself (its Kind's exam hooks), or an
exam kind that draws a variant of one (the registry's EXAM_VARIANTS)."""

from __future__ import annotations

from functools import cache
from typing import Any

from ..kinds import exam_variants, examinable, kind_of


@cache
def variants() -> dict[str, Any]:
    """The exam kinds that are variants of a kind of section, by name."""
    return exam_variants()


def exam_kinds() -> tuple[str, ...]:
    """What `--kind` takes besides mixed, in the order `--kind mixed` takes them."""
    return (*examinable(), *variants())


def examiner(name: str) -> Any:
    """What draws problems of an exam kind (a Kind, or a variant with the same exam hooks)."""
    return variants().get(name) or kind_of(name)


def examiner_of(section: dict[str, Any]) -> Any:
    """What checks and asks a drawn section (its data): the variant that claims it, else its kind."""
    for variant in variants().values():
        if variant.claims(section):
            return variant
    return kind_of(section["kind"])
