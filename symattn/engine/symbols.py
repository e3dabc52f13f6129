"""Whether an exact value holds symbols (a symbolic spec) or is a number.

Asked of nearly every value shown. SymPy's free_symbols walks the whole tree each time, and every weight of a
row contains the row's n-term denominator Z, so the answer is cached per subexpression: Z is walked once.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from sympy import Basic, ImmutableMatrix

from .fast import flat_entries


@lru_cache(maxsize=1 << 16)
def is_symbolic(value: Basic) -> bool:
    """True when the expression contains a symbol (x_{11}, q_1, ...)."""
    return bool(value.is_Symbol) or any(not arg.is_Number and is_symbolic(arg) for arg in value.args)


def any_symbolic(values: Iterable[Basic]) -> bool:
    """True when any of the values (a tuple, or a matrix's entries) contains a symbol."""
    if isinstance(values, ImmutableMatrix):  # its entries as it holds them: iterating converts each one
        values = flat_entries(values)
    return any(not value.is_Number and is_symbolic(value) for value in values)  # (a number: no look-up)
