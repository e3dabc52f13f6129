"""The derivation's steps as math, the same in every format: products term by term, scaling, softmax, weighted
sums, the matrix form. The format decides only how the lines are put on the page (align, table, inline)."""

from __future__ import annotations

from sympy import S

from ..engine import any_symbolic, is_symbolic
from ..exactfmt import exact_latex
from ..model import (
    Concat,
    DotProducts,
    ExactMatrix,
    HeadWeights,
    MatrixEquation,
    MatrixFormStep,
    Name,
    RowTimesMatrix,
    Scaling,
    Shown,
    SoftmaxStep,
    TextParagraph,
    TokenTable,
    VectorEquation,
    VectorList,
    WeightedSum,
    WrittenHeading,
)
from ..numfmt import format_number, format_numbers
from ..spec.model import Math, Written
from .escape import escape
from .layout import column_groups, visible_width, wrap
from .math import MathRenderer


class DerivationRenderer(MathRenderer):
    """The printers of the derivation's math steps; LatexRenderer, MarkdownRenderer and HtmlRenderer are its
    sibling subclasses, each adding the steps of text, tables and figures in its own form."""

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
        room = self.width - token_width - 4
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
        groups = column_groups(widths, self.width - token_width)
        return "\n".join(self.table([header[0], *[header[1 + c] for c in group]], tokens, [cells[c] for c in group])
                         for group in groups)

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
        row = self.numbers(step.row)
        matrix = self.numbers(step.matrix)
        result = self.numbers(step.value)
        cols = step.matrix.values.cols
        factors = all(n.exact for n in (*row, *matrix))  # are the factors shown exactly?
        lead = f"{self.name(step.result)} &= {self.name(step.row_name)} \\cdot {self.name(step.matrix_name)}"
        operand = self.bmatrix(step.matrix) if self.small_enough(step.matrix) else self.name(step.matrix_name)
        lines = self.continued(f"{lead} {self.relation(factors)} ", [*self.vector_pieces(row), r"\cdot " + operand],
                               self.width - visible_width(lead) - 8)
        entries: list[list[str]] = []
        for c in range(cols):
            terms = [f"{self.num(row[i], True)} \\cdot {self.num(matrix[i * cols + c], True)}" for i in range(len(row))]
            entry = [terms[0], *[f"+ {t}" for t in terms[1:]]]
            entry[0] = ("[" if c == 0 else "") + entry[0]
            entry[-1] += "]" if c == cols - 1 else r",\quad"
            entries.append(entry)
        pieces = [piece for entry in entries for piece in entry]
        first = f"&{self.relation(factors)} "
        if visible_width(" ".join(pieces)) <= self.width - 4:
            lines.append(first + " ".join(pieces))
        else:  # too wide for one line: one entry per line, each wrapped on its own
            for c, entry in enumerate(entries):
                lines += self.continued(first if c == 0 else r"&\phantom{{}={}[} ", entry, self.width - 8)
        exact = factors and all(n.exact for n in result)
        lines += self.continued(f"&{self.relation(exact)} ", self.vector_pieces(result), self.width - 4)
        return self.align(lines)

    def _print_DotProducts(self, step: DotProducts) -> str:
        q = self.numbers(step.query)
        lines = []
        left = max(visible_width(f"{self.name(step.query_name)} \\cdot {self.name(k)}") for k in step.key_names)
        for key_name, key, score in zip(step.key_names, step.keys, step.scores, strict=True):
            k = self.numbers(key)
            terms = [f"{self.num(a, True)} \\cdot {self.num(b, True)}" for a, b in zip(q, k, strict=True)]
            factors = all(n.exact for n in (*q, *k))
            text, exact = self.value(score, known=step.known)
            pieces = [terms[0], *[f"+ {t}" for t in terms[1:]], f"{self.relation(factors and exact)} {text}"]
            lead = f"{self.name(step.query_name)} \\cdot {self.name(key_name)} &{self.relation(factors)} "
            lines += self.continued(lead, pieces, self.width - left)
        return self.align(lines)

    def _print_Scaling(self, step: Scaling) -> str:
        denominator = self.divisor(step.scale, step.d_k, step.divisor)
        if step.scale.mode == "sqrt_d_k":
            lines = [rf"a_{{j}} &= \frac{{s_{{j}}}}{{\sqrt{{d_k}}}}, \qquad {self.scale_equation(step.d_k)}"]
        else:
            lines = [rf"a_{{j}} &= \frac{{s_{{j}}}}{{{denominator}}}"]
        for token, score, scaled in zip(step.tokens, step.scores, step.scaled, strict=True):
            if scaled == S.NegativeInfinity:  # masked: this key is not visible to the query
                lines.append(rf"{self.name(Name('a', token))} &= -\infty \qquad (M = 0)")
                continue
            numerator = format_number(score, self.digits, fraction=self.exact, known=step.known)
            line = (rf"{self.name(Name('a', token))} &{self.relation(numerator.exact)} "
                    rf"\frac{{{numerator.text}}}{{{denominator}}}")
            if not is_symbolic(scaled):
                text, exact = self.value(scaled, known=step.known)
                line += f" {self.relation(exact)} {text}"
            lines.append(line)
        if not any_symbolic(step.scaled):
            numbers = format_numbers(step.scaled, self.digits, known=step.known)
            lines += self.continued(f"&{self.relation(all(n.exact for n in numbers))} ", self.vector_pieces(numbers),
                                    self.width - 4)
        return self.align(lines)

    def _print_SoftmaxStep(self, step: SoftmaxStep) -> str:
        sm, known = step, step.known
        a = {token: self.name(Name("a", token)) for token in step.tokens}
        lines = [r"w_{j} &= \operatorname{softmax}(a)_{j} = \frac{e^{a_{j}}}{\sum_{k} e^{a_{k}}} = \frac{e^{a_{j}}}{Z}"]
        if any_symbolic(sm.exps):  # symbolic: the formulas are the answer
            lines += self.continued(r"Z &= ", [f"e^{{{a[t]}}}" if i == 0 else f"+ e^{{{a[t]}}}"
                                               for i, t in enumerate(step.tokens)], self.width - 8)
            lines += [rf"{self.name(Name('w', t))} &= \frac{{e^{{{a[t]}}}}}{{Z}}" for t in step.tokens]
            return self.align(lines)
        for token, e, logit in zip(step.tokens, sm.exps, sm.logits, strict=True):
            text, exact = self.value(e, known=known)
            masked = r" = e^{-\infty}" if logit == S.NegativeInfinity else ""
            lines.append(rf"e^{{{a[token]}}}{masked} &{self.relation(exact)} {text}")
        exps = format_numbers(sm.exps, self.digits, known=known)
        total = format_number(sm.total, self.digits, known=known)
        shown_exactly = all(n.exact for n in exps)
        pieces = [exps[0].text, *[f"+ {n.text}" for n in exps[1:]],
                  f"{self.relation(shown_exactly and total.exact)} {total.text}"]
        lines += self.continued(rf"Z = \sum_{{k}} e^{{a_{{k}}}} &{self.relation(shown_exactly)} ", pieces,
                                self.width - 20)
        for token, e, w in zip(step.tokens, exps, sm.weights, strict=True):
            number = format_number(w, self.digits, known=known)
            parts = e.exact and total.exact
            lines.append(rf"{self.name(Name('w', token))} &= \frac{{e^{{{a[token]}}}}}{{Z}} "
                         rf"{self.relation(parts)} \frac{{{e.text}}}{{{total.text}}} "
                         rf"{self.relation(parts and number.exact)} {number.text}")
        logits = format_numbers(sm.logits, self.digits, known=known)
        weights = format_numbers(sm.weights, self.digits, known=known)
        lines += self.continued(r"&\operatorname{softmax}\bigl(", [*self.vector_pieces(logits), r"\bigr)"],
                                self.width - 14)
        lines += self.continued(f"&{self.relation(all(n.exact for n in weights))} ", self.vector_pieces(weights),
                                self.width - 4)
        return self.align(lines)

    def _print_WeightedSum(self, step: WeightedSum) -> str:
        symbolic = any_symbolic(step.weights)
        weights = format_numbers(step.weights, self.digits, known=step.known)
        lines = []
        for j, (w, v) in enumerate(zip(weights, step.values, strict=True)):
            lead = "&" if j == 0 else "&+ "
            factor = self.name(Name("w", step.tokens[j])) if symbolic else w.text
            lines += self.continued(f"{lead}{factor} \\cdot ", self.vector_pieces(self.numbers(v)), self.width - 12)
        if not symbolic:
            result = format_numbers(list(step.output), self.digits, uniform=True, known=step.known)
            values = [n for v in step.values for n in self.numbers(v)]
            exact = all(n.exact for n in (*weights, *values, *result))
            lines += self.continued(f"&{self.relation(exact)} ", self.vector_pieces(result), self.width - 4)
        return self.align(lines)

    def _print_MatrixFormStep(self, step: MatrixFormStep) -> str:
        form, known = step.form, step.known
        transposed = Shown(step.K.values.T, step.K.decimals, step.K.uniform, known=step.K.known)
        parts = []
        if any_symbolic(form.scores):  # symbolic: entries are in the per-token steps; show the formulas
            lines = [r"S &= Q K^{\top}, \qquad S_{ij} = q_i \cdot k_j"]
        else:
            factors = all(n.exact for n in (*self.numbers(step.Q), *self.numbers(step.K)))
            product = self.bmatrix(step.Q) + self.bmatrix(transposed)
            lines = [r"S &= Q K^{\top}"
                     + (f" {self.relation(factors)} {product}" if visible_width(product) <= self.width - 12 else ""),
                     *self.matrix_relation(Shown(form.scores, uniform=False, known=known), factors)]
        parts.append(self.align(lines))
        if step.scale.mode != "none":
            denominator = (r"\sqrt{d_k}" if step.scale.mode == "sqrt_d_k" else self.value(step.divisor)[0])
            lines = [rf"S' &= \frac{{S}}{{{denominator}}}"]
            if not any_symbolic(form.scaled):
                lines += self.matrix_relation(Shown(form.scaled, known=known))
            parts.append(self.align(lines))
        source = "S'" if step.scale.mode != "none" else "S"
        lines = [rf"A &= \operatorname{{softmax}}_{{{self.subscript_word('row', user_text=False)}}}({source}), \qquad "
                 rf"A_{{ij}} = \frac{{e^{{{source}_{{ij}}}}}}{{\sum_k e^{{{source}_{{ik}}}}}}"]
        if not any_symbolic(form.weights):
            lines += self.matrix_relation(Shown(form.weights, known=known))
        parts.append(self.align(lines))
        lead = r"\operatorname{Attention}(Q, K, V)"
        lines = [rf"{lead} &= A V"]
        if not any_symbolic(form.output):
            A, V = Shown(form.weights, known=known), step.V
            factors = all(n.exact for n in (*self.numbers(A), *self.numbers(V)))
            product = self.bmatrix(A) + self.bmatrix(V)
            if visible_width(product) <= self.width - 24:  # A and V side by side only when they fit
                lines[0] += f" {self.relation(factors)} " + product
            lines += self.matrix_relation(Shown(form.output, known=known), factors, lead)
        parts.append(self.align(lines))
        return "\n".join(parts)

    def _print_HeadWeights(self, step: HeadWeights) -> str:
        lines = [rf"&\bigl(W_Q^{{({h})}},\ W_K^{{({h})}},\ W_V^{{({h})}}\bigr)" for h in range(1, step.count + 1)]
        return self.align(lines)

    def _print_Concat(self, step: Concat) -> str:
        exact = all(n.exact for part in step.parts for n in self.numbers(part))
        lead = f"{self.name(step.name)} &{self.relation(exact)} "
        lines = []
        for p, part in enumerate(step.parts):
            prefix = lead if p == 0 else r"&\quad \Vert\ "
            lines += self.continued(prefix, self.vector_pieces(self.numbers(part)), self.width - 14)
        value = self.numbers(step.value)
        lines += self.continued(f"&{self.relation(exact and all(n.exact for n in value))} ",
                                self.vector_pieces(value), self.width - 4)
        return self.align(lines)
