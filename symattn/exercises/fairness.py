"""Whether a drawn problem is fair to solve by hand: a quick check in integers and floats before the exact
computation, and the exact check after it. A kind says which runs (queries, keys/values source, weights) to check."""

from __future__ import annotations

import math
from decimal import Decimal
from functools import lru_cache
from operator import mul
from typing import Any

from ..engine import Attention, entries
from ..numbers.decimals import to_decimal
from .levels import MAX_LOGIT, MIN_GAP, MIN_WEIGHT

IntMatrix = list[list[int]]


@lru_cache(maxsize=256)  # a level has a dozen values
def _units(value: str, places: int) -> int:
    """A decimal string as an integer count of 10^-places."""
    return int(Decimal(value).scaleb(places))


@lru_cache(maxsize=256)
def _places(value: str) -> int:
    return len(value.partition(".")[2])


def integer_matrices(matrices: list[list[list[str]]]) -> tuple[list[IntMatrix], int]:
    """The drawn matrices as integer counts of 10^-places for one shared `places`: products stay exact integers.
    (Each distinct string, a dozen of a value set, is converted once.)"""
    texts = {v for matrix in matrices for row in matrix for v in row}
    places = max(map(_places, texts))
    units = {v: _units(v, places) for v in texts}.__getitem__
    return [[list(map(units, row)) for row in matrix] for matrix in matrices], places


def _product(left: IntMatrix, right: IntMatrix) -> IntMatrix:
    columns = list(zip(*right, strict=True))  # (each drawn row as long as the columns: map stops at neither)
    return [[sum(map(mul, row, column)) for column in columns] for row in left]


def plausible_runs(runs: list[tuple[IntMatrix, IntMatrix, IntMatrix, IntMatrix, IntMatrix]], focus: int,
                   places: int) -> bool:
    """The quick check of (queries, source, W_Q, W_K, W_V) runs in integers of 10^-places: it rejects only what
    friendly_runs rejects too (zero rows and columns, constant V columns, tied scores, two tokens with one embedding and two heads
    with the same weights exactly, scaled scores, weights and the gap between the two largest with margins far
    above float error)."""
    if any(a[2:] == b[2:] for i, a in enumerate(runs) for b in runs[:i]):
        return False  # two heads with the same weights: the same head twice
    for queries, source, W_Q, W_K, W_V in runs:
        # (integers: a row is all 0 when none is true) Each product is checked as soon as it is made, V first:
        # most drawn problems fail here, most often for a zero row of V (one value column in multi-head exams).
        if repeated(queries) or repeated(source) or not all(map(any, queries)) or not all(map(any, source)):
            return False
        made = []
        for inputs, W in ((source, W_V), (queries, W_Q), (source, W_K)):
            matrix = _product(inputs, W)
            if not all(map(any, matrix)) or not all(map(any, zip(*matrix, strict=True))):
                return False
            made.append(matrix)
        V, Q, K = made
        if constant_column(V):
            return False
        scores = [sum(map(mul, Q[focus], k)) for k in K]  # × 10^(4·places)
        if len(set(scores)) < len(scores):
            return False  # two equal scores: two equal weights
        scaled = [s / 10 ** (4 * places) / math.sqrt(len(W_K[0])) for s in scores]
        if any(abs(a) > MAX_LOGIT + 1e-9 for a in scaled):
            return False
        exps = [math.exp(a - max(scaled)) for a in scaled]
        if any(e / sum(exps) < MIN_WEIGHT - 1e-9 for e in exps):
            return False
        top = sorted(exps)
        if len(top) > 1 and (top[-1] - top[-2]) / sum(exps) < MIN_GAP - 1e-9:
            return False
    return True


def constant_column(rows) -> bool:
    """Whether a column of V has one value in every row: that output entry is that value, whatever the weights
    (all V rows equal: the output needs no weights at all)."""
    return len(rows) > 1 and any(len(set(column)) == 1 for column in zip(*rows, strict=True))


def mixes(W_O) -> bool:
    """Whether an output projection uses every head and makes different outputs: no zero row (a head that does
    nothing), no zero column (an output identically 0) and no two equal columns (two outputs always equal)."""
    rows = [tuple(r) for r in W_O]
    columns = list(zip(*rows, strict=True))
    return (all(any(v != 0 for v in r) for r in rows) and all(any(v != 0 for v in c) for c in columns)
            and len(set(columns)) == len(columns))


def repeated(rows) -> bool:
    """Whether two rows (two tokens' embeddings) are equal."""
    rows = [tuple(row) for row in rows]
    return len(set(rows)) < len(rows)


def friendly_runs(runs: list[tuple[Any, Any, Attention]], focus: int) -> bool:
    """No all-zero rows anywhere, no all-zero column in Q, K or V, no column of V with one value throughout, no two
    tokens with one embedding; for the query asked about, all scores different (no two equal weights), one clear
    largest weight (MIN_GAP above the next), scaled scores within ±MAX_LOGIT, every
    weight at least MIN_WEIGHT, and in every head other weights. Runs are (queries, source, the computed
    attention)."""
    heads = [tuple(to_decimal(w, 12, known=attention.known) for w in attention.queries[focus].softmax.weights)
             for _, _, attention in runs]
    if len(set(heads)) < len(heads):
        return False  # two heads that attend alike (compared by value: equal weights may differ in form)
    for (X, source, attention), head in zip(runs, heads, strict=True):
        if repeated(entries(X)) or repeated(entries(source)):
            return False
        for matrix in (X, source, attention.Q, attention.K, attention.V):
            rows = entries(matrix)
            if any(all(map(_zero, row)) for row in rows):
                return False
            computed = matrix is attention.Q or matrix is attention.K or matrix is attention.V
            if computed and any(all(map(_zero, column)) for column in zip(*rows, strict=True)):
                return False  # a zero column of Q, K or V makes an answer identically 0
        if constant_column(entries(attention.V)):
            return False
        query = attention.queries[focus]
        if len({to_decimal(s, 12, known=attention.known) for s in query.scores}) < len(query.scores):
            return False  # two equal scores: two equal weights (by value: equal scores may differ in form)
        # Compared as decimals (12 places): exact comparisons of surds and softmax quotients cost an evalf each.
        if any(abs(to_decimal(a, 12, known=attention.known)) > MAX_LOGIT for a in query.scaled):
            return False
        weights = sorted(head)  # the focus query's weights, to 12 places
        if weights[0] < Decimal(str(MIN_WEIGHT)):
            return False
        if len(weights) > 1 and weights[-1] - weights[-2] < Decimal(str(MIN_GAP)):
            return False
    return True


def _zero(value: Any) -> bool:
    """value == 0, for a rational without SymPy's comparison (which sympifies the 0 first): its truth."""
    return not value if value.is_Rational else value == 0
