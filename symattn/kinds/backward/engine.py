"""The backward pass exactly: the forward values of the self-attention section (Q, K, V, the scaled scores S, the
weights P, the output O), the upstream gradient dO, then each gradient by its formula. P's entries are e^{a}/Σ e^{a}
with the exponentials kept exact, so every gradient is an exact rational function of them (SymPy)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import mpmath
from sympy import Expr, ImmutableMatrix, Rational, S, exp, log

from ...engine import WORKING_DIGITS, Numbers
from ...engine.matrices import project
from ...engine.numbers import to_mpf
from .spec import BackwardSpec


@dataclass(frozen=True)
class BackwardResult:
    """Every matrix of the pass, exact. `allowed` is the mask (1: visible; all ones without one), `divisor` what the
    raw scores QKᵀ were divided by, `loss` L (None when dO was given), `D` = rowsum(dP ∘ P) and `D_check` =
    rowsum(dO ∘ O) (the same numbers: FlashAttention's D), `jacobian` the softmax Jacobian diag(p) − p pᵀ of the
    focus row."""

    X: ImmutableMatrix
    Q: ImmutableMatrix
    K: ImmutableMatrix
    V: ImmutableMatrix
    S: ImmutableMatrix  # the softmax's logits QKᵀ/√d_k (−∞ where masked)
    P: ImmutableMatrix
    O: ImmutableMatrix
    dO: ImmutableMatrix
    dV: ImmutableMatrix
    dP: ImmutableMatrix
    D: tuple[Expr, ...]
    D_check: tuple[Expr, ...]
    dS: ImmutableMatrix
    dQ: ImmutableMatrix
    dK: ImmutableMatrix
    dW_Q: ImmutableMatrix
    dW_K: ImmutableMatrix
    dW_V: ImmutableMatrix
    paths: tuple[ImmutableMatrix, ImmutableMatrix, ImmutableMatrix]  # dQ W_Qᵀ, dK W_Kᵀ, dV W_Vᵀ
    dX: ImmutableMatrix
    jacobian: ImmutableMatrix
    allowed: ImmutableMatrix
    divisor: Expr
    focus: int
    loss: Expr | None = None
    known: Numbers = field(default_factory=Numbers, compare=False)  # every irrational entry's approximation
    probabilities: ImmutableMatrix | None = None  # cross_entropy: softmax of each row of O
    difference: Any = None  # the finite-difference check (difference.Difference), when the spec asks for it

    @property
    def masked(self) -> bool:
        """Whether some key is hidden from some query."""
        return any(v == 0 for v in self.allowed)


def softmax_rows(logits: ImmutableMatrix, allowed: ImmutableMatrix) -> ImmutableMatrix:
    """P_ij = e^{a_ij} / Σ_k e^{a_ik} over the visible keys, exactly (0 where masked)."""
    rows = []
    for i in range(logits.rows):
        powers = [exp(logits[i, j]) if allowed[i, j] else S.Zero for j in range(logits.cols)]
        total = sum(powers, S.Zero)
        rows.append([p / total for p in powers])
    return ImmutableMatrix(rows)


def hadamard_rowsum(A: ImmutableMatrix, B: ImmutableMatrix) -> tuple[Expr, ...]:
    """rowsum(A ∘ B): Σ_j A_ij B_ij for each row i."""
    return tuple(sum((A[i, j] * B[i, j] for j in range(A.cols)), S.Zero) for i in range(A.rows))


# the digits the approximations are computed with: the working digits, and guard digits for the cancellations of
# dP − D (a gradient far smaller than the terms it is the difference of)
GUARD = 40


class Approximations:
    """The same pass in mpmath, entry by entry beside the exact one, each irrational entry filed in `known`: the
    exact gradients are long sums of e^{a}-quotients, which SymPy would evaluate term by term at every display."""

    def __init__(self) -> None:
        self.known = Numbers()

    def matrix(self, exact: ImmutableMatrix, numbers: list[list[mpmath.mpf]]) -> list[list[mpmath.mpf]]:
        for i in range(exact.rows):
            for j in range(exact.cols):
                if not exact[i, j].is_Rational and exact[i, j] is not S.NegativeInfinity:
                    self.known.file(exact[i, j], numbers[i][j])
        return numbers

    def values(self, exact: tuple[Expr, ...] | list[Expr], numbers: list[mpmath.mpf]) -> list[mpmath.mpf]:
        for e, v in zip(exact, numbers, strict=True):
            if not e.is_Rational:
                self.known.file(e, v)
        return numbers


def _numbers(M: ImmutableMatrix) -> list[list[mpmath.mpf]]:
    return [[to_mpf(M[i, j]) for j in range(M.cols)] for i in range(M.rows)]


def _times(A: list[list[mpmath.mpf]], B: list[list[mpmath.mpf]]) -> list[list[mpmath.mpf]]:
    return [[mpmath.fsum(a[k] * B[k][j] for k in range(len(B))) for j in range(len(B[0]))] for a in A]


def _transposed(A: list[list[mpmath.mpf]]) -> list[list[mpmath.mpf]]:
    return [list(column) for column in zip(*A, strict=True)]


def compute(spec: BackwardSpec) -> BackwardResult:
    with mpmath.workdps(WORKING_DIGITS + GUARD):
        return _compute(spec)


def _compute(spec: BackwardSpec) -> BackwardResult:
    source = spec.forward.section
    X = source.X.values
    n = X.rows
    W_Q, W_K, W_V = (getattr(source, f"W_{c}").values for c in "QKV")
    Q, K, V = project(X, W_Q), project(X, W_K), project(X, W_V)
    divisor = source.scale.divisor(source.d_k)
    allowed = source.mask.values if source.mask is not None else ImmutableMatrix.ones(n, n)
    raw = Q * K.T
    S_ = ImmutableMatrix(n, n, lambda i, j: raw[i, j] / divisor if allowed[i, j] else S.NegativeInfinity)
    P = softmax_rows(S_, allowed)
    O = P * V
    loss = probabilities = None
    if spec.loss == "cross_entropy":  # the rows of O as logits: dO = softmax(O) − Y
        probabilities = softmax_rows(O, ImmutableMatrix.ones(*O.shape))
        loss = -sum((log(probabilities[r, c]) for r, c in enumerate(spec.targets)), S.Zero)
        dO = ImmutableMatrix(O.rows, O.cols, lambda r, c: probabilities[r, c] - (1 if c == spec.targets[r] else 0))
    elif spec.loss == "mse":
        diff = O - spec.T.values
        loss = Rational(1, 2) * sum((v * v for v in diff), S.Zero)
        dO = ImmutableMatrix(diff)
    else:
        dO = spec.dO.values
    dV = P.T * dO
    dP = dO * V.T
    D = hadamard_rowsum(dP, P)
    dS = ImmutableMatrix(n, n, lambda i, j: P[i, j] * (dP[i, j] - D[i]) if allowed[i, j] else S.Zero)
    dQ = dS * K / divisor
    dK = dS.T * Q / divisor
    paths = (dQ * W_Q.T, dK * W_K.T, dV * W_V.T)
    i = source.tokens.index(spec.focus)
    p = P.row(i)
    jacobian = ImmutableMatrix(n, n, lambda a, b: (p[a] if a == b else 0) - p[a] * p[b])
    D_check = hadamard_rowsum(dO, O)
    dW = (X.T * dQ, X.T * dK, X.T * dV)
    dX = paths[0] + paths[1] + paths[2]
    # the same pass in numbers, filed for every display and answer
    a = Approximations()
    x, q, k, v = _numbers(X), _numbers(Q), _numbers(K), _numbers(V)
    s_ = [[to_mpf(raw[r, c] / divisor) if allowed[r, c] else None for c in range(n)] for r in range(n)]
    a.matrix(S_, [[mpmath.mpf("-inf") if e is None else e for e in row] for row in s_])
    powers = [[mpmath.exp(e) if e is not None else mpmath.mpf(0) for e in row] for row in s_]
    pn = a.matrix(P, [[e / mpmath.fsum(row) for e in row] for row in powers])
    on = a.matrix(O, _times(pn, v))
    if probabilities is not None:
        powers_O = [[mpmath.exp(e) for e in row] for row in on]
        pon = a.matrix(probabilities, [[e / mpmath.fsum(row) for e in row] for row in powers_O])
        don = a.matrix(dO, [[e - (1 if c == spec.targets[r] else 0) for c, e in enumerate(row)]
                            for r, row in enumerate(pon)])
        a.values((loss,), [-mpmath.fsum(mpmath.log(pon[r][c]) for r, c in enumerate(spec.targets))])
    elif spec.loss == "mse":
        don = a.matrix(dO, [[on[r][c] - to_mpf(spec.T.values[r, c]) for c in range(len(on[0]))] for r in range(n)])
        a.values((loss,), [mpmath.fsum(e * e for row in don for e in row) / 2])
    else:
        don = a.matrix(dO, _numbers(dO))
    dvn = a.matrix(dV, _times(_transposed(pn), don))
    dpn = a.matrix(dP, _times(don, _transposed(v)))
    dn = a.values(D, [mpmath.fsum(dpn[r][c] * pn[r][c] for c in range(n)) for r in range(n)])
    a.values(D_check, [mpmath.fsum(don[r][c] * on[r][c] for c in range(len(on[0]))) for r in range(n)])
    dsn = a.matrix(dS, [[pn[r][c] * (dpn[r][c] - dn[r]) for c in range(n)] for r in range(n)])
    a.matrix(jacobian, [[(pn[i][r] if r == c else 0) - pn[i][r] * pn[i][c] for c in range(n)] for r in range(n)])
    dv = to_mpf(divisor)
    dqn = a.matrix(dQ, [[e / dv for e in row] for row in _times(dsn, k)])
    dkn = a.matrix(dK, [[e / dv for e in row] for row in _times(_transposed(dsn), q)])
    for exact, grad in zip(dW, (dqn, dkn, dvn), strict=True):
        a.matrix(exact, _times(_transposed(x), grad))
    pathn = [a.matrix(exact, _times(grad, _transposed(_numbers(W))))
             for exact, grad, W in zip(paths, (dqn, dkn, dvn), (W_Q, W_K, W_V), strict=True)]
    a.matrix(dX, [[mpmath.fsum(p_[r][c] for p_ in pathn) for c in range(len(x[0]))] for r in range(n)])
    return BackwardResult(X=X, Q=Q, K=K, V=V, S=S_, P=P, O=O, dO=ImmutableMatrix(dO), dV=dV, dP=dP, D=D,
                          D_check=D_check, dS=dS, dQ=dQ, dK=dK, dW_Q=dW[0], dW_K=dW[1], dW_V=dW[2], paths=paths,
                          dX=dX, jacobian=jacobian, allowed=allowed, divisor=divisor, focus=i, loss=loss,
                          probabilities=probabilities, known=a.known)
