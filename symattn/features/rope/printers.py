"""The math of RoPE's steps (its steps.py), the same in every format: θ_i = base^(−2i/d), each token's angles with
the cos and sin of exact arguments and its rotated q and k entry by entry, and a query's scores written in m − n.
Every computed line is a render/lines.Line, checkable from the numbers it shows."""

from __future__ import annotations

from sympy import Expr, cos, pi, sin

from ...document.steps import Eq, Formula, Name, Phrase
from ...numbers.display import Number, format_number
from ...numbers.exact_latex import exact_latex
from ...typeset.layout import visible_width
from ...typeset.lines import GUARD_CAP, Line, Operand, guarded, operand
from ...typeset.math import contribute
from .steps import RelativeScores, RopeFigure, RopeFrequencies, RopeRotation

# the symbols this folder's steps and sentences name, added to render/math.py's tables
contribute(notation={
    "Qh": r"\hat{Q}",
    "Kh": r"\hat{K}",
    "qh": r"\hat{q}",
    "kh": r"\hat{k}",
    "phi0": r"\varphi_{0}",
}, formulas={
    "m_minus_n": "m - n",
    "pair_ab": r"(a,\ b)",
    "rope_half_dims": "i + d/2",
    "theta_i": r"\theta_{i}",
    "two_pi": r"2\pi",
    "rope_angle": r"\varphi_{i} = m\,\theta_{i}",
    "rope_rotation": r"(x_a,\ x_b) \mapsto (x_a \cos(\varphi_{i}) - x_b \sin(\varphi_{i}),\ x_a "
                     r"\sin(\varphi_{i}) + x_b \cos(\varphi_{i}))",
    "rope_theta": r"\theta_{i} = \mathit{base}^{-2i/d}",
    "rope_relative": r"\hat{q}_{m} \cdot \hat{k}_{n} = \sum_{i} \bigl[(q_a k_a + q_b k_b) "
                     r"\cos((m-n)\theta_{i}) + (q_a k_b - q_b k_a) \sin((m-n)\theta_{i})\bigr]",
})


def angle_latex(angle: Expr) -> str:
    """An exact angle as written inside cos(…): 2, \\tfrac{1}{50}, -1, or the exact form of an irrational one."""
    if angle.is_Rational:
        return format_number(angle, 0, fraction=True).text if not angle.is_Integer else str(int(angle))
    return exact_latex(angle, decimals=False).replace(r"\frac", r"\tfrac")  # text-size inside cos(…)


def trig_latex(function: str, angle: Expr) -> str:
    """cos(2), sin(\\tfrac{1}{50}), cos(-1): the function of an exact argument, always parenthesised (MathML
    sets "cos 2" as "cos2")."""
    return rf"\{function}({angle_latex(angle)})"


def negated(number: Number) -> Number:
    """The number with the opposite sign, as text (−sin φ of a line that subtracts x_b sin φ)."""
    text = number.text[1:] if number.text.startswith("-") else "-" + number.text
    return Number("0" if text in ("-0", "0") else text, number.exact)


class RopePrinter:
    """The printers of RoPE's steps; a mixin of printers.DerivationRenderer (it uses its align, numbers, num,
    continued and the guard machinery)."""

    def rope_matrix(self, step: RopeFigure) -> str:
        """One pair's rotation as the rotation matrix times the pair: exact cos and sin, the pair as shown, and the
        rotated pair (rounded, ≈, unless exact)."""
        a, b = step.pair
        name = self.name(step.rotated)
        c, s = trig_latex("cos", step.angle), trig_latex("sin", step.angle)
        opening, closing = self.matrix_frame(1)
        before = [format_number(v, self.digits, known=step.known) for v in step.before]
        after = [format_number(v, self.digits, known=step.known) for v in step.after]
        square_open, square_close = self.matrix_frame(2)

        def column(texts: list[str]) -> str:
            return opening + " \\\\ ".join(texts) + closing

        rotation = f"{square_open}{c} & -{s} \\\\ {s} & {c}{square_close}"
        relation = self.relation(all(n.exact for n in after))
        return self.display(f"{column([f'{{[{name}]_{{{a}}}}}', f'{{[{name}]_{{{b}}}}}'])} = {rotation}"
                            f"{column([n.text for n in before])} {relation} {column([n.text for n in after])}")

    def _print_RopeFigure(self, step: RopeFigure) -> str:
        """Without pictures (Markdown): the rotation as a matrix product; LaTeX and HTML draw it too."""
        return self.rope_matrix(step)

    def rope_caption(self, step: RopeFigure) -> str:
        """The caption of the drawn rotation (a drawing only: the sentence before it introduces the matrix)."""
        modulo = Phrase("rope.modulo", (("two_pi", Formula("two_pi")),)) if step.angle >= 2 * pi else ""
        return self.text("rope.figure", {"x": step.name, "xh": step.rotated, "m": Eq(Name("m"), step.position),
                                         "ab": f"({step.pair[0]}, {step.pair[1]})",
                                         "phi": Eq(Name("phi0"), step.position), "modulo": modulo})

    def _print_RopeFrequencies(self, step: RopeFrequencies) -> str:
        base = format_number(step.base, self.digits + GUARD_CAP, fraction=True).text
        base = base if step.base.is_Integer else rf"\left({base}\right)"
        lines = []
        for i, theta in enumerate(step.thetas):
            exact = angle_latex(theta)
            number = format_number(theta, self.digits, known=None)
            tail = "" if number.text == exact else f" {self.relation(number.exact)} {number.text}"
            lines.append(rf"\theta_{{{i}}} &= {base}^{{-2 \cdot {i}/{step.d}}} = {exact}{tail}")
        return self.align(lines)

    def _print_RopeRotation(self, step: RopeRotation) -> str:
        if step.position == 0:  # every angle is 0: cos 0 = 1, sin 0 = 0, and each vector stays as it is
            last = len(step.angles) - 1
            angles = " = ".join([r"\varphi_{0}", *([r"\dots"] if last > 1 else []), *([rf"\varphi_{{{last}}}"]
                                                                                   if last else []), "0"])
            out = [rf"&{angles}, \quad \cos(0) = 1, \quad \sin(0) = 0"]
            for rotated_name, name, row, _ in step.vectors:
                out += self.continued(f"{self.name(rotated_name)} &= {self.name(name)} = ",
                                      self.vector_pieces(list(self.numbers(row))), self.width - 12)
            return self.align(out)
        cosines = [cos(phi) for phi in step.angles]
        sines = [sin(phi) for phi in step.angles]
        plain = [self.numbers(vector[2]) for vector in step.vectors]
        results = [self.numbers(vector[3]) for vector in step.vectors]
        trig: list[tuple[Number, Number]] = []  # each pair's cos and sin as the lines show them

        def lines_at(places: int) -> list[Line]:
            trig[:] = [(operand(c, format_number(c, self.digits), places).number,
                        operand(s, format_number(s, self.digits), places).number)
                       for c, s in zip(cosines, sines, strict=True)]
            out = []
            for (name, _, row, rotated), x, shown in zip(step.vectors, plain, results, strict=True):
                xs = [operand(v, n, places, row.known) for v, n in zip(row.entries, x, strict=True)]
                entries = [None] * len(xs)
                for i, (a, b) in enumerate(step.pairs):
                    c = Operand(trig[i][0], cosines[i])
                    s = Operand(trig[i][1], sines[i])
                    minus_s = Operand(negated(trig[i][1]), -sines[i])
                    entries[a] = Line(self.name(name), Operand(shown[a], rotated.entries[a]),
                                      ((xs[a], c), (xs[b], minus_s)))
                    entries[b] = Line(self.name(name), Operand(shown[b], rotated.entries[b]), ((xs[a], s), (xs[b], c)))
                out += entries
            return out

        lines = self.checked_lines(guarded(lines_at, self.digits))
        out = []
        for i, (phi, theta) in enumerate(zip(step.angles, step.thetas, strict=True)):
            c, s = trig[i]
            out.append(rf"\varphi_{{{i}}} &= {step.position} \cdot {angle_latex(theta)} = {angle_latex(phi)}"
                       rf", \quad {trig_latex('cos', phi)} {self.relation(c.exact)} {c.text}"
                       rf", \quad {trig_latex('sin', phi)} {self.relation(s.exact)} {s.text}")
        d = len(step.pairs) * 2
        for v, (name, _, _, _) in enumerate(step.vectors):
            mine = lines[v * d:(v + 1) * d]
            firsts = {a for a, _ in step.pairs}
            pieces = []
            for e, line in enumerate(mine):
                (xa, first), (xb, second) = line.terms
                if e in firsts:  # x_a cos φ − x_b sin φ
                    sine = negated(second.number)
                    text = (f"{self.num(xa.number, True)} \\cdot {self.num(first.number, True)} - "
                            f"{self.num(xb.number, True)} \\cdot {self.num(sine, True)}")
                else:  # x_a sin φ + x_b cos φ (x_a here is the pair's first entry)
                    text = (f"{self.num(xa.number, True)} \\cdot {self.num(first.number, True)} + "
                            f"{self.num(xb.number, True)} \\cdot {self.num(second.number, True)}")
                pieces.append(("[" if e == 0 else "") + text + ("]" if e == d - 1 else r",\quad"))
            lead = all(line.lead == "=" for line in mine)
            head = f"{self.name(name)} &{self.relation(lead)} "
            if visible_width(" ".join(pieces)) <= self.width - visible_width(head) - 4:
                out.append(head + " ".join(pieces))
            else:  # one entry per line
                out += [(head if e == 0 else r"&\phantom{{}={}[} ") + piece for e, piece in enumerate(pieces)]
            exact = all(line.relation == "=" for line in mine)
            out += self.continued(f"&{self.relation(exact)} ", self.vector_pieces([ln.result.number for ln in mine]),
                                  self.width - 4)
        return self.align(out) + self.guard_note(lines)

    def _print_RelativeScores(self, step: RelativeScores) -> str:
        q = self.numbers(step.query)
        keys = [self.numbers(k) for k in step.keys]
        exact_inputs = all(n.exact for n in q) and all(n.exact for k in keys for n in k)
        deltas = [step.position - n for n in step.key_positions]
        # each key's coefficients q_a k_a + q_b k_b and q_a k_b − q_b k_a, exact, and each pair's angle (m − n)θ_i
        coefficients = [[(step.query.entries[a] * k.entries[a] + step.query.entries[b] * k.entries[b],
                          step.query.entries[a] * k.entries[b] - step.query.entries[b] * k.entries[a])
                         for a, b in step.pairs] for k in step.keys]
        arguments = [[delta * theta for theta in step.thetas] for delta in deltas]

        def coefficient(value: Expr) -> Operand:
            return Operand(format_number(value, self.digits + GUARD_CAP, fraction=True), value)

        def lines_at(places: int) -> list[Line]:
            out = []
            for key_name, pairs, args, score in zip(step.key_names, coefficients, arguments, step.scores,
                                                    strict=True):
                terms = []
                for (A, B), phi in zip(pairs, args, strict=True):
                    terms += [(coefficient(A), operand(cos(phi), format_number(cos(phi), self.digits), places)),
                              (coefficient(B), operand(sin(phi), format_number(sin(phi), self.digits), places))]
                out.append(Line(f"{self.name(step.query_name)} \\cdot {self.name(key_name)}",
                                self.result_operand(score, step.known), tuple(terms)))
            return out

        lines = self.checked_lines(guarded(lines_at, self.digits))
        out = []
        for j, line in enumerate(lines):
            n = step.key_positions[j]
            out.append(rf"m - n &= {step.position} - {n} = {deltas[j]}")
            lead = f"{line.what} &= "
            if exact_inputs:  # the coefficients from the numbers of q and k
                pieces = []
                for i, ((a, b), phi) in enumerate(zip(step.pairs, arguments[j], strict=True)):
                    qa, qb, ka, kb = (self.num(x, True) for x in (q[a], q[b], keys[j][a], keys[j][b]))
                    pieces += [("" if i == 0 else "+ ") + rf"({qa} \cdot {ka} + {qb} \cdot {kb})"
                               + trig_latex("cos", phi),
                               rf"+ ({qa} \cdot {kb} - {qb} \cdot {ka})" + trig_latex("sin", phi)]
                out += self.continued(lead, pieces, self.width - visible_width(line.what) - 6)
                lead = "&= "
            pieces = []
            for i, phi in enumerate(arguments[j]):
                for t, function in ((2 * i, "cos"), (2 * i + 1, "sin")):
                    text = line.terms[t][0].text
                    sign = "- " if text.startswith("-") else ("" if t == 0 else "+ ")
                    pieces.append(f"{sign}{text.lstrip('-')} {trig_latex(function, phi)}")
            out += self.continued(lead, pieces, self.width - visible_width(line.what) - 6)
            relation = self.relation(line.lead == "=")
            out += self.continued(f"&{relation} ", [*self.operation(line),
                                                    f"{self.relation(line.relation == '=')} {line.result.text}"],
                                  self.width - 6)
        return self.align(out) + self.guard_note(lines)


# the printers this folder brings to every format's renderer (render/composed.py)
PRINTERS = (RopePrinter,)
