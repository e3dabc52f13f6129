"""Exact matrices: projections X·W over QQ, their storage (SymPy matrix or flint-backed DomainMatrix), their entries
as SymPy objects or fractions, and the numbers of irrational products filed for the number formatter."""

from __future__ import annotations

import mpmath
from sympy import QQ, ZZ, Expr, ImmutableMatrix
from sympy.polys.matrices import DomainMatrix

from . import numbers
from .fast import flat_entries, product, storage

Fraction = tuple[int, int]  # a rational as (numerator, denominator > 0) in lowest terms


def project(X: ImmutableMatrix, W: ImmutableMatrix) -> ImmutableMatrix:
    """Row-wise projection X·W (each token's row vector times the weight matrix)."""
    return as_matrix(projection(X, W))


def projection(X: ImmutableMatrix, W: ImmutableMatrix) -> ImmutableMatrix | DomainMatrix:
    """X·W; rational matrices multiply as dense DomainMatrices over QQ and the product stays one (with python-flint
    installed SymPy stores them as flint matrices, which multiply large rational matrices fast)."""
    small = X.rows * X.cols * W.cols < 512  # below this, DomainMatrix's set-up costs more than it saves
    if small or not (is_rational(X) and is_rational(W)):
        return product(X, W)
    return over_QQ(X) * over_QQ(W)


def as_matrix(stored: ImmutableMatrix | DomainMatrix) -> ImmutableMatrix:
    """A projection as a SymPy matrix (a DomainMatrix keeps its domain as the matrix's storage)."""
    return stored if isinstance(stored, ImmutableMatrix) else stored.to_Matrix().as_immutable()


def rational_storage(stored: ImmutableMatrix | DomainMatrix) -> DomainMatrix | None:
    """A projection as a dense DomainMatrix over QQ when it is rational, else None."""
    if isinstance(stored, ImmutableMatrix):
        return over_QQ(stored) if is_rational(stored) else None
    return stored


def over_QQ(M: ImmutableMatrix) -> DomainMatrix:
    """A rational SymPy matrix's storage as a dense DomainMatrix over QQ (no entry goes through SymPy)."""
    return storage(M).convert_to(QQ).to_dense()


def fractions(stored: DomainMatrix) -> list[list[Fraction]]:
    """A rational DomainMatrix's entries as (numerator, denominator) pairs, without SymPy numbers."""
    field = stored.convert_to(QQ)
    # the elements' own numerator and denominator (flint's fmpq, gmpy's mpq, SymPy's PythonMPQ): quicker than QQ's
    return [[(int(v.numerator), int(v.denominator)) for v in row] for row in field.to_list()]


def entries(M: ImmutableMatrix) -> list[list[Expr]]:
    """A matrix's rows as lists of its SymPy entries (see flat_entries)."""
    flat = flat_entries(M)
    return [list(flat[i * M.cols:(i + 1) * M.cols]) for i in range(M.rows)]


def is_rational(M: ImmutableMatrix) -> bool:
    """Whether every entry is rational, read off the matrix's storage domain (no entry is converted)."""
    return storage(M).domain in (ZZ, QQ)


def file_products(left: ImmutableMatrix, right: ImmutableMatrix, product: ImmutableMatrix,
                  known: numbers.Numbers) -> None:
    """File in `known` the numbers of an irrational product such as concat(heads)·W_O, from its factors' numbers
    (the head outputs' are filed by their rows), instead of evaluating each entry's exact form on its own."""
    with mpmath.workdps(numbers.WORKING_DIGITS + 10):
        file_matrix(product, times(matrix_numbers(left, known), matrix_numbers(right, known)), known)


def matrix_numbers(M: ImmutableMatrix, known: numbers.Numbers) -> list[list[mpmath.mpf]]:
    """Each entry's number (filed in `known`, else evaluated), row by row."""
    return [[known.number(v) for v in row] for row in entries(M)]


def times(left: list[list[mpmath.mpf]], right: list[list[mpmath.mpf]]) -> list[list[mpmath.mpf]]:
    """The product of two matrices of numbers, at the working precision."""
    return [[mpmath.fdot(row, column) for column in zip(*right, strict=True)] for row in left]


def file_matrix(exact: ImmutableMatrix, approximations: list[list[mpmath.mpf]], known: numbers.Numbers) -> None:
    """File in `known` the numbers of a matrix's irrational entries."""
    for exact_row, number_row in zip(entries(exact), approximations, strict=True):
        for value, number in zip(exact_row, number_row, strict=True):
            if not value.is_Rational:
                known.file(value, number)
