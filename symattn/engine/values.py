"""The value matrix V, read once for all queries in the forms the weighted sums need."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import mpmath
from sympy import ImmutableMatrix, S, Tuple

from .fast import integer_matrix
from .matrices import Fraction, entries
from .numbers import Numbers
from .symbols import any_symbolic
from .weighted import Parts


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
    def of(cls, V: ImmutableMatrix, known: Numbers) -> Values:
        """V as SymPy; irrational entries' numbers from `known` (filed, else evaluated)."""
        rows = entries(V)
        if any(any_symbolic(row) for row in rows):
            return cls(lambda: V, None, None)
        if all(v.is_Rational for row in rows for v in row):
            return cls(lambda: V, common_denominators([[(int(v.p), int(v.q)) for v in row] for row in rows]), None)
        return cls(lambda: V, None, [[known.number(v) for v in column] for column in zip(*rows, strict=True)])

    @classmethod
    def of_fractions(cls, fractions: list[list[Fraction]], matrix: Callable[[], ImmutableMatrix]) -> Values:
        """A rational V given as its fractions (Attention.fractions); `matrix` gives it as a SymPy matrix."""
        return cls(matrix, common_denominators(fractions), None)

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

    @cached_property
    def largest(self) -> list[mpmath.mpf]:
        """Each numeric column's largest |v| (read once for every query's cancellation check)."""
        if self.integers is not None:
            return [mpmath.mpf(max(map(abs, numerators), default=0)) / denominator
                    for denominator, numerators in self.integers]
        return [max(map(abs, column), default=mpmath.mpf(0)) for column in self.numeric]

    @property
    def is_numeric(self) -> bool:
        return self.integers is not None or self.numeric is not None

    @cached_property
    def numerators(self) -> object | None:
        """The integers' numerators as a python-flint matrix, keys by columns (made when first read; None without
        flint)."""
        return integer_matrix(zip(*(column for _, column in self.integers), strict=True))


def common_denominators(rows: list[list[Fraction]]) -> list[tuple[int, list[int]]]:
    """Each column of a rational matrix as integers over one common denominator."""
    integers = []
    for column in zip(*rows, strict=True):
        denominator = math.lcm(*(q for _, q in column))
        integers.append((denominator, [p * (denominator // q) for p, q in column]))
    return integers
