"""The matrix form of attention as math, the same in every format: S = QKᵀ (or the given S), its scaling, the
row-wise softmax A and A·V, each product beside its factors when they fit, with the guard decimals that make every
entry checkable."""

from __future__ import annotations

from typing import NamedTuple

from sympy import S as SymPy

from ..document.steps import MatrixFormStep, Shown
from ..engine import any_symbolic
from ..typeset.layout import visible_width
from ..typeset.lines import Line, Operand, guarded, operand
from ..typeset.math import MathRenderer


class FormNames(NamedTuple):
    """The names of a matrix form: S, S', A, A V's, V (of a head h: {S}^{(h)}, {S'}^{(h)}, {A}^{(h)}, {Z}^{(h)},
    V^{(h)}; else S, S', A, Attention(Q, K, V), V), the matrix the softmax is taken of and its entries' letter."""

    S: str
    scaled: str
    A: str
    Z: str
    V: str
    source: str
    entry: str


def matrix_form_names(step: MatrixFormStep) -> FormNames:
    if step.head is None:
        names = ("S", "S'", "A", r"\operatorname{Attention}(Q, K, V)", "V")
    else:
        sup = f"^{{({step.head})}}"
        names = (*(f"{{{n}}}{sup}" for n in ("S", "S'", "A", "Z")), f"V{sup}")
    scaled = step.scale.mode != "none" or step.form.scaled != step.form.scores  # a mask's −∞ make S' ≠ S
    return FormNames(*names, names[1] if scaled else names[0], "S'" if scaled else "S")


def score_product(step: MatrixFormStep) -> str:
    """Q Kᵀ as the matrix form writes it: Q̂ K̂ᵀ with RoPE, Q^(h) K^(h)ᵀ of a head h."""
    q, k = (r"\hat{Q}", r"\hat{K}") if step.rotated else ("Q", "K")
    if step.head is None:
        return rf"{q} {k}^{{\top}}"
    if step.rotated:  # a superscript on an accented letter: {\hat{Q}}^{(h)}
        q, k = f"{{{q}}}", f"{{{k}}}"
    return rf"{q}^{{({step.head})}} {k}^{{({step.head})\top}}"


class MatrixFormPrinter(MathRenderer):
    """The matrix form's printer; DerivationRenderer, and so every format, inherits it."""

    def _print_MatrixFormStep(self, step: MatrixFormStep) -> str:
        form, known = step.form, step.known
        S, scaled, A, Z, V, source, entry = matrix_form_names(step)  # of a head h: {S}^{(h)}, ...
        scores = Shown(form.scores, uniform=False, known=known)
        lead = rf"{S} &= {score_product(step)}" if step.Q is not None else ""
        if step.Q is None:  # the scores were given: S is that matrix
            lines = [(f"{S} " if i == 0 else "") + line for i, line in enumerate(self.matrix_relation(scores, lead=S))]
        elif any_symbolic(form.scores):  # symbolic: entries are in the per-token steps; show the formulas
            lines = [lead + r", \qquad S_{ij} = q_i \cdot k_j"]
        else:  # Kᵀ with the decimals K has in the table of projected vectors (shared with Q and V)
            transposed = Shown(step.K.values.T, step.K.decimals, step.K.uniform, whole=step.K.whole,
                               known=step.K.known)
            product, factors, exact = self.product(step.Q, transposed, scores, self.width - 12)
            lines = [lead + (f" {self.relation(factors)} {product}" if product else ""),
                     *self.matrix_relation(scores, exact)]
        parts = [self.align(lines)]
        masked_only = step.scale.mode == "none" and form.scaled != form.scores  # unscaled, but a mask's −∞
        if masked_only:  # as the per-token lines write a masked score, a = −∞ (M = 0)
            lines = [rf"{scaled} &= {S}, \qquad {scaled}_{{ij}} = -\infty \quad (M_{{ij}} = 0)"]
            if not any_symbolic(form.scaled):
                lines += self.matrix_relation(Shown(form.scaled, known=known))
            parts.append(self.align(lines))
        elif step.scale.mode != "none":  # a masked entry is −∞, not the scaled score: the line says so
            masked = any(value is SymPy.NegativeInfinity for value in form.scaled)
            lines = [rf"{scaled} &= \frac{{{S}}}{{{self.form_divisor(step)}}}"
                     + (rf", \qquad {scaled}_{{ij}} = -\infty \quad (M_{{ij}} = 0)" if masked else "")]
            if not any_symbolic(form.scaled):
                lines += self.matrix_relation(Shown(form.scaled, known=known))
            parts.append(self.align(lines))
        row = self.subscript_word("row", user_text=False)
        lines = [rf"{A} &= \operatorname{{softmax}}_{{{row}}}({source}), \qquad "
                 rf"A_{{ij}} = \frac{{e^{{{entry}_{{ij}}}}}}{{\sum_k e^{{{entry}_{{ik}}}}}}"]
        if not any_symbolic(form.weights):
            lines += self.matrix_relation(Shown(form.weights, known=known))
        parts.append(self.align(lines))
        if step.V is None:  # no values given: the matrix form ends at A
            return "\n".join(parts)
        lines = [rf"{Z} &= {A} {V}"]
        if not any_symbolic(form.output):
            output = Shown(form.output, known=known)
            product, factors, exact = self.product(Shown(form.weights, known=known), step.V, output, self.width - 24)
            if product:  # A and V side by side only when they fit
                lines[0] += f" {self.relation(factors)} " + product
            lines += self.matrix_relation(output, exact, Z)
        parts.append(self.align(lines))
        return "\n".join(parts)

    def product(self, left: Shown, right: Shown, result: Shown, room: int) -> tuple[str, bool, bool]:
        """The two matrices of a product side by side when they fit `room` (else ""), with the guard decimals their
        entries need for every entry of the result to check; whether the factors and the result are exact."""
        inner, cols = left.values.cols, right.values.cols
        shown_left, shown_right, shown_result = self.numbers(left), self.numbers(right), self.numbers(result)
        texts: list[list[Operand]] = []

        def lines_at(places: int) -> list[Line]:
            texts[:] = [[operand(v, n, places, m.known) for v, n in zip(m.entries, numbers, strict=True)]
                        for m, numbers in ((left, shown_left), (right, shown_right))]
            a, b = texts
            return [Line(f"{{}}_{{{i + 1}{c + 1}}}", Operand(shown_result[i * cols + c], result.entries[i * cols + c]),
                         tuple((a[i * inner + j], b[j * cols + c]) for j in range(inner)))
                    for i in range(left.values.rows) for c in range(cols)]

        fits = visible_width(self.bmatrix(left) + self.bmatrix(right)) <= room  # at the stage's decimals
        lines = guarded(lines_at, self.digits) if fits else []
        a, b = ([o.text for o in operands] for operands in texts) if lines else ([], [])
        product = self._bmatrix(a, inner, range(inner)) + self._bmatrix(b, cols, range(cols)) if lines else ""
        if not product or visible_width(product) > room:  # not shown: the result is as exact as the factors
            factors = all(n.exact for n in (*shown_left, *shown_right))
            return "", factors, factors and all(n.exact for n in shown_result)
        self.checked_lines(lines)
        return product, all(o.exact for ops in texts for o in ops), all(line.relation == "=" for line in lines)
