"""A worksheet and its key from a derivation: the results of the chosen stages left blank, as boxes, wherever the
derivation shows them (their lines, a later line that uses them, a table or vector that repeats them), and what
would give a blank away (a sentence chosen by the values, a heatmap, the matrix form) left out of the worksheet and
kept in the key. Which stage a computation writes is its kind's (Kind.stage_of); which values repeat a blank is
found by rows: a later step shows a blank where it shows a whole row (vector) of blanked values."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Any

from sympy import Expr, ImmutableMatrix

from ..document.phrases import Eq, Num, Nums
from ..document.steps import (Derivation, Heading, Paragraph, Shown, SoftmaxStep, Step, TokenTable, VectorEquation,
                              VectorList)
from ..features.worksheet.steps import Blank, BlankTable, ShownBlanks, WorkLines
from ..kinds import kind_of
from ..kinds.base import Kind
from ..render.latex import LatexRenderer
from ..typeset.lines import Line


@dataclass(frozen=True)
class Sheets:
    """The worksheet, its key (the same steps, filled) and the blanks in the order they are asked."""

    worksheet: Derivation
    key: Derivation
    blanks: tuple[Blank, ...]


def worksheet(derivation: Derivation, stages: frozenset[str]) -> Sheets:
    """The worksheet of the derivation with `stages` (names Kind.stages declares) left blank, and its key."""
    renderer = LatexRenderer(lang=derivation.lang, digits=derivation.digits)  # its checked lines: what is shown
    state = _State(stages)
    paper, key = [], []
    for n, section in enumerate(derivation.sections, 1):
        kind = kind_of(section.kind)
        state.section, state.started, on, off = n, False, [], []
        for step in section.steps:
            before = len(renderer.checked)
            renderer.render(step)
            shown, filled = state.step(step, renderer.checked[before:], kind, renderer)
            on.append(shown)
            off.append(filled)
        paper.append(replace(section, steps=_tidied(section.steps, on)))
        key.append(replace(section, steps=tuple(off)))
    return Sheets(replace(derivation, sections=tuple(paper)), replace(derivation, sections=tuple(key)),
                  tuple(state.blanks))


class _State:
    """What the walk has blanked so far: the blanks, and the rows (vectors) of blanked values a later step may show."""

    def __init__(self, stages: frozenset[str]) -> None:
        self.stages = stages
        self.blanks: list[Blank] = []
        self.rows: dict[tuple[Expr, ...], tuple[Blank, ...]] = {}
        self.values: set[Expr] = set()
        self.section = 0
        self.started = False  # a blank in this section already: sentences chosen by the values are left out

    def step(self, step: Step, lines: list[Line], kind: Kind, renderer: Any) -> tuple[Step | None, Step]:
        """(the worksheet's step, or None when left out; the key's)."""
        stage = kind.stage_of(step) if lines else None
        if stage is not None:
            return self._computation(step, lines, stage, kind)
        if isinstance(step, (VectorEquation, VectorList)):
            names, values = ((step.name,), (step.value,)) if isinstance(step, VectorEquation) else (step.names,
                                                                                                      step.values)
            rows = [_entries(shown) for shown in values]
            if any(row in self.rows for row in rows):
                shown = ShownBlanks(tuple(names), tuple(tuple(renderer.numbers(v)) for v in values),
                                    tuple(self.rows.get(row, (None,) * len(row)) for row in rows), digits=step.digits)
                return shown, replace(shown, filled=True)
            return step, step
        if isinstance(step, TokenTable):
            return self._table(step, renderer)
        if isinstance(step, Paragraph):
            gives_away = self.started and (step.stage is not None or step.facts is not None
                                           or any(v in self.values for v in _param_values(step.params)))
            return (None if gives_away else step), step
        if self.started and any(row in self.rows for row in _rows_in(step)):  # a heatmap, the matrix form, ...
            return None, step
        return step, step

    def _computation(self, step: Step, lines: list[Line], stage: str, kind: Kind) -> tuple[Step, Step]:
        line_stages = [stage] * len(lines)
        if isinstance(step, SoftmaxStep) and "exp" in kind.stages:  # e^{a_t} for each token, then Z
            line_stages[:len(step.tokens) + 1] = ["exp"] * min(len(lines), len(step.tokens) + 1)
        given = {v for shown in _fields(step) if isinstance(shown, Shown) and shown.written for v in shown.entries}
        repeated = {v: b for row in _rows_in(step) for v, b in zip(row, self.rows.get(row, ()), strict=False)}
        results: list[Blank | None] = []
        operands: list[tuple[Blank | None, ...]] = []
        made: dict[str, list[Blank]] = {}
        for line, at in zip(lines, line_stages, strict=True):
            operands.append(tuple(None if o.value in given else repeated.get(o.value, self._earlier(o.value))
                                  for o in line.operands))
            blank = None
            if at in self.stages:
                count = sum(1 for b in self.blanks if b.stage == at and b.id.startswith(f"{self.section}."))
                blank = Blank(f"{self.section}.{at}.{count + 1}", at, line.result.text, line.result.value)
                self.blanks.append(blank)
                made.setdefault(at, []).append(blank)
                self.values.add(blank.value)
                if isinstance(step, SoftmaxStep):  # its weights are computed from its own e^{a_t} and Z
                    repeated[blank.value] = blank
            results.append(blank)
        for blanks in made.values():  # the row each stage wrote, which later steps may show again
            self.rows[tuple(b.value for b in blanks)] = tuple(blanks)
        if not any(results) and not any(any(o) for o in operands):
            return step, step
        self.started = True
        work = WorkLines(tuple(lines), tuple(results), tuple(operands), digits=step.digits)
        return work, replace(work, filled=True)

    def _earlier(self, value: Expr) -> Blank | None:
        """The blank of this section with that value (the mean's deviations in the variance's line, σ² as a fraction
        in σ² + ε; −μ, subtracted, in u − μ), where no row of the step repeats it; a 0 is taken for no blank's."""
        if value == 0:
            return None
        return next((b for b in reversed(self.blanks) if value in (b.value, -b.value)
                     and b.id.startswith(f"{self.section}.")), None)

    def _table(self, step: TokenTable, renderer: Any) -> tuple[Step, Step]:
        cells, any_blank = [], False
        for column in step.columns:
            numbers, width = renderer.numbers(column), column.values.cols
            cell_rows = []
            for i in range(len(step.tokens)):
                row = column.entries[i * width:(i + 1) * width]
                blanks = self.rows.get(tuple(row), (None,) * width)
                any_blank |= row in self.rows
                cell_rows.append((tuple(numbers[i * width:(i + 1) * width]), blanks))
            cells.append(tuple(cell_rows))
        if not any_blank or step.positions:  # (a KV cache's table with positions is shown as it is)
            return step, step
        table = BlankTable(step.header, step.tokens, tuple(cells), digits=step.digits)
        return table, replace(table, filled=True)


def _tidied(steps: tuple[Step, ...], on: list[Step | None]) -> tuple[Step, ...]:
    """The worksheet's steps of a section (None: left out), without the sentences that introduced a step left out
    (the heatmap's) and without headings left with nothing under them."""
    kept = list(on)
    for i, step in enumerate(on):
        if step is None and not isinstance(steps[i], (Paragraph, Heading)):
            j = i - 1
            while j >= 0 and isinstance(kept[j], Paragraph):
                kept[j], j = None, j - 1
    left = [step for step in kept if step is not None]
    out: list[Step] = []
    for step in reversed(left):  # a heading followed by one of its level or higher (or by nothing) heads nothing
        empty = isinstance(step, Heading) and (not out or (isinstance(out[-1], Heading)
                                                            and out[-1].level <= step.level))
        out += [] if empty else [step]
    out.reverse()
    return tuple(out)


def _entries(shown: Shown) -> tuple[Expr, ...]:
    return tuple(shown.entries)


def _fields(step: Step) -> Iterator[Any]:
    """The step's field values, a tuple's items one by one."""
    for f in fields(step):
        value = getattr(step, f.name)
        yield from value if isinstance(value, tuple) else (value,)


def _rows_in(step: Any) -> Iterator[tuple[Expr, ...]]:
    """Every row of values the step holds: each Shown's entries and rows, each matrix's rows, each tuple of values,
    and those of the data it holds (a matrix form's S and A)."""
    for f in fields(step):
        if f.name == "known":  # (the numbers the values were evaluated with, not values shown)
            continue
        value = getattr(step, f.name)
        if isinstance(value, tuple) and value and all(isinstance(v, Expr) for v in value):
            yield value
            continue
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, Shown):
                yield _entries(item)
                yield from (_entries(row) for row in item.rows)
            elif isinstance(item, ImmutableMatrix):
                yield tuple(item)
                yield from (tuple(item.row(i)) for i in range(item.rows))
            elif is_dataclass(item) and not isinstance(item, type):
                yield from _rows_in(item)


def _param_values(params: dict[str, Any]) -> Iterator[Expr]:
    """The numbers a sentence prints."""
    for value in params.values():
        if isinstance(value, Num):
            yield value.value
        elif isinstance(value, Nums):
            yield from value.values
        elif isinstance(value, Eq) and isinstance(value.value, Expr):
            yield value.value
