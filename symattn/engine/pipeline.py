"""The attention pipeline as pure functions on exact SymPy matrices (no rounding anywhere): scores, scaling,
softmax and weighted sum per query; self-, cross- and masked attention; matrix form and multi-head."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import mpmath
from sympy import QQ, Add, Expr, ImmutableMatrix, Rational, S, expand
from sympy.polys.matrices import DomainMatrix

from .fast import flat_entries, row_matrices, row_matrix
from .matrices import (
    Fraction,
    as_matrix,
    file_matrix,
    file_products,
    fractions,
    is_rational,
    matrix_numbers,
    project,
    projection,
    rational_storage,
    times,
)
from .numbers import WORKING_DIGITS, Numbers, rational_times_root, to_mpf
from .softmax import FractionRow, RowNumbers, Softmax, rational_rows_numbers, rationals, row_numbers, weighted_sum
from .symbols import any_symbolic, is_symbolic
from .values import Values


@dataclass(frozen=True)
class QueryAttention:
    """What one query does: raw scores, scaled scores (the softmax's logits), softmax weights, weighted sum of the
    values. Rational scores are kept as fractions (`score_fractions`, the softmax's `fractions`) until read as
    SymPy numbers: an answer key reads only the fractions."""

    row: Callable[[], ImmutableMatrix] = field(repr=False, compare=False)  # the query vector, when asked for
    raw: tuple[Expr, ...] | None  # the raw scores as SymPy numbers, or None when given as score_fractions
    divisor: Expr  # what the scores are divided by: √d_k, 1 or a given number
    softmax: Softmax
    values: Values | None = field(repr=False, compare=False)  # None: no values given
    score_fractions: FractionRow | None = None

    @cached_property
    def scores(self) -> tuple[Expr, ...]:
        """The raw scores q·k_j as SymPy numbers."""
        return self.raw if self.score_fractions is None else rationals(self.score_fractions)

    @property
    def scaled(self) -> tuple[Expr, ...]:
        """The scaled scores: the softmax's logits."""
        return self.softmax.logits

    @cached_property
    def query(self) -> ImmutableMatrix:
        """The query vector q (a row of Q, made when first read: a document's steps show it, an answer key not)."""
        return self.row()

    @cached_property
    def output(self) -> ImmutableMatrix | None:
        """Σ_j w_j v_j (built when first read, like the softmax's SymPy forms); None without values (given scores
        alone: the attention ends at the weights)."""
        return None if self.values is None else weighted_sum(self.softmax, self.values)


class Projections:
    """Q, K and V of an attention: SymPy matrices when first read, rational ones kept as DomainMatrices over QQ
    (flint-backed when python-flint is installed) until then, and their rows as fractions. Apart from Attention,
    so that its queries can read their rows from here without a reference cycle back to the Attention (a batch
    of exam versions runs without the cyclic collector: workers.py)."""

    def __init__(self, stored: dict[str, ImmutableMatrix | DomainMatrix]) -> None:
        self.stored = stored
        self.fraction_rows: dict[str, list[list[Fraction]] | None] = {}

    @cached_property
    def Q(self) -> ImmutableMatrix:
        return as_matrix(self.stored["Q"])

    @cached_property
    def K(self) -> ImmutableMatrix:
        return as_matrix(self.stored["K"])

    @cached_property
    def V(self) -> ImmutableMatrix | None:
        return as_matrix(self.stored["V"]) if "V" in self.stored else None

    def fractions(self, name: str) -> list[list[tuple[int, int]]] | None:
        """Attention.fractions."""
        if name not in self.fraction_rows:
            stored = self.stored.get(name)
            rational = stored is not None and not isinstance(stored, ImmutableMatrix)
            self.fraction_rows[name] = fractions(stored) if rational else None
        return self.fraction_rows[name]


class Attention:
    """A whole attention computation: projections of all tokens and the focus queries in order, and `known`, the
    numbers of its irrational values (Numbers).

    Q, K and V are SymPy matrices when first read. Rational ones are kept as DomainMatrices over QQ (flint-backed
    when python-flint is installed) until then: an answer key reads only their fractions (`fractions`).
    """

    def __init__(self, projections: dict[str, ImmutableMatrix | DomainMatrix],
                 queries: dict[int, QueryAttention], known: Numbers) -> None:
        self.projections = Projections(projections)
        self.queries = queries
        self.known = known

    @property
    def Q(self) -> ImmutableMatrix:
        return self.projections.Q

    @property
    def K(self) -> ImmutableMatrix:
        return self.projections.K

    @property
    def V(self) -> ImmutableMatrix | None:
        """V, or None when no values were given (scores alone)."""
        return self.projections.V

    def fractions(self, name: str) -> list[list[tuple[int, int]]] | None:
        """The rows of Q, K or V as (numerator, denominator) pairs in lowest terms when rational, else None
        (read once: V's are read by the engine and again by an answer key)."""
        return self.projections.fractions(name)


@dataclass(frozen=True)
class MatrixForm:
    """All queries at once: S = QKᵀ, the scaled scores, the row-wise softmax A and the output A·V (None without
    values)."""

    scores: ImmutableMatrix
    scaled: ImmutableMatrix
    weights: ImmutableMatrix
    output: ImmutableMatrix | None


@dataclass(frozen=True)
class MultiHead:
    """Concatenated head outputs and their projection by W_O; attentions holds each computed head's own
    attention (None for a head whose output was given); known, the numbers of the irrational values (the heads'
    included)."""

    heads: tuple[ImmutableMatrix, ...]
    concat: ImmutableMatrix
    output: ImmutableMatrix
    attentions: tuple[Attention | None, ...]
    known: Numbers


def dot(u: ImmutableMatrix, v: ImmutableMatrix) -> Expr:
    """Dot product of two row vectors (expanded into a polynomial when the entries are symbolic)."""
    u, v = (flat_entries(w) if isinstance(w, ImmutableMatrix) else w for w in (u, v))  # iterating converts
    total = Add(*(a * b for a, b in zip(u, v, strict=True)))
    return expand(total) if is_symbolic(total) else total


def scores(query: ImmutableMatrix, K: ImmutableMatrix) -> tuple[Expr, ...]:
    """Raw attention scores q·k_j for every key row."""
    return tuple(dot(query, row) for row in row_matrices(K))


def attend(query: ImmutableMatrix | Callable[[], ImmutableMatrix], K: ImmutableMatrix | None,
           V: ImmutableMatrix | Values | None, divisor: Expr, allowed: tuple[bool, ...] | None = None,
           raw: tuple[Expr, ...] | None = None, known: Numbers | None = None,
           bias: tuple[Expr, ...] | None = None) -> QueryAttention:
    """One query against all keys and values: scores, division by `divisor` (√d_k, 1, ...), softmax, weighted sum.

    `allowed` masks keys: a masked score becomes −∞ before the softmax (causal attention), so its weight is 0.
    `bias`, one exact value per key, is added to the scaled scores before the softmax (ALiBi's −m(i − j)); a
    masked key's logit stays −∞.
    `query` may be a function giving the query vector when it is asked for, and K None, when `raw` is given;
    V None: no values (the weights are the end, the output None).
    The numbers of irrational values are filed in `known` (a new table if none is given).
    """
    known = Numbers() if known is None else known
    row = query if callable(query) else lambda: query
    raw = scores(row(), K) if raw is None else raw
    V = Values.of(V, known) if isinstance(V, ImmutableMatrix) else V
    added = (S.Zero,) * len(raw) if bias is None else bias
    scaled = tuple(S.NegativeInfinity if allowed is not None and not allowed[j] else s / divisor if bias is None
                   else s / divisor + b for j, (s, b) in enumerate(zip(raw, added, strict=True)))
    filed = [(a, known.get(s), b) for s, a, b in zip(raw, scaled, added, strict=True)
             if a is not S.NegativeInfinity and not a.is_Rational]
    if any(number is not None for _, number, _ in filed):  # a score whose number is filed: its scaled score's too
        with mpmath.workdps(WORKING_DIGITS + 10):
            divisor_number = to_mpf(divisor)
            for a, number, b in filed:
                if number is not None:
                    known.file(a, number / divisor_number + (to_mpf(b) if b else 0))
    return QueryAttention(row, raw, divisor, Softmax(known, scaled, row_numbers(scaled, V, known)), V)


def attend_fractions(query: Callable[[], ImmutableMatrix], V: Values, divisor: Expr, raw: FractionRow,
                     scaled: FractionRow, known: Numbers, radicand: int, numbers: RowNumbers | None) -> QueryAttention:
    """attend() of rational scores given as fractions, raw and scaled (None where masked; the scaled scores are
    these fractions times √radicand), with the row's numbers: no SymPy number is made until one is read."""
    softmax = Softmax(known, numbers=numbers, fractions=scaled, radicand=radicand)
    return QueryAttention(query, None, divisor, softmax, V, score_fractions=raw)


def attention(
    X: ImmutableMatrix,
    source: ImmutableMatrix,
    W_Q: ImmutableMatrix,
    W_K: ImmutableMatrix,
    W_V: ImmutableMatrix,
    divisor: Expr,
    focus: tuple[int, ...],
    mask: ImmutableMatrix | None = None,
) -> Attention:
    """Queries from X, keys and values from source (source is X for self-attention, the memory for cross).

    mask[i, j] = 1 lets query i attend to key j, 0 masks it (None: every key is visible).
    """
    stored = {"Q": projection(X, W_Q), "K": projection(source, W_K), "V": projection(source, W_V)}
    return attention_of(stored, divisor, focus, mask, inputs=(X, source, W_Q, W_K, W_V))


def attention_of(
    stored: dict[str, ImmutableMatrix | DomainMatrix],
    divisor: Expr,
    focus: tuple[int, ...],
    mask: ImmutableMatrix | None = None,
    inputs: tuple[ImmutableMatrix, ...] | None = None,
    raw: dict[int, tuple[Expr, ...]] | None = None,
    known: Numbers | None = None,
    bias: ImmutableMatrix | None = None,
) -> Attention:
    """Attention of given projections `stored` ("Q", "K", "V": SymPy matrices, rational ones possibly as
    DomainMatrices over QQ): what attention() does once X is projected, and what a section that gives Q, K and V
    (or rotates them, or appends a cache) starts from. Query i uses row i of Q; mask is queries × keys.

    `inputs` (X, source, W_Q, W_K, W_V), when Q, K and V are their products, lets irrational products (X + P with
    sines) be evaluated from the inputs once. `raw` gives the raw scores of the focus queries (then Q and K are
    not multiplied: scores given, or written in m − n as RoPE's are); without it they are q_i · k_j. Without
    "V" in `stored` (scores given alone) the queries end at their weights: their outputs are None. `known`: the
    numbers of irrational values filed already (RoPE's rotated entries and scores), else a new table. `bias`
    (queries × keys, exact) is added to the scaled scores before the softmax (attend's), masked keys staying −∞.
    """
    queries: dict[int, QueryAttention] = {}
    known = Numbers() if known is None else known
    result = Attention(stored, queries, known)
    matrices = result.projections  # what the queries' lazy rows read (no cycle through result.queries)

    def allowed(i: int) -> tuple[bool, ...] | None:
        return None if mask is None else tuple(bool(mask[i, j]) for j in range(mask.cols))

    def added(i: int) -> tuple[Expr, ...] | None:
        return None if bias is None else tuple(bias[i, j] for j in range(bias.cols))

    left, right = (None, None) if raw is not None else (rational_storage(stored[name]) for name in "QK")
    rational = left is not None and right is not None
    # Rational scores: the logits are c·√m for a rational or surd divisor, kept as fractions c and the radicand m.
    logit = _reciprocal(divisor) if rational else None
    # kept as fractions with a bias too when the logits stay rational: a rational divisor and bias
    kept = logit is not None and (bias is None or (logit[1] == 1 and all(b.is_Rational for b in bias)))
    if rational:  # all raw scores at once: QKᵀ, one exact product
        products = left * right.transpose()
        if kept:
            raw, scaled = fractions(products), fractions(products * QQ.from_sympy(logit[0]))
        else:
            rows = products.to_sympy().to_list()  # no matrix of SymPy entries built for QKᵀ
            raw = {i: tuple(rows[i]) for i in focus}
    elif raw is None:
        raw = {i: scores(row_matrix(result.Q, i), result.K) for i in focus}
        if inputs is not None and not any(any_symbolic(M) for M in inputs):  # irrational numbers (encodings)
            _file_numbers(inputs, (result.Q, result.K, result.V), raw, known)
    value_fractions = result.fractions("V")
    values = (None if "V" not in stored else Values.of(result.V, known) if value_fractions is None
              else Values.of_fractions(value_fractions, lambda: matrices.V))
    if kept:  # every focus row's numbers at once
        logits = {i: _masked(scaled[i] if bias is None else _plus(scaled[i], added(i)), allowed(i)) for i in focus}
        numbers = dict(zip(focus, rational_rows_numbers(list(logits.values()), values, logit[1]), strict=True))
        queries.update((i, attend_fractions(lambda i=i: row_matrix(matrices.Q, i), values, divisor, tuple(raw[i]),
                                            logits[i], known, logit[1], numbers[i])) for i in focus)
    else:
        queries.update((i, attend(lambda i=i: row_matrix(matrices.Q, i), None, values, divisor, allowed(i), raw[i],
                                  known, added(i))) for i in focus)
    return result


def _reciprocal(divisor: Expr) -> tuple[Expr, int] | None:
    """(f, m) with score / divisor = score · f · √m for every rational score: (1/divisor, 1) for a rational
    divisor, (1/(r·m), m) for r·√m (√d_k when d_k is not a square: √32 = 4√2); None for any other divisor."""
    if divisor.is_Rational:
        return 1 / divisor, 1
    surd = rational_times_root(divisor)
    if surd is None:
        return None
    r, m = surd
    return 1 / (r * m), m


def _plus(logits: list[Fraction], bias: tuple[Expr, ...]) -> list[Fraction]:
    """Rational logits as fractions plus a rational bias, each in lowest terms."""
    out = []
    for (p, q), b in zip(logits, bias, strict=True):
        total = Rational(p, q) + b
        out.append((int(total.p), int(total.q)))
    return out


def _masked(logits: list[Fraction], allowed: tuple[bool, ...] | None) -> FractionRow:
    """A row of logits with each masked key's (allowed[j] false) replaced by None, −∞."""
    return tuple(logits) if allowed is None else tuple(f if ok else None for f, ok in zip(logits, allowed, strict=True))


def _file_numbers(inputs: tuple[ImmutableMatrix, ...], QKV: tuple[ImmutableMatrix, ...],
                  raw: dict[int, tuple[Expr, ...]], known: Numbers) -> None:
    """File the numbers of Q, K, V and the raw scores when they are irrational (X + P with sines and cosines).

    Evaluating each score's exact expression on its own would evaluate every sine in it again and again; here each
    input entry is evaluated once and the products are taken in mpmath at the working precision.
    """
    with mpmath.workdps(WORKING_DIGITS + 10):
        X, source, W_Q, W_K, W_V = (matrix_numbers(M, known) for M in inputs)
        products = [times(left, W) for left, W in ((X, W_Q), (source, W_K), (source, W_V))]
        for exact, approximations in zip(QKV, products, strict=True):
            file_matrix(exact, approximations, known)
        Q, K = products[0], products[1]
        for i, row in raw.items():
            for j, score in enumerate(row):
                if not score.is_Rational:
                    known.file(score, mpmath.fdot(Q[i], K[j]))


def matrix_form(queries: list[QueryAttention]) -> MatrixForm:
    """Stack per-query results (in query order) into the matrix form."""
    def stack(rows: list[tuple[Expr, ...]]) -> ImmutableMatrix:
        return ImmutableMatrix([list(row) for row in rows])

    return MatrixForm(
        scores=stack([q.scores for q in queries]),
        scaled=stack([q.scaled for q in queries]),
        weights=stack([q.softmax.weights for q in queries]),
        output=None if queries[0].output is None else ImmutableMatrix.vstack(*[q.output for q in queries]),
    )


def concat(outputs: tuple[ImmutableMatrix, ...]) -> ImmutableMatrix:
    """Head outputs side by side in one row vector."""
    return ImmutableMatrix(1, sum(o.cols for o in outputs), [x for o in outputs for x in o])


def combine_heads(outputs: tuple[ImmutableMatrix, ...], W_O: ImmutableMatrix,
               attentions: tuple[Attention | None, ...] = ()) -> MultiHead:
    """Concatenate the head outputs and project by W_O; the numbers of the heads' values stay known."""
    known = Numbers(*(a.known for a in attentions if a is not None))
    joined = concat(outputs)
    output = project(joined, W_O)
    if not any_symbolic(joined) and not any_symbolic(W_O) and not is_rational(output):
        file_products(joined, W_O, output, known)
    return MultiHead(tuple(outputs), joined, output, attentions, known)

