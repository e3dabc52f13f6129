"""The steps of multi-head attention for every token: the heads' matrices side by side and the product with W_O. Like
every step they hold values and know nothing about rendering."""

from __future__ import annotations

from dataclasses import dataclass

from ...document.steps import Name, Shown, Step


@dataclass(frozen=True)
class MatrixConcat(Step):
    """name = [Z^(1) ‖ … ‖ Z^(h)] = the matrix: the heads' output matrices side by side, one row per token."""

    name: Name
    parts: tuple[Name, ...]
    value: Shown


@dataclass(frozen=True)
class MatrixProduct(Step):
    """name = left right, a product of two matrices: the factors beside it when they fit (every entry checkable
    from them), then the result."""

    name: Name
    left_name: Name
    left: Shown
    right_name: Name
    right: Shown
    value: Shown
