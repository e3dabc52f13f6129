"""The kinds `add_norm` (Norm(X + Y) per token: the original Transformer's post-norm Add & Norm) and `norm`
(Norm(X) alone, as a pre-norm block applies it), with `norm = "layer"` (torch.nn.LayerNorm: mean, biased variance,
ε inside the square root, γ and β) or `norm = "rms"` (LLaMA's RMSNorm: no mean, no β). Spec, checks, answers;
the steps are in norm_steps.py, the computation in kinds/norm/engine.py."""

from __future__ import annotations

from typing import Any

from sympy import Expr, S

from ...document.steps import Step
from ...engine.numbers import rational_times_root
from ...errors import SpecError
from ...features.attention.answers import exact_texts, number_text, row_texts
from ...numbers import certify
from ...numbers.exact_latex import exact_latex, shifted_surd_latex
from ...spec import fields
from ...spec.model import GivenMatrix
from ...spec.numbers import parse_number
from ...spec.vectors import vector
from .. import carried
from ..base import Carried, Kind, Size
from ..carried import KnownRows
from .engine import NormResult, NormRow, normalise
from .solution import norm_steps
from .spec import DEFAULT_EPS, NORMS, AddNormSpec, NormSpec
from .steps import NormAffine, NormMean, NormNormalised, NormSum, NormVariance


def surd_texts(row: NormRow, beta: tuple[Expr, ...]) -> dict[str, Any]:
    """The exact forms of the normalised row, the output and √(σ² + ε) from the row's coefficients a_i√m (SymPy's
    printer takes ~2 ms an entry); nothing for a row without them (its exact forms are printed by SymPy)."""
    if row.root is None:
        return {}
    a, scaled = row.coefficients
    coefficient = row.std if row.root == 1 else rational_times_root(row.std)[0]
    return {"normalised": [shifted_surd_latex(S.Zero, ai, row.root) for ai in a],
            "output": [shifted_surd_latex(b, ga, row.root) for b, ga in zip(beta, scaled, strict=True)],
            "std": shifted_surd_latex(S.Zero, coefficient, row.root)}


def _vector(data: dict[str, Any], key: str, d: int, field: str) -> GivenMatrix | None:
    """gamma or beta: a list of d numbers, or None when not given."""
    if key not in data:
        return None
    given = vector(data[key], f"{field}.{key}", f"a list of {d} numbers (one per entry of a row)")
    if given.shape[1] != d:
        raise SpecError(f"{field}.{key}", f"{given.shape[1]} entries, but the rows have {d} (the model width)")
    if given.symbolic:
        raise SpecError(f"{field}.{key}", "expected numbers: a norm's square root needs numeric values")
    return given


def _numeric(given: GivenMatrix, field: str) -> GivenMatrix:
    if given.symbolic:
        raise SpecError(field, "expected numbers: a norm's square root needs numeric values (this matrix holds "
                               "symbols)")
    return given


# the stage each computation step writes, for worksheets: u = x + y, μ, σ², û, then γ û + β
_STAGE_OF = {NormSum: "sum", NormMean: "mean", NormVariance: "variance", NormNormalised: "normalised",
             NormAffine: "output"}


class NormKind(Kind):
    """Both kinds: `residual` says whether the section adds Y to X first (add_norm)."""

    def __init__(self, spec: type[NormSpec], residual: bool) -> None:
        self.spec = spec
        self.name = spec.kind
        self.residual = residual
        self.examinable = residual  # add_norm's exam: kinds/norm/exam.py
        self.exam_module = "exam" if residual else ""
        # `symattn worksheet --blanks`: add_norm's sum u = x + y first
        self.stages = (*(("sum",) if residual else ()), "mean", "variance", "normalised", "output")
        self.keys = frozenset({"kind", "tokens", "X", "norm", "eps", "gamma", "beta", "focus", "heading",
                               *(("Y",) if residual else ())})

    def stage_of(self, step: Step) -> str | None:
        return _STAGE_OF.get(type(step))

    def parse(self, data: dict[str, Any], field: str) -> NormSpec:
        tokens = fields.tokens(fields.require(data, "tokens", field), f"{field}.tokens")
        X = _numeric(fields.matrix(fields.require(data, "X", field), f"{field}.X"), f"{field}.X")
        fields.rows_match(X, len(tokens), f"{field}.X", "tokens")
        Y = None
        if self.residual:
            Y = _numeric(fields.matrix(fields.require(data, "Y", field), f"{field}.Y"), f"{field}.Y")
            if Y.shape != X.shape:
                raise SpecError(f"{field}.Y", f"{Y.shape[0]} × {Y.shape[1]}, but X is {X.shape[0]} × {X.shape[1]} "
                                              "(the sublayer's output has the residual input's shape)")
        norm = data.get("norm", "layer")
        if norm not in NORMS:
            raise SpecError(f"{field}.norm", f'expected "layer" (LayerNorm) or "rms" (RMSNorm), got {norm!r}')
        eps, eps_decimals = DEFAULT_EPS[norm], len(str(DEFAULT_EPS[norm].q)) - 1
        if "eps" in data:
            eps, eps_decimals = parse_number(data["eps"], f"{field}.eps")
            if eps < 0:
                raise SpecError(f"{field}.eps", f"expected a number ≥ 0 (added to the variance), got {data['eps']!r}")
        d = X.shape[1]
        gamma = _vector(data, "gamma", d, field)
        beta = _vector(data, "beta", d, field)
        if norm == "rms" and beta is not None:
            raise SpecError(f"{field}.beta", 'RMSNorm has no shift β (x / RMS(x) · γ, as LLaMA): leave beta out, or '
                                             'use norm = "layer"')
        spec = self.spec(tokens, X, Y, norm, eps, eps_decimals, gamma, beta,
                         fields.focus(data.get("focus", "all"), tokens, f"{field}.focus"))
        if eps == 0:
            for token, row in zip(tokens, spec.rows(), strict=True):
                if all(v == row[0] for v in row) if norm == "layer" else all(v == 0 for v in row):
                    what = ("has all entries equal, so σ² = 0" if norm == "layer"
                            else "is all 0, so its mean square is 0")
                    raise SpecError(f"{field}.eps", f"eps = 0, but the row of {token!r} {what}: the division would "
                                                    "be by √0 (give eps > 0)")
        return spec

    def compute(self, section: NormSpec) -> NormResult:
        return normalise(section.tokens, section.rows(), section.norm, section.eps, section.gamma_values(),
                         section.beta_values())

    def symbolic(self, result: NormResult) -> bool:
        return False

    def steps(self, section: NormSpec, result: NormResult) -> list[Step]:
        return norm_steps(section, result)

    def stage(self, section: NormSpec) -> str:
        return "add_norm" if self.residual else "norm"

    def size(self, section: NormSpec) -> Size:
        n, d = section.X.shape
        return Size(stepwise=len(section.focus.stepwise), keys=1, d=d,
                    matrix=n * d if section.focus.matrix_form(n) else 0, work=n * d)

    def outputs(self, section: NormSpec, result: NormResult) -> Carried:
        return KnownRows(section.tokens, result.matrix, result.numbers)  # the surds' numbers, filed once

    def error_bound(self, section: NormSpec, result: NormResult, errors: dict[str, float]) -> certify.Bound:
        (ex, sx), (ey, sy) = carried.rows_error(section, errors), carried.rows_error(section, errors, "Y")
        radicand = min(float(result.numbers.number(row.radicand)) for row in result.rows) * (1 - 1e-12)
        scale = 1.0 if section.gamma is None else certify.largest(section.gamma)
        return certify.normalisation(ex + ey, sx + sy, radicand, section.norm == "layer", scale)

    def inputs(self, section: NormSpec, result: NormResult) -> Carried:
        """X as given (add_norm: the residual input, not X + Y)."""
        return Carried(section.tokens, section.X.values)

    def answers(self, section: NormSpec, result: NormResult) -> dict[str, Any]:
        known = result.numbers
        rows: dict[str, Any] = {}
        for token, row in zip(section.tokens, result.rows, strict=True):
            scalars = {"mean": row.mean, "variance": row.variance, "std": row.std}
            if row.mean is None:
                del scalars["mean"]
            vectors = {"normalised": row.normalised, "output": row.output}
            if self.residual:
                vectors = {"sum": row.values, **vectors}
            answer: dict[str, Any] = {key: row_texts(v, known) for key, v in vectors.items()}
            answer.update({key: number_text(v, known) for key, v in scalars.items()})
            exact = surd_texts(row, section.beta_values())
            answer["exact"] = {**{key: exact.get(key) or exact_texts(v) for key, v in vectors.items()},
                               **{key: exact.get(key) or exact_latex(v, decimals=False) for key, v in scalars.items()}}
            rows[token] = answer
        out = {"kind": self.name, "norm": section.norm, "tokens": list(section.tokens),
               "eps": number_text(section.eps), "gamma": row_texts(section.gamma_values())}
        if section.norm == "layer":
            out["beta"] = row_texts(section.beta_values())
        out["rows"] = rows
        return out


NORM = NormKind(NormSpec, residual=False)
ADD_NORM = NormKind(AddNormSpec, residual=True)
