"""The engine's fast path: the only module that relies on private SymPy, mpmath and python-flint API.

Every other engine module calls the small functions here. tests/engine/test_fast.py checks each assumption
below against the installed versions and names the one an upgrade breaks; pyproject.toml bounds the versions.

Private names relied on, and what is assumed of them:

- SymPy `ImmutableMatrix._rep`: the DomainMatrix holding the matrix's entries (over ZZ or QQ when all are
  rational, else EXRAW), read without converting an entry.
- SymPy `ImmutableMatrix.args[2].args`: the matrix's entries as SymPy objects, row by row.
- SymPy `ImmutableMatrix._fromrep(rep)`: a matrix is `Basic.__new__(cls, rows, cols, Tuple(*entries))` with
  `_rows`, `_cols` and `_rep` set, its entries those `rep.to_sympy()` gives (built here from entries at hand);
  `_flat_list_to_DomainMatrix`: the storage `ImmutableMatrix(rows, cols, entries)` picks (ZZ, QQ or EXRAW); a
  sparse storage's `rep.rep` is an SDM, a dict of the nonzero rows (dicts of the nonzero entries).
- SymPy `SDM.__init__(elements, shape, domain)`: a dict of the elements with `shape`, `rows`, `cols` and `domain`
  set, then a check that every index is within the shape (skipped by `sparse`, whose callers index within it).
- SymPy `sympy.core.add._addsort` and `Add._from_args`: sorting terms in place as `Add` orders them, and
  building the Add of already canonical terms without evaluation.
- SymPy `sympy.core.mul._mulsort` and `Mul._from_args`: the same for the factors of a Mul.
- SymPy `Expr.__new__(cls, *args)`: a node whose args are stored as given (no sympify, no sorting).
- SymPy `Tuple._mhash`: the slot Basic caches its hash in (None until computed).
- SymPy `Expr._eval_evalf(prec)`: a node's numeric evaluation at prec bits, as evalf calls it for a subclass.
  (WeightedAverage defines `_eval_evalf`, `_latex` and `_sympystr`: SymPy's documented hooks for new classes.)
- SymPy `sympy.external.gmpy.GROUND_TYPES`: "flint" when SymPy runs on python-flint (imported already).
- mpmath `mpmath.libmp`: `dps_to_prec`, `from_int`, `from_rational`, `mpf_exp`, `mpf_sum`, `mpf_div`,
  `mpf_shift`, `mpf_mul_int`, `round_nearest`, on raw values (sign, man, exp, bc), as mpmath's operators call them.
- mpmath `mpf._mpf_` (an mpf's raw value), `mpf.man`, `mpf.exp`, `mpf.bc`, and `mpmath.mp.make_mpf`.
- python-flint `fmpz_mat`: integer matrices with `*` and `entries()`; `arb` balls at `ctx.prec` bits (a global
  setting, restored after use) with `exp`, `sqrt`, `+`, `*`, `/`, `is_exact`, `rel_accuracy_bits`, and
  `arb.mid().man_exp()`, the midpoint as an odd mantissa (or 0) and an exponent, which is an mpmath raw value as
  it is; `arb_mat` built from an `fmpq_mat` or from a list of balls and integers, with `*` and `entries()`.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import mpmath
from mpmath.libmp import (
    dps_to_prec,
    from_int,
    from_rational,
    mpf_div,
    mpf_exp,
    mpf_mul_int,
    mpf_shift,
    mpf_sum,
    round_nearest,
)
from sympy import EXRAW, QQ, ZZ, Add, Basic, Expr, ImmutableMatrix, Integer, Mul, Rational, S, Tuple
from sympy.core.add import _addsort
from sympy.core.mul import _mulsort
from sympy.core.sympify import _sympify
from sympy.external.gmpy import GROUND_TYPES
from sympy.polys.matrices import DomainMatrix
from sympy.polys.matrices.sdm import SDM

if GROUND_TYPES == "flint":  # SymPy runs on python-flint, imported already: its integer matrices are at hand
    from flint import arb, arb_mat, ctx, fmpq, fmpq_mat, fmpz_mat

    _ZERO_BALL = arb(0)
else:
    arb = arb_mat = ctx = fmpq = fmpq_mat = fmpz_mat = None


# SymPy matrices


def storage(M: ImmutableMatrix) -> DomainMatrix:
    """The DomainMatrix a SymPy matrix keeps its entries in, read as it is (no entry converted, no domain searched)."""
    return M._rep


def flat_entries(M: ImmutableMatrix) -> tuple[Expr, ...]:
    """A matrix's SymPy entries row by row, as the matrix holds them (indexing would convert each entry again)."""
    return M.args[2].args


def with_storage(rep: DomainMatrix, flat: tuple[Expr, ...]) -> ImmutableMatrix:
    """The matrix of storage `rep` whose entries, row by row, are `flat` (equal to rep's, of the same types), as
    ImmutableMatrix._fromrep makes it without converting every entry out of the storage again."""
    rows, cols = rep.shape
    M = Basic.__new__(ImmutableMatrix, Integer(rows), Integer(cols), Tuple(*flat, sympify=False))
    M._rows, M._cols, M._rep = rows, cols, rep
    return M


def sparse(elements: dict[int, dict[int, object]], shape: tuple[int, int], domain) -> SDM:
    """SDM(elements, shape, domain) without its index checks (a generator per row: most of its time)."""
    rep = dict.__new__(SDM)
    dict.__init__(rep, elements)
    rep.shape = rep.rows, rep.cols = shape
    rep.domain = domain
    return rep


def matrix_of_entries(rows: int, cols: int, values: Iterable[Expr]) -> ImmutableMatrix:
    """ImmutableMatrix(rows, cols, values): the same storage (ZZ when every entry is an Integer, QQ when each is
    Rational, else EXRAW; the nonzero entries) and entries, without its input checks and without converting every
    entry into the storage and out again."""
    flat = [v if isinstance(v, Basic) else _sympify(v) for v in values]  # (_sympify returns a Basic as it is)
    types = set(map(type, flat))
    domain = (EXRAW if not all(issubclass(t, Rational) for t in types)
              else ZZ if all(issubclass(t, Integer) for t in types) else QQ)
    if len(flat) != rows * cols or not all(issubclass(t, Expr) for t in types):  # SymPy's own errors, warnings
        return ImmutableMatrix(rows, cols, flat)
    convert, rational = domain.from_sympy, domain is not EXRAW
    nonzero: dict[int, dict[int, object]] = {}
    for n, v in enumerate(flat):
        if (v if rational else v != 0):  # a Rational's truth is v != 0, without SymPy's comparison
            i, j = divmod(n, cols)
            nonzero.setdefault(i, {})[j] = v if domain is EXRAW else convert(v)
        else:
            flat[n] = S.Zero  # the storage drops zeros: to_sympy's 0
    return with_storage(DomainMatrix.from_rep(sparse(nonzero, (rows, cols), domain)), tuple(flat))


def product(X: ImmutableMatrix, W: ImmutableMatrix) -> ImmutableMatrix:
    """X·W as SymPy's X * W makes it (the product of the storages, as RepMatrix._eval_matrix_mul), without its
    operator dispatch, and with the entries read off a sparse storage's nonzero entries."""
    if type(X) is not ImmutableMatrix or type(W) is not ImmutableMatrix or X.cols != W.rows:
        return ImmutableMatrix(X * W)
    rep = X._rep * W._rep
    if rep.rep.fmt != "sparse":
        return with_storage(rep, tuple(rep.to_sympy().to_list_flat()))
    cols, convert = rep.shape[1], rep.domain.to_sympy
    flat = [S.Zero] * (rep.shape[0] * cols)
    for i, row in rep.rep.items():
        for j, v in row.items():
            flat[i * cols + j] = convert(v)
    return with_storage(rep, tuple(flat))


def row_matrix(M: ImmutableMatrix, i: int) -> ImmutableMatrix:
    """Row i of M as a 1×cols matrix equal to M[i, :] (M.row(i)), with the same storage, its entries M's own."""
    rep, cols = M._rep, M.cols
    if rep.rep.fmt != "sparse":
        return M[i, :]
    nonzero = rep.rep.get(i)
    return with_storage(DomainMatrix.from_rep(sparse({0: dict(nonzero)} if nonzero else {}, (1, cols), rep.domain)),
                        flat_entries(M)[i * cols:(i + 1) * cols])


def row_matrices(M: ImmutableMatrix) -> tuple[ImmutableMatrix, ...]:
    """Each row of M as row_matrix makes it."""
    return tuple(row_matrix(M, i) for i in range(M.rows))


# SymPy expressions built in canonical form


def sorted_add(terms: list[Expr]) -> Expr:
    """The Add of terms that need no collecting (distinct, none zero), put in SymPy's canonical order."""
    _addsort(terms)
    return Add._from_args(terms)


def sorted_mul(factors: list[Expr]) -> Expr:
    """The Mul of factors that need no combining, put in SymPy's canonical order."""
    _mulsort(factors)
    return Mul._from_args(factors)


def new_expr(cls: type, *args: Expr) -> Expr:
    """A node of class cls holding args exactly as given (no sympify, no canonical sorting)."""
    return Expr.__new__(cls, *args)


def hash_once(t: Tuple) -> int:
    """A Tuple's hash, computed on first call and kept in the slot SymPy caches hashes in."""
    h = t._mhash
    if h is None:
        h = t._mhash = hash(t.args)
    return h


def evalf_node(expr: Expr, prec: int) -> Expr:
    """expr evaluated at prec bits by SymPy's evalf hook (what a subclass's _eval_evalf hands on)."""
    return expr._eval_evalf(prec)


# mpmath numbers


def binary_precision(digits: int) -> int:
    """The bits that hold `digits` decimal digits, as mpmath's workdps sets them."""
    return dps_to_prec(digits)


def binary_parts(x: mpmath.mpf) -> tuple[int, int, int, int]:
    """(sign, mantissa, exponent, bit count) of an mpmath number: x = (-1)^sign · mantissa · 2^exponent."""
    return x._mpf_


def rational_number(p: int, q: int, prec: int) -> mpmath.mpf:
    """p/q as an mpmath number: one division, rounded to nearest at prec bits."""
    return mpmath.mp.make_mpf(from_rational(p, q, prec, round_nearest))


def softmax_numbers(logits: list[mpmath.mpf | None], prec: int) -> tuple[list, mpmath.mpf, list]:
    """(e^{a_j}, Z, e^{a_j}/Z) from the logits' numbers (None: masked, e^{−∞} = 0), at prec bits: libmp called
    as mpmath's operators call it (the same roundings, the same bits), without their dispatch per call."""
    make = mpmath.mp.make_mpf
    exps = [make(mpf_exp(a._mpf_, prec, round_nearest)) if a is not None else mpmath.mpf(0) for a in logits]
    total = make(mpf_sum([e._mpf_ for e in exps], prec, round_nearest))
    weights = [make(mpf_div(e._mpf_, total._mpf_, prec, round_nearest)) for e in exps]
    return exps, total, weights


def rational_softmax_rows(rows: list[list[tuple[int, int] | None]], radicand: int, prec: int,
                          columns: list[tuple[int, list[int]]] | None, kept_bits: int) -> list[tuple] | None:
    """The softmax of rows of logits a_j = c_j·√radicand given as fractions c_j (None: masked, e^{−∞} = 0) and,
    given the values' columns as integers over a denominator, (d_c, [n_jc]), each row's outputs
    Σ_j e^{a_j} n_jc / (d_c·Z): python-flint's arb balls at prec bits, the logits and the sums each one matrix
    operation in C. Per row (a_j, e^{a_j}, Z, e^{a_j}/Z, outputs), balls, an output None when fewer than
    kept_bits of its bits are certain (its terms cancelled); None without python-flint (then mpmath computes)."""
    if arb is None:
        return None
    with _precision(prec):
        width = len(rows[0]) if rows else 0
        logits = arb_mat(fmpq_mat(len(rows), width, [0 if c is None else fmpq(*c) for row in rows for c in row]))
        logits = (logits if radicand == 1 else logits * arb(radicand).sqrt()).entries()
        masked = [c is None for row in rows for c in row]
        exps = [_ZERO_BALL if hidden else a.exp() for a, hidden in zip(logits, masked, strict=True)]
        totals = [sum(exps[i * width + 1:(i + 1) * width], exps[i * width]) for i in range(len(rows))]
        sums = None
        if columns:
            numerators = arb_mat(width, len(columns), [column[j] for j in range(width) for _, column in columns])
            sums = (arb_mat(len(rows), width, exps) * numerators).entries()
        out = []
        for i, total in enumerate(totals):
            row = slice(i * width, (i + 1) * width)
            outputs = [] if sums is None else [
                _kept(sums[i * len(columns) + c] / (total * denominator), kept_bits)
                for c, (denominator, _) in enumerate(columns)]
            out.append(([None if hidden else a for a, hidden in zip(logits[row], masked[row], strict=True)],
                        exps[row], total, [e / total for e in exps[row]], outputs))
        return out


def ball_products(rows: list[list], matrix: list[list[tuple[int, int]]], prec: int, kept_bits: int) -> list[list]:
    """Rows of balls (rational_softmax_rows' outputs) times a rational matrix given as fractions: one arb_mat
    product at prec bits, an entry None when fewer than kept_bits of its bits are certain (its terms cancelled)."""
    with _precision(prec):
        width = len(matrix[0]) if matrix else 0
        right = arb_mat(fmpq_mat(len(matrix), width, [fmpq(*f) for row in matrix for f in row]))
        products = (arb_mat(len(rows), len(matrix), [x for row in rows for x in row]) * right).entries()
        return [[_kept(x, kept_bits) for x in products[i * width:(i + 1) * width]] for i in range(len(rows))]


@contextmanager
def _precision(prec: int) -> Iterator[None]:
    """python-flint's global working precision set to prec bits for a block, and restored after it."""
    before = ctx.prec
    ctx.prec = prec
    try:
        yield
    finally:
        ctx.prec = before


def _kept(x, kept_bits: int):
    """An output ball, or None when it is not exact and fewer than kept_bits of its bits are certain."""
    return x if x.is_exact() or x.rel_accuracy_bits() >= kept_bits else None


def ball_number(x) -> mpmath.mpf | None:
    """A ball's midpoint as an mpmath number, exactly: its raw value is the midpoint's (None stays None)."""
    if x is None:
        return None
    m, e = x.mid().man_exp()
    man = int(m)
    if man > 0:
        return _make_mpf((0, man, int(e), man.bit_length()))
    return _make_mpf((1, -man, int(e), (-man).bit_length())) if man else _ZERO


_make_mpf = mpmath.mp.make_mpf


def integer_outputs(exps: list[mpmath.mpf], total: mpmath.mpf, integers: list[tuple[int, list[int]]],
                    numerators: object | None, prec: int) -> list[mpmath.mpf]:
    """(Σ_j e^{a_j} n_jc) / (d_c · Z) for each value column c given as integers n_jc over a denominator d_c.

    The sum is taken in integers: each e^{a_j} = man·2^exp is shifted to the smallest exponent, but to none more
    than prec + 64 bits below the largest term, as each term is already rounded to prec bits.
    `numerators` is integer_matrix()'s matrix of the n_jc, or None.
    """
    high = max((e.exp + e.bc for e in exps if e.man), default=0)
    low = _lowest(exps, high, prec)
    sums = [(s, low) for s in integer_sums(_shifted(exps, low), integers, numerators)]
    for c, (_, column) in enumerate(integers):
        # A column whose values are 0 at the largest terms has its own largest term, and terms that the shared
        # `low` cut off may be all it has (the output 20/(e^{400} + 1) is not 0): its sum from its own terms.
        if all(column):  # no value 0: its largest term is the row's
            continue
        kept = [e if n else _ZERO for e, n in zip(exps, column, strict=True)]
        column_high = max((e.exp + e.bc for e in kept if e.man), default=high)
        if column_high < high and any(e.man and e.exp < low for e in kept):
            column_low = _lowest(kept, column_high, prec)
            sums[c] = sum(map(operator.mul, _shifted(kept, column_low), column)), column_low
    return [mpmath.mp.make_mpf(mpf_div(mpf_shift(from_int(s, prec, round_nearest), shift),
                                       mpf_mul_int(total._mpf_, denominator, prec, round_nearest), prec, round_nearest))
            for (s, shift), (denominator, _) in zip(sums, integers, strict=True)]


_ZERO = mpmath.mpf(0)


def _lowest(exps: list[mpmath.mpf], high: int, prec: int) -> int:
    """The exponent the terms are shifted to: the smallest, but none more than prec + 64 bits below `high`."""
    return max(min((e.exp for e in exps if e.man), default=0), high - prec - 64)


def _shifted(exps: list[mpmath.mpf], low: int) -> list[int]:
    """Each e^{a_j} = man·2^exp as an integer multiple of 2^low (bits below it dropped)."""
    return [(e.man << (e.exp - low) if e.exp >= low else e.man >> (low - e.exp)) if e.man else 0 for e in exps]


def fixed_point(numbers: list[mpmath.mpf], bits: int) -> tuple[list[int], int]:
    """Numbers as integers m_j and one shift s, x_j ≈ m_j · 2^-s, with `bits` bits below the largest number's
    leading bit (the bits under them dropped)."""
    parts = [x._mpf_ for x in numbers]
    shift = bits - max((exp + bc for _, man, exp, bc in parts if man), default=0)
    return [(-1 if sign else 1) * (man << (exp + shift) if exp + shift >= 0 else man >> -(exp + shift))
            for sign, man, exp, _ in parts], shift


def integer_matrix(rows: Iterable[Iterable[int]]) -> object | None:
    """Rows of integers as a python-flint matrix when SymPy runs on flint, else None."""
    return None if fmpz_mat is None else fmpz_mat([list(row) for row in rows])


def integer_sums(mantissas: list[int], integers: list[tuple[int, list[int]]], numerators: object | None) -> list[int]:
    """Σ_j m_j n_jc for each column c: one python-flint product when `numerators` holds the n_jc (keys by
    columns, from integer_matrix), else Python's integers."""
    if numerators is None:
        return [sum(map(operator.mul, mantissas, column)) for _, column in integers]
    return [int(s) for s in (fmpz_mat([mantissas]) * numerators).entries()]
