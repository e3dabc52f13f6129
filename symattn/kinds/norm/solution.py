"""The steps of an add_norm or norm section: the inputs, then per token the sum, the mean and deviations, the
variance and its square root, the normalised row and the scale and shift (each only where it changes something),
then all tokens' results in one table; and the facts that choose its conditional sentences."""

from __future__ import annotations

from dataclasses import dataclass

from sympy import ImmutableMatrix

from ...document import sentences
from ...document.phrases import Eq, Token
from ...document.sentences import heading, say
from ...document.steps import Facts, Formula, Heading, Name, Paragraph, Result, Shown, Step, TokenTable, VectorEquation
from ...features.attention.solution import part_heading
from .engine import NormResult, NormRow
from .spec import NormSpec
from .steps import NormAffine, NormMean, NormNormalised, NormScalars, NormSettings, NormSum, NormVariance


@dataclass(frozen=True)
class NormFacts(Facts):
    """A norm section's facts: `norm` ("layer", "rms"); `constant`: the token's σ² is 0 (LayerNorm: its entries all
    equal; RMSNorm: all 0); `affine`: "default" (γ, β not given), "identity" (given, all 1 and all 0), "scale",
    "shift" or "both" (what γ ⊙ · + β changes)."""

    norm: str = "layer"
    constant: bool = False
    affine: str = "default"


# the conditional sentences this folder says, and what must be true of their facts (document/sentences.py)
sentences.contribute({
    "norm.constant_layer": lambda f: f.constant and f.norm == "layer",
    "norm.constant_rms": lambda f: f.constant and f.norm == "rms",
    "norm.defaults_layer": lambda f: f.affine == "default" and f.norm == "layer",
    "norm.defaults_rms": lambda f: f.affine == "default" and f.norm == "rms",
    "norm.identity": lambda f: f.affine == "identity",
    "norm.affine_scale": lambda f: f.affine == "scale",
    "norm.affine_shift": lambda f: f.affine == "shift",
    "norm.affine_both": lambda f: f.affine == "both",
})


def affine(section: NormSpec) -> str:
    """What γ ⊙ · + β does (NormFacts.affine)."""
    if section.gamma is None and section.beta is None:
        return "default"
    scale = any(g != 1 for g in section.gamma_values())
    shift = any(b != 0 for b in section.beta_values())
    return {(False, False): "identity", (True, False): "scale", (False, True): "shift", (True, True): "both"}[
        (scale, shift)]


def names(section: NormSpec, token: str | None) -> dict[str, Name]:
    """The names a norm sentence may speak of: the matrices, γ, β, ε, the width d and the token's rows."""
    base = "u" if section.Y is not None else "x"
    return {"X": Name("X"), "Y": Name("Y"), "gamma": Name("gamma"), "beta": Name("beta"), "eps": Name("eps"),
            "x": Name("x", token), "y": Name("y", token), "row": Name(base, token), "hat": Name(base + "h", token),
            "mu": Name("mu", token), "out": Name("o", token), "width": Formula("d"), "d_minus_1": Formula("d_minus_1"),
            "var": Name(f"var_{section.norm}" + ("_u" if section.norm == "rms" and base == "u" else ""), token)}


def row_shown(values, decimals: int, result: NormResult) -> Shown:
    """A computed row as shown, one count of decimals (at least the inputs')."""
    return Shown(ImmutableMatrix([list(values)]), decimals, known=result.numbers)


def token_steps(section: NormSpec, result: NormResult, t: int, n: int, facts: NormFacts,
                inputs: tuple[Shown, Shown | None]) -> list[Step]:
    """One token's derivation, under Step n; `inputs` X and Y as shown (made once: a row of a Shown is made from
    all its rows)."""
    token, row = section.tokens[t], result.rows[t]
    common = {"token": token, "residual": section.Y is not None, "norm": section.norm, "known": result.numbers}
    decimals = section.X.decimals if section.Y is None else max(section.X.decimals, section.Y.decimals)
    X, Y = inputs
    values = row_shown(row.values, decimals, result) if Y is not None else X.row(t)
    centred = row_shown(row.centred, decimals, result) if row.mean is not None else values
    params = {**names(section, token), "token": Token(token), "n": n, "d": Eq(Name("d"), section.d)}
    out: list[Step] = [heading(2, "norm.step_token", facts, params)]
    if section.Y is not None:
        out += [Paragraph("norm.sum", params),
                NormSum(**common, x=X.row(t), y=Y.row(t), total=values)]
    if row.mean is not None:
        out += [Paragraph("norm.mean", params), NormMean(**common, row=values, mean=row.mean, centred=centred)]
    out += [Paragraph(f"norm.variance_{section.norm}", params),
            NormVariance(**common, centred=centred, variance=row.variance, eps=section.eps, radicand=row.radicand,
                         std=row.std)]
    if facts.constant:
        out.append(say(f"norm.constant_{section.norm}", facts, params))
    normalised = row_shown(row.normalised, 0, result)
    out += [Paragraph(f"norm.normalised_{section.norm}", params),
            NormNormalised(**common, centred=centred, std=row.std, normalised=normalised, root=row.root,
                           coefficients=None if row.coefficients is None else row.coefficients[0])]
    output = row_shown(row.output, 0, result)
    if facts.affine in ("scale", "shift", "both"):
        gamma = None if facts.affine == "shift" else Shown.input(section.gamma)
        beta = None if facts.affine == "scale" else Shown.input(section.beta)
        out += [say(f"norm.affine_{facts.affine}", facts, params),
                NormAffine(**common, normalised=normalised, gamma=gamma, beta=beta, output=output)]
    out += [Paragraph("norm.result", params), Result(Name("o", token), output)]
    return out


def constant(row: NormRow) -> bool:
    return row.variance == 0


def norm_steps(section: NormSpec, result: NormResult) -> list[Step]:
    residual = section.Y is not None
    kind = "add" if residual else "norm"
    whole = NormFacts(section.kind, norm=section.norm, affine=affine(section))
    params = {**names(section, None), "d": Eq(Name("d"), section.d)}
    out: list[Step] = [part_heading(section, f"norm.heading_{kind}_{section.norm}"),
                       Paragraph(f"norm.intro_{kind}_{section.norm}",
                                 {**params, "formula": Formula(f"norm_{section.norm}_{'u' if residual else 'x'}")}),
                       Heading(2, "norm.inputs_step"),
                       Paragraph("norm.inputs_add" if residual else "norm.inputs_norm", params)]
    inputs = (Shown.input(section.X), Shown.input(section.Y) if residual else None)
    header = ("table.token", Name("X"), *((Name("Y"),) if residual else ()))
    out.append(TokenTable(header, section.tokens, tuple(m for m in inputs if m is not None)))
    out += [Paragraph("norm.settings" if section.eps else "norm.settings_zero", params),
            NormSettings(section.eps, section.d)]
    given = [name for name, value in (("gamma", section.gamma), ("beta", section.beta)) if value is not None]
    if given:
        which = "both" if len(given) == 2 else given[0] + ("_rms" if section.norm == "rms" else "")
        out.append(Paragraph(f"norm.given_{which}", params))
    if section.gamma is not None:
        out.append(VectorEquation(Name("gamma"), Shown.input(section.gamma)))
    if section.beta is not None:
        out.append(VectorEquation(Name("beta"), Shown.input(section.beta)))
    if whole.affine in ("default", "identity"):
        out.append(say(f"norm.defaults_{section.norm}" if whole.affine == "default" else "norm.identity", whole,
                       params))
    n = 2
    for i, token in enumerate(section.focus.stepwise):
        t = section.tokens.index(token)
        facts = NormFacts(section.kind, token=token, first=i == 0, norm=section.norm,
                          constant=constant(result.rows[t]), affine=whole.affine)
        out += token_steps(section, result, t, n, facts, inputs)
        n += 1
    if section.focus.matrix_form(len(section.tokens)):
        out += summary(section, result, n, params)
    return out


def summary(section: NormSpec, result: NormResult, n: int, params: dict) -> list[Step]:
    """Every token's mean, variance and root in one table, and the output rows in another."""
    rows = result.rows
    quantities = ["variance", "std"]
    columns = [tuple(r.variance for r in rows), tuple(r.std for r in rows)]
    if section.norm == "layer":
        quantities.insert(0, "mean")
        columns.insert(0, tuple(r.mean for r in rows))
    only = [Paragraph("norm.only", params)] if section.focus.mode == "matrix" else []
    return [Heading(2, "norm.summary_step", {"n": n}), *only, Paragraph("norm.summary", params),
            NormScalars(section.tokens, section.Y is not None, section.norm, tuple(quantities), tuple(columns),
                        known=result.numbers),
            Paragraph("norm.summary_outputs", params),
            TokenTable(("table.token", Name("o", label="t")), section.tokens,
                       (Shown(result.matrix, 0, known=result.numbers),))]
