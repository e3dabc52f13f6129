"""The printers of the backward pass's steps (its steps.py), the same math in every format: each gradient matrix
beside its formula, a row divided by √d_k written out as checkable Lines, the focus row of dS (D both ways, then
each entry), and the loss."""

from __future__ import annotations

from dataclasses import replace

import mpmath

from ...numbers.display import Number, format_number
from ...typeset.layout import visible_width
from ...typeset.lines import GUARD_CAP, Line, Operand, guarded, operand
from ...typeset.math import MathRenderer, contribute
from .steps import FiniteDifference, Gradient, Loss, RowProduct, ScoreRow

_D = r"\mathrm{d}"
# the gradients' names (∂L/∂M written dM, as the backpropagation literature does) and the transposes a row is taken of
contribute(notation={"dO": rf"{_D}O", "dV": rf"{_D}V", "dP": rf"{_D}P", "dS": rf"{_D}S", "dQ": rf"{_D}Q",
                     "dK": rf"{_D}K", "dX": rf"{_D}X", "dW_Q": rf"{_D}W_Q", "dW_K": rf"{_D}W_K", "dW_V": rf"{_D}W_V",
                     "PT": r"(P^{\top})", "dST": rf"({_D}S^{{\top}})", "XT": r"X^{\top}", "VT": r"V^{\top}",
                     "J": "J", "T": "T", "Y": "Y", "O": "O", "L": "L", "D": "D", "p": "p", "E11": "E_{11}"},
           formulas={"bw_loss": r"L = \tfrac{1}{2} \|O - T\|^2 = \tfrac{1}{2} \sum_{i,c} (O_{ic} - T_{ic})^2",
                     "bw_dO_mse": rf"{_D}O = \partial L / \partial O = O - T",
                     "bw_ce": r"\hat{p}_i = \operatorname{softmax}(o_i), \quad L = -\sum_i \log \hat{p}_{i, y_i}",
                     "bw_dO_ce": rf"{_D}O = \partial L / \partial O = \hat{{P}} - Y",
                     "bw_softmax_derivative": r"\partial P_{ij} / \partial S_{ik} = P_{ij} (\delta_{jk} - P_{ik})",
                     "bw_jacobian": r"J = \operatorname{diag}(p) - p\,p^{\top}",
                     "bw_dS": rf"{_D}S = P \circ ({_D}P - D), \quad D_i = \sum_j {_D}P_{{ij}} P_{{ij}}",
                     "bw_D": rf"D_i = \sum_j {_D}P_{{ij}} P_{{ij}} = \sum_c {_D}O_{{ic}} O_{{ic}}",
                     "bw_masked": rf"P_{{ij}} = 0 \;\Rightarrow\; {_D}S_{{ij}} = 0",
                     "bw_dX": rf"{_D}X = {_D}Q\,W_Q^{{\top}} + {_D}K\,W_K^{{\top}} + {_D}V\,W_V^{{\top}}",
                     "bw_S": r"S = Q K^{\top} / \sqrt{d_k}", "bw_P": r"P = \operatorname{softmax}(S)",
                     "bw_O": r"O = P V", "bw_dO": rf"{_D}O"})

# each Gradient's formula, as its display writes it before the matrix
FORMULAS = {
    "Q": "Q = X W_Q", "K": "K = X W_K", "V": "V = X W_V",
    "S": r"S = Q K^{\top} / \sqrt{d_k}", "S_none": r"S = Q K^{\top}", "S_c": r"S = Q K^{\top} / c",
    "P": r"P = \operatorname{softmax}(S)", "O": "O = P V", "T": "T",
    "dO": rf"{_D}O", "dO_mse": rf"{_D}O = O - T", "dO_ce": rf"{_D}O = \hat{{P}} - Y",
    "Y": "Y", "P_O": r"\hat{P} = \operatorname{softmax}(O)",
    "dV": rf"{_D}V = P^{{\top}} {_D}O", "dP": rf"{_D}P = {_D}O\, V^{{\top}}",
    "J": r"J = \operatorname{diag}(p) - p\,p^{\top}",
    "D": rf"D = \operatorname{{rowsum}}({_D}P \circ P)", "D_check": rf"\operatorname{{rowsum}}({_D}O \circ O)",
    "dS": rf"{_D}S = P \circ ({_D}P - D)",
    "dQ": rf"{_D}Q = {_D}S\, K / \sqrt{{d_k}}", "dQ_none": rf"{_D}Q = {_D}S\, K", "dQ_c": rf"{_D}Q = {_D}S\, K / c",
    "dK": rf"{_D}K = {_D}S^{{\top}} Q / \sqrt{{d_k}}", "dK_none": rf"{_D}K = {_D}S^{{\top}} Q",
    "dK_c": rf"{_D}K = {_D}S^{{\top}} Q / c",
    "dW_Q": rf"{_D}W_Q = X^{{\top}} {_D}Q", "dW_K": rf"{_D}W_K = X^{{\top}} {_D}K", "dW_V": rf"{_D}W_V = X^{{\top}} {_D}V",
    "path_Q": rf"{_D}Q\, W_Q^{{\top}}", "path_K": rf"{_D}K\, W_K^{{\top}}", "path_V": rf"{_D}V\, W_V^{{\top}}",
    "dX": rf"{_D}X = {_D}Q\, W_Q^{{\top}} + {_D}K\, W_K^{{\top}} + {_D}V\, W_V^{{\top}}",
}


class BackwardPrinters(MathRenderer):
    """The backward pass's steps; every format's renderer is composed with them (render/composed.py)."""

    def _print_Gradient(self, step: Gradient) -> str:
        lead = FORMULAS[step.formula]
        relation = self.matrix_relation(step.value, lead=lead)
        return self.align([f"{lead} {relation[0]}", *relation[1:]])

    def _print_Loss(self, step: Loss) -> str:
        line = Line("L", self.result_operand(step.value, step.known))
        self.checked_lines([line])
        formula = (r"-\sum_i \log \hat{p}_{i, y_i}" if step.loss == "cross_entropy"
                   else r"\tfrac{1}{2} \sum_{i,c} (O_{ic} - T_{ic})^2")
        return self.align([rf"L &= {formula} {self.relation(line.relation == '=')} {line.result.text}"])

    def _row(self, name, step: RowProduct, c: int | None = None) -> str:
        """The row's name (dQ_t, (dW_Q)_1), or its entry c (dQ_{t,1}, (dW_Q)_{1,1})."""
        index = "" if c is None else f",{self.subscript_word(step.columns[c]) if step.columns else c + 1}"
        if step.row_number is not None:
            return f"({self.name(name)})_{{{step.row_number}{index}}}"
        if name.token is None or c is None:
            return self.name(name)
        return f"{{{self.name(replace(name, token=None))}}}_{{{self.subscript_word(name.token)}{index}}}"

    def _print_RowProduct(self, step: RowProduct) -> str:
        row, matrix, value = self.numbers(step.row), self.numbers(step.matrix), self.numbers(step.value)
        cols = step.matrix.values.cols
        kept = [[j for j in range(len(row)) if step.row.entries[j] != 0 and step.matrix.entries[j * cols + c] != 0]
                for c in range(cols)]
        divisor = None
        if step.scale is not None and step.scale.mode != "none":
            divisor = Operand(Number(self.divisor(step.scale, step.d_k, step.divisor), exact=True), step.divisor)

        def lines_at(places: int) -> list[Line]:
            x = [operand(v, n, places, step.row.known) for v, n in zip(step.row.entries, row, strict=True)]
            m = [operand(v, n, places, step.matrix.known) for v, n in zip(step.matrix.entries, matrix, strict=True)]
            return [Line(self._row(step.result, step, c), Operand(value[c], step.value.entries[c]),
                         tuple((x[j], m[j * cols + c]) for j in kept[c]), divisor if kept[c] else None)
                    for c in range(cols)]

        lines = self.checked_lines(guarded(lines_at, self.digits))
        over = "" if divisor is None else f" / {divisor.text}"
        out = [f"{self._row(step.result, step)} &= {self._row(step.row_name, step)}\\, "
               f"{self.name(step.matrix_name)}{over}"]
        for line in lines:
            if not line.terms:  # every product has an exact zero
                out.append(f"{line.what} &= 0")
                continue
            pieces = self.operation(line) + [f"{self.relation(line.relation == '=')} {line.result.text}"]
            out += self.continued(f"{line.what} &{self.relation(line.lead == '=')} ", pieces, self.width - 12)
        return self.align(out) + self.guard_note(lines)

    def _print_ScoreRow(self, step: ScoreRow) -> str:
        visible = [j for j, v in enumerate(step.visible) if v]
        sub = self.subscript_word(step.token)
        known = step.known
        D_shown, check_shown = self.result_operand(step.D, known), self.result_operand(step.D_check, known)
        shown_D: list[Operand] = []  # D as the chosen lines' operands show it

        def lines_at(places: int) -> list[Line]:
            def at(v):
                return operand(v, format_number(v, places, known=known), places, known)
            P, dP, D = {j: at(step.P[j]) for j in visible}, {j: at(step.dP[j]) for j in visible}, at(step.D)
            shown_D[:] = [D]
            minus_D = Operand(Number(_negated(D.text), D.exact), -step.D)
            lines = [Line("D", D_shown, tuple((P[j], dP[j]) for j in visible)),
                     Line("D", check_shown, tuple((at(a), at(b)) for a, b in zip(step.dO, step.O, strict=True)))]
            for j in visible:
                diff = Operand(format_number(step.dP[j] - step.D, places, known=known), step.dP[j] - step.D)
                lines += [Line("dP - D", diff, ((dP[j],), (minus_D,))),
                          Line("dS", self.result_operand(step.dS[j], known), ((P[j], diff),))]
            return lines

        lines = self.checked_lines(guarded(lines_at, self.digits))
        D = shown_D[0]
        out = []
        for line, lead in ((lines[0], rf"D_{{{sub}}} &= \textstyle\sum_j {_D}P_{{ij}} P_{{ij}}"),
                           (lines[1], rf"&= \textstyle\sum_c {_D}O_{{ic}} O_{{ic}}")):
            pieces = self.operation(line) + [f"{self.relation(line.relation == '=')} {line.result.text}"]
            out += self.continued(f"{lead} {self.relation(line.lead == '=')} ", pieces,
                                  self.width - visible_width(lead))
        found = iter(lines[2:])
        for j, token in enumerate(step.tokens):
            what = f"{{{_D}S}}_{{{sub},{self.subscript_word(token)}}}"
            if not step.visible[j]:
                out.append(rf"{what} &= 0 \quad \text{{{self.text('backward.masked_entry')}}}")
                continue
            diff, entry = next(found), next(found)
            p, dp = self.num(entry.terms[0][0].number, True), diff.terms[0][0].text
            pieces = [rf"{p} \cdot ({dp} - {self.num(D.number, True)})",
                      rf"{self.relation(diff.relation == '=')} {p} \cdot {self.num(diff.result.number, True)}",
                      f"{self.relation(entry.relation == '=')} {entry.result.text}"]
            out += self.continued(f"{what} &{self.relation(diff.lead == '=' and entry.lead == '=')} ", pieces,
                                  self.width - 14)
        return self.align(out) + self.guard_note(lines)

    def _print_FiniteDifference(self, step: FiniteDifference) -> str:
        known = step.known
        h = format_number(step.h, 12)
        two_h = Operand(format_number(2 * step.h, 12), 2 * step.h)
        result = self.result_operand(step.quotient, known)
        # the losses with the decimals the quotient needs to check from them: its own, and those the division by
        # 2h brings up
        start = self.digits + max(0, len(str(int(1 / (2 * step.h)))))
        line = None
        for places in range(start, start + 2 * GUARD_CAP):
            plus = Operand(format_number(step.plus, places, known=known), step.plus)
            minus = Operand(format_number(step.minus, places, known=known), step.minus)
            line = Line("fd", result, ((plus,), (Operand(Number(_negated(minus.text), minus.exact), -step.minus),)),
                        two_h)
            if line.checks():
                break
        self.checked_lines([line])
        plus, minus = line.terms[0][0], minus
        gradient = self.result_operand(step.gradient, known)
        number = known.number if known is not None else None
        gap = abs(number(step.quotient) - number(step.gradient)) if number else mpmath.mpf(0)
        E = r"E_{11}"
        out = [rf"L(W_Q + {h.text}\,{E}) &{self.relation(plus.exact)} {plus.text}",
               rf"L(W_Q - {h.text}\,{E}) &{self.relation(minus.exact)} {minus.text}",
               rf"\frac{{L(W_Q + h{E}) - L(W_Q - h{E})}}{{2h}} &{self.relation(line.lead == '=')} "
               rf"\frac{{{plus.text} - {self.num(minus.number, True)}}}{{{two_h.text}}} "
               rf"{self.relation(line.relation == '=')} {result.text}",
               rf"({_D}W_Q)_{{1,1}} &{self.relation(gradient.exact)} {gradient.text}",
               rf"\left| \frac{{L(W_Q + h{E}) - L(W_Q - h{E})}}{{2h}} - ({_D}W_Q)_{{1,1}} \right| "
               rf"&\approx {_scientific(gap)}"]
        return self.align(out)


# the printers this folder brings to every format's renderer (render/composed.py)
PRINTERS = (BackwardPrinters,)


def _scientific(value: mpmath.mpf) -> str:
    """A small difference as 1.2 \\times 10^{-7} (two significant digits), or 0."""
    if not value:
        return "0"
    mantissa, _, exponent = mpmath.nstr(value, 2, min_fixed=1, max_fixed=0).partition("e")
    return rf"{mantissa} \times 10^{{{int(exponent)}}}" if exponent else mantissa


def _negated(text: str) -> str:
    """A number's text with its sign turned: 0.25 → -0.25, -0.25 → 0.25."""
    return text[1:] if text.startswith("-") else f"-{text}"

