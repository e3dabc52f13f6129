"""A spec's vectors (a bias, γ, β): a flat list of numbers, read as a one-row matrix whose errors name the entry."""

from __future__ import annotations

from typing import Any

from ..errors import SpecError
from .fields import matrix
from .model import GivenMatrix


def vector(value: Any, field: str, what: str = "a non-empty list of numbers") -> GivenMatrix:
    """A list of numbers as a one-row matrix; its errors name the entry (b_vocab[2], not b_vocab[0][2])."""
    if not isinstance(value, list) or not value or any(isinstance(entry, list) for entry in value):
        raise SpecError(field, f"expected {what}, got {value!r}")
    try:
        return matrix([value], field)
    except SpecError as error:
        raise SpecError(error.field.replace(f"{field}[0]", field, 1), error.problem) from None
