"""The math of the norm steps (its steps.py), the same in every format: the residual sum, the mean and deviations,
the variance, σ² + ε and its square root (exact beside its decimals), the normalised row (its exact surds beside
its decimals) and the scale and shift. Every sum and quotient is a render/lines.Line, checkable from the numbers
shown; the square root's line is checked here (root_checks)."""

from __future__ import annotations

from fractions import Fraction
from math import isqrt

from sympy import Expr, S

from ...document.steps import Name
from ...features.rope.printers import negated
from ...numbers.decimals import decimal_places
from ...numbers.display import Number, format_number
from ...numbers.exact_latex import exact_latex, shifted_surd_latex
from ...typeset.layout import EXACT_MARGIN, visible_width
from ...typeset.lines import GUARD_CAP, Line, Operand, decimals_shown, guarded, operand, shown_value
from ...typeset.math import MathRenderer, contribute
from .steps import NormAffine, NormMean, NormNormalised, NormScalars, NormSettings, NormStep, NormSum, NormVariance

# The widest exact fraction a line writes under --exact (\tfrac{1291321339}{1600000000}); a longer one is written
# rounded. A student's display (no --exact) writes only short ones (13/6) and short surds (√3/3): decimals otherwise.
LONGEST_FRACTION = 40
SHORT_EXACT = 8

_LAYER = r"\frac{$v - \mu_{t}}{\sqrt{\sigma_{t}^{2} + \varepsilon}} \odot \gamma + \beta"
_RMS = r"\frac{$v}{\sqrt{\overline{$v^{2}} + \varepsilon}} \odot \gamma"
# the symbols this folder's steps and sentences name, added to render/math.py's tables
contribute(notation={"d": "d", "u": "u", "uh": r"\hat{u}", "xh": r"\hat{x}", "o": "o", "mu": r"\mu", "gamma": r"\gamma",
                     "beta": r"\beta", "eps": r"\varepsilon", "var_layer": r"\sigma^{2}",
                     "var_rms": r"\overline{x^{2}}", "var_rms_u": r"\overline{u^{2}}"}, formulas={
    "d_minus_1": "d - 1",
    "norm_layer_u": "o_{t} = " + _LAYER.replace("$v", "u_{t}") + r",\ u_{t} = x_{t} + y_{t}",
    "norm_layer_x": "o_{t} = " + _LAYER.replace("$v", "x_{t}"),
    "norm_rms_u": "o_{t} = " + _RMS.replace("$v", "u_{t}") + r",\ u_{t} = x_{t} + y_{t}",
    "norm_rms_x": "o_{t} = " + _RMS.replace("$v", "x_{t}"),
})


def round_root(x: Fraction, places: int) -> Fraction:
    """√x (x ≥ 0) rounded half-up to `places` decimals, exactly (from squares: no root is evaluated)."""
    square = x * 10 ** (2 * places)
    whole = isqrt(square.numerator // square.denominator)
    if square >= (whole + Fraction(1, 2)) ** 2:
        whole += 1
    return Fraction(whole, 10**places)


def root_checks(radicand: Number, root: Number) -> bool:
    """Whether the root as shown is √(the radicand as shown): exactly, or rounded half-up to its decimals."""
    r, s = shown_value(Operand(radicand, None)), shown_value(Operand(root, None))
    if r is None or s is None:
        return True
    if root.exact:
        return s >= 0 and s * s == r
    return round_root(r, decimals_shown(root.text)) == s


def exact_number(value: Expr) -> Number:
    """A rational exactly: its decimal (ε = 0.00001), or a fraction when its decimals do not end."""
    return format_number(value, 0, fraction=True, exact_up_to=decimal_places(value) or 0)


class NormPrinter(MathRenderer):
    """The printers of the norm steps; DerivationRenderer, and so every format, inherits them."""

    def norm_names(self, step: NormStep) -> dict[str, str]:
        """The LaTeX of the step's names: the row (u_t or x_t), its normalised row, μ_t, the variance, the output."""
        base = "u" if step.residual else "x"
        sub = self.subscript_word(step.token)
        row = self.name(Name(base, step.token))
        variance = rf"\sigma^{{2}}_{{{sub}}}" if step.norm == "layer" else rf"\overline{{{base}^{{2}}}}_{{{sub}}}"
        return {"row": row, "hat": self.name(Name(base + "h", step.token)), "mu": rf"\mu_{{{sub}}}",
                "var": variance, "out": self.name(Name("o", step.token))}

    def bracketed(self, texts: list[str]) -> list[str]:
        """[a, b, c] of formulas (an entry's operation, its exact form) as pieces that wrap after a comma."""
        return self.vector_pieces([Number(text, True) for text in texts])

    def exact_or_rounded(self, value: Expr, known, decimals: int = 0) -> Number:
        """A computed value as the lines use it: a rational exactly (its decimal when it ends within the guard
        decimals, else \\tfrac{p}{q} when that is short), anything else rounded to the stage's decimals (a long
        exact value, such as one computed from a 90-digit carry, is rounded with the guard decimals, ≈)."""
        if value.is_Rational:
            places = decimal_places(value)
            if places is not None and places <= self.digits + GUARD_CAP:
                return format_number(value, self.digits, decimals, exact_up_to=places)
            fraction = format_number(value, self.digits, fraction=True)
            if visible_width(fraction.text) <= self.longest_exact():
                return fraction
            return format_number(value, self.digits, decimals)
        return format_number(value, self.digits, known=known)

    def longest_exact(self) -> int:
        """The widest exact form a line writes: long ones only when the lecturer asks for --exact."""
        return LONGEST_FRACTION if self.exact else SHORT_EXACT

    def fraction(self, number: Number) -> bool:
        return "frac" in number.text

    def scalar_tail(self, line: Line, known) -> str:
        """What follows a scalar's line: its relation and value, a fraction followed by its decimal."""
        tail = f"{self.relation(line.relation == '=')} {line.result.text}"
        if self.fraction(line.result.number):
            tail += rf" \approx {format_number(line.result.value, self.digits, known=known).text}"
        return tail

    def entries_lines(self, head: str, texts: list[str], lines: list[Line], known=None) -> list[str]:
        """'head &= [the entries' operations]' then '&= [the results]' (relations from the lines), and their
        decimals when some result is a fraction."""
        out = self.continued(f"{head} &{self.relation(all(ln.lead == '=' for ln in lines))} ", self.bracketed(texts),
                             self.width - 4 - visible_width(head))
        out += self.continued(f"&{self.relation(all(ln.relation == '=' for ln in lines))} ",
                              self.vector_pieces([ln.result.number for ln in lines]), self.width - 4)
        if any(self.fraction(ln.result.number) for ln in lines):
            decimals = [format_number(ln.result.value, self.digits, known=known) for ln in lines]
            out += self.continued(f"&{self.relation(all(n.exact for n in decimals))} ", self.vector_pieces(decimals),
                                  self.width - 4)
        return out

    def _print_NormSettings(self, step: NormSettings) -> str:
        eps = exact_number(step.eps).text
        places = decimal_places(step.eps)
        power = rf" = 10^{{-{places}}}" if places and step.eps * 10**places == 1 else ""
        return self.display(rf"\varepsilon = {eps}{power}, \quad d = {step.d}")

    def _print_NormSum(self, step: NormSum) -> str:
        n = self.norm_names(step)
        xs, ys, totals = self.numbers(step.x), self.numbers(step.y), self.numbers(step.total)

        def lines_at(places: int) -> list[Line]:
            return [Line(n["row"], Operand(total, t), ((operand(x, xn, places, step.known),),
                                                          (operand(y, yn, places, step.known),)))
                    for x, y, t, xn, yn, total in zip(step.x.entries, step.y.entries, step.total.entries, xs, ys,
                                                      totals, strict=True)]

        lines = self.checked_lines(guarded(lines_at, self.digits))
        texts = [f"{a.text} + {self.num(b.number, True)}" for line in lines for (a,), (b,) in [line.terms]]
        x, y = self.name(Name("x", step.token)), self.name(Name("y", step.token))
        return self.align([f"{n['row']} &= {x} + {y}", *self.entries_lines("", texts, lines)]) + self.guard_note(lines)

    def _print_NormMean(self, step: NormMean) -> str:
        n = self.norm_names(step)
        d = len(step.row.entries)
        row = self.numbers(step.row)
        mean = Operand(self.exact_or_rounded(step.mean, step.known), step.mean)
        divisor = Operand(Number(str(d), True), d)
        mean_line = self.checked_lines(guarded(lambda p: [Line(n["mu"], mean, tuple(
            (operand(v, shown, p, step.known),) for v, shown in zip(step.row.entries, row, strict=True)),
            divisor)], self.digits))[0]
        centred = self.centred_numbers(step.centred, step.known)

        def lines_at(places: int) -> list[Line]:
            mu = operand(step.mean, mean.number, places, step.known)
            minus = Operand(negated(mu.number), -step.mean)
            return [Line(rf"{n['row']} - {n['mu']}", Operand(c, value), ((operand(v, shown, places, step.known),),
                                                                          (minus,)))
                    for v, shown, value, c in zip(step.row.entries, row, step.centred.entries, centred, strict=True)]

        lines = self.checked_lines(guarded(lines_at, self.digits))
        pieces = self.mean_pieces(d, [o.text for (o,) in mean_line.terms])
        out = [rf"{n['mu']} &= \frac{{1}}{{{d}}} \sum_{{i}} [{n['row']}]_{{i}}"]
        out += self.continued(f"&{self.relation(mean_line.lead == '=')} ", pieces, self.width - 4)
        out.append(f"&{self.scalar_tail(mean_line, step.known)}")
        texts = [f"{a.text} - {self.num(negated(b.number), True)}" for line in lines for (a,), (b,) in [line.terms]]
        out += self.entries_lines(rf"{n['row']} - {n['mu']}", texts, lines, step.known)
        return self.align(out) + self.guard_note([mean_line, *lines])

    def centred_numbers(self, centred, known) -> list[Number]:
        """The deviations (RMSNorm: the entries) as the lines show them, the same in every step."""
        return [self.exact_or_rounded(c, known, centred.decimals) for c in centred.entries]

    def mean_pieces(self, d: int, terms: list[str]) -> list[str]:
        """\\frac{1}{d}(a + b + …) as pieces that wrap."""
        pieces = [rf"\frac{{1}}{{{d}}}({terms[0]}", *[f"+ ({t})" if t.startswith("-") else f"+ {t}" for t in terms[1:]]]
        pieces[-1] += ")"
        return pieces

    def _print_NormVariance(self, step: NormVariance) -> str:
        n = self.norm_names(step)
        d = len(step.centred.entries)
        centred = self.centred_numbers(step.centred, step.known)
        variance = Operand(self.exact_or_rounded(step.variance, step.known), step.variance)
        radicand = Operand(self.exact_or_rounded(step.radicand, step.known), step.radicand)
        eps = Operand(exact_number(step.eps), step.eps)
        divisor = Operand(Number(str(d), True), d)

        def lines_at(places: int) -> list[Line]:
            squares = tuple((c, c) for c in (operand(v, shown, places, step.known)
                                             for v, shown in zip(step.centred.entries, centred, strict=True)))
            return [Line(n["var"], variance, squares, divisor),
                    Line(rf"{n['var']} + \varepsilon", radicand,
                         ((operand(step.variance, variance.number, places, step.known),), (eps,)))]

        square_line, sum_line = self.checked_lines(guarded(lines_at, self.digits))
        squares = [f"({a.text})^{{2}}" if a.number.needs_parentheses or self.fraction(a.number) else f"{a.text}^{{2}}"
                   for a, _ in square_line.terms]
        what = "(" + rf"[{n['row']}]_{{i}} - {n['mu']}" + ")" if step.norm == "layer" else rf"[{n['row']}]_{{i}}"
        out = [rf"{n['var']} &= \frac{{1}}{{{d}}} \sum_{{i}} {what}^{{2}}"]
        out += self.continued(f"&{self.relation(square_line.lead == '=')} ", self.mean_pieces(d, squares),
                              self.width - 4)
        out.append(f"&{self.scalar_tail(square_line, step.known)}")
        (v,), (e,) = sum_line.terms
        out.append(rf"{n['var']} + \varepsilon &{self.relation(sum_line.lead == '=')} {v.text} + {e.text} "
                   rf"{self.scalar_tail(sum_line, step.known)}")
        out += self.root_lines(step, n, radicand.number)
        return self.align(out) + self.guard_note([square_line, sum_line])

    def root_lines(self, step: NormVariance, n: dict[str, str], radicand: Number) -> list[str]:
        """√(σ² + ε): exactly (the surd) when it is short, and in decimals from the radicand shown with the
        decimals the root needs to check."""
        root = rf"\sqrt{{{n['var']} + \varepsilon}}"
        std = format_number(step.std, self.digits, known=step.known)
        if std.exact:
            return [rf"{root} &= \sqrt{{{radicand.text}}} = {std.text}"]
        exact_root = exact_latex(step.std, decimals=False)
        out = [f"{root} &"]
        if (radicand.exact and visible_width(radicand.text + exact_root) <= self.width - EXACT_MARGIN
                and visible_width(exact_root) <= self.longest_exact()):
            out[0] += rf"= \sqrt{{{radicand.text}}} = {exact_root}"
            if not self.fraction(radicand):
                out[0] += rf" \approx {std.text}"
                return out
            out.append("&")
        for places in range(self.digits, self.digits + GUARD_CAP + 1):
            shown = format_number(step.radicand, places, known=step.known)
            if root_checks(shown, std):
                break
        out[-1] += rf"{self.relation(shown.exact)} \sqrt{{{shown.text}}} \approx {std.text}"
        return out

    def _print_NormNormalised(self, step: NormNormalised) -> str:
        n = self.norm_names(step)
        # the deviations in decimals (a fraction over a decimal root would be hard to check)
        centred = [number if not self.fraction(number) else format_number(c, self.digits, known=step.known)
                   for c, number in zip(step.centred.entries, self.centred_numbers(step.centred, step.known),
                                        strict=True)]
        results = self.numbers(step.normalised)
        std = format_number(step.std, self.digits, known=step.known)

        def lines_at(places: int) -> list[Line]:
            s = operand(step.std, std, places, step.known)
            return [Line(n["hat"], Operand(r, value), ((operand(c, shown, places, step.known),),), s)
                    for c, shown, value, r in zip(step.centred.entries, centred, step.normalised.entries, results,
                                                  strict=True)]

        lines = self.checked_lines(guarded(lines_at, self.digits))
        numerator = rf"{n['row']} - {n['mu']}" if step.norm == "layer" else n["row"]
        out = [rf"{n['hat']} &= \frac{{{numerator}}}{{\sqrt{{{n['var']} + \varepsilon}}}}"]
        exact = ([exact_latex(v, decimals=False) for v in step.normalised.entries] if step.coefficients is None
                 else [shifted_surd_latex(S.Zero, a, step.root) for a in step.coefficients])
        if (not all(r.exact for r in results) and max(map(visible_width, exact)) <= self.width - EXACT_MARGIN
                and (self.exact or max(map(visible_width, exact)) <= SHORT_EXACT)):
            out += self.continued("&= ", self.bracketed(exact), self.width - 4)  # the surds, beside the decimals
        texts = [rf"\frac{{{a.text}}}{{{line.divisor.text}}}" for line in lines for (a,), in [line.terms]]
        out += self.entries_lines("", texts, lines)
        return self.align(out) + self.guard_note(lines)

    def _print_NormAffine(self, step: NormAffine) -> str:
        n = self.norm_names(step)
        normalised = self.numbers(step.normalised)
        gammas = self.numbers(step.gamma) if step.gamma is not None else None
        betas = self.numbers(step.beta) if step.beta is not None else None
        outputs = self.numbers(step.output)

        def lines_at(places: int) -> list[Line]:
            out = []
            for i, (value, shown) in enumerate(zip(step.normalised.entries, normalised, strict=True)):
                term = (operand(value, shown, places, step.known),)
                if gammas is not None:
                    term = (Operand(gammas[i], step.gamma.entries[i]), *term)
                terms = (term, (Operand(betas[i], step.beta.entries[i]),)) if betas is not None else (term,)
                out.append(Line(n["out"], Operand(outputs[i], step.output.entries[i]), terms))
            return out

        lines = self.checked_lines(guarded(lines_at, self.digits))
        texts = []
        for line in lines:
            text = r" \cdot ".join(self.num(o.number, len(line.terms[0]) > 1) for o in line.terms[0])
            if betas is not None:
                text += f" + {self.num(line.terms[1][0].number, True)}"
            texts.append(text)
        formula = (r"\gamma \odot " if gammas is not None else "") + n["hat"] + (r" + \beta" if betas is not None
                                                                                  else "")
        return self.align([f"{n['out']} &= {formula}", *self.entries_lines("", texts, lines)]) + self.guard_note(lines)

    def _print_NormScalars(self, step: NormScalars) -> str:
        base = "u" if step.residual else "x"
        variance = r"\sigma_{t}^{2}" if step.norm == "layer" else rf"\overline{{{base}_{{t}}^{{2}}}}"
        latex = {"mean": r"\mu_{t}", "variance": variance, "std": rf"\sqrt{{{variance} + \varepsilon}}"}
        header = [self.text("table.token"), *(self.inline(latex[q]) for q in step.quantities)]
        columns = [[self.inline(format_number(v, self.digits, known=step.known).text) for v in column]
                   for column in step.columns]
        return self.table(header, [self.token(t) for t in step.tokens], columns)


# the printers this folder brings to every format's renderer (render/composed.py)
PRINTERS = (NormPrinter,)
