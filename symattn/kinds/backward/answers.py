"""The answers of a backward section as plain data (`symattn solve`, `render --format json`): kind, from (the
forward section's name), tokens, focus, loss (L, with `loss = "mse"`), and every matrix of the pass, row by row as
decimals to 30 significant digits: P, O, dO, dV, dP, D (rowsum(dP ∘ P)), dS, dQ, dK, dW_Q, dW_K, dW_V and dX.
`exact` holds the exact forms (LaTeX) of L and of the matrices up to dS, rational functions of the e^{a} short
enough to read; those after dS are sums of hundreds of such terms (a 3 × 2 example's dX: 100,000 characters), given
in decimals only. With check = "finite_difference": finite_difference, its h, L at W_Q ± h in entry (1, 1) (plus,
minus) and the central difference (quotient)."""

from __future__ import annotations

from typing import Any

from ...engine import entries
from ...features.attention.answers import exact_texts, row_texts
from .engine import BackwardResult
from .spec import BackwardSpec

MATRICES = ("P", "O", "dO", "dV", "dP", "dS", "dQ", "dK", "dW_Q", "dW_K", "dW_V", "dX")
EXACT = frozenset({"P", "O", "dO", "dV", "dP", "dS"})  # the matrices whose exact forms `exact` holds


def answers(spec: BackwardSpec, result: BackwardResult) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": spec.kind, "from": spec.forward.name, "tokens": list(spec.tokens),
                           "focus": spec.focus}
    exact: dict[str, Any] = {}
    if result.probabilities is not None:  # cross_entropy: softmax of each row of O
        out["targets"] = [c + 1 for c in spec.targets]
        out["P_O"] = [row_texts(row, result.known) for row in entries(result.probabilities)]
    if result.loss is not None:
        out["loss"] = row_texts((result.loss,), result.known)[0]
        exact["loss"] = exact_texts((result.loss,))[0]
    for key in MATRICES:
        rows = entries(getattr(result, key))
        out[key] = [row_texts(row, result.known) for row in rows]
        if key in EXACT:
            exact[key] = [exact_texts(row) for row in rows]
        if key == "dP":  # D after dP, as the page computes it
            out["D"], exact["D"] = row_texts(result.D, result.known), exact_texts(result.D)
    fd = result.difference
    if fd is not None:  # check = "finite_difference": the losses at W_Q ± h in entry (1, 1) and their quotient
        out["finite_difference"] = dict(zip(("h", "plus", "minus", "quotient"), row_texts(
            (fd.h, fd.plus, fd.minus, fd.quotient), result.known), strict=True))
    return {**out, "exact": exact}
