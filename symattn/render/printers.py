"""The derivation's steps as math, the same in every format: products term by term, scaling, softmax, weighted
sums, the matrix form. The format decides only how the lines are put on the page (align, table, inline)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from sympy import S

from ..document.steps import (
    DefinitionTable,
    DotProducts,
    ExactMatrix,
    FlowFigure,
    MatrixEquation,
    Name,
    Result,
    RowTimesMatrix,
    Scaling,
    SoftmaxStep,
    Step,
    TextParagraph,
    TokenTable,
    VectorEquation,
    VectorList,
    WeightedSum,
    WrittenHeading,
)
from ..engine import any_symbolic, flat_entries, is_symbolic
from ..infra.memo import Memo
from ..numbers.display import Number, format_number, format_numbers
from ..numbers.exact_latex import exact_latex
from ..spec.model import Math, Written
from ..typeset.layout import column_groups, row_fits, row_width, set_width, visible_width, wrap
from ..typeset.lines import (GUARD_CAP, Line, Operand, decimals_shown, exact_zeros, exponent_shown, guarded, operand,
                              settle, settled)
from ..typeset.math import NOTATION, MathRenderer
from .composed import compose
from .escape import escape
from .matrix_form import MatrixFormPrinter

# Steps whose output depends only on the step (its decimals included) and the renderer's settings: they record no
# checked lines and say no note once (the printers below). By exact class: a subclass may print more.
PURE_STEPS = frozenset({DefinitionTable, MatrixEquation, Result, TokenTable, VectorEquation, VectorList})


class DerivationRenderer(MatrixFormPrinter, MathRenderer):
    """The printers of the derivation's math steps; LatexRenderer, MarkdownRenderer and HtmlRenderer are its
    sibling subclasses, each adding the steps of text, tables and figures in its own form. An instance is of its
    class composed with the printers every kind brings (render/composed.py)."""

    # Whether math_text() writes user text without side effects. HtmlRenderer's placeholders number the texts in
    # the order met, and the widths measured of its math count their digits: it writes every step in full.
    pure_text: ClassVar[bool] = True

    def __new__(cls, *args: Any, **kwargs: Any) -> DerivationRenderer:
        return object.__new__(compose(cls))

    def __init__(self, **settings: Any) -> None:
        super().__init__(**settings)
        # what a flow figure and the steps of PURE_STEPS were written as, by step: every version of an exam draws the
        # same figure, and its problem and answers show the inputs and results of its worked solution again
        self._written: Memo[str] = Memo(1 << 8)

    def render(self, step: Step) -> str:
        # A flow figure depends on its step and the renderer's settings only, in every format
        if isinstance(step, FlowFigure) or (self.pure_text and type(step) in PURE_STEPS):
            found = self._written.find(step)
            return found if found is not None else self._written.keep(step, super().render(step))
        return super().render(step)

    def settled(self, step: Step, whats: Callable[[], list[str]], compute: Callable[[], tuple[list[Line], Any]]
                ) -> tuple[list[Line], Any]:
        """compute()'s lines of the step and what it found beside them, recorded (checked_lines). With pure_text,
        found once for all renderers of the same decimals, exact mode and width, on which alone the lines' numbers
        depend (numbers(), value(): lines.settled); `whats`: this renderer's `what` of each line, in order."""
        if not self.pure_text:
            lines, beside = compute()
        else:
            lines, beside = settled(step, (self.digits, self.exact_digits, self.exact, self.width), whats, compute)
        return self.checked_lines(lines), beside

    # ------------------------------------------------------------ the spec's own text (text blocks, headings)

    def written(self, text: Written) -> str:
        """A string the spec wrote, in the document's language: its plain text escaped, its math set inline."""
        return "".join(self.escape_text(piece) if isinstance(piece, str) else self.inline(self.user_math(piece))
                       for piece in text.pieces(self.lang))

    def user_math(self, math: Math) -> str:
        """Math the spec wrote (checked by spec.textmath) as LaTeX, each \\text{…} escaped as user text."""
        return "".join(part if isinstance(part, str) else rf"\text{{{self.math_text(part.text)}}}"
                       for part in math.parts)

    def heading(self, level: int, text: str) -> str:
        """A heading of that level (1: a part, 2: a Step) with its text in the format already."""
        raise NotImplementedError

    def paragraph(self, text: str, note: bool = False) -> str:
        """A paragraph with its text in the format already; note=True: an aside."""
        raise NotImplementedError

    def _print_WrittenHeading(self, step: WrittenHeading) -> str:
        return self.heading(step.level, self.written(step.text))

    def _print_TextParagraph(self, step: TextParagraph) -> str:
        return self.paragraph(self.written(step.text), step.note)

    def _print_TokenTable(self, step: TokenTable) -> str:
        header = [self.text(h) if isinstance(h, str) else self.inline(self.name(h)) for h in step.header]
        # One count of decimals per column, as the article's tables have.
        token_width = max(visible_width(escape(t)) for t in [*step.tokens, self.text(step.header[0])])
        room = self.width - token_width - 4 - 10 * bool(step.positions)  # a KV cache's tables: a position column
        vectors = []  # the LaTeX of each cell: what the page width is measured in, whatever the output format
        cells = []
        for column in step.columns:
            shared = self.numbers(column)
            width = column.values.cols
            rows = [shared[i * width:(i + 1) * width] for i in range(len(step.tokens))]
            vectors.append([self.vector(row) for row in rows])
            if max(visible_width(vector) for vector in vectors[-1]) + 2 <= room:
                cells.append([self.inline(vector) for vector in vectors[-1]])
            else:  # a vector wider than the page (16 entries and more): on several lines within its cell
                lines = [wrap(self.vector_pieces(row), room - 2) for row in rows]
                cells.append([self.cell_lines([self.inline(line) for line in cell]) for cell in lines])
                vectors[-1] = [max(cell, key=visible_width) for cell in lines]
        tokens = [self.token(token) for token in step.tokens]
        widths = [max(visible_width(vector) + 2 for vector in column) for column in vectors]
        groups = column_groups(widths, self.width - token_width - 10 * bool(step.positions))
        return "\n".join(self.positioned(step.positions, [header[0], *[header[1 + c] for c in group]], tokens,
                                         [cells[c] for c in group]) for group in groups)

    def _print_MatrixEquation(self, step: MatrixEquation) -> str:
        blocks = self.matrix_blocks(step.value, self.width - 8)
        if len(blocks) == 1:
            return self.display(f"{self.name(step.name)} = {blocks[0]}")
        return self.align([f"{self.name(step.name)} &= {blocks[0]}", *(f"&\\phantom{{=}} {b}" for b in blocks[1:])])

    def _print_ExactMatrix(self, step: ExactMatrix) -> str:
        exact = self.matrix_blocks(step.value, self.width - 8, lambda v: exact_latex(v, decimals=False))
        rounded = self.matrix_blocks(step.value, self.width - 8)
        relation = self.relation(all(n.exact for n in self.numbers(step.value)))
        if len(exact) == 1 and visible_width(exact[0] + rounded[0]) <= self.width - 8:
            return self.display(f"{self.name(step.name)} = {exact[0]} {relation} {rounded[0]}")
        lines = [f"{self.name(step.name)} &= {exact[0]}", *(f"&\\phantom{{=}} {b}" for b in exact[1:])]
        lines += [f"&{relation} {rounded[0]}", *(f"&\\phantom{{{relation}}} {b}" for b in rounded[1:])]
        return self.align(lines)

    def _print_VectorEquation(self, step: VectorEquation) -> str:
        numbers = self.numbers(step.value)
        lead = f"{self.name(step.name)} &{self.relation(all(n.exact for n in numbers))} " if step.name else "&"
        return self.align(self.continued(lead, self.vector_pieces(numbers), self.width - 12))

    def _print_VectorList(self, step: VectorList) -> str:
        lines = []
        for name, shown in zip(step.names, step.values, strict=True):
            numbers = self.numbers(shown)
            lines += self.continued(f"{self.name(name)} &{self.relation(all(n.exact for n in numbers))} ",
                                    self.vector_pieces(numbers), self.width - 12)
        return self.align(lines)

    def _print_RowTimesMatrix(self, step: RowTimesMatrix) -> str:
        row, matrix = self.numbers(step.row), self.numbers(step.matrix)
        result = self.numbers(step.value)
        cols = step.matrix.values.cols
        # A given matrix's zero entries, and the row's exact zeros (ReLU's), make terms that add nothing: they are
        # left out (said once in a note).
        given = bool(step.matrix.written)
        kept = [[i for i in range(len(row)) if not (given and step.matrix.entries[i * cols + c] == 0)
                 and not step.row.entries[i] == 0] for c in range(cols)]

        shown_row: list[Number] = []  # the row as the chosen lines show it
        bias_terms, bias_text = self.bias_terms(step)

        def lines_at(places: int) -> list[Line]:
            x = [operand(v, n, places, step.row.known) for v, n in zip(step.row.entries, row, strict=True)]
            shown_row[:] = [o.number for o in x]
            return [Line(self.name(step.result), Operand(result[c], step.value.entries[c]),
                         tuple((x[i], Operand(matrix[i * cols + c], step.matrix.entries[i * cols + c]))
                               for i in kept[c]) + bias_terms[c])
                    for c in range(cols)]

        lines, shown_row = self.settled(step, lambda: [self.name(step.result)] * cols,
                                        lambda: (guarded(lines_at, self.digits), shown_row))
        lead_relation = self.relation(all(n.exact for n in (*shown_row, *matrix)))
        lead = f"{self.name(step.result)} &= {self.name(step.row_name)} \\cdot {self.name(step.matrix_name)}"
        lead += f" + {self.name(step.bias_name)}" if step.bias_name else ""
        # with a bias the line names W (shown before), so that row · W + b stays on one line
        inline = self.small_enough(step.matrix) and step.bias is None
        operand_text = self.bmatrix(step.matrix) if inline else self.name(step.matrix_name)
        # "· W_O" joins the row's last entry, so that it never stands alone on a line
        shown = exact_zeros(shown_row, step.row.entries)
        pieces = self.vector_pieces(shown)
        room = self.width - visible_width(lead) - 8
        row_room, operand_room = row_width([n.text for n in shown]), visible_width(operand_text) + 2
        # a row too wide for the lead's line starts on a line of its own (whole, if it fits a line); the matrix
        # follows it on its line when there is room, else on the next
        own_line = len(shown) > 1 and row_room > room + 4 and (row_fits([n.text for n in shown], self.width) or room < self.width // 2)
        if len(pieces) == 1 and row_room + operand_room > (self.width - 14 if own_line else room + 4):
            pieces.append(r"\cdot " + operand_text)
        else:
            pieces[-1] += r" \cdot " + operand_text
        pieces += [bias_text] if bias_text else []
        out = self.continued(f"{lead} {lead_relation} ", pieces, room, own_line)
        entries: list[list[str]] = []
        for c, line in enumerate(lines):
            entry = self.operation(line) or ["0"]
            entry[0] = ("[" if c == 0 else "") + entry[0]
            entry[-1] += "]" if c == cols - 1 else r",\quad"
            entries.append(entry)
        flat = [piece for entry in entries for piece in entry]
        first = f"&{lead_relation} "
        if visible_width(" ".join(flat)) <= self.width - 4:
            out.append(first + " ".join(flat))
        else:  # too wide for one line: one entry per line, each wrapped on its own
            for c, entry in enumerate(entries):
                out += self.continued(first if c == 0 else r"&\phantom{{}={}[} ", entry, self.width - 8)
        exact = all(line.relation == "=" for line in lines)
        out += self.continued(f"&{self.relation(exact)} ", self.vector_pieces(result), self.width - 4)
        dropped = any(len(k) < len(row) for k in kept) or (step.bias is not None and not all(bias_terms))
        # the note on left-out zero terms before the first product that leaves one out, where it is read
        note = self.note_once("numbers.zero_terms").lstrip("\n") if dropped else ""
        return (note + "\n\n" if note else "") + self.align(out) + self.guard_note(lines)

    def fitted(self, computation: str, result: str) -> list[str]:
        """`computation result` as one aligned line, or, when wider than the page as TeX sets it (30 digits, an
        exact form), the result on a line of its own."""
        if set_width(f"{computation} {result}") + 4 > self.width:
            return [computation, f"&{result}"]
        return [f"{computation} {result}"]

    def _print_DotProducts(self, step: DotProducts) -> str:
        query = self.numbers(step.query)
        keys = [self.numbers(key) for key in step.keys]

        def lines_at(places: int) -> list[Line]:
            q = [operand(v, n, places, step.query.known) for v, n in zip(step.query.entries, query, strict=True)]
            return [Line(f"{self.name(step.query_name)} \\cdot {self.name(key_name)}",
                         self.result_operand(score, step.known),
                         tuple(zip(q, [operand(v, n, places, key.known)
                                       for v, n in zip(key.entries, shown, strict=True)], strict=True)))
                    for key_name, key, shown, score in zip(step.key_names, step.keys, keys, step.scores, strict=True)]

        lines, _ = self.settled(step, lambda: [f"{self.name(step.query_name)} \\cdot {self.name(key_name)}"
                                               for key_name in step.key_names],
                                lambda: (guarded(lines_at, self.digits), None))
        left = max(visible_width(line.what) for line in lines)
        out = []
        for line in lines:
            # exact (q̂·k̂ = 1), though its rounded operands only come near it (not --exact's "form ≈ decimal")
            if line.result.exact and line.relation != "=" and r"\approx" not in line.result.text:
                out += self.continued(f"{line.what} &= {line.result.text} {self.relation(False)} ",
                                      self.operation(line), self.width - left)
                continue
            pieces = [*self.operation(line), f"{self.relation(line.relation == '=')} {line.result.text}"]
            out += self.continued(f"{line.what} &{self.relation(line.lead == '=')} ", pieces, self.width - left)
        return self.align(out) + self.guard_note(lines)

    def _print_Scaling(self, step: Scaling) -> str:
        denominator = self.divisor(step.scale, step.d_k, step.divisor)
        if step.scale.mode == "sqrt_d_k":
            out = [rf"a_{{j}} &= \frac{{s_{{j}}}}{{\sqrt{{d_k}}}}, \qquad {self.scale_equation(step.d_k)}"]
        else:
            out = [rf"a_{{j}} &= \frac{{s_{{j}}}}{{{denominator}}}"]
        divisor = Operand(Number(denominator, exact=True), step.divisor)
        visible = [(t, s, a) for t, s, a in zip(step.tokens, step.scores, step.scaled, strict=True)
                   if a != S.NegativeInfinity and not is_symbolic(a)]
        # a score's exact decimal when it is short (1.6976 with --digits 3), else rounded as the line needs
        exact = {s: format_number(s, self.digits + GUARD_CAP, fraction=self.exact, known=step.known)
                 for _, s, _ in visible}

        def lines_at(places: int) -> list[Line]:
            return [Line(self.name(Name("a", t)), self.result_operand(a, step.known),
                         ((operand(s, exact[s] if exact[s].exact else format_number(s, self.digits, known=step.known),
                                   places, step.known),),), divisor)
                    for t, s, a in visible]

        lines = iter(self.settled(step, lambda: [self.name(Name("a", t)) for t, _, _ in visible],
                                  lambda: (guarded(lines_at, self.digits), None))[0])
        for token, score, scaled in zip(step.tokens, step.scores, step.scaled, strict=True):
            if scaled == S.NegativeInfinity:  # masked: this key is not visible to the query
                out.append(rf"{self.name(Name('a', token))} &= -\infty \qquad (M = 0)")
            elif is_symbolic(scaled):
                numerator = format_number(score, self.digits, fraction=self.exact, known=step.known)
                out.append(rf"{self.name(Name('a', token))} &= \frac{{{numerator.text}}}{{{denominator}}}")
            else:
                line = next(lines)
                out += self.fitted(f"{line.what} &{self.relation(line.lead == '=')} {self.operation(line)[0]}",
                                   f"{self.relation(line.relation == '=')} {line.result.text}")
        if not any_symbolic(step.scaled):
            numbers = format_numbers(step.scaled, self.digits, known=step.known)  # the vector a, named
            out += self.continued(f"a &{self.relation(all(n.exact for n in numbers))} ", self.vector_pieces(numbers),
                                  self.width - 6)
        return self.align(out)

    def _print_SoftmaxStep(self, step: SoftmaxStep) -> str:
        sm, known, digits = step, step.known, self.digits
        logit, weight, _ = step.letters
        a = {token: self.name(Name(logit, token)) for token in step.tokens}
        la, lw, lz = (NOTATION[letter] for letter in step.letters)  # a, w, Z unless set
        out = [rf"{lw}_{{j}} &= \operatorname{{softmax}}({la})_{{j}} = \frac{{e^{{{la}_{{j}}}}}}{{\sum_{{k}} "
               rf"e^{{{la}_{{k}}}}}} = \frac{{e^{{{la}_{{j}}}}}}{{{lz}}}"]
        if any_symbolic(sm.exps):  # symbolic: the formulas are the answer
            out += self.continued(f"{lz} &= ", [f"e^{{{a[t]}}}" if i == 0 else f"+ e^{{{a[t]}}}"
                                             for i, t in enumerate(step.tokens)], self.width - 8)
            out += [rf"{self.name(Name(weight, t))} &= \frac{{e^{{{a[t]}}}}}{{{lz}}}" for t in step.tokens]
            return self.align(out)
        defaults = [format_number(e, digits, known=known) for e in sm.exps]

        def lines_at(places: int, z_places: int) -> list[Line]:
            exps = [operand(e, n, places, known) for e, n in zip(sm.exps, defaults, strict=True)]
            total = Operand(format_number(sm.total, z_places, known=known), sm.total)
            lines = [Line(f"e^{{{a[t]}}}", e) for t, e in zip(step.tokens, exps, strict=True)]
            lines.append(Line(rf"{lz} = \sum_{{k}} e^{{{la}_{{k}}}}", total, tuple((e,) for e in exps)))
            for token, e, w in zip(step.tokens, exps, sm.weights, strict=True):
                what = rf"{self.name(Name(weight, token))} &= \frac{{e^{{{a[token]}}}}}{{{lz}}}"
                if w.is_Rational:  # exactly 0 (masked), 1 (the only visible key) or 1/k (tied scores)
                    lines.append(Line(what, Operand(format_number(w, digits, fraction=True), w)))
                else:
                    lines.append(Line(what, self.result_operand(w, known), ((e,),), total))
            return lines

        # one count of decimals for every e^{a} (and one for Z), the fewest with which every line checks
        candidates = [(p, q) for p in range(digits, digits + GUARD_CAP + 1) for q in range(digits, p + 1)]

        def whats() -> list[str]:
            return [*(f"e^{{{a[t]}}}" for t in step.tokens), rf"{lz} = \sum_{{k}} e^{{{la}_{{k}}}}",
                    *(rf"{self.name(Name(weight, t))} &= \frac{{e^{{{a[t]}}}}}{{{lz}}}" for t in step.tokens)]

        def settle_powers() -> tuple[list[Line], tuple[list[tuple[str, bool]], list[Number | None]]]:
            lines = settle(lambda p=p, q=q: lines_at(p, q) for p, q in candidates)
            powers = [self.value(line.result.value, known=known, digits=decimals_shown(line.result.text))
                      for line in lines[:len(step.tokens)]]
            # each logit as its power needs it, with one count of decimals for all of them where that checks too
            # (e^{a_I} ≈ e^{0.818830} ≈ 2.26784: e^{0.8188} gives 2.26778)
            exponents = [None if exact or self.exact or logit == S.NegativeInfinity
                         else exponent_shown(logit, text, digits, known)
                         for logit, (text, exact) in zip(sm.logits, powers, strict=True)]
            common = max((decimals_shown(e.text) for e in exponents if e is not None), default=digits)
            return lines, (powers, [e if e is None else exponent_shown(logit, text, common, known) or e
                                    for e, logit, (text, _) in zip(exponents, sm.logits, powers, strict=True)])

        lines, (powers, exponents) = self.settled(step, whats, settle_powers)
        for logit, line, (text, exact), shown in zip(sm.logits, lines, powers, exponents, strict=False):
            # the power right of the alignment, where long logits have room: e^{a_t} &≈ e^{0.818830} ≈ 2.26784
            power = r"= e^{-\infty} " if logit == S.NegativeInfinity else ""
            if shown is not None:
                power = rf"{self.relation(shown.exact)} e^{{{shown.text}}} "
            out.append(rf"{line.what} &{power}{self.relation(exact)} {text}")
        total = lines[len(step.tokens)]
        out += self.continued(f"{total.what} &{self.relation(total.lead == '=')} ",
                              [*self.operation(total), f"{self.relation(total.relation == '=')} {total.result.text}"],
                              self.width - 20)
        for line in lines[len(step.tokens) + 1:]:
            if self.exact and r"\approx" in line.result.text:  # w = e^{a}/Z = its exact form ≈ the decimal
                out.append(f"{line.what} = {line.result.text}")
                continue
            middle = f" {self.relation(line.lead == '=')} {self.operation(line)[0]}" if line.terms else ""
            out += self.fitted(f"{line.what}{middle}", f"{self.relation(line.relation == '=')} {line.result.text}")
        logits = format_numbers(sm.logits, digits if step.logit_digits is None else step.logit_digits, known=known)
        weights = format_numbers(sm.weights, digits, known=known)
        out += self.continued(r"&\operatorname{softmax}\bigl(", [*self.vector_pieces(logits), r"\bigr)"],
                              self.width - 14)
        out += self.continued(f"&{self.relation(all(n.exact for n in weights))} ", self.vector_pieces(weights),
                              self.width - 4)
        return self.align(out) + self.guard_note(lines)

    def _print_WeightedSum(self, step: WeightedSum) -> str:
        if any_symbolic(step.weights):
            lines = []
            for j, v in enumerate(step.values):
                lead = ("&" if j == 0 else "&+ ") + self.name(Name("w", step.tokens[j]))
                lines += self.continued(f"{lead} \\cdot ", self.vector_pieces(self.numbers(v)), self.width - 12)
            return self.align(lines)
        weights = format_numbers(step.weights, self.digits, known=step.known)
        values = [self.numbers(v) for v in step.values]
        output = flat_entries(step.output)  # read once: indexing a matrix converts each entry
        result = format_numbers(output, self.digits, uniform=True, known=step.known, exact_up_to=self.exact_digits)

        def lines_at(places: int) -> list[Line]:
            w = [operand(v, n, places, step.known) for v, n in zip(step.weights, weights, strict=True)]
            v = [[operand(x, n, places, row.known) for x, n in zip(row.entries, shown, strict=True)]
                 for row, shown in zip(step.values, values, strict=True)]
            return [Line(f"z_{{{c + 1}}}", Operand(number, value), tuple((w[j], v[j][c]) for j in range(len(w))))
                    for c, (number, value) in enumerate(zip(result, output, strict=True))]

        lines, _ = self.settled(step, lambda: [f"z_{{{c + 1}}}" for c in range(len(output))],
                                lambda: (guarded(lines_at, self.digits), None))
        out = []
        for j in range(len(step.weights)):
            lead = "&" if j == 0 else "&+ "
            factor = lines[0].terms[j][0] if lines else Operand(weights[j], step.weights[j])
            row = [line.terms[j][1].number for line in lines]
            out += self.continued(f"{lead}{self.num(factor.number, True)} \\cdot ", self.vector_pieces(row),
                                  self.width - 12)
        exact = all(line.relation == "=" for line in lines)
        out += self.continued(f"&{self.relation(exact)} ", self.vector_pieces(result), self.width - 4)
        return self.align(out) + self.guard_note(lines)
