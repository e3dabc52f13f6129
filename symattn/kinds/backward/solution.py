"""The worked backward pass: the forward values it starts from, the upstream gradient, then dV, dP, the softmax's
Jacobian for the focus row and dS for all rows (with D checked both ways), dQ and dK, the weights' gradients and
dX, each a formula, its matrix and one row written out term by term."""

from __future__ import annotations

from sympy import ImmutableMatrix

from ...document.steps import Display, Formula, Heading, Name, Paragraph, Shown, Step, Token
from ...features.attention import solution as common
from .engine import BackwardResult
from .spec import BackwardSpec
from .steps import Gradient, Loss, RowProduct, ScoreRow


def steps(spec: BackwardSpec, r: BackwardResult) -> list[Step]:
    def _shown(M: ImmutableMatrix) -> Shown:
        return Shown(ImmutableMatrix(M), uniform=False, known=r.known)

    def _column(values) -> Shown:
        return _shown(ImmutableMatrix(len(values), 1, list(values)))

    source, name = spec.forward.section, spec.forward.name
    token, i = spec.focus, r.focus
    tok = Token(token)
    scale = {"sqrt_d_k": "", "none": "_none"}.get(source.scale.mode, "_c")
    number = iter(range(1, 20))

    def heading(key: str) -> Heading:
        return Heading(2, f"backward.{key}", {"n": next(number)})

    out: list[Step] = [
        common.part_heading(spec, "backward.heading"),
        Paragraph("backward.intro", {"source": Token(name)}),
        Paragraph("backward.notation", {"source": Token(name)}),
        heading("step_forward"),
        Paragraph("backward.forward_values", {"source": Token(name)}),
        *(Gradient(key, _shown(getattr(r, key))) for key in ("Q", "K", "V")),
        Gradient("S" + scale, _shown(r.S)), Gradient("P", _shown(r.P)), Gradient("O", _shown(r.O)),
        heading("step_upstream"),
    ]
    if spec.loss == "mse":
        out += [Paragraph("backward.mse"), Display(Formula("bw_loss")), Gradient("T", Shown.input(spec.T)),
                Loss(r.loss, r.known), Paragraph("backward.dO_mse"), Display(Formula("bw_dO_mse")),
                Gradient("dO_mse", _shown(r.dO))]
    else:
        out += [Paragraph("backward.dO_given"), Gradient("dO", Shown.input(spec.dO))]
    out += [
        heading("step_dV"),
        Paragraph("backward.dV", {"token": tok}), Gradient("dV", _shown(r.dV)),
        Paragraph("backward.row_of", {"token": tok, "M": Name("dV")}),
        RowProduct(Name("dV", token), Name("PT", token), _shown(r.P.T.row(i)), Name("dO"), _shown(r.dO),
                       _shown(r.dV.row(i))),
        heading("step_dP"),
        Paragraph("backward.dP"), Gradient("dP", _shown(r.dP)),
        Paragraph("backward.row_of", {"token": tok, "M": Name("dP")}),
        RowProduct(Name("dP", token), Name("dO", token), _shown(r.dO.row(i)), Name("VT"), _shown(r.V.T),
                       _shown(r.dP.row(i))),
        heading("step_dS"),
        Paragraph("backward.softmax"), Display(Formula("bw_softmax_derivative")),
        Paragraph("backward.jacobian", {"token": tok}), Display(Formula("bw_jacobian")),
        Gradient("J", _shown(r.jacobian)),
        Paragraph("backward.through_jacobian", {"token": tok}),
        RowProduct(Name("dS", token), Name("dP", token), _shown(r.dP.row(i)), Name("J"), _shown(r.jacobian),
                       _shown(r.dS.row(i))),
        Paragraph("backward.shortcut"), Display(Formula("bw_dS")),
        Paragraph("backward.D_check"), Display(Formula("bw_D")),
        *([Paragraph("backward.masked"), Display(Formula("bw_masked"))] if r.masked else []),
        Paragraph("backward.row_of", {"token": tok, "M": Name("dS")}),
        ScoreRow(token, source.tokens, tuple(r.P.row(i)), tuple(r.dP.row(i)), r.D[i], tuple(r.dO.row(i)),
                 tuple(r.O.row(i)), r.D_check[i], tuple(r.dS.row(i)), tuple(bool(v) for v in r.allowed.row(i)), r.known),
        Paragraph("backward.all_rows"),
        Gradient("D", _column(r.D)), Gradient("D_check", _column(r.D_check)), Gradient("dS", _shown(r.dS)),
    ]
    out += [
        heading("step_dQ"),
        Paragraph("backward.dQ", {"source": Token(name)}),
        Gradient("dQ" + scale, _shown(r.dQ)),
        Paragraph("backward.row_of", {"token": tok, "M": Name("dQ")}),
        RowProduct(Name("dQ", token), Name("dS", token), _shown(r.dS.row(i)), Name("K"), _shown(r.K),
                  _shown(r.dQ.row(i)), source.scale, source.d_k, r.divisor),
        Paragraph("backward.dK"),
        Gradient("dK" + scale, _shown(r.dK)),
        Paragraph("backward.row_of", {"token": tok, "M": Name("dK")}),
        RowProduct(Name("dK", token), Name("dST", token), _shown(r.dS.T.row(i)), Name("Q"), _shown(r.Q),
                  _shown(r.dK.row(i)), source.scale, source.d_k, r.divisor),
        heading("step_weights"),
        Paragraph("backward.weights"),
        Gradient("dW_Q", _shown(r.dW_Q)), Gradient("dW_K", _shown(r.dW_K)), Gradient("dW_V", _shown(r.dW_V)),
        Paragraph("backward.weights_row"),
        RowProduct(Name("dW_Q", "1"), Name("XT", "1"), _shown(r.X.T.row(0)), Name("dQ"), _shown(r.dQ),
                       _shown(r.dW_Q.row(0))),
        heading("step_dX"),
        Paragraph("backward.dX", {"source": Token(name)}), Display(Formula("bw_dX")),
        *(Gradient(f"path_{c}", _shown(p)) for c, p in zip("QKV", r.paths, strict=True)),
        Gradient("dX", _shown(r.dX)),
    ]
    return out
