"""SymPy expressions of the softmax built directly in the form SymPy's own evaluation gives them.

Evaluating them would find nothing to simplify, yet it costs: exp searches its exponent for multiples of πi, Add
imports SymPy's tensor module on first use, and Mul re-sorts a quotient per weight. Each builder here takes the
shortcut only where the result is provably the same object SymPy would build (the tests compare them on random
inputs), and otherwise lets SymPy evaluate.
"""

from __future__ import annotations

from sympy import Add, Expr, I, Integer, Mul, S, exp, log, pi
from sympy.core.add import _addsort
from sympy.core.mul import _mulsort

from .approx import rational_times_root
from .symbols import is_symbolic


def exponential(a: Expr) -> Expr:
    """e^a; e^{−∞} = 0. For a real exponent without logarithms SymPy's evaluation of exp finds nothing to
    simplify (but e^0 = 1 and e^1 = E) and searches for multiples of πi first, ~0.5 ms for a surd: it is
    skipped."""
    if a is S.NegativeInfinity:
        return Integer(0)
    if a.is_Rational or rational_times_root(a) is not None:
        if a is S.Zero or a is S.One:  # e^0 = 1 and e^1 = E, as SymPy writes them
            return exp(a)
        return exp(a, evaluate=False)
    if not is_symbolic(a) and not a.has(log, I, pi):
        # A real number built from rationals, roots, sines and cosines (positional encodings): nothing for exp
        # to simplify, but its search compares the whole sum numerically (~40 ms each at 8 tokens).
        return exp(a, evaluate=False)
    return exp(a)


def exp_sum(exps: tuple[Expr, ...]) -> Expr:
    """Z = Σ e^{a_j} as SymPy's Add would build it. Distinct exponentials need no collecting, so the terms are
    only put in canonical order: SymPy's first Add evaluation in a process imports its tensor and combinatorics
    modules (~70 ms, a tenth of a whole `render --example mt`)."""
    terms = [e for e in exps if e is not S.Zero]
    if len(terms) < 2 or len(set(terms)) < len(terms) or not all(isinstance(e, exp) for e in terms):
        return Add(*exps)
    _addsort(terms)
    return Add._from_args(terms)


def quotient(e: Expr, inverse: Expr) -> Expr:
    """e · Z⁻¹ built as SymPy's own evaluation would build it (the same two factors in canonical order)."""
    factors = [e, inverse]
    _mulsort(factors)
    return Mul._from_args(factors)
