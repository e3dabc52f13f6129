"""The attention pipeline as pure functions on exact SymPy matrices (no rounding anywhere)."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import mpmath
from mpmath.libmp import from_int, mpf_div, mpf_exp, mpf_mul_int, mpf_shift, mpf_sum, round_nearest
from sympy import (
    QQ,
    ZZ,
    Add,
    Expr,
    ImmutableMatrix,
    Integer,
    Pow,
    Rational,
    S,
    Tuple,
    cos,
    expand,
    sin,
    sqrt,
)
from sympy.external.gmpy import GROUND_TYPES
from sympy.polys.matrices import DomainMatrix

from . import approx
from .canonical import exp_sum, exponential, quotient
from .symbols import any_symbolic, is_symbolic
from .weighted import Parts, WeightedAverage

if GROUND_TYPES == "flint":  # SymPy runs on python-flint, imported already: its integer matrices are at hand
    from flint import fmpz_mat
else:
    fmpz_mat = None

Fraction = tuple[int, int]  # a rational as (numerator, denominator > 0) in lowest terms
FractionRow = tuple[Fraction | None, ...]  # None: a masked key's logit, −∞
_PREC = approx.PRECISION


def rationals(fractions: FractionRow, radicand: int = 1) -> tuple[Expr, ...]:
    """A row of fractions as SymPy numbers (−∞ for a masked key), each times √radicand when that is not 1."""
    if radicand == 1:
        return tuple(S.NegativeInfinity if f is None else Rational(*f) for f in fractions)
    root = sqrt(radicand)
    return tuple(S.NegativeInfinity if f is None else Rational(*f) * root for f in fractions)


@dataclass(frozen=True)
class RowNumbers:
    """A numeric row's softmax and output as mpmath numbers (approx.WORKING_DIGITS correct digits), in key order.

    `irrational` says that Z holds two or more distinct exponentials, so that no weight is rational
    (Lindemann–Weierstrass): then each weight's number is all there is to say about its value.
    """

    logits: list[mpmath.mpf | None]  # None: a masked key
    exps: list[mpmath.mpf]
    total: mpmath.mpf
    weights: list[mpmath.mpf]
    outputs: list[mpmath.mpf]
    irrational: bool


class Softmax:
    """softmax(a)_j = e^{a_j} / Z with Z = sum_k e^{a_k}, every part kept exact.

    The SymPy forms (exps, total, weights) are built when first read. An answer key needs only the logits (e^{a}
    prints from a) and the numbers, and building 4,096 exponentials and weights costs ~0.4 s at n = 64. When they
    are built, the row's numbers are filed for them (approx), so that documents never evaluate them again.
    Logits c_j·√m (rational when m = 1) may be given as `fractions` c_j and the `radicand` m instead: they become
    SymPy numbers when first read, as `logits`.
    """

    def __init__(self, logits: tuple[Expr, ...] | None = None, numbers: RowNumbers | None = None,
                 fractions: FractionRow | None = None, radicand: int = 1) -> None:
        if logits is not None:
            self.logits = tuple(logits)  # in the instance's dict: the cached property is not consulted
        self.fractions, self.radicand = fractions, radicand
        self.numbers = numbers

    @cached_property
    def logits(self) -> tuple[Expr, ...]:
        """The logits a_j as SymPy numbers (−∞ for a masked key), made from `fractions` when first read."""
        return rationals(self.fractions, self.radicand)

    @property
    def logit_numbers(self) -> list[mpmath.mpf | None]:
        """The logits' numbers (None: masked): the row's, else (formulas: symbolic values) evaluated."""
        if self.numbers is not None:
            return self.numbers.logits
        return [None if a is S.NegativeInfinity else approx.number(a) for a in self.logits]

    @property
    def masked(self) -> tuple[bool, ...]:
        """Whether each key is masked (logit −∞, weight exactly 0)."""
        if self.fractions is not None:
            return tuple(f is None for f in self.fractions)
        return tuple(a is S.NegativeInfinity for a in self.logits)

    @cached_property
    def exps(self) -> tuple[Expr, ...]:
        """e^{a_j}; a masked logit (−∞) gives exactly 0."""
        exps = tuple(exponential(a) for a in self.logits)
        if self.numbers is not None:
            for e, value in zip(exps, self.numbers.exps, strict=True):
                approx.remember(e, value)
        return exps

    @cached_property
    def total(self) -> Expr:
        """Z = Σ_k e^{a_k}."""
        total = exp_sum(self.exps)
        if self.numbers is not None:
            approx.remember(total, self.numbers.total)
        return total

    @cached_property
    def weights(self) -> tuple[Expr, ...]:
        """e^{a_j} / Z, exact."""
        exps, total = self.exps, self.total
        if total.is_Add and not any_symbolic(exps):
            # Z has two or more distinct exponentials, so no e^{a_j}/Z is rational (Lindemann–Weierstrass): SymPy's
            # evaluation of each quotient would find nothing to simplify, and costs ~0.2 ms a weight.
            inverse = Pow(total, -1)
            weights = tuple(S.Zero if e is S.Zero else inverse if e is S.One else quotient(e, inverse)
                            for e in exps)
        else:
            weights = tuple(e / total for e in exps)
        if self.numbers is not None:
            for w, value in zip(weights, self.numbers.weights, strict=True):
                approx.remember(w, value)
        return weights


@dataclass(frozen=True)
class QueryAttention:
    """What one query does: raw scores, scaled scores (the softmax's logits), softmax weights, weighted sum of the
    values. Rational scores are kept as fractions (`score_fractions`, the softmax's `fractions`) until read as
    SymPy numbers: an answer key reads the fractions, and 2 × 4,096 SymPy rationals cost ~30 ms at n = 64."""

    row: Callable[[], ImmutableMatrix] = field(repr=False, compare=False)  # the query vector, when asked for
    raw: tuple[Expr, ...] | None  # the raw scores as SymPy numbers, or None when given as score_fractions
    scale: Expr
    softmax: Softmax
    values: Values = field(repr=False, compare=False)
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
    def output(self) -> ImmutableMatrix:
        """Σ_j w_j v_j (built when first read, like the softmax's SymPy forms)."""
        return weighted_sum(self.softmax, self.values)


class Attention:
    """A whole attention computation: projections of all tokens and the focus queries in order.

    Q, K and V are SymPy matrices when first read. Rational ones are kept as flint-backed DomainMatrices until
    then: an answer key reads their fractions (`fractions`), and building 3 × 4,096 SymPy rationals costs ~90 ms
    at n = 64.
    """

    def __init__(self, projections: dict[str, ImmutableMatrix | DomainMatrix],
                 queries: dict[int, QueryAttention]) -> None:
        self._projections = projections
        self._fraction_rows: dict[str, list[list[tuple[int, int]]] | None] = {}
        self.queries = queries

    @cached_property
    def Q(self) -> ImmutableMatrix:
        return _matrix(self._projections["Q"])

    @cached_property
    def K(self) -> ImmutableMatrix:
        return _matrix(self._projections["K"])

    @cached_property
    def V(self) -> ImmutableMatrix:
        return _matrix(self._projections["V"])

    def fractions(self, name: str) -> list[list[tuple[int, int]]] | None:
        """The rows of Q, K or V as (numerator, denominator) pairs in lowest terms when rational, else None
        (read once: V's are read by the engine and again by an answer key)."""
        if name not in self._fraction_rows:
            stored = self._projections[name]
            self._fraction_rows[name] = None if isinstance(stored, ImmutableMatrix) else _fractions(stored)
        return self._fraction_rows[name]


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
    """Row-wise projection X·W (each token's row vector times the weight matrix)."""
    return _matrix(_projection(X, W))


def _projection(X: ImmutableMatrix, W: ImmutableMatrix) -> ImmutableMatrix | DomainMatrix:
    """X·W; rational matrices multiply as dense DomainMatrices over QQ and the product stays one.

    With python-flint installed SymPy stores them as flint matrices, which multiply 64 × 64 rationals in about a
    millisecond (pure Python: ~0.3 s).
    """
    small = X.rows * X.cols * W.cols < 512  # below this, DomainMatrix's set-up costs more than it saves
    if small or not (_is_rational(X) and _is_rational(W)):
        return ImmutableMatrix(X * W)
    return _over_QQ(X) * _over_QQ(W)


def _matrix(stored: ImmutableMatrix | DomainMatrix) -> ImmutableMatrix:
    """A projection as a SymPy matrix (a DomainMatrix keeps its domain as the matrix's storage)."""
    return stored if isinstance(stored, ImmutableMatrix) else stored.to_Matrix().as_immutable()


def _rational_storage(stored: ImmutableMatrix | DomainMatrix) -> DomainMatrix | None:
    """A projection as a dense DomainMatrix over QQ when it is rational, else None."""
    if isinstance(stored, ImmutableMatrix):
        return _over_QQ(stored) if _is_rational(stored) else None
    return stored


def _over_QQ(M: ImmutableMatrix) -> DomainMatrix:
    """A rational SymPy matrix's storage as a dense DomainMatrix over QQ (no entry goes through SymPy)."""
    return _storage(M).convert_to(QQ).to_dense()


def _fractions(stored: DomainMatrix) -> list[list[tuple[int, int]]]:
    """A rational DomainMatrix's entries as (numerator, denominator) pairs, without SymPy numbers."""
    field = stored.convert_to(QQ)
    return [[(int(QQ.numer(v)), int(QQ.denom(v))) for v in row] for row in field.to_list()]


def flat_entries(M: ImmutableMatrix) -> tuple[Expr, ...]:
    """A matrix's SymPy entries row by row. An ImmutableMatrix holds them as its flat Tuple argument; `tolist()`
    and indexing would convert every entry from the matrix's domain again (~10 µs each)."""
    return M.args[2].args


def entries(M: ImmutableMatrix) -> list[list[Expr]]:
    """A matrix's rows as lists of its SymPy entries (see flat_entries)."""
    flat = flat_entries(M)
    return [list(flat[i * M.cols:(i + 1) * M.cols]) for i in range(M.rows)]


def _storage(M: ImmutableMatrix) -> DomainMatrix:
    """The DomainMatrix a SymPy matrix keeps its entries in: over ZZ or QQ when all are rational, else EXRAW.

    `DomainMatrix.from_Matrix` would convert every entry to SymPy and back (~35 ms for 64 × 64); `to_DM()` would
    search a domain for EXRAW entries (an algebraic field for surds). The storage is read as it is.
    """
    return M._rep


def _is_rational(M: ImmutableMatrix) -> bool:
    """Whether every entry is rational, read off the matrix's storage domain (no entry is converted)."""
    return _storage(M).domain in (ZZ, QQ)


def dot(u: ImmutableMatrix, v: ImmutableMatrix) -> Expr:
    """Dot product of two row vectors (expanded into a polynomial when the entries are symbolic)."""
    total = Add(*(a * b for a, b in zip(u, v, strict=True)))
    return expand(total) if is_symbolic(total) else total


def scores(query: ImmutableMatrix, K: ImmutableMatrix) -> tuple[Expr, ...]:
    """Raw attention scores q·k_j for every key row."""
    return tuple(dot(query, K.row(j)) for j in range(K.rows))


def scale_factor(d_k: int) -> Expr:
    """√d_k, exact (√4 = 2, √2 stays a surd)."""
    return sqrt(Integer(d_k))


def softmax(logits: tuple[Expr, ...]) -> Softmax:
    """Exact softmax sharing one denominator Z; a masked logit (−∞) has e^{−∞} = 0 and so weight exactly 0."""
    return Softmax(logits)


@dataclass(frozen=True)
class Values:
    """The value matrix V read once for all queries (each read of a matrix entry converts it from the matrix's
    domain): for the numbers, each column either as integers over one common denominator (rational V) or as
    mpmath numbers (V with surds, sines, ...), None for symbols; and its columns as shared exact Tuples, made
    when first read (the exact outputs need them, an answer key not)."""

    matrix: Callable[[], ImmutableMatrix] = field(repr=False, compare=False)  # V as SymPy, when asked for
    integers: list[tuple[int, list[int]]] | None
    numeric: list[list[mpmath.mpf]] | None

    @classmethod
    def of(cls, V: ImmutableMatrix) -> Values:
        rows = entries(V)
        if any(any_symbolic(row) for row in rows):
            return cls(lambda: V, None, None)
        if all(v.is_Rational for row in rows for v in row):
            return cls(lambda: V, cls._integers([[(int(v.p), int(v.q)) for v in row] for row in rows]), None)
        return cls(lambda: V, None, [[approx.number(v) for v in column] for column in zip(*rows, strict=True)])

    @classmethod
    def of_fractions(cls, fractions: list[list[tuple[int, int]]], matrix: Callable[[], ImmutableMatrix]) -> Values:
        """A rational V given as its fractions (Attention.fractions); `matrix` gives it as a SymPy matrix."""
        return cls(matrix, cls._integers(fractions), None)

    @staticmethod
    def _integers(rows: list[list[tuple[int, int]]]) -> list[tuple[int, list[int]]]:
        """Each column as integers over one common denominator."""
        integers = []
        for column in zip(*rows, strict=True):
            denominator = math.lcm(*(q for _, q in column))
            integers.append((denominator, [p * (denominator // q) for p, q in column]))
        return integers

    @cached_property
    def columns(self) -> list[Tuple]:
        """V's columns as shared exact Tuples (made when first read)."""
        rows = entries(self.matrix())
        return [Parts(*column) for column in zip(*rows, strict=True)] if rows else []

    @cached_property
    def zero_columns(self) -> tuple[bool, ...]:
        """Whether each column is all zeros (its output entry is then exactly 0)."""
        if self.integers is not None:
            return tuple(not any(numerators) for _, numerators in self.integers)
        return tuple(all(v is S.Zero for v in column) for column in self.columns)

    @property
    def is_numeric(self) -> bool:
        return self.integers is not None or self.numeric is not None

    @cached_property
    def numerators(self):
        """The integers' numerators as a python-flint matrix, keys by columns (made when first read, with flint)."""
        return fmpz_mat([list(row) for row in zip(*(column for _, column in self.integers), strict=True)])


def _numeric(logits: tuple[Expr, ...], V: Values) -> bool:
    """Whether a row's softmax and the values are numbers (else formulas: nothing to evaluate)."""
    return V.is_numeric and not any_symbolic(logits)


def weighted_sum(weights: Softmax, V: Values) -> ImmutableMatrix:
    """Σ_j w_j v_j over the value rows, kept over the shared denominator: (Σ_j e^{a_j} v_j) / Z.

    Numbers: each entry a WeightedAverage (the sum written out only when printed). Formulas: SymPy tidies them.
    """
    if not _numeric(weights.logits, V):
        return ImmutableMatrix(1, len(V.columns), [Add(*(e * v for e, v in zip(weights.exps, column, strict=True)))
                                                   / weights.total for column in V.columns])
    exps = Parts(*weights.exps)
    output = ImmutableMatrix(1, len(V.columns), [S.Zero if zero else WeightedAverage(exps, column, weights.total)
                                                 for column, zero in zip(V.columns, V.zero_columns, strict=True)])
    numbers = weights.numbers or row_numbers(weights.logits, V)
    for entry, value in zip(output, numbers.outputs, strict=True):
        if entry is not S.Zero:
            approx.remember(entry, value)
    return output


def row_numbers(logits: tuple[Expr, ...], V: Values) -> RowNumbers | None:
    """Evaluate a row's softmax once (Z once, not once per weight) and its outputs; None for formulas."""
    if not _numeric(logits, V):
        return None
    numbers = [None if a is S.NegativeInfinity else approx.number(a) for a in logits]
    for a, value in zip(logits, numbers, strict=True):  # shown again and again: in lines, vectors, tables
        if value is not None and not a.is_Rational:
            approx.remember(a, value)
    return _row_numbers(numbers, V, distinct=len({a for a in logits if a is not S.NegativeInfinity}))


def fraction_numbers(logits: FractionRow, V: Values, radicand: int = 1) -> RowNumbers | None:
    """row_numbers() of logits c_j·√radicand given as fractions c_j (each logit's number as approx.to_mpf gives
    it)."""
    if not V.is_numeric:
        return None
    return _row_numbers(approx.fraction_numbers(list(logits), radicand), V, distinct=len(set(logits) - {None}))


def _mpf(value: tuple) -> mpmath.mpf:
    """An mpmath number of a raw libmp value."""
    return mpmath.mp.make_mpf(value)


def _row_numbers(logits: list[mpmath.mpf | None], V: Values, distinct: int) -> RowNumbers:
    """A row's softmax and outputs from its logits' numbers (None: masked), at the working precision. The steps
    call libmp as mpmath's operators do (the same roundings, the same bits) without their dispatch per call."""
    exps = [_mpf(mpf_exp(a._mpf_, _PREC, round_nearest)) if a is not None else mpmath.mpf(0) for a in logits]
    total = _mpf(mpf_sum([e._mpf_ for e in exps], _PREC, round_nearest))
    weights = [_mpf(mpf_div(e._mpf_, total._mpf_, _PREC, round_nearest)) for e in exps]
    if V.integers is None:
        with mpmath.workdps(approx.WORKING_DIGITS + 10):
            outputs = [mpmath.fdot(exps, column) / total for column in V.numeric]
    else:
        # Σ_j e^{a_j} v_j in integers: each e^{a_j} is man·2^exp, shifted to the smallest exponent, but to none more
        # than _PREC + 64 bits below the largest term: each term is already rounded to _PREC bits, so what lies below
        # changes no digit (with scores of 10^7 the shifts to the smallest exponent ran out of memory).
        high = max((e.exp + e.bc for e in exps if e.man), default=0)
        low = max(min((e.exp for e in exps if e.man), default=0), high - _PREC - 64)
        sums = _integer_sums([(e.man << (e.exp - low) if e.exp >= low else e.man >> (low - e.exp)) if e.man else 0
                              for e in exps], V)
        outputs = [_mpf(mpf_div(mpf_shift(from_int(s, _PREC, round_nearest), low),
                                mpf_mul_int(total._mpf_, denominator, _PREC, round_nearest), _PREC, round_nearest))
                   for s, (denominator, _) in zip(sums, V.integers, strict=True)]
    return RowNumbers(logits, exps, total, weights, outputs, irrational=distinct > 1)


def _integer_sums(mantissas: list[int], V: Values) -> list[int]:
    """Σ_j m_j n_jc for each column c of V's integers: one python-flint product (a third of the time at n = 64)
    when SymPy runs on flint, else Python's integers."""
    if fmpz_mat is None:
        return [sum(map(operator.mul, mantissas, numerators)) for _, numerators in V.integers]
    return [int(s) for s in (fmpz_mat([mantissas]) * V.numerators).entries()]


def attend(query: ImmutableMatrix | Callable[[], ImmutableMatrix], K: ImmutableMatrix | None,
           V: ImmutableMatrix | Values, scale: Expr, allowed: tuple[bool, ...] | None = None,
           raw: tuple[Expr, ...] | None = None) -> QueryAttention:
    """One query against all keys and values: scores, division by `scale` (√d_k, 1, ...), softmax, weighted sum.

    `allowed` masks keys: a masked score becomes −∞ before the softmax (causal attention), so its weight is 0.
    `query` may be a function giving the query vector when it is asked for, and K None, when `raw` is given.
    """
    row = query if callable(query) else lambda: query
    raw = scores(row(), K) if raw is None else raw
    V = Values.of(V) if isinstance(V, ImmutableMatrix) else V
    scaled = tuple(s / scale if allowed is None or allowed[j] else S.NegativeInfinity for j, s in enumerate(raw))
    filed = [(a, approx.known(s)) for s, a in zip(raw, scaled, strict=True)
             if a is not S.NegativeInfinity and not a.is_Rational]
    if any(number is not None for _, number in filed):  # a score whose number is filed: its scaled score's too
        with mpmath.workdps(approx.WORKING_DIGITS + 10):
            divisor = approx.to_mpf(scale)
            for a, number in filed:
                if number is not None:
                    approx.remember(a, number / divisor)
    return QueryAttention(row, raw, scale, Softmax(scaled, row_numbers(scaled, V)), V)


def attend_fractions(query: Callable[[], ImmutableMatrix], V: Values, scale: Expr, raw: FractionRow,
                     scaled: FractionRow, radicand: int = 1) -> QueryAttention:
    """attend() of rational scores given as fractions, raw and scaled (None where masked; the scaled scores are
    these fractions times √radicand): no SymPy number is made until one is read."""
    softmax = Softmax(numbers=fraction_numbers(scaled, V, radicand), fractions=scaled, radicand=radicand)
    return QueryAttention(query, None, scale, softmax, V, score_fractions=raw)


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
    stored = {"Q": _projection(X, W_Q), "K": _projection(source, W_K), "V": _projection(source, W_V)}
    queries: dict[int, QueryAttention] = {}
    result = Attention(stored, queries)

    def allowed(i: int) -> tuple[bool, ...] | None:
        return None if mask is None else tuple(bool(mask[i, j]) for j in range(mask.cols))

    left, right = (_rational_storage(stored[name]) for name in "QK")
    rational = left is not None and right is not None
    # Rational scores: the logits are c·√m for a rational or surd scale, kept as fractions c and the radicand m.
    logit = _logit_factor(scale) if rational else None
    kept = logit is not None
    if rational:  # all raw scores at once: QKᵀ, one exact product
        products = left * right.transpose()
        if kept:
            raw, scaled = _fractions(products), _fractions(products * QQ.from_sympy(logit[0]))
        else:
            rows = products.to_sympy().to_list()  # no matrix of SymPy entries built for QKᵀ
            raw = {i: tuple(rows[i]) for i in focus}
    else:
        raw = {i: scores(result.Q.row(i), result.K) for i in focus}
        if not any(any_symbolic(M) for M in (X, source, W_Q, W_K, W_V)):  # irrational numbers (encodings)
            _file_numbers((X, source, W_Q, W_K, W_V), (result.Q, result.K, result.V), raw)
    fractions = result.fractions("V")
    values = Values.of(result.V) if fractions is None else Values.of_fractions(fractions, lambda: result.V)
    if kept:
        queries.update((i, attend_fractions(lambda i=i: result.Q.row(i), values, scale, tuple(raw[i]),
                                            _masked(scaled[i], allowed(i)), logit[1])) for i in focus)
    else:
        queries.update((i, attend(lambda i=i: result.Q.row(i), None, values, scale, allowed(i), raw[i]))
                       for i in focus)
    return result


def _logit_factor(scale: Expr) -> tuple[Expr, int] | None:
    """(f, m) with score / scale = score · f · √m for every rational score: (1/scale, 1) for a rational scale,
    (1/(r·m), m) for r·√m (√d_k when d_k is not a square: √32 = 4√2); None for any other scale."""
    if scale.is_Rational:
        return 1 / scale, 1
    surd = approx.rational_times_root(scale)
    if surd is None:
        return None
    r, m = surd
    return 1 / (r * m), m


def _masked(logits: list[Fraction], allowed: tuple[bool, ...] | None) -> FractionRow:
    """A row of logits with each masked key's (allowed[j] false) replaced by None, −∞."""
    return tuple(logits) if allowed is None else tuple(f if ok else None for f, ok in zip(logits, allowed, strict=True))


def _file_numbers(inputs: tuple[ImmutableMatrix, ...], QKV: tuple[ImmutableMatrix, ...],
                  raw: dict[int, tuple[Expr, ...]]) -> None:
    """File the numbers of Q, K, V and the raw scores when they are irrational (X + P with sines and cosines).

    Evaluating each score's exact expression on its own evaluates every sine in it again, hundreds of times a
    score; here each input entry is evaluated once and the products are taken in mpmath (90 digits and more).
    """
    with mpmath.workdps(approx.WORKING_DIGITS + 10):
        X, source, W_Q, W_K, W_V = (_numbers(M) for M in inputs)
        products = [_times(left, W) for left, W in ((X, W_Q), (source, W_K), (source, W_V))]
        for exact, numbers in zip(QKV, products, strict=True):
            _file(exact, numbers)
        Q, K = products[0], products[1]
        for i, row in raw.items():
            for j, score in enumerate(row):
                if not score.is_Rational:
                    approx.remember(score, mpmath.fdot(Q[i], K[j]))


def _file_products(left: ImmutableMatrix, right: ImmutableMatrix, product: ImmutableMatrix) -> None:
    """File the numbers of an irrational product such as concat(heads)·W_O, from its factors' numbers (the head
    outputs' are filed by their rows): evaluating each entry's exact form on its own takes ~5 ms."""
    with mpmath.workdps(approx.WORKING_DIGITS + 10):
        _file(product, _times(_numbers(left), _numbers(right)))


def _numbers(M: ImmutableMatrix) -> list[list[mpmath.mpf]]:
    """Each entry's number (filed, else evaluated), row by row."""
    return [[approx.number(v) for v in row] for row in entries(M)]


def _times(left: list[list[mpmath.mpf]], right: list[list[mpmath.mpf]]) -> list[list[mpmath.mpf]]:
    """The product of two matrices of numbers, at the working precision."""
    return [[mpmath.fdot(row, column) for column in zip(*right, strict=True)] for row in left]


def _file(exact: ImmutableMatrix, numbers: list[list[mpmath.mpf]]) -> None:
    """File the numbers of a matrix's irrational entries."""
    for exact_row, number_row in zip(entries(exact), numbers, strict=True):
        for value, number in zip(exact_row, number_row, strict=True):
            if not value.is_Rational:
                approx.remember(value, number)


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
    output = project(joined, W_O)
    if not any_symbolic(joined) and not any_symbolic(W_O) and not _is_rational(output):
        _file_products(joined, W_O, output)
    return MultiHead(tuple(outputs), joined, output, attentions)

