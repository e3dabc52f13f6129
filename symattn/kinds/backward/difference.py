"""The numerical check a page may end with (`check = "finite_difference"`): the loss recomputed exactly with one
entry of W_Q moved by ±h, and the central difference (L(W_Q + h) − L(W_Q − h)) / 2h beside the formula's dW_Q
entry. With dO given, the loss is the one whose gradient dO is, L = Σ dO ∘ O."""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
from sympy import Expr, ImmutableMatrix, Rational, S, log

from ...engine import WORKING_DIGITS, Numbers
from ...engine.matrices import project
from .engine import GUARD, softmax_rows


@dataclass(frozen=True)
class Difference:
    """L at W_Q ± h in entry (1, 1), the central difference and the formula's dW_Q entry, exact."""

    h: Expr
    plus: Expr
    minus: Expr
    quotient: Expr
    gradient: Expr


def loss_at(spec, W_Q: ImmutableMatrix) -> Expr:
    """The loss of the forward section with W_Q in place of its own, exactly."""
    source = spec.forward.section
    X = source.X.values
    n = X.rows
    Q, K, V = project(X, W_Q), project(X, source.W_K.values), project(X, source.W_V.values)
    divisor = source.scale.divisor(source.d_k)
    allowed = source.mask.values if source.mask is not None else ImmutableMatrix.ones(n, n)
    raw = Q * K.T
    logits = ImmutableMatrix(n, n, lambda i, j: raw[i, j] / divisor if allowed[i, j] else S.NegativeInfinity)
    O = softmax_rows(logits, allowed) * V
    if spec.loss == "cross_entropy":
        probabilities = softmax_rows(O, ImmutableMatrix.ones(*O.shape))
        return -sum((log(probabilities[r, c]) for r, c in enumerate(spec.targets)), S.Zero)
    if spec.loss == "mse":
        return Rational(1, 2) * sum(((o - t) ** 2 for o, t in zip(O, spec.T.values, strict=True)), S.Zero)
    return sum((o * g for o, g in zip(O, spec.dO.values, strict=True)), S.Zero)


def difference(spec, gradient: Expr, known: Numbers) -> Difference:
    """The central difference at the spec's h, each value's approximation filed in `known` (evaluated once, at the
    working digits and the guard digits that the difference of two close losses needs)."""
    W = spec.forward.section.W_Q.values
    h = spec.h
    moved = [loss_at(spec, W + ImmutableMatrix(W.rows, W.cols, lambda i, j: sign * h if (i, j) == (0, 0) else 0))
             for sign in (1, -1)]
    quotient = (moved[0] - moved[1]) / (2 * h)
    with mpmath.workdps(WORKING_DIGITS + GUARD):
        values = [mpmath.mpf(str(v.evalf(WORKING_DIGITS + GUARD))) for v in moved]
        for exact, value in ((moved[0], values[0]), (moved[1], values[1]),
                             (quotient, (values[0] - values[1]) / (2 * mpmath.mpf(str(h))))):
            if not exact.is_Rational:
                known.file(exact, value)
    return Difference(h, moved[0], moved[1], quotient, gradient)
