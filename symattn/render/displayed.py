"""The checkable lines of a rendered derivation, for tests and reviewers: what the page shows, as data."""

from __future__ import annotations

from typing import Any

from ..document.steps import Derivation
from ..typeset.lines import Line
from .latex import LatexRenderer


def displayed_lines(derivation: Derivation, **settings: Any) -> list[Line]:
    """Every computation line the derivation's documents show (dot products, scalings, e^{a}, Z, the weights,
    weighted sums, row-times-matrix entries), in order, each with its operands and result as shown. `settings`
    are the renderers' (digits, exact, ...); the math is the same in every format."""
    settings.setdefault("lang", derivation.lang)
    settings.setdefault("digits", derivation.digits)
    renderer = LatexRenderer(**settings)
    renderer.body(derivation)
    return renderer.checked
