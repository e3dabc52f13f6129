"""Every assumption symattn/engine/fast.py makes about private SymPy, mpmath and python-flint API, checked against
the installed versions. A failure names the assumption an upgrade broke: fix fast.py (only), then widen the
version bounds in pyproject.toml."""

from __future__ import annotations

import random
from contextlib import contextmanager

import mpmath
import pytest
from sympy import QQ, ZZ, Add, E, Expr, ImmutableMatrix, Integer, Mul, Pow, Rational, Symbol, Tuple, cos, exp, sin, sqrt
from sympy.polys.matrices import DomainMatrix

from symattn.engine import WeightedAverage, fast


@contextmanager
def assumption(what: str):
    """Fail with the assumption's name whether it is broken by a wrong result or by a missing name."""
    try:
        yield
    except AssertionError as error:
        pytest.fail(f"fast.py relies on {what}, which no longer holds: {error}", pytrace=False)
    except (AttributeError, ImportError, TypeError, ValueError) as error:
        pytest.fail(f"fast.py relies on {what}, which is gone or changed: {error!r}", pytrace=False)


MATRICES = {
    "integer": ImmutableMatrix([[1, -2, 3], [4, 0, 6]]),
    "rational": ImmutableMatrix([[Rational(1, 2), 3], [Rational(-7, 3), 0]]),
    "surd": ImmutableMatrix([[sqrt(2), 1], [Rational(1, 3), sqrt(3) / 2]]),
    "symbolic": ImmutableMatrix([[Symbol("x"), 1], [2, Symbol("y") ** 2]]),
    "from a DomainMatrix": DomainMatrix([[QQ(1, 2), QQ(3)], [QQ(5, 7), QQ(0)]], (2, 2), QQ).to_Matrix().as_immutable(),
}


@pytest.mark.parametrize("kind", MATRICES)
def test_rep_is_the_domain_matrix_of_the_entries(kind):
    M = MATRICES[kind]
    with assumption("ImmutableMatrix._rep being the DomainMatrix of the matrix's entries (ZZ/QQ when rational)"):
        stored = fast.storage(M)
        assert isinstance(stored, DomainMatrix), type(stored)
        assert stored.shape == M.shape
        assert stored.to_Matrix() == M
        rational = all(v.is_Rational for v in M)
        assert (stored.domain in (ZZ, QQ)) == rational, stored.domain


@pytest.mark.parametrize("kind", MATRICES)
def test_args_2_holds_the_flat_entries_in_order(kind):
    M = MATRICES[kind]
    with assumption("ImmutableMatrix.args[2].args being the entries as SymPy objects, row by row"):
        flat = fast.flat_entries(M)
        assert isinstance(flat, tuple) and len(flat) == M.rows * M.cols
        assert list(flat) == [M[i, j] for i in range(M.rows) for j in range(M.cols)]
        assert all(isinstance(v, Expr) for v in flat)


def same_matrix(made: ImmutableMatrix, expected: ImmutableMatrix) -> None:
    """Equal entries of the same types, and the same storage (format, domain, nonzero entries)."""
    assert made == expected and made.args == expected.args and hash(made) == hash(expected)
    assert [type(v) for v in fast.flat_entries(made)] == [type(v) for v in fast.flat_entries(expected)]
    assert made._rep.domain == expected._rep.domain and made._rep.rep.fmt == expected._rep.rep.fmt
    assert made._rep.rep == expected._rep.rep


@pytest.mark.parametrize("kind", [*MATRICES, "zero row"])
def test_rows_and_matrices_from_entries_are_sympy_s(kind):
    M = MATRICES.get(kind) or ImmutableMatrix([[0, 0], [Rational(1, 3), 0]])
    with assumption("ImmutableMatrix._fromrep's matrix (args, _rows, _cols, _rep), _flat_list_to_DomainMatrix's "
                    "storage, and a sparse storage's SDM of the nonzero rows"):
        for i, row in enumerate(fast.row_matrices(M)):
            same_matrix(row, M[i, :])
        flat = list(fast.flat_entries(M))
        same_matrix(fast.matrix_of_entries(M.rows, M.cols, flat), ImmutableMatrix(M.rows, M.cols, flat))
        same_matrix(fast.matrix_of_entries(1, len(flat), flat), ImmutableMatrix([flat]))
        same_matrix(fast.product(M, M.T), M * M.T)
        same_matrix(fast.product(M.T, M), M.T * M)


def random_exponentials(rng: random.Random) -> list[Expr]:
    terms = set()
    while len(terms) < rng.randint(2, 7):
        a = Rational(rng.randint(-300, 300), rng.randint(1, 40)) * rng.choice([1, sqrt(2), sqrt(3)])
        if rng.random() < 0.3:
            a += sin(Rational(rng.randint(1, 9), 100)) + cos(rng.randint(1, 5))
        if a not in (0, 1):
            terms.add(exp(a, evaluate=False))
    return list(terms)


def test_addsort_sorts_as_add_does():
    rng = random.Random(1)
    with assumption("sympy.core.add._addsort sorting terms as Add does, and Add._from_args building that Add"):
        for _ in range(200):
            terms = random_exponentials(rng)
            rng.shuffle(terms)
            built, evaluated = fast.sorted_add(list(terms)), Add(*terms)
            assert type(built) is type(evaluated) and built.args == evaluated.args and built == evaluated
            assert hash(built) == hash(evaluated)


def test_mulsort_sorts_as_mul_does():
    rng = random.Random(2)
    with assumption("sympy.core.mul._mulsort sorting factors as Mul does, and Mul._from_args building that Mul"):
        for _ in range(200):
            terms = random_exponentials(rng)
            inverse = Pow(Add(*terms), -1)
            for e in terms:
                built, evaluated = fast.sorted_mul([e, inverse]), Mul(e, inverse)
                assert type(built) is type(evaluated) and built.args == evaluated.args and built == evaluated


def test_expr_new_keeps_the_args_as_given():
    parts = (Tuple(Integer(3), E), Tuple(Integer(1), Integer(2)), Integer(5))

    class Node(Expr):
        pass

    with assumption("Expr.__new__(cls, *args) storing args as given, without sympify or sorting"):
        node = fast.new_expr(Node, *parts)
        assert type(node) is Node and node.args == parts and all(a is b for a, b in zip(node.args, parts, strict=True))


def test_sparse_is_the_sdm_its_init_makes():
    from sympy.polys.matrices.sdm import SDM

    with assumption("SDM.__init__ setting the dict, shape, rows, cols and domain"):
        elements = {0: {1: QQ(1, 2)}, 2: {0: QQ(-3)}}
        made, plain = fast.sparse(elements, (3, 2), QQ), SDM(elements, (3, 2), QQ)
        assert type(made) is SDM and made == plain
        assert (made.shape, made.rows, made.cols, made.domain) == (plain.shape, plain.rows, plain.cols, plain.domain)
        assert vars(made) == vars(plain)
        assert DomainMatrix.from_rep(made) == DomainMatrix.from_rep(plain)


def test_tuple_mhash_is_the_hash_cache():
    with assumption("Tuple._mhash being a writable slot, None until the hash is computed"):
        t = Tuple(Integer(1), Rational(2, 3), sqrt(5))
        assert t._mhash is None
        h = fast.hash_once(t)
        assert h == hash(t.args) and t._mhash == h and fast.hash_once(t) == h


def test_eval_evalf_is_evalf_s_hook():
    e = Tuple(*(exp(Rational(k, 3), evaluate=False) for k in range(3)))
    column = Tuple(Integer(1), Rational(-1, 2), Integer(4))
    total = Add(*e.args)
    with assumption("Expr._eval_evalf(prec) being what evalf calls for a new Expr subclass"):
        average = WeightedAverage(e, column, total)
        assert abs(average.evalf(60) - average.doit().evalf(60)) < Rational(1, 10**55)
        assert abs(fast.evalf_node(total, 200) - total.evalf(60)) < Rational(1, 10**55)


def test_ground_types_and_flint_matrices():
    from sympy.external.gmpy import GROUND_TYPES

    with assumption("sympy.external.gmpy.GROUND_TYPES naming the ground types ('flint' with python-flint)"):
        assert GROUND_TYPES in ("flint", "gmpy", "gmpy2", "python"), GROUND_TYPES
        assert (fast.fmpz_mat is not None) == (GROUND_TYPES == "flint")
    if fast.fmpz_mat is None:
        return
    with assumption("python-flint fmpz_mat: a list-of-rows constructor, `*` and entries()"):
        numerators = fast.integer_matrix([[1, 2], [3, 4], [5, 6]])
        assert fast.integer_sums([10, 100, 1000], [(1, [1, 3, 5]), (1, [2, 4, 6])], numerators) == [5310, 6420]


def test_libmp_functions_round_as_mpmath_operators_do():
    prec = fast.binary_precision(100)
    with mpmath.workdps(100):
        assert mpmath.mp.prec == prec, "dps_to_prec giving the bits workdps sets"
    rng = random.Random(3)
    with assumption("mpmath.libmp functions (mpf_exp, mpf_sum, mpf_div, from_rational, ...) and mpf._mpf_"), \
            mpmath.workprec(prec):
        for _ in range(50):
            p, q = rng.randint(-10**12, 10**12), rng.randint(1, 10**9)
            x = fast.rational_number(p, q, prec)
            assert isinstance(x, mpmath.mpf) and x == mpmath.mpf(p) / q
            logits = [mpmath.mpf(rng.randint(-500, 500)) / rng.randint(1, 9) for _ in range(5)] + [None]
            exps, total, weights = fast.softmax_numbers(logits, prec)
            expected = [mpmath.exp(a) if a is not None else mpmath.mpf(0) for a in logits]
            assert exps == expected
            assert total == mpmath.fsum(expected)
            assert weights == [e / total for e in expected]


def test_mpf_parts_and_integer_outputs():
    prec = fast.binary_precision(100)
    with assumption("mpf.man, mpf.exp, mpf.bc (value = man·2^exp, bc = man's bit length) and mpmath.mp.make_mpf"):
        x = fast.rational_number(22, 7, prec)
        with mpmath.workprec(prec):
            assert mpmath.ldexp(mpmath.mpf(x.man), x.exp) == x and x.bc == x.man.bit_length()
        assert mpmath.mp.make_mpf(x._mpf_) == x
        assert fast.binary_parts(x) == (0, x.man, x.exp, x.bc)
        with mpmath.workprec(prec):
            assert fast.binary_parts(-x) == (1, x.man, x.exp, x.bc)
    with assumption("libmp from_int, mpf_shift, mpf_mul_int, mpf_div on raw values"), mpmath.workprec(prec):
        logits = [mpmath.mpf(1) / 3, mpmath.mpf(-2), None, mpmath.mpf(40)]
        exps, total, _ = fast.softmax_numbers(logits, prec)
        integers = [(3, [1, -2, 5, 7]), (1, [0, 0, 0, 0])]
        outputs = fast.integer_outputs(exps, total, integers, fast.integer_matrix([[1, 0], [-2, 0], [5, 0], [7, 0]]),
                                       prec)
        expected = mpmath.fdot(exps, [1, -2, 5, 7]) / (3 * total)
        assert abs(outputs[0] - expected) <= abs(expected) * mpmath.mpf(2) ** (8 - prec)
        assert outputs[1] == 0


def test_arb_softmax_rows_and_fixed_point():
    """python-flint's arb (when SymPy runs on flint): rows of logits c·√m, their e^{a}, Z, weights and the outputs
    Σ_j e^{a_j} n_j / (d·Z) and their products with a rational matrix agree with mpmath to the working precision,
    a number whose terms cancel is None, the midpoints become mpmath numbers exactly, and the global precision is
    restored; fixed_point writes numbers as integers over one power of two."""
    from symattn.engine.numbers import PRECISION

    rows = [[(3, 7), None, (-5, 2), (0, 1)], [(1, 3), (1, 3), (2, 3), None]]
    columns = [(3, [1, -2, 5, 7]), (1, [1, -1, 0, 4])]  # the second cancels in row 2: e^{a}·1 + e^{a}·(−1) + 0
    kept = fast.binary_precision(40)
    computed = fast.rational_softmax_rows(rows, 2, PRECISION + 10, columns, kept)
    if fast.arb is None:
        assert computed is None
        return
    before = fast.ctx.prec
    computed = fast.rational_softmax_rows(rows, 2, PRECISION + 10, columns, kept)
    assert fast.ctx.prec == before
    (logits, exps, total, weights, outputs), second = computed
    assert logits[1] is None and exps[1] == 0 and logits[3] == 0 and second[0][3] is None and second[1][3] == 0
    assert second[4][1] is None and second[4][0] is not None  # cancelled past kept bits; the other column holds
    with mpmath.workprec(PRECISION + 10):
        expected = [mpmath.mpf(3) / 7 * mpmath.sqrt(2), None, mpmath.mpf(-5) / 2 * mpmath.sqrt(2), mpmath.mpf(0)]
        for got, want in zip(logits, expected, strict=True):
            assert want is None or abs(fast.ball_number(got) - want) <= mpmath.mpf(2) ** -(PRECISION - 4)
        es = [mpmath.mpf(0) if a is None else mpmath.exp(a) for a in expected]
        Z = mpmath.fsum(es)
        assert abs(fast.ball_number(total) - Z) <= Z * mpmath.mpf(2) ** -(PRECISION - 4)
        assert abs(sum(map(fast.ball_number, weights)) - 1) <= mpmath.mpf(2) ** -(PRECISION - 8)
        for (denominator, column), got in zip(columns, outputs, strict=True):
            want = mpmath.fdot(es, column) / (denominator * Z)
            assert abs(fast.ball_number(got) - want) <= abs(want) * mpmath.mpf(2) ** -(PRECISION - 8)
    # the outputs times a rational matrix, in balls: one entry agrees with mpmath, one cancels (x·1 + x·(−1))
    products = fast.ball_products([[outputs[0], outputs[0]]], [[(1, 3), (1, 1)], [(2, 5), (-1, 1)]], PRECISION, kept)
    with mpmath.workprec(PRECISION + 10):
        want = fast.ball_number(outputs[0]) * (mpmath.mpf(1) / 3 + mpmath.mpf(2) / 5)
        assert abs(fast.ball_number(products[0][0]) - want) <= abs(want) * mpmath.mpf(2) ** -(PRECISION - 8)
    assert products[0][1] is None and fast.ctx.prec == before
    x = fast.arb(fast.fmpq(-3, 8))
    exact = fast.rational_softmax_rows([[(-3, 8)]], 1, 64, None, kept)[0]
    assert fast.ball_number(exact[0][0]) == mpmath.mpf(-3) / 8 and exact[4] == []  # an exact midpoint, exactly
    assert x.mid().man_exp()[0] % 2 == 1  # arf midpoints are normalised: an odd mantissa, as mpmath's raw values
    integers, shift = fast.fixed_point([mpmath.mpf(3) / 4, mpmath.mpf(-5)], 10)
    assert [m / 2**shift for m in integers] == [0.75, -5]
