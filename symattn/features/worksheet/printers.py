"""The worksheet's steps in every format: the derivation's lines with a box for each blank, sized to the number
it holds (the key's box holds the number, marked). A format may set `blank_box` its own way (the self-check page's
input boxes)."""

from __future__ import annotations

from typing import Any

from ...numbers.display import Number
from ...typeset.lines import Line, Operand
from ...typeset.layout import visible_width
from .steps import Blank, BlankTable, ShownBlanks, WorkLines


class WorksheetPrinter:
    def blank_box(self, blank: Blank, filled: bool) -> str:
        """The LaTeX math of a blank: an empty box as wide as its number (a little more), or in the key the box
        with the number in it, in colour."""
        return rf"\wsfilled{{{blank.text}}}" if filled else rf"\wsblank{{{blank.text}}}"  # (preamble-common.tex)

    def _boxed(self, number: Number, blank: Blank | None, filled: bool, value: Any = None) -> Number:
        """The number, or its blank's box; −box where the number is the blank's value negated (u − μ)."""
        if blank is None:
            return number
        negated = value is not None and value != blank.value and value == -blank.value
        return Number(("-" if negated else "") + self.blank_box(blank, filled), number.exact)

    def _print_WorkLines(self, step: WorkLines) -> str:
        return self.align(self.work_lines(step))

    def work_lines(self, step: WorkLines) -> list[str]:
        """The step's aligned lines, each blank a box."""
        out: list[str] = []
        width = max((visible_width(line.what) for line in step.lines), default=0)
        for line, what, result, operands in zip(step.lines, self.line_names(step), step.results, step.operands,
                                                strict=True):
            lead, relation = self.relation(line.lead == "="), self.relation(line.relation == "=")
            shown = self._shown_line(line, operands, step.filled)
            value = self._boxed(line.result.number, result, step.filled).text
            if "&" in what:  # the line's left side carries its own alignment (w_t &= e^{a_t} / Z)
                left = what
                pieces = [f"{lead} {p}" if k == 0 else p for k, p in enumerate(self.operation(shown))] if line.terms \
                    else []
            else:
                left = f"{what} &{lead if line.terms else relation} "
                pieces = self.operation(shown) if line.terms else []
            pieces = [*pieces, f"{relation} {value}"] if line.terms else [value]
            # a box is half as wide again as its number: lines with boxes wrap earlier
            room = self.width - width if shown == line else (self.width - width) * 2 // 3
            out += self.continued(left, pieces, room)
        return out

    def line_names(self, step: WorkLines) -> list[str]:
        """What each line computes, as its left side: the row's entries of q = x W_Q each by its place, (q)_1, ..."""
        whats = [line.what for line in step.lines]
        return [rf"({what})_{{{whats[:i + 1].count(what)}}}" if whats.count(what) > 1 and "&" not in what else what
                for i, what in enumerate(whats)]

    def _shown_line(self, line: Line, operands: tuple[Blank | None, ...], filled: bool) -> Line:
        """The line with the operands that are blanks written as boxes."""
        boxes = iter(operands)
        terms = tuple(tuple(Operand(self._boxed(o.number, next(boxes), filled, o.value), o.value) for o in term)
                      for term in line.terms)
        divisor = None if line.divisor is None else Operand(self._boxed(line.divisor.number, next(boxes), filled),
                                                            line.divisor.value)
        return Line(line.what, line.result, terms, divisor)

    def _print_ShownBlanks(self, step: ShownBlanks) -> str:
        lines: list[str] = []
        for name, row, blanks in zip(step.names, step.rows, step.blanks, strict=True):
            numbers = [self._boxed(n, b, step.filled) for n, b in zip(row, blanks, strict=True)]
            lead = f"{self.name(name)} &{self.relation(all(n.exact for n in row))} " if name else "&"
            lines += self.continued(lead, self.vector_pieces(numbers), self.width - 12)
        return self.align(lines)

    def _print_BlankTable(self, step: BlankTable) -> str:
        header = [self.text(h) if isinstance(h, str) else self.inline(self.name(h)) for h in step.header]
        columns = [[self.inline(self.vector([self._boxed(n, b, step.filled) for n, b in zip(*cell, strict=True)]))
                    for cell in column] for column in step.cells]
        return self.table(header, [self.token(t) for t in step.tokens], columns)


PRINTERS = (WorksheetPrinter,)
