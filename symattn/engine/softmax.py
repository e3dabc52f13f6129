"""A row's softmax and its weighted sum of the values: exact SymPy forms, built when first read, and the numbers
of the whole row, evaluated once."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property

import mpmath
from sympy import Add, Expr, ImmutableMatrix, Pow, Rational, S, sqrt

from .canonical import exp_sum, exponential, quotient
from .fast import (
    ball_number,
    binary_precision,
    integer_outputs,
    matrix_of_entries,
    rational_softmax_rows,
    softmax_numbers,
)
from .matrices import Fraction
from .numbers import PRECISION, WORKING_DIGITS, Numbers, fraction_numbers, fraction_precision
from .symbols import any_symbolic
from .values import Values
from .weighted import Parts, WeightedAverage

FractionRow = tuple[Fraction | None, ...]  # None: a masked key's logit, −∞


def rationals(fractions: FractionRow, radicand: int = 1) -> tuple[Expr, ...]:
    """A row of fractions as SymPy numbers (−∞ for a masked key), each times √radicand when that is not 1."""
    if radicand == 1:
        return tuple(S.NegativeInfinity if f is None else Rational(*f) for f in fractions)
    root = sqrt(radicand)
    return tuple(S.NegativeInfinity if f is None else Rational(*f) * root for f in fractions)


class RowNumbers:
    """A numeric row's softmax and output as mpmath numbers (WORKING_DIGITS correct digits), in key order: the
    logits (None: a masked key), e^{a_j}, Z, the weights and the outputs (None: cancelled beyond the numbers'
    digits, see _without_cancelled).

    Given as python-flint balls (`number` = fast.ball_number), each part becomes mpmath numbers when first read:
    an answer key reads the weights and outputs, never the e^{a}. `irrational` says that Z holds two or more
    distinct exponentials, so that no weight is rational (Lindemann–Weierstrass): then each weight's number is
    all there is to say about its value.
    """

    def __init__(self, logits: list, exps: list, total: object, weights: list, outputs: list, irrational: bool,
                 number: Callable[[object], mpmath.mpf | None] | None = None) -> None:
        self._given = {"logits": logits, "exps": exps, "weights": weights, "outputs": outputs}
        self._total, self._number, self.irrational = total, number, irrational

    def _part(self, name: str) -> list:
        given = self._given[name]
        return given if self._number is None else [self._number(x) for x in given]

    @cached_property
    def logits(self) -> list[mpmath.mpf | None]:
        return self._part("logits")

    @cached_property
    def exps(self) -> list[mpmath.mpf]:
        return self._part("exps")

    @cached_property
    def total(self) -> mpmath.mpf:
        return self._total if self._number is None else self._number(self._total)

    @cached_property
    def weights(self) -> list[mpmath.mpf]:
        return self._part("weights")

    @cached_property
    def outputs(self) -> list[mpmath.mpf | None]:
        return self._part("outputs")

    def balls(self, name: str) -> list | None:
        """A part ("outputs", …) as python-flint balls when the row was computed in them, else None."""
        return None if self._number is None else self._given[name]


class Softmax:
    """softmax(a)_j = e^{a_j} / Z with Z = sum_k e^{a_k}, every part kept exact; a masked logit (−∞) has
    e^{−∞} = 0 and so weight exactly 0.

    The SymPy forms (exps, total, weights) are built when first read: an answer key needs only the logits (e^{a}
    prints from a) and the numbers. When they are built, the row's numbers are filed for them in `known`, the
    result's table, so that documents never evaluate them again. Logits c_j·√m (rational when m = 1) may be given
    as `fractions` c_j and the `radicand` m instead: they become SymPy numbers when first read, as `logits`.
    """

    def __init__(self, known: Numbers, logits: tuple[Expr, ...] | None = None, numbers: RowNumbers | None = None,
                 fractions: FractionRow | None = None, radicand: int = 1) -> None:
        if logits is not None:
            self.logits = tuple(logits)  # in the instance's dict: the cached property is not consulted
        self.fractions, self.radicand = fractions, radicand
        self.numbers, self.known = numbers, known

    @cached_property
    def logits(self) -> tuple[Expr, ...]:
        """The logits a_j as SymPy numbers (−∞ for a masked key), made from `fractions` when first read; irrational
        ones (c_j·√m) get the row's numbers filed, as row_numbers files them (else each is evaluated when shown)."""
        logits = rationals(self.fractions, self.radicand)
        if self.numbers is not None and self.radicand != 1:
            for a, value in zip(logits, self.numbers.logits, strict=True):
                if value is not None and not a.is_Rational:
                    self.known.file(a, value)
        return logits

    @property
    def masked(self) -> tuple[bool, ...]:
        """Whether each key is masked (logit −∞, weight exactly 0)."""
        if self.fractions is not None:
            return tuple(f is None for f in self.fractions)
        return tuple(a is S.NegativeInfinity for a in self.logits)

    @property
    def tied(self) -> bool:
        """Whether every visible key has the same logit: then the common e^{a} cancels and each visible weight is
        exactly 1/k (1 for the only visible key)."""
        if self.fractions is not None:
            return len(set(self.fractions) - {None}) == 1
        return len({a for a in self.logits if a is not S.NegativeInfinity}) == 1

    @cached_property
    def exps(self) -> tuple[Expr, ...]:
        """e^{a_j}; a masked logit (−∞) gives exactly 0."""
        exps = tuple(exponential(a) for a in self.logits)
        if self.numbers is not None:
            for e, value in zip(exps, self.numbers.exps, strict=True):
                self.known.file(e, value)
        return exps

    @cached_property
    def total(self) -> Expr:
        """Z = Σ_k e^{a_k}."""
        total = exp_sum(self.exps)
        if self.numbers is not None:
            self.known.file(total, self.numbers.total)
        return total

    @cached_property
    def weights(self) -> tuple[Expr, ...]:
        """e^{a_j} / Z, exact."""
        exps, total = self.exps, self.total
        if total.is_Add and not any_symbolic(exps):
            # Z has two or more distinct exponentials, so no e^{a_j}/Z is rational (Lindemann–Weierstrass): SymPy's
            # evaluation of each quotient would find nothing to simplify, at a cost per weight. Nor would it in 1/Z
            # (a sum of positive terms, no pure complex number), where its assumptions evaluate Add: not asked.
            inverse = Pow(total, -1, evaluate=False)
            weights = tuple(S.Zero if e is S.Zero else inverse if e is S.One else quotient(e, inverse)
                            for e in exps)
        else:
            weights = tuple(e / total for e in exps)
        if self.numbers is not None:
            for w, value in zip(weights, self.numbers.weights, strict=True):
                self.known.file(w, value)
        return weights


def is_numeric_row(logits: tuple[Expr, ...], V: Values | None) -> bool:
    """Whether a row's softmax and the values (if any) are numbers (else formulas: nothing to evaluate)."""
    return (V is None or V.is_numeric) and not any_symbolic(logits)


def weighted_sum(weights: Softmax, V: Values) -> ImmutableMatrix:
    """Σ_j w_j v_j over the value rows, kept over the shared denominator: (Σ_j e^{a_j} v_j) / Z.

    Numbers: each entry a WeightedAverage (the sum written out only when printed), or, when the visible keys'
    logits tie, the exact mean of their values. Formulas: SymPy tidies them.
    """
    if V.is_numeric and weights.tied:  # the mean of the visible value rows, exactly
        visible = [not masked for masked in weights.masked]
        count = sum(visible)
        return matrix_of_entries(1, len(V.columns), [Add(*(v for v, seen in zip(column, visible, strict=True) if seen))
                                                   / count for column in V.columns])
    if not is_numeric_row(weights.logits, V):
        return matrix_of_entries(1, len(V.columns), [Add(*(e * v for e, v in zip(weights.exps, column, strict=True)))
                                                   / weights.total for column in V.columns])
    exps = Parts(*weights.exps)
    output = matrix_of_entries(1, len(V.columns), [S.Zero if zero else WeightedAverage(exps, column, weights.total)
                                                 for column, zero in zip(V.columns, V.zero_columns, strict=True)])
    row = weights.numbers or row_numbers(weights.logits, V, weights.known)
    for entry, value in zip(output, row.outputs, strict=True):
        if entry is not S.Zero and value is not None:  # None: cancelled, its exact form is evaluated
            weights.known.file(entry, value)
    return output


def row_numbers(logits: tuple[Expr, ...], V: Values | None, known: Numbers) -> RowNumbers | None:
    """Evaluate a row's softmax once (Z once, not once per weight) and its outputs (none without values), filing
    irrational logits in `known`; None for formulas."""
    if not is_numeric_row(logits, V):
        return None
    approximations = [None if a is S.NegativeInfinity else known.number(a) for a in logits]
    for a, value in zip(logits, approximations, strict=True):  # shown again and again: in lines, vectors, tables
        if value is not None and not a.is_Rational:
            known.file(a, value)
    return _evaluate(approximations, V, distinct=len({a for a in logits if a is not S.NegativeInfinity}))


def rational_rows_numbers(rows: list[FractionRow], V: Values | None, radicand: int = 1) -> list[RowNumbers | None]:
    """row_numbers() of rows of logits c_j·√radicand given as fractions c_j: with python-flint all rows at once, in
    balls at the bits the row's largest logit needs (fraction_precision); else row by row in mpmath, each logit's
    number as to_mpf gives it."""
    if V is not None and not V.is_numeric:
        return [None] * len(rows)
    balls = None
    if V is None or V.integers is not None:  # rational values (or none): their sums in integers
        prec = max((fraction_precision(list(row), radicand) for row in rows), default=PRECISION) + 10
        balls = rational_softmax_rows([list(row) for row in rows], radicand, prec, None if V is None else V.integers,
                                      binary_precision(WORKING_DIGITS - CANCELLED_DIGITS))
    if balls is None:  # without python-flint, or values with surds: mpmath, row by row
        return [_evaluate(fraction_numbers(list(row), radicand), V, _distinct(row)) for row in rows]
    return [RowNumbers(*parts, irrational=_distinct(row) > 1, number=ball_number)
            for parts, row in zip(balls, rows, strict=True)]


def _distinct(row: FractionRow) -> int:
    """How many distinct logits a row's visible keys have."""
    return len(set(row) - {None})


def _evaluate(logits: list[mpmath.mpf | None], V: Values | None, distinct: int) -> RowNumbers:
    """A row's softmax and outputs (none without values) from its logits' numbers (None: masked), at the working
    precision."""
    exps, total, weights = softmax_numbers(logits, PRECISION)
    if V is None:
        return RowNumbers(logits, exps, total, weights, [], irrational=distinct > 1)
    if V.integers is None:
        with mpmath.workdps(WORKING_DIGITS + 10):
            outputs = [mpmath.fdot(exps, column) / total for column in V.numeric]
    else:
        outputs = integer_outputs(exps, total, V.integers, V.numerators, PRECISION)
    return RowNumbers(logits, exps, total, weights, _without_cancelled(outputs, V), irrational=distinct > 1)


# The most digits an output may lose to cancellation (|Σ_j e^{a_j} v_j| far below max_j |v_j| · Z) with its number
# still holding the 30 significant digits of an answer and 10 more: WORKING_DIGITS − 40.
CANCELLED_DIGITS = WORKING_DIGITS - 40
_CANCELLED = mpmath.mpf(10) ** -CANCELLED_DIGITS


def _without_cancelled(outputs: list[mpmath.mpf], V: Values) -> list[mpmath.mpf | None]:
    """The outputs, None where terms cancelled past CANCELLED_DIGITS (their exact forms are evaluated instead:
    inputs of 50 digits can make an output 10^-100 of its terms, whose number then had wrong digits)."""
    return [None if top and abs(value) <= top * _CANCELLED else value
            for value, top in zip(outputs, V.largest, strict=True)]
