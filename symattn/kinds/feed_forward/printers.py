"""The printers of the feed-forward network (the feed-forward kind), the same math in every format: its formula, a
bias term in a row-times-matrix line, and the activation entry by entry. An irrational activation's argument is
shown with as many decimals as its line needs for φ(shown argument) to round to the value shown."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import mpmath

from ...document.steps import Name, RowTimesMatrix
from ...numbers.display import Number, format_number
from ...typeset.lines import GUARD_CAP, Line, Operand, decimals_shown, exact_zeros, shown_value
from ...typeset.math import MathRenderer, contribute
from .engine import GELU_TANH_CUBIC, activation_number
from .steps import ActivationStep, FeedForwardFormula

# φ's name and definition, as LaTeX (h the argument)
_NAMES = {"relu": r"\operatorname{ReLU}", "gelu": r"\operatorname{GELU}", "gelu_tanh": r"\operatorname{GELU}_{\tanh}",
          "silu": r"\operatorname{SiLU}", "swiglu": r"\operatorname{SiLU}"}
_CUBIC = "0.044715"
assert Fraction(_CUBIC) == Fraction(int(GELU_TANH_CUBIC.p), int(GELU_TANH_CUBIC.q))

# the symbols this folder's steps and sentences name, added to render/math.py's tables
contribute(notation={
    "W_1": "W_1",
    "W_2": "W_2",
    "W_3": "W_3",
    "b_1": "b_1",
    "b_2": "b_2",
    "b_3": "b_3",
    "g": "g",
    "u": "u",
    "f": "f",
})


def _definition(activation: str, h: str) -> str:
    """φ(h) written out for the argument h as LaTeX."""
    if activation == "relu":
        return rf"\max(0,\ {h})"
    if activation == "gelu":
        return rf"\frac{{{h}}}{{2}}\Bigl(1 + \operatorname{{erf}}\bigl({h}/\sqrt{{2}}\bigr)\Bigr)"
    if activation == "gelu_tanh":
        return (rf"\frac{{{h}}}{{2}}\Bigl(1 + \tanh\bigl(\sqrt{{2/\pi}}\,({h} + {_CUBIC} \cdot {_power(h)})\bigr)"
                r"\Bigr)")
    return rf"\frac{{{h}}}{{1 + e^{{{_negated(h)}}}}}"


def _power(h: str) -> str:
    return f"({h})^{{3}}" if h.startswith("-") else f"{h}^{{3}}"


def _negated(h: str) -> str:
    """−h as an exponent: e^{-0.92}, e^{0.31} for h = −0.31, e^{-h_{j}} for a name."""
    return h[1:] if h.startswith("-") else f"-{h}"


class FeedForwardPrinters(MathRenderer):
    """The feed-forward network's steps; DerivationRenderer, and so every format, inherits them."""

    def bias_terms(self, step: RowTimesMatrix) -> tuple[list[tuple[tuple[Operand, ...], ...]], str]:
        """A row-times-matrix line's bias: the term (b_c) each entry adds (none where b_c = 0, as a given matrix's
        zero terms), and what follows `row · W` (+ the vector, or + its name when it is wide)."""
        cols = step.matrix.values.cols
        if step.bias is None:
            return [()] * cols, ""
        numbers = self.numbers(step.bias)
        terms = [((Operand(n, v),),) if v != 0 else () for n, v in zip(numbers, step.bias.entries, strict=True)]
        text = self.vector(list(numbers)) if cols <= 4 else self.name(step.bias_name)
        return terms, f"+ {text}"

    def _print_FeedForwardFormula(self, step: FeedForwardFormula) -> str:
        b_1, b_2, b_3 = (f" + b_{k}" if given else "" for k, given in zip("123", step.biases, strict=True))
        phi = _NAMES[step.activation]
        if step.activation == "swiglu":
            ffn = rf"\bigl({phi}(x W_1{b_1}) \odot (x W_3{b_3})\bigr) W_2{b_2}"
        else:
            ffn = rf"{phi}(x W_1{b_1})\, W_2{b_2}"
        lines = [rf"\operatorname{{FFN}}(x) &= {ffn}", rf"{phi}(h) &= {_definition(step.activation, 'h')}"]
        if step.activation in ("gelu", "silu", "swiglu"):  # h·Φ(h), h·σ(h)
            middle = r"h\,\Phi(h)" if step.activation == "gelu" else r"h\,\sigma(h)"
            lines[1] = rf"{phi}(h) &= {middle} = {_definition(step.activation, 'h')}"
        return self.align(lines)

    def _print_ActivationStep(self, step: ActivationStep) -> str:
        if step.activation == "relu":
            return self._relu(step)
        return self._entries(step)

    def _relu(self, step: ActivationStep) -> str:
        """a_t = max(0, h_t) = [max(0, h_1), ...] = [a_1, ...]: its zeros visible."""
        hidden = self.numbers(step.hidden)
        activated = exact_zeros(self.numbers(step.activated), step.activated.entries)
        a, h = self.name(Name("a", step.token)), self.name(Name("h", step.token))
        lines = []
        for j, (hn, an, value) in enumerate(zip(hidden, activated, step.activated.entries, strict=True)):
            terms = ((Operand(hn, step.hidden.entries[j]),),) if value != 0 else ()
            lines.append(Line(f"a_{{{j + 1}}}", Operand(an, value), terms))
        self.checked_lines(lines)
        maxima = [rf"\max(0,\ {n.text})" for n in hidden]
        out = [rf"{a} &= \max(0,\ {h})"]
        out += self.continued(f"&{self.relation(all(n.exact for n in hidden))} ", self.vector_pieces(
            [Number(text, True) for text in maxima]), self.width - 4)
        out += self.continued(f"&{self.relation(all(n.exact for n in activated))} ",
                              self.vector_pieces(list(activated)), self.width - 4)
        return self.align(out)

    def _entries(self, step: ActivationStep) -> str:
        """a_j = φ(h_j) for each entry j, its argument with the decimals the line needs, then the vector a_t."""
        swiglu = step.activation == "swiglu"
        h = "g" if swiglu else "h"
        general = _definition(step.activation, f"{h}_{{j}}")
        out = [rf"a_{{j}} &= {general} \cdot u_{{j}}" if swiglu else rf"a_{{j}} &= {general}"]
        lines = []
        hidden = self.numbers(step.hidden)
        up = self.numbers(step.up) if swiglu else [None] * len(hidden)
        ups = step.up.entries if swiglu else [None] * len(hidden)
        for j, (x, u, value) in enumerate(zip(step.hidden.entries, ups, step.activated.entries, strict=True)):
            result = self.result_operand(value, step.activated.known)
            shown = [hidden[j]] if u is None else [hidden[j], up[j]]
            args = self._arguments(step.activation, [x] if u is None else [x, u], shown, result.text,
                                   step.hidden.known)
            lines.append(Line(f"a_{{{j + 1}}}", result))
            text = _definition(step.activation, args[0].text)
            if swiglu:
                text += rf" \cdot {self.num(args[1], True)}"
            exact_args = all(n.exact for n in args)
            out += self.fitted(f"a_{{{j + 1}}} &{self.relation(exact_args)} {text}",
                               f"{self.relation(result.exact)} {result.text}")
        self.checked_lines(lines)
        activated = self.numbers(step.activated)
        out += self.continued(f"{self.name(Name('a', step.token))} &{self.relation(all(n.exact for n in activated))} ",
                              self.vector_pieces(list(activated)), self.width - 12)
        return self.align(out)

    def _arguments(self, activation: str, values: list, defaults: list[Number], result: str, known) -> list[Number]:
        """The arguments (h_j; SwiGLU: g_j and u_j) as their vectors show them (`defaults`) when exact, else with the
        fewest decimals from the stage's on (one count for both) with which φ of the numbers shown, rounded half-up
        to the result's decimals, is the result shown."""
        if all(n.exact for n in defaults) or self.exact:
            return defaults
        target = shown_value(Operand(Number(result, False), values[0]))
        if target is None:  # a result written with a power of ten: its arguments at the stage's decimals
            return defaults
        places = decimals_shown(result)
        for p in range(self.digits, self.digits + GUARD_CAP + 5):
            shown = [n if n.exact else format_number(v, p, p, known=known) for v, n in zip(values, defaults,
                                                                                          strict=True)]
            args = [shown_value(Operand(n, v)) for n, v in zip(shown, values, strict=True)]
            if None not in args and _rounds_to(lambda *x: activation_number(activation, *x), args, target, places):
                return shown
        return shown


def _rounds_to(function: Callable[..., mpmath.mpf], args: list[Fraction], target: Fraction, places: int) -> bool:
    """Whether function(args), rounded half-up to `places` decimals, is `target`: target − ½ ≤ |f| < target + ½ in
    units of the last place (for a negative value, of |target|), decided with mpmath at 30 digits beyond `places`."""
    half = Fraction(1, 2 * 10**places)
    with mpmath.workdps(places + 30 + max(0, int(max(abs(a) for a in args)).bit_length())):
        value = function(*(mpmath.mpf(a.numerator) / a.denominator for a in args))
        size, goal = abs(value), abs(target)
        low, high = goal - half, goal + half
        return mpmath.mpf(low.numerator) / low.denominator <= size < mpmath.mpf(high.numerator) / high.denominator


# the printers this folder brings to every format's renderer (render/composed.py)
PRINTERS = (FeedForwardPrinters,)
