"""The math of a multi-head section's matrices, the same in every format: a head's matrix form named by its index
(S^(h) = Q^(h) K^(h)ᵀ, …, Z^(h) = A^(h) V^(h)), the heads' output matrices side by side, and a matrix product with
its factors beside it when they fit (each entry a render/lines.Line, checkable from them); the heads' weights and
the concatenation of their output rows."""

from __future__ import annotations

from ...document.steps import Concat, HeadWeights, MatrixFormStep
from ...engine import any_symbolic
from .steps import MatrixConcat, MatrixProduct


class HeadsPrinter:
    """The printers of a multi-head section's matrices and rows (mixed into printers.DerivationRenderer, whose
    product(), matrix_relation(), numbers(), continued() and align() they use)."""

    def form_divisor(self, step: MatrixFormStep) -> str:
        """What a matrix form divides S by: √d_k, or a head's as its number (√2), which no earlier step names."""
        if step.scale.mode == "sqrt_d_k" and step.head is None:
            return r"\sqrt{d_k}"
        return self.divisor(step.scale, step.d_k, step.divisor)

    def _print_MatrixConcat(self, step: MatrixConcat) -> str:
        parts = r" \,\Vert\, ".join(self.name(part) for part in step.parts)
        lead = self.name(step.name)
        first = rf"{lead} &= \bigl[\, {parts} \,\bigr]"
        if any_symbolic(step.value.values):  # symbolic: the entries are the heads' formulas; the form alone
            return self.align([first])
        return self.align([first, *self.matrix_relation(step.value, True, lead)])

    def _print_MatrixProduct(self, step: MatrixProduct) -> str:
        lead = self.name(step.name)
        first = rf"{lead} &= {self.name(step.left_name)} {self.name(step.right_name)}"
        if any_symbolic(step.value.values):  # symbolic: the product's formula alone
            return self.align([first])
        product, factors, exact = self.product(step.left, step.right, step.value, self.width - 12)
        return self.align([first + (f" {self.relation(factors)} {product}" if product else ""),
                           *self.matrix_relation(step.value, exact, lead)])

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


# the printers this folder brings to every format's renderer (render/composed.py)
PRINTERS = (HeadsPrinter,)
