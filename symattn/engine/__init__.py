"""The exact engine: attention computed in exact arithmetic, with the numbers of its irrational values filed once.

Modules, each with one job, each importing only those above it:
    fast       the only user of private SymPy/mpmath/python-flint API (tests/engine/test_fast.py checks it)
    symbols    whether a value holds symbols
    numbers    Numbers, each result's table of its approximations, and exact-to-mpmath conversion
    canonical  the softmax's SymPy forms, built as SymPy's own evaluation builds them
    weighted   WeightedAverage: one output entry kept as its parts
    matrices   projections over QQ, matrix storage and entries, numbers of irrational products
    values     the value matrix read once for all queries
    softmax    Softmax, a row's numbers evaluated once, the weighted sum
    pipeline   scores, scaling, attend, attention() and attention_of(), masks, encodings, matrix form, multi-head
Other modules import from this package, not from its modules.
"""

from __future__ import annotations

from .canonical import exp_sum, exponential
from .fast import binary_parts, matrix_of_entries, row_matrices, with_storage
from .matrices import Fraction, entries, flat_entries, project
from .numbers import WORKING_DIGITS, Numbers, decimal, decimal_digits
from .pipeline import (
    Attention,
    MatrixForm,
    MultiHead,
    QueryAttention,
    attend,
    attention,
    attention_of,
    combine_heads,
    concat,
    dot,
    matrix_form,
    scores,
)
from .softmax import CANCELLED_DIGITS, FractionRow, Softmax, weighted_sum
from .symbols import any_symbolic, is_symbolic
from .values import Values
from .weighted import WeightedAverage

__all__ = [
    "CANCELLED_DIGITS",
    "WORKING_DIGITS",
    "Attention",
    "Fraction",
    "FractionRow",
    "MatrixForm",
    "MultiHead",
    "Numbers",
    "QueryAttention",
    "Softmax",
    "Values",
    "WeightedAverage",
    "any_symbolic",
    "attend",
    "attention",
    "attention_of",
    "binary_parts",
    "concat",
    "decimal",
    "decimal_digits",
    "dot",
    "entries",
    "exp_sum",
    "exponential",
    "flat_entries",
    "is_symbolic",
    "matrix_form",
    "matrix_of_entries",
    "combine_heads",
    "project",
    "row_matrices",
    "scores",
    "weighted_sum",
    "with_storage",
]
