"""The position-wise feed-forward network of a Transformer block, FFN(x) = φ(x·W_1 + b_1)·W_2 + b_2 for each token
(φ: ReLU, GELU in its exact erf form or PyTorch's tanh form, SiLU) or LLaMA's SwiGLU (SiLU(x·W_1) ⊙ x·W_3)·W_2:
its spec keys, the engine's result, the steps per token (the first product, the activation entry by entry, the
second product) and the answers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sympy import ImmutableMatrix

from ...document import sentences
from ...document.sentences import say
from ...document.steps import (
    Facts,
    Heading,
    MatrixEquation,
    Name,
    Paragraph,
    Result,
    RowTimesMatrix,
    Shown,
    Step,
    Token,
    TokenTable,
    VectorEquation,
)
from ...errors import SpecError
from ...features.attention import solution as common
from ...features.attention.answers import number_text
from ...numbers import certify
from ...numbers.exact_latex import exact_latex, fraction_latex, surd_latex
from ...spec import fields
from ...spec.model import Focus, GivenMatrix, Section
from ...spec.vectors import vector
from ..base import Carried, Kind, Size
from ..carried import KnownRows, rows_error
from . import engine as ffn
from .steps import ActivationStep, FeedForwardFormula

# The longest exact LaTeX an answer gives beside its decimal, and the most terms an output sum may have for it to be
# written at all (a d_ff = 64 sum of erf terms is no answer anyone reads).
EXACT_CHARACTERS = 200
EXACT_TERMS = 4
_BIASES = ("b_1", "b_2", "b_3")


@dataclass(frozen=True)
class FeedForwardFacts(Facts):
    """A token's facts in the feed-forward network: `zeroed`, the entries of h_t that ReLU sets to 0 (h < 0)."""

    zeroed: int = 0


# the conditional sentences this folder says, and what must be true of their facts (document/sentences.py)
sentences.contribute({
    # the feed-forward network: ReLU set that many entries of h_t to 0
    "ffn.relu_zero_one": lambda f: f.zeroed == 1,
    "ffn.relu_zeros": lambda f: f.zeroed > 1,
})


@dataclass(frozen=True)
class FeedForwardSpec(Section):
    """tokens and X (one row each), W_1 (d × d_ff), W_2 (d_ff × d_out), W_3 (SwiGLU, W_1's shape), the biases b_1,
    b_2, b_3 (None: not given, zero), the activation and the tokens derived one by one."""

    kind = "feed_forward"
    tokens: tuple[str, ...]
    X: GivenMatrix
    W_1: GivenMatrix
    W_2: GivenMatrix
    activation: str = "relu"
    focus: Focus = Focus("all", ())
    W_3: GivenMatrix | None = None
    b_1: GivenMatrix | None = None
    b_2: GivenMatrix | None = None
    b_3: GivenMatrix | None = None

    def values(self, key: str) -> ImmutableMatrix | None:
        given = getattr(self, key)
        return None if given is None else given.values


class FeedForwardKind(Kind):
    name = FeedForwardSpec.kind
    examinable = True
    stages = ("hidden", "activation", "output")  # `symattn worksheet --blanks`

    def stage_of(self, step: Step) -> str | None:
        if isinstance(step, RowTimesMatrix):  # h = x W_1 (SwiGLU: g and u), then f = a W_2
            return "output" if step.matrix_name == Name("W_2") else "hidden"
        return "activation" if isinstance(step, ActivationStep) else None
    exam_module = "exam"  # its exam: kinds/feed_forward/exam.py
    keys = frozenset({"kind", "heading", "tokens", "X", "W_1", "b_1", "W_2", "b_2", "W_3", "b_3", "activation",
                      "focus"})

    def parse(self, data: dict[str, Any], field: str) -> FeedForwardSpec:
        tokens = fields.tokens(fields.require(data, "tokens", field), f"{field}.tokens")
        activation = data.get("activation", "relu")
        if activation not in ffn.ACTIVATIONS:
            raise SpecError(f"{field}.activation", f"expected one of {', '.join(ffn.ACTIVATIONS)}, got "
                                                   f"{activation!r}{fields.suggest(str(activation), ffn.ACTIVATIONS)}")
        m = {key: _numeric(fields.require(data, key, field), f"{field}.{key}") for key in ("X", "W_1", "W_2")}
        fields.rows_match(m["X"], len(tokens), f"{field}.X", "tokens")
        _inner(m["W_1"], m["X"].shape[1], f"{field}.W_1", "X has", "columns")
        _inner(m["W_2"], m["W_1"].shape[1], f"{field}.W_2", "W_1 has", "columns (the hidden width d_ff)")
        if activation == "swiglu":
            m["W_3"] = _numeric(fields.require(data, "W_3", field), f"{field}.W_3")
            if m["W_3"].shape != m["W_1"].shape:
                raise SpecError(f"{field}.W_3", "expected W_1's shape {}×{}, got {}×{}".format(*m["W_1"].shape,
                                                                                              *m["W_3"].shape))
        else:
            for key in ("W_3", "b_3"):
                if key in data:
                    raise SpecError(f"{field}.{key}", f'applies to activation = "swiglu" only (this section is '
                                                      f'{activation!r})')
        widths = {"b_1": m["W_1"].shape[1], "b_2": m["W_2"].shape[1], "b_3": m["W_1"].shape[1]}
        biases = {key: _bias(data[key], f"{field}.{key}", widths[key]) for key in _BIASES if key in data}
        focus = fields.focus(data.get("focus", "all"), tokens, f"{field}.focus")
        if focus.mode == "matrix":
            raise SpecError(f"{field}.focus", 'a feed-forward section derives token by token: give a token, a list '
                                              'of tokens or "all"')
        return FeedForwardSpec(tokens=tokens, activation=activation, focus=focus, **m, **biases)

    def compute(self, section: FeedForwardSpec) -> ffn.FeedForward:
        return ffn.feed_forward(section.X.values, section.W_1.values, section.values("b_1"), section.W_2.values,
                                section.values("b_2"), section.activation, section.values("W_3"),
                                section.values("b_3"))

    def symbolic(self, result: ffn.FeedForward) -> bool:
        return False

    def steps(self, section: FeedForwardSpec, result: ffn.FeedForward) -> list[Step]:
        given = [(Name(key), Shown.input(getattr(section, key))) for key in ("W_1", "W_3", "W_2")
                 if getattr(section, key) is not None]
        biases = {key: Shown.input(getattr(section, key)) for key in _BIASES if getattr(section, key) is not None}
        steps: list[Step] = [
            common.part_heading(section, "ffn.heading"),
            Paragraph("ffn.intro"),
            FeedForwardFormula(section.activation, tuple(key in biases for key in _BIASES)),
            Paragraph(f"ffn.about_{section.activation}"),
            Heading(2, "ffn.step_given"),
            Paragraph("ffn.inputs", {"X": Name("X"), "x": Name("x", label="t")}),
            TokenTable(("table.token", "ffn.table_input"), section.tokens, (Shown.input(section.X),)),
            Paragraph("ffn.weights"),
            *(MatrixEquation(name, shown) for name, shown in given),
            *(VectorEquation(Name(key), shown) for key, shown in biases.items()),
        ]
        if not biases:
            steps.append(Paragraph("ffn.no_biases"))
        x, W = Shown.input(section.X), dict(given)
        for k, token in enumerate(section.focus.stepwise):
            steps += _token_steps(section, result, token, 2 + 3 * k, x.row(section.tokens.index(token)), W, biases)
        if len(section.focus.stepwise) > 1:
            steps += [Heading(2, "ffn.outputs"), Paragraph("ffn.outputs_are"),
                      TokenTable(("table.token", "ffn.table_output"), section.focus.stepwise,
                                 (Shown(ImmutableMatrix([list(result.output.row(section.tokens.index(t)))
                                                         for t in section.focus.stepwise]), known=result.known),))]
        return steps

    def answers(self, section: FeedForwardSpec, result: ffn.FeedForward) -> dict[str, Any]:
        rows = {}
        for i, token in enumerate(section.tokens):
            parts = {"gate": result.hidden, "up": result.up} if section.activation == "swiglu" else {
                "hidden": result.hidden}
            parts |= {"activated": result.activated, "output": result.output}
            rows[token] = {key: [number_text(v, result.known) for v in M.row(i)] for key, M in parts.items()}
            rows[token]["exact"] = {key: [_exact(v) for v in M.row(i)] for key, M in parts.items()
                                    if key != "activated"}
            rows[token]["exact"]["activated"] = [_activated_latex(section.activation, h, u, a) for h, u, a in zip(
                result.hidden.row(i), result.up.row(i) if result.up is not None else [None] * result.hidden.cols,
                result.activated.row(i), strict=True)]
            if section.activation == "relu":
                rows[token]["zeroed"] = result.zeroed[i]
        return {"kind": self.name, "activation": section.activation, "tokens": list(section.tokens), "rows": rows}

    def outputs(self, section: FeedForwardSpec, result: ffn.FeedForward) -> Carried:
        return KnownRows(section.tokens, result.output, result.known)  # the activations' numbers, filed once

    def error_bound(self, section: FeedForwardSpec, result: ffn.FeedForward, errors: dict[str, float]) \
            -> certify.Bound:
        """x·W_1 + b_1, the activation (|φ(h)| ≤ |h|, slope at most SMOOTH_ACTIVATION), SwiGLU's gate times
        x·W_3 + b_3, then the second product."""
        e, size = rows_error(section, errors)
        eh, sh = e * certify.spread(section.W_1), size * certify.spread(section.W_1) + certify.largest(section.b_1)
        ea = eh * (1.0 if section.activation == "relu" else certify.SMOOTH_ACTIVATION)
        eu = 0.0
        if section.W_3 is not None:  # SwiGLU: SiLU(h) ⊙ u
            eu = e * certify.spread(section.W_3)
            su = size * certify.spread(section.W_3) + certify.largest(section.b_3)
            ea = ea * (su + eu) + (sh + eh) * eu
        return certify.Bound(max(e, eh, ea, eu, ea * certify.spread(section.W_2)))

    def inputs(self, section: FeedForwardSpec, result: ffn.FeedForward) -> Carried:
        return Carried(section.tokens, section.X.values)

    def stage(self, section: FeedForwardSpec) -> str:
        return "ffn"

    def size(self, section: FeedForwardSpec) -> Size:
        """Each token derived: its products' d_ff × (d + d_out) terms (SwiGLU: d_ff × (2d + d_out)), counted as half
        as many query steps (a page holds about 100 terms against 45 steps of attention: 4 tokens of d = 16, d_ff =
        64 take 80 pages)."""
        d, d_ff = section.W_1.shape
        width = d * (2 if section.activation == "swiglu" else 1) + section.W_2.shape[1]
        return Size("focus", len(section.focus.stepwise), d_ff, -(-width // 2), what="tokens derived one by one",
                    over=f"with products of {d_ff} × {width} terms", work=len(section.tokens) * (d_ff + width))


def _token_steps(section: FeedForwardSpec, result: ffn.FeedForward, token: str, number: int, row: Shown,
                 W: dict[Name, Shown], biases: dict[str, Shown]) -> list[Step]:
    """One token's Steps number, number + 1, number + 2: the first product(s), the activation, the second product."""
    i, swiglu = section.tokens.index(token), section.activation == "swiglu"
    hidden = common.product(row, W[Name("W_1")], result.hidden.row(i), result.known)
    first = [_product("g" if swiglu else "h", token, row, W, "W_1", biases.get("b_1"), hidden)]
    up = None
    if swiglu:
        up = common.product(row, W[Name("W_3")], result.up.row(i), result.known)
        first.append(_product("u", token, row, W, "W_3", biases.get("b_3"), up))
    activated = Shown(result.activated.row(i), hidden.decimals if result.rational else 0, known=result.known)
    output = common.product(activated, W[Name("W_2")], result.output.row(i), result.known)
    names = {"x": Name("x", token), "h": Name("g" if swiglu else "h", token), "a": Name("a", token),
             "f": Name("f", token), "u": Name("u", token), "token": Token(token),
             "hj": Name("g" if swiglu else "h", label="j"), "uj": Name("u", label="j"), "aj": Name("a", label="j")}
    steps: list[Step] = [Heading(2, "ffn.step_first", {**names, "n": number}),
                         Paragraph("ffn.first_swiglu" if swiglu else "ffn.first", names), *first,
                         Heading(2, "ffn.step_activation", {**names, "n": number + 1}),
                         Paragraph(f"ffn.apply_{section.activation}", names),
                         ActivationStep(section.activation, token, hidden, activated, up)]
    zeroed = result.zeroed[i]
    if zeroed:  # said only when ReLU zeroes entries, with its count
        key = "ffn.relu_zero_one" if zeroed == 1 else "ffn.relu_zeros"
        steps.append(say(key, FeedForwardFacts(section.kind, token, zeroed=zeroed),
                         {**names, "count": zeroed, "width": section.W_1.shape[1]}))
    return steps + [Heading(2, "ffn.step_second", {**names, "n": number + 2}), Paragraph("ffn.second", names),
                    _product("f", token, activated, W, "W_2", biases.get("b_2"), output, "a"),
                    Result(Name("f", token), output)]


def _product(base: str, token: str, row: Shown, W: dict[Name, Shown], matrix: str, bias: Shown | None,
             value: Shown, row_base: str = "x") -> RowTimesMatrix:
    """base_t = row_t · W (+ b) written out term by term."""
    bias_name = None if bias is None else Name(f"b_{matrix[-1]}")
    return RowTimesMatrix(Name(base, token), Name(row_base, token), row, Name(matrix), W[Name(matrix)], value,
                          bias_name, bias)


def _numeric(value: Any, field: str) -> GivenMatrix:
    """A matrix of numbers (the activation compares and evaluates them: no symbols)."""
    given = fields.matrix(value, field)
    if given.symbolic:
        raise SpecError(field, "expected numbers (a feed-forward section evaluates its activation; names such as "
                               "a, b1 are not available here)")
    return given


def _inner(W: GivenMatrix, width: int, field: str, owner: str, what: str) -> None:
    if W.shape[0] != width:
        raise SpecError(field, f"{W.shape[0]} rows, but {owner} {width} {what}: one row per entry it multiplies")


def _bias(value: Any, field: str, width: int) -> GivenMatrix:
    """A bias: one row of numbers, as long as the product it is added to."""
    given = vector(value, field, f"a list of {width} numbers")
    if given.symbolic:
        raise SpecError(field, "expected numbers (a feed-forward section evaluates its activation; names such as "
                               "a, b1 are not available here)")
    if given.shape[1] != width:
        raise SpecError(field, f"{given.shape[1]} entries, but the product it is added to has {width}")
    return given


def _activated_latex(activation: str, h, up, value) -> str | None:
    """φ(h) as LaTeX written from h's fraction (SymPy's printer takes milliseconds a form): GELU's c(1 + erf(c√2))
    with c = h/2, its tanh form's c(1 + tanh(√(2/π)·y)), SiLU's h/(1 + e^{−h}) (SwiGLU: times u)."""
    if value.is_Rational or not h.is_Rational or (up is not None and not up.is_Rational):
        return _exact(value)
    c = h / 2
    half = fraction_latex(int(c.p), int(c.q))
    if activation == "gelu":
        return rf"{half} \left(1 + \operatorname{{erf}}{{\left({surd_latex(int(c.p), int(c.q), 2)} \right)}}\right)"
    if activation == "gelu_tanh":
        y = h + ffn.GELU_TANH_CUBIC * h**3
        return (rf"{half} \left(1 + \tanh{{\left(\sqrt{{\frac{{2}}{{\pi}}}} \cdot {_factor(y)} \right)}}"
                r"\right)")
    silu = rf"\frac{{{fraction_latex(int(h.p), int(h.q))}}}{{1 + e^{{{fraction_latex(int(-h.p), int(h.q))}}}}}"
    return silu if up is None else rf"{silu} \cdot {_factor(up)}"


def _factor(value) -> str:
    """A rational's LaTeX as a factor (in parentheses when negative)."""
    text = fraction_latex(int(value.p), int(value.q))
    return rf"\left({text}\right)" if value < 0 else text


def _exact(value) -> str | None:
    """The exact LaTeX of a value when it is short: rationals always, an irrational form of few terms."""
    if isinstance(value, ffn.ActivatedSum) and len(value.pairs) > EXACT_TERMS:
        return None
    text = exact_latex(value, decimals=False)
    return text if value.is_Rational or len(text) <= EXACT_CHARACTERS else None


FEED_FORWARD = FeedForwardKind()
