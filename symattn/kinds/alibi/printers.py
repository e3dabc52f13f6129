"""The printers of ALiBi's own steps (its steps.py), the same math in every format: the rule, the slopes, the bias
matrix, each query's biased scores a_j = s_j / √d_k + B_ij as checkable Lines (the scaling, then the bias), and all
queries at once."""

from __future__ import annotations

from sympy import Expr, Rational

from ...document.steps import Name, Shown
from ...numbers.display import Number, format_number, format_numbers
from ...spec.model import Scale
from ...typeset.layout import visible_width
from ...typeset.lines import GUARD_CAP, Line, Operand, guarded, operand
from ...typeset.math import MathRenderer, contribute
from .steps import AlibiMatrices, AlibiRule, BiasedScores, BiasMatrix, Slopes

# the symbols this folder's steps and sentences name, added to render/math.py's tables: the bias matrix B (B^(h) of
# head h); the positions i and j, the visible and the future keys, the paper's geometric slopes
contribute(notation={"B": "B"}, formulas={"i": "i", "j": "j", "alibi_past": r"j \le i", "alibi_future": r"j > i",
                                          "alibi_geometric": r"m_{h} = 2^{-8h/H}"})


def _head(base: str, head: int | None) -> str:
    return base if head is None else f"{base}^{{({head})}}"


class AlibiPrinters(MathRenderer):
    """ALiBi's steps; every format's renderer is composed with them (render/composed.py)."""

    def _alibi_fraction(self, scale: Scale, numerator: str, divisor: Expr, d_k: int) -> str:
        """numerator / √d_k (or / c), or the numerator alone when the scores are not scaled."""
        if scale.mode == "none":
            return numerator
        below = r"\sqrt{d_k}" if scale.mode == "sqrt_d_k" else self.divisor(scale, d_k, divisor)
        return rf"\frac{{{numerator}}}{{{below}}}"

    def _print_AlibiRule(self, step: AlibiRule) -> str:
        fraction = self._alibi_fraction(step.scale, r"q_{i} \cdot k_{j}", step.divisor, 0)
        return self.align([rf"a_{{ij}} &= {fraction} + B_{{ij}}",
                           r"B_{ij} &= -m\,(i - j) \quad (j \le i), \qquad B_{ij} = -\infty \quad (j > i)"])

    def _print_Slopes(self, step: Slopes) -> str:
        out, lines = [], []
        for k, slope in enumerate(step.slopes):
            name = _head("m", None if step.heads is None else step.heads[k])
            if not step.of:  # a given slope, as the page writes numbers (exact mode: its fraction too)
                line = Line(name, self.result_operand(slope))
                out.append(f"{name} &{self.relation(line.relation == '=')} {line.result.text}")
                lines.append(line)
                continue
            # 2^{-8h/H}, then its exponent in lowest terms (the exact form, in one line: an irrational power is
            # not written again as SymPy's \frac{\sqrt[3]{2}}{8}, whose exponents would be fractions in a script)
            h = step.numbers[k]
            exponent = Rational(-8 * h, step.of)
            power = f"2^{{{exponent.p}}}" if exponent.q == 1 else f"2^{{{exponent.p}/{exponent.q}}}"
            line = Line(name, Operand(format_number(slope, self.digits, known=None), slope))
            out.append(rf"{name} &= 2^{{-8 \cdot {h}/{step.of}}} = {power} {self.relation(line.relation == '=')} "
                       f"{line.result.text}")
            lines.append(line)
        self.checked_lines(lines)
        return self.align(out)

    def _print_BiasMatrix(self, step: BiasMatrix) -> str:
        name = _head("B", step.head)
        blocks = self.matrix_blocks(step.bias, self.width - 8)
        relation = self.relation(all(n.exact for n in self.numbers(step.bias)))
        return self.align([f"{name} &{relation} {blocks[0]}", *(rf"&\phantom{{{relation}}} {b}" for b in blocks[1:])])

    def _print_BiasedScores(self, step: BiasedScores) -> str:
        i, known, digits = step.query, step.known, self.digits
        scaled = step.scale.mode != "none"
        B = _head("B", step.head)
        divisor = None
        if scaled:
            divisor = Operand(Number(self.divisor(step.scale, step.d_k, step.divisor), exact=True), step.divisor)
        head = rf"a_{{j}} &= {self._alibi_fraction(step.scale, 's_{j}', step.divisor, step.d_k)} + {B}_{{ij}}"
        if step.scale.mode == "sqrt_d_k":
            head += rf", \qquad {self.scale_equation(step.d_k)}"
        out = [head]
        # a score's (and a scaled score's) exact decimal when it is short, else rounded as the line needs
        shown = [format_number(s, digits + GUARD_CAP, fraction=self.exact, known=known) for s in step.scores]
        fractions = [s / step.divisor for s in step.scores]
        shown_scaled = [format_number(f, digits + GUARD_CAP, known=known) for f in fractions]
        biases = [format_number(b, digits) for b in step.bias]

        def lines_at(places: int) -> list[Line]:
            lines = []
            for j, (score, fraction, b) in enumerate(zip(step.scores, fractions, step.bias, strict=True)):
                what = self.name(Name("a", step.tokens[j]))
                s = operand(score, shown[j] if shown[j].exact else format_number(score, digits, known=known),
                            places, known)
                a = self.result_operand(step.logits[j], known)
                if j == i:  # the diagonal: B_ii = 0
                    lines.append(Line(what, a, ((s,),), divisor))
                    continue
                bias = operand(b, biases[j], places)
                if scaled:
                    middle = operand(fraction, shown_scaled[j], places, known)
                    lines += [Line(rf"\frac{{s}}{{{divisor.text}}}", middle, ((s,),), divisor),
                              Line(what, a, ((middle,), (bias,)))]
                else:
                    lines.append(Line(what, a, ((s,), (bias,))))
            return lines

        lines = self.checked_lines(guarded(lines_at, digits))
        found = iter(lines)
        left = max(visible_width(self.name(Name("a", t))) for t in step.tokens)
        for j, token in enumerate(step.tokens):
            what = self.name(Name("a", token))
            if j > i:  # a future key: masked
                out.append(rf"{what} &= -\infty \qquad (j > i)")
                continue
            line = next(found)
            if j == i:
                pieces = [self.operation(line)[0] if scaled else line.terms[0][0].text, "+ 0",
                          f"{self.relation(line.relation == '=')} {line.result.text}"]
                out += self.continued(f"{what} &{self.relation(line.lead == '=')} ", pieces, self.width - left)
                continue
            if scaled:
                first, line = line, next(found)
                middle, bias = line.terms[0][0], line.terms[1][0]
                pieces = [self.operation(first)[0], f"- {bias.text[1:]}",
                          f"{self.relation(first.relation == '=')} {self.num(middle.number)}", f"- {bias.text[1:]}"]
                lead = all(o.exact for o in (*first.operands, bias))
            else:
                bias = line.terms[1][0]
                pieces = [line.terms[0][0].text, f"- {bias.text[1:]}"]
                lead = line.lead == "="
            pieces.append(f"{self.relation(line.relation == '=')} {line.result.text}")
            out += self.continued(f"{what} &{self.relation(lead)} ", pieces, self.width - left)
        logits = format_numbers(step.logits, digits, known=known)
        out += self.continued(f"a &{self.relation(all(n.exact for n in logits))} ", self.vector_pieces(list(logits)),
                              self.width - 6)
        return self.align(out) + self.guard_note(lines)

    def _print_AlibiMatrices(self, step: AlibiMatrices) -> str:
        fraction = self._alibi_fraction(step.scale, "S", step.divisor, step.d_k)
        transposed = f"{{{_head('K', step.head)}}}^{{\\top}}"  # {K^{(h)}}^⊤: one superscript each
        rows = [(f"{_head('S', step.head)} = {_head('Q', step.head)} {transposed}", step.scores),
                (f"{fraction} + {_head('B', step.head)}", step.logits),
                (rf"{_head('A', step.head)} = \operatorname{{softmax}}", step.weights),
                (f"{_head('Z', step.head)} = {_head('A', step.head)} {_head('V', step.head)}", step.output)]
        out = []
        for lead, values in rows:
            shown = Shown(values, uniform=False, known=step.known)
            relation = self.matrix_relation(shown, lead=lead)
            out += [f"{lead} {relation[0]}", *relation[1:]]
        return self.align(out)


# the printers this folder brings to every format's renderer (render/composed.py)
PRINTERS = (AlibiPrinters,)
