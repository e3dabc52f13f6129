"""The printers of next-token prediction's own steps (its steps.py), the same math in every format: each logit
x·w_j + b_j term by term, its division by the temperature, and the ranking table. Every computation is a checkable
Line; the softmax is model.SoftmaxStep's printer."""

from __future__ import annotations

from ...document.steps import Name
from ...numbers.display import Number, format_number, format_numbers
from ...typeset.layout import visible_width
from ...typeset.lines import GUARD_CAP, Line, Operand, guarded, operand
from ...typeset.math import NOTATION, MathRenderer, contribute
from .steps import LogitLines, RankingTable, TemperatureLines

# the symbols this folder's steps and sentences name, added to render/math.py's tables
contribute(notation={
    "l": r"\ell",
    "pt": r"\tilde{p}",
    "Zt": r"\tilde{Z}",
    "W_vocab": r"W_{\mathrm{vocab}}",
    "E": "E",
    "T": "T",
})


class VocabPrinters(MathRenderer):
    """Next-token prediction's steps; DerivationRenderer, and so every format, inherits them."""

    def _print_LogitLines(self, step: LogitLines) -> str:
        row, known = self.numbers(step.row), step.known
        columns = [self.numbers(column) for column in step.columns]
        bias = self.numbers(step.bias) if step.bias is not None else None
        state, column = self.name(step.state), NOTATION[step.column]
        plus_b = r" + b_{j}" if bias is not None else ""
        out = [rf"{NOTATION['l']}_{{j}} &= {state} \cdot {column}_{{j}}{plus_b}"]

        def lines_at(places: int) -> list[Line]:
            x = [operand(v, n, places, step.row.known) for v, n in zip(step.row.entries, row, strict=True)]
            lines = []
            for j, (token, shown, logit) in enumerate(zip(step.tokens, step.columns, step.logits, strict=True)):
                terms = tuple(zip(x, [operand(v, n, places, shown.known)
                                      for v, n in zip(shown.entries, columns[j], strict=True)], strict=True))
                if bias is not None:
                    terms += ((operand(step.bias.entries[j], bias[j], places, step.bias.known),),)
                lines.append(Line(self.name(Name("l", token)), self.result_operand(logit, known), terms))
            return lines

        lines = self.checked_lines(guarded(lines_at, self.digits))
        left = max(visible_width(line.what) for line in lines)
        for token, line in zip(step.tokens, lines, strict=True):
            named = rf"{line.what} = {state} \cdot {self.name(Name(step.column, token))}"
            named += rf" + {self.name(Name('b', token))}" if bias is not None else ""
            pieces = self.operation(line)
            pieces.append(f"{self.relation(line.relation == '=')} {line.result.text}")
            out += self.continued(f"{named} &{self.relation(line.lead == '=')} ", pieces, self.width - left - 12)
        logits = format_numbers(step.logits, self.digits, known=known)
        out += self.continued(f"{NOTATION['l']} &{self.relation(all(n.exact for n in logits))} ",
                              self.vector_pieces(list(logits)), self.width - 6)
        return self.align(out) + self.guard_note(lines)

    def _print_TemperatureLines(self, step: TemperatureLines) -> str:
        known, digits = step.known, self.digits
        divisor = Operand(format_number(step.temperature, digits + GUARD_CAP, fraction=True), step.temperature)
        out = [rf"a_{{j}} &= \frac{{{NOTATION['l']}_{{j}}}}{{T}}, \qquad T = {divisor.text}"]
        # a logit's exact decimal when it is short, else rounded as the line needs
        exact = [format_number(logit, digits + GUARD_CAP, fraction=self.exact, known=known) for logit in step.logits]

        def lines_at(places: int) -> list[Line]:
            return [Line(self.name(Name("a", token)), self.result_operand(a, known),
                         ((operand(logit, shown if shown.exact else format_number(logit, digits, known=known),
                                   places, known),),), divisor)
                    for token, logit, a, shown in zip(step.tokens, step.logits, step.scaled, exact, strict=True)]

        lines = self.checked_lines(guarded(lines_at, digits))
        for line in lines:
            out += self.fitted(f"{line.what} &{self.relation(line.lead == '=')} {self.operation(line)[0]}",
                               f"{self.relation(line.relation == '=')} {line.result.text}")
        scaled = format_numbers(step.scaled, digits, known=known)
        out += self.continued(f"a &{self.relation(all(n.exact for n in scaled))} ", self.vector_pieces(list(scaled)),
                              self.width - 6)
        return self.align(out) + self.guard_note(lines)

    def _print_RankingTable(self, step: RankingTable) -> str:
        known = step.known
        header = [self.text("next_token.rank"), self.text("next_token.token"),
                  self.inline(rf"{NOTATION['l']}_{{j}}"), self.inline("p_{j}")]
        cells = [[self.token(token) for token in step.tokens],
                 [self.inline(n.text) for n in format_numbers(step.logits, self.digits, known=known)],
                 [self.inline(n.text) for n in self._each(step.probabilities, known)]]
        if step.renormalised:
            header.append(self.inline(rf"{NOTATION['pt']}_{{j}}"))
            cells.append([self.inline(n.text) if n is not None else "–" for n in self._each(step.renormalised, known)])
        return self.table(header, [self.inline(str(rank)) for rank in step.ranks], cells)

    def _each(self, values, known) -> list[Number | None]:
        """Each value (None: none) as the page rounds it on its own (a probability of exactly 1/2 as 0.5)."""
        return [None if v is None else format_number(v, self.digits, known=known) for v in values]


# the printers this folder brings to every format's renderer (render/composed.py)
PRINTERS = (VocabPrinters,)
