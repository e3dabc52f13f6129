"""The printers of the online softmax (features/online_softmax), the same math in every format: each block's
running maximum, its factors e^{x}, the running sum ℓ and the partial output o, then z = o/ℓ beside the direct
softmax's weights. Every sum is a checkable Line."""

from __future__ import annotations

from sympy import S

from ...document.steps import Name
from ...numbers.display import format_number, format_numbers
from ...typeset.lines import Line, Operand, exponent_shown, guarded, operand
from ...typeset.math import MathRenderer, contribute
from .steps import OnlineBlock, OnlineResult

# the symbols this folder's steps and sentences name, added to render/math.py's tables
contribute(formulas={
    "online_nn": r"n \times n",
    "online_m": "m^{(b)}",
    "online_l": r"\ell^{(b)}",
    "online_o": "o^{(b)}",
    "online_term": "e^{a_{j} - m^{(b)}}",
    "online_start": r"m^{(0)} = -\infty,\ \ell^{(0)} = 0,\ o^{(0)} = 0",
    "online_one": "e^{m^{(b-1)} - m^{(b)}} = e^{0} = 1",
    "online_factor": "e^{m^{(b-1)} - m^{(b)}}",
    "online_identity": r"\ell^{(B)} = e^{-m^{(B)}} Z,\ o^{(B)} = e^{-m^{(B)}} \sum_{j} e^{a_{j}} v_{j}",
    "online_split": "e^{a_{j} - m} = e^{a_{j}} e^{-m}",
})


class OnlinePrinters(MathRenderer):
    """The online softmax's steps; DerivationRenderer, and so every format, inherits them."""

    def _print_OnlineBlock(self, step: OnlineBlock) -> str:
        b, known, digits = step.number, step.known, self.digits
        m, m_prev, ell, ell_prev = f"m^{{({b})}}", f"m^{{({b - 1})}}", rf"\ell^{{({b})}}", rf"\ell^{{({b - 1})}}"
        o, o_prev = f"o^{{({b})}}", f"o^{{({b - 1})}}"
        a = [self.name(Name("a", t)) for t in step.tokens]
        v = [self.name(Name("v", t)) for t in step.tokens]
        rescaled = step.rescale is not None
        # the running maximum: the largest of the numbers shown is the maximum shown (rounding keeps the order)
        names = [m_prev] * rescaled + a
        shown = [format_number(x, digits, known=known) for x in [step.previous] * rescaled + list(step.logits)]
        top = format_number(step.maximum, digits, known=known)
        out = [rf"{m} &= \max({', '.join(names)}) {self.relation(all(n.exact for n in shown))} "
               rf"\max({', '.join(n.text for n in shown)}) = {top.text}"]
        # the factors e^{x}: the rescaling of what came before, then each key's e^{a_j − m}
        factors = [(f"e^{{{m_prev} - {m}}}", step.rescale, step.previous - step.maximum)] * rescaled
        factors += [(f"e^{{{a_j} - {m}}}", e, logit - step.maximum)
                    for a_j, e, logit in zip(a, step.exps, step.logits, strict=True)]
        defaults = [format_number(e, digits, known=known) for _, e, _ in factors]
        visible = [j for j, e in enumerate(step.exps) if e is not S.Zero]
        values = [self.numbers(row) for row in step.values]
        ops: list[Operand] = []

        def lines_at(places: int) -> list[Line]:
            ops[:] = [operand(e, n, places, known) for (_, e, _), n in zip(factors, defaults, strict=True)]
            keys = ops[rescaled:]
            rescale = [ops[0]] if rescaled else []

            def before(value):
                return Operand(format_number(value, places, known=known), value)

            lines = [Line(ell, self.result_operand(step.total, known),
                          tuple([(*rescale, before(step.previous_total))] * rescaled + [(keys[j],) for j in visible]))]
            for c, (value, previous) in enumerate(zip(step.partial, step.previous_partial, strict=True)):
                terms = [(*rescale, before(previous))] * rescaled
                terms += [(keys[j], operand(step.values[j].entries[c], values[j][c], places, step.values[j].known))
                          for j in visible]
                lines.append(Line(f"{o}_{{{c + 1}}}", self.result_operand(value, known), tuple(terms)))
            return lines

        if not visible:  # every key masked: e^{−∞} = 0 adds nothing, m, ℓ and o stay as they were
            out += [rf"{what} &= e^{{-\infty}} = 0" for what, _, _ in factors[rescaled:]]
            total = format_number(step.total, digits, known=known)
            partial = format_numbers(step.partial, digits, known=known)
            out.append(rf"{ell} &= {ell_prev} {self.relation(total.exact)} {total.text}")
            out += self.continued(f"{o} &= {o_prev} {self.relation(all(n.exact for n in partial))} ",
                                  self.vector_pieces(list(partial)), self.width - 12)
            return self.align(out)
        lines = self.checked_lines(guarded(lines_at, digits))
        for (what, e, exponent), op in zip(factors, ops, strict=True):
            if e is S.Zero:
                out.append(rf"{what} &= e^{{-\infty}} = 0")
            elif e is S.One:
                out.append(rf"{what} &= e^{{0}} = 1")
            else:
                power = exponent_shown(exponent, op.text, digits, known)
                middle = "" if power is None else rf"{self.relation(power.exact)} e^{{{power.text}}} "
                out.append(rf"{what} &{middle}{self.relation(op.exact)} {op.text}")
        lead = rf"e^{{{m_prev} - {m}}}\, " if rescaled else ""
        out += self.continued(f"{ell} &= ", [f"{lead}{ell_prev}"] * rescaled + [
            f"+ e^{{{a[j]} - {m}}}" if k or rescaled else f"e^{{{a[j]} - {m}}}" for k, j in enumerate(visible)]
            or ["0"], self.width - 8)
        out += self._online_lines(lines[:1], named=False)
        out += self.continued(f"{o} &= ", [f"{lead}{o_prev}"] * rescaled + [
            f"+ e^{{{a[j]} - {m}}}\\, {v[j]}" if k or rescaled else f"e^{{{a[j]} - {m}}}\\, {v[j]}"
            for k, j in enumerate(visible)] or ["0"], self.width - 8)
        out += self._online_lines(lines[1:])
        partial = list(format_numbers(step.partial, digits, known=known))
        out += self.continued(f"{o} &{self.relation(all(n.exact for n in partial))} ", self.vector_pieces(partial),
                              self.width - 6)
        return self.align(out) + self.guard_note(lines)

    def _online_lines(self, lines: list[Line], named: bool = True) -> list[str]:
        """Each line's operands and result, `what ≈ a · b + c ≈ result` (an empty sum: 0); named=False: under the
        line that names it."""
        out = []
        for line in lines:
            what = line.what if named else ""
            result = f"{self.relation(line.relation == '=')} {line.result.text}"
            if self.exact and r"\approx" in line.result.text:  # the exact form, then its decimal
                out.append(f"{what} &= {line.result.text}")
                continue
            if not line.terms or (not named and len(line.terms) == 1 and len(line.terms[0]) == 1):
                out.append(f"{what} &{result}")  # nothing to add up: the value itself
                continue
            out += self.continued(f"{what} &{self.relation(line.lead == '=')} ",
                                  [*self.operation(line), result], self.width - 12)
        return out

    def _print_OnlineResult(self, step: OnlineResult) -> str:
        known, B = step.known, step.count
        ell = rf"\ell^{{({B})}}"

        def lines_at(places: int) -> list[Line]:
            total = Operand(format_number(step.total, places, known=known), step.total)
            return [Line(rf"z_{{{c + 1}}} = \frac{{o^{{({B})}}_{{{c + 1}}}}}{{{ell}}}", self.result_operand(z, known),
                         ((Operand(format_number(o, places, known=known), o),),), total)
                    for c, (o, z) in enumerate(zip(step.partial, step.output, strict=True))]

        lines = self.checked_lines(guarded(lines_at, self.digits))
        out = []
        for line in lines:
            if self.exact and r"\approx" in line.result.text:  # z = its exact form ≈ the decimal
                out.append(f"{line.what} &= {line.result.text}")
                continue
            out += self.fitted(f"{line.what} &{self.relation(line.lead == '=')} {self.operation(line)[0]}",
                               f"{self.relation(line.relation == '=')} {line.result.text}")
        result = list(format_numbers(step.output, self.digits, known=known))
        out += self.continued(f"z &{self.relation(all(n.exact for n in result))} ", self.vector_pieces(result),
                              self.width - 6)
        weights = format_numbers(step.weights, self.digits, known=known)
        out += self.continued(r"w &= \operatorname{softmax}(a) " + f"{self.relation(all(n.exact for n in weights))} ",
                              self.vector_pieces(list(weights)), self.width - 12)
        out.append(rf"\sum_{{j}} w_{{j}}\, v_{{j}} &= \frac{{o^{{({B})}}}}{{{ell}}} = z")
        return self.align(out) + self.guard_note(lines)


# the printers this folder brings to every format's renderer (render/composed.py)
PRINTERS = (OnlinePrinters,)
