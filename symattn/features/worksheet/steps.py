"""The steps a worksheet puts in place of a derivation's: its computations with the results of the chosen stages
left as blanks (and the same values left blank where a later line uses them), and the displays that repeat them.
`filled`: the key's form of the same step, each blank holding its value, marked."""

from __future__ import annotations

from dataclasses import dataclass

from sympy import Expr

from ...document.steps import Name, Step
from ...numbers.display import Number
from ...typeset.lines import Line


@dataclass(frozen=True)
class Blank:
    """One value a student writes: its id in the worksheet (`2.scores.3`: section 2's third raw score), its
    stage, the text the derivation shows for it (its box is sized to it) and its exact value."""

    id: str
    stage: str
    text: str
    value: Expr


@dataclass(frozen=True)
class WorkLines(Step):
    """A computation's checked lines as the derivation shows them, with `results[i]` the blank of line i's result
    (None: shown) and `operands[i][j]` the blank an operand of it repeats (Line.operands order; None: shown)."""

    lines: tuple[Line, ...]
    results: tuple[Blank | None, ...]
    operands: tuple[tuple[Blank | None, ...], ...]
    filled: bool = False


@dataclass(frozen=True)
class ShownBlanks(Step):
    """Named rows shown again (q = [...], the values v_j, the result z) with the entries that are blanks."""

    names: tuple[Name | None, ...]
    rows: tuple[tuple[Number, ...], ...]
    blanks: tuple[tuple[Blank | None, ...], ...]
    filled: bool = False


@dataclass(frozen=True)
class BlankTable(Step):
    """A token table (header keys or Names, one row per token) whose cells hold blanks: cells[column][token] is
    that cell's (numbers, blanks)."""

    header: tuple[str | Name, ...]
    tokens: tuple[str, ...]
    cells: tuple[tuple[tuple[tuple[Number, ...], tuple[Blank | None, ...]], ...], ...]
    filled: bool = False
