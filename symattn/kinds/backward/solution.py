"""The worked backward pass: the forward values it starts from, the upstream gradient, then dV, dP, the softmax's
Jacobian for the focus row and dS for all rows (with D checked both ways), dQ and dK, the weights' gradients and
dX, each a formula, its matrix and one row written out term by term."""

from __future__ import annotations

from sympy import ImmutableMatrix

from ...document.steps import Display, Formula, Heading, Name, Num, Paragraph, Shown, Step, Token
from ...features.attention import solution as common
from .engine import BackwardResult
from .spec import BackwardSpec
from .steps import FiniteDifference, Gradient, Loss, RowProduct, ScoreRow


# the names the sentences write as math
NAMES = {key: Name(key) for key in ("L", "Y", "dO", "dV", "dP", "dS", "dQ", "dK", "X", "Q", "K", "V", "S", "P", "O", "T",
                                    "W_Q", "W_K", "W_V", "J", "D", "p")}


def say(key: str, **params) -> Paragraph:
    """A sentence of the page, with the names it may write."""
    return Paragraph(f"backward.{key}", {**NAMES, **params})


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
        say("intro", source=Token(name)),
        say("notation", source=Token(name)),
        heading("step_forward"),
        say("forward_values", source=Token(name)),
        *(Gradient(key, _shown(getattr(r, key))) for key in ("Q", "K", "V")),
        Gradient("S" + scale, _shown(r.S)), Gradient("P", _shown(r.P)), Gradient("O", _shown(r.O)),
        heading("step_upstream"),
    ]
    if spec.loss == "cross_entropy":
        Y = ImmutableMatrix(r.O.rows, r.O.cols, lambda a, c: 1 if c == spec.targets[a] else 0)
        out += [say("ce"), Display(Formula("bw_ce")), Gradient("Y", _shown(Y)), Gradient("P_O", _shown(r.probabilities)),
                Loss(r.loss, loss="cross_entropy", known=r.known), say("dO_ce"), Display(Formula("bw_dO_ce")),
                Gradient("dO_ce", _shown(r.dO))]
    elif spec.loss == "mse":
        out += [say("mse"), Display(Formula("bw_loss")), Gradient("T", Shown.input(spec.T)),
                Loss(r.loss, known=r.known), say("dO_mse"), Display(Formula("bw_dO_mse")),
                Gradient("dO_mse", _shown(r.dO))]
    else:
        out += [say("dO_given"), Gradient("dO", Shown.input(spec.dO))]
    out += [
        heading("step_dV"),
        say("dV", token=tok), Gradient("dV", _shown(r.dV)),
        say("row_of", token=tok, M=Name("dV")),
        RowProduct(Name("dV", token), Name("PT", token), _shown(r.P.T.row(i)), Name("dO"), _shown(r.dO),
                   _shown(r.dV.row(i))),
        heading("step_dP"),
        say("dP"), Gradient("dP", _shown(r.dP)),
        say("row_of", token=tok, M=Name("dP")),
        RowProduct(Name("dP", token), Name("dO", token), _shown(r.dO.row(i)), Name("VT"), _shown(r.V.T),
                   _shown(r.dP.row(i)), columns=source.tokens),
        heading("step_dS"),
        say("softmax"), Display(Formula("bw_softmax_derivative")),
        say("jacobian", token=tok),
        Gradient("J", _shown(r.jacobian)),
        say("through_jacobian", token=tok),
        RowProduct(Name("dS", token), Name("dP", token), _shown(r.dP.row(i)), Name("J"), _shown(r.jacobian),
                   _shown(r.dS.row(i)), columns=source.tokens),
        say("shortcut"), Display(Formula("bw_dS")),
        say("D_check"), Display(Formula("bw_D")),
        *([say("masked"), Display(Formula("bw_masked"))] if r.masked else []),
        say("row_of", token=tok, M=Name("dS")),
        ScoreRow(token, source.tokens, tuple(r.P.row(i)), tuple(r.dP.row(i)), r.D[i], tuple(r.dO.row(i)),
                 tuple(r.O.row(i)), r.D_check[i], tuple(r.dS.row(i)), tuple(bool(v) for v in r.allowed.row(i)), r.known),
        say("all_rows"),
        Gradient("D", _column(r.D)), Gradient("D_check", _column(r.D_check)), Gradient("dS", _shown(r.dS)),
    ]
    out += [
        heading("step_dQ"),
        say("dQ" if source.scale.mode != "none" else "dQ_unscaled", source=Token(name)),
        Gradient("dQ" + scale, _shown(r.dQ)),
        say("row_of", token=tok, M=Name("dQ")),
        RowProduct(Name("dQ", token), Name("dS", token), _shown(r.dS.row(i)), Name("K"), _shown(r.K),
                  _shown(r.dQ.row(i)), source.scale, source.d_k, r.divisor),
        say("dK"),
        Gradient("dK" + scale, _shown(r.dK)),
        say("row_of", token=tok, M=Name("dK")),
        RowProduct(Name("dK", token), Name("dST", token), _shown(r.dS.T.row(i)), Name("Q"), _shown(r.Q),
                  _shown(r.dK.row(i)), source.scale, source.d_k, r.divisor),
        heading("step_weights"),
        say("weights"),
        Gradient("dW_Q", _shown(r.dW_Q)), Gradient("dW_K", _shown(r.dW_K)), Gradient("dW_V", _shown(r.dW_V)),
        say("weights_row"),
        RowProduct(Name("dW_Q"), Name("XT"), _shown(r.X.T.row(0)), Name("dQ"), _shown(r.dQ),
                   _shown(r.dW_Q.row(0)), row_number=1),
        heading("step_dX"),
        say("dX", source=Token(name)), Display(Formula("bw_dX")),
        *(Gradient(f"path_{c}", _shown(p)) for c, p in zip("QKV", r.paths, strict=True)),
        Gradient("dX", _shown(r.dX)),
    ]
    if r.difference is not None:
        fd = r.difference
        out += [heading("step_check"), say("fd", h=Num(fd.h), E=Name("E11")),
                *([] if spec.loss else [say("fd_linear")]),
                FiniteDifference(fd.h, fd.plus, fd.minus, fd.quotient, fd.gradient, r.known)]
    return out
