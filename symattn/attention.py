"""The attention pipeline as pure functions on exact SymPy matrices (no rounding anywhere)."""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
from sympy import QQ, Add, Expr, ImmutableMatrix, Integer, Mul, Pow, S, cos, exp, expand, sin, sqrt
from sympy.polys.matrices import DomainMatrix

from . import approx


@dataclass(frozen=True)
class Softmax:
    """softmax(a)_j = e^{a_j} / Z with Z = sum_k e^{a_k}, every part kept exact."""

    logits: tuple[Expr, ...]
    exps: tuple[Expr, ...]
    total: Expr
    weights: tuple[Expr, ...]


@dataclass(frozen=True)
class QueryAttention:
    """What one query does: raw scores, scaled scores, softmax weights, weighted sum of the values."""

    query: ImmutableMatrix
    scores: tuple[Expr, ...]
    scale: Expr
    scaled: tuple[Expr, ...]
    softmax: Softmax
    output: ImmutableMatrix


@dataclass(frozen=True)
class Attention:
    """A whole attention computation: projections of all tokens and the focus queries in order."""

    Q: ImmutableMatrix
    K: ImmutableMatrix
    V: ImmutableMatrix
    queries: dict[int, QueryAttention]


@dataclass(frozen=True)
class MatrixForm:
    """All queries at once: S = QKᵀ, the scaled scores, the row-wise softmax A and the output A·V."""

    scores: ImmutableMatrix
    scaled: ImmutableMatrix
    weights: ImmutableMatrix
    output: ImmutableMatrix


@dataclass(frozen=True)
class MultiHead:
    """Concatenated head outputs and their projection by W_O; attentions holds each computed head's own
    attention (None for a head whose output was given)."""

    heads: tuple[ImmutableMatrix, ...]
    concat: ImmutableMatrix
    output: ImmutableMatrix
    attentions: tuple[Attention | None, ...] = ()


def project(X: ImmutableMatrix, W: ImmutableMatrix) -> ImmutableMatrix:
    """Row-wise projection X·W (each token's row vector times the weight matrix).

    Rational matrices multiply as DomainMatrix over QQ (exact, and much faster than Matrix at larger sizes).
    """
    small = X.rows * X.cols * W.cols < 512  # below this, DomainMatrix's set-up costs more than it saves
    if small or X.free_symbols or W.free_symbols or not all(v.is_Rational for v in (*X, *W)):
        return ImmutableMatrix(X * W)
    product = DomainMatrix.from_Matrix(X).convert_to(QQ) * DomainMatrix.from_Matrix(W).convert_to(QQ)
    return ImmutableMatrix(product.to_Matrix())


def dot(u: ImmutableMatrix, v: ImmutableMatrix) -> Expr:
    """Dot product of two row vectors (expanded into a polynomial when the entries are symbolic)."""
    total = Add(*(a * b for a, b in zip(u, v, strict=True)))
    return expand(total) if total.free_symbols else total


def scores(query: ImmutableMatrix, K: ImmutableMatrix) -> tuple[Expr, ...]:
    """Raw attention scores q·k_j for every key row."""
    return tuple(dot(query, K.row(j)) for j in range(K.rows))


def scale_factor(d_k: int) -> Expr:
    """√d_k, exact (√4 = 2, √2 stays a surd)."""
    return sqrt(Integer(d_k))


def softmax(logits: tuple[Expr, ...]) -> Softmax:
    """Exact softmax sharing one denominator Z; a masked logit (−∞) has e^{−∞} = 0 and so weight exactly 0."""
    exps = tuple(Integer(0) if a == S.NegativeInfinity else exp(a) for a in logits)
    total = Add(*exps)
    return Softmax(logits=tuple(logits), exps=exps, total=total, weights=tuple(e / total for e in exps))


def weighted_sum(weights: Softmax, V: ImmutableMatrix) -> ImmutableMatrix:
    """Σ_j w_j v_j over the value rows, kept over the shared denominator: (Σ_j e^{a_j} v_j) / Z.

    Built unevaluated: the value is exact either way, and SymPy's canonical sorting of n products per entry
    would cost far more than the whole rest of the row (numbers come from the row's filed approximation).
    """
    def entry(c: int) -> Expr:
        terms = [Mul(V[j, c], e, evaluate=False) for j, e in enumerate(weights.exps) if V[j, c] != 0 and e != 0]
        return Mul(Add(*terms, evaluate=False) if terms else Integer(0), Pow(weights.total, -1), evaluate=False)

    if V.free_symbols or any(e.free_symbols for e in weights.exps):  # formulas: let SymPy tidy them
        return ImmutableMatrix(1, V.cols, [Add(*(e * V[j, c] for j, e in enumerate(weights.exps))) / weights.total
                                           for c in range(V.cols)])
    return ImmutableMatrix(1, V.cols, [entry(c) for c in range(V.cols)])


def _approximate(weights: Softmax, output: ImmutableMatrix, V: ImmutableMatrix) -> None:
    """Evaluate a row's softmax once (Z once, not once per weight) and file weights and outputs numerically."""
    if output.free_symbols:
        return
    with mpmath.workdps(approx.WORKING_DIGITS + 10):
        logits = [None if e == 0 else approx.to_mpf(a) for e, a in zip(weights.exps, weights.logits, strict=True)]
        exps = [mpmath.mpf(0) if a is None else mpmath.exp(a) for a in logits]
        total = mpmath.fsum(exps)
        for a, value in zip(weights.logits, logits, strict=True):  # shown again and again: in lines, vectors, tables
            if value is not None and not a.is_Rational:
                approx.remember(a, value)
        for e, value in zip(weights.exps, exps, strict=True):
            approx.remember(e, value)
        approx.remember(weights.total, total)
        for w, e in zip(weights.weights, exps, strict=True):
            approx.remember(w, e / total)
        for c in range(V.cols):
            column = [approx.to_mpf(V[j, c]) if not V[j, c].is_Rational else mpmath.mpf(V[j, c].p) / V[j, c].q
                      for j in range(V.rows)]
            approx.remember(output[c], mpmath.fdot(exps, column) / total)


def attend(query: ImmutableMatrix, K: ImmutableMatrix, V: ImmutableMatrix, scale: Expr,
           allowed: tuple[bool, ...] | None = None, raw: tuple[Expr, ...] | None = None) -> QueryAttention:
    """One query against all keys and values: scores, division by `scale` (√d_k, 1, ...), softmax, weighted sum.

    `allowed` masks keys: a masked score becomes −∞ before the softmax (causal attention), so its weight is 0.
    """
    raw = scores(query, K) if raw is None else raw
    scaled = tuple(s / scale if allowed is None or allowed[j] else S.NegativeInfinity for j, s in enumerate(raw))
    weights = softmax(scaled)
    output = weighted_sum(weights, V)
    _approximate(weights, output, V)
    return QueryAttention(query, raw, scale, scaled, weights, output)


def attention(
    X: ImmutableMatrix,
    source: ImmutableMatrix,
    W_Q: ImmutableMatrix,
    W_K: ImmutableMatrix,
    W_V: ImmutableMatrix,
    scale: Expr,
    focus: tuple[int, ...],
    mask: ImmutableMatrix | None = None,
) -> Attention:
    """Queries from X, keys and values from source (source is X for self-attention, the memory for cross).

    mask[i, j] = 1 lets query i attend to key j, 0 masks it (None: every key is visible).
    """
    Q, K, V = project(X, W_Q), project(source, W_K), project(source, W_V)
    def allowed(i: int) -> tuple[bool, ...] | None:
        return None if mask is None else tuple(bool(mask[i, j]) for j in range(mask.cols))

    # All raw scores at once (QKᵀ: one exact product) when the entries are rational.
    S_ = project(Q, ImmutableMatrix(K.T)) if all(v.is_Rational for v in (*Q, *K)) else None
    def raw(i: int) -> tuple[Expr, ...] | None:
        return None if S_ is None else tuple(S_.row(i))

    return Attention(Q, K, V, {i: attend(Q.row(i), K, V, scale, allowed(i), raw(i)) for i in focus})


def causal_mask(n: int) -> ImmutableMatrix:
    """The decoder's mask: token i sees tokens 0..i (ones on and below the diagonal)."""
    return ImmutableMatrix(n, n, lambda i, j: 1 if j <= i else 0)


def sinusoidal_encoding(n: int, d: int) -> ImmutableMatrix:
    """The original paper's PE(pos, 2i) = sin(pos / 10000^{2i/d}), PE(pos, 2i+1) = cos(pos / 10000^{2i/d}),
    exact (sin 1, cos(1/100), ...), positions counted from 0."""
    def entry(pos: int, column: int) -> Expr:
        angle = Integer(pos) / Integer(10000) ** (Integer(2 * (column // 2)) / d)
        return sin(angle) if column % 2 == 0 else cos(angle)

    return ImmutableMatrix(n, d, entry)


def matrix_form(queries: list[QueryAttention]) -> MatrixForm:
    """Stack per-query results (in query order) into the matrix form."""
    def stack(rows: list[tuple[Expr, ...]]) -> ImmutableMatrix:
        return ImmutableMatrix([list(row) for row in rows])

    return MatrixForm(
        scores=stack([q.scores for q in queries]),
        scaled=stack([q.scaled for q in queries]),
        weights=stack([q.softmax.weights for q in queries]),
        output=ImmutableMatrix.vstack(*[q.output for q in queries]),
    )


def concat(outputs: tuple[ImmutableMatrix, ...]) -> ImmutableMatrix:
    """Head outputs side by side in one row vector."""
    return ImmutableMatrix(1, sum(o.cols for o in outputs), [x for o in outputs for x in o])


def multi_head(outputs: tuple[ImmutableMatrix, ...], W_O: ImmutableMatrix,
               attentions: tuple[Attention | None, ...] = ()) -> MultiHead:
    """Concatenate the head outputs and project by W_O."""
    joined = concat(outputs)
    return MultiHead(tuple(outputs), joined, project(joined, W_O), attentions)
