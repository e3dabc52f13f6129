"""SymPy expressions of the softmax built directly in the form SymPy's own evaluation gives them.

Evaluating them would find nothing to simplify, yet it costs: exp searches its exponent for multiples of πi, Add
imports SymPy's tensor module on first use, and Mul re-sorts a quotient per weight. Each builder here takes the
shortcut only where the result is provably the same object SymPy would build (the tests compare them on random
inputs), and otherwise lets SymPy evaluate.
"""

from __future__ import annotations

from sympy import Add, Expr, I, Integer, S, exp, log, pi

from .fast import sorted_add, sorted_mul
from .symbols import is_symbolic


def exponential(a: Expr) -> Expr:
    """e^a; e^{−∞} = 0. For a real number without logarithms (a rational, c·√m, a sum of sines and cosines from
    positional encodings) SymPy's evaluation of exp finds nothing to simplify but e^0 = 1 and e^1 = E, after a
    costly search for multiples of πi: it is skipped."""
    if a is S.NegativeInfinity:
        return Integer(0)
    if a is S.Zero or a is S.One or is_symbolic(a) or a.has(log, I, pi):
        return exp(a)
    return exp(a, evaluate=False)


def exp_sum(exps: tuple[Expr, ...]) -> Expr:
    """Z = Σ e^{a_j} as SymPy's Add would build it. Distinct exponentials need no collecting, so the terms are
    only put in canonical order (SymPy's first Add evaluation in a process imports its tensor and combinatorics
    modules)."""
    terms = [e for e in exps if e is not S.Zero]
    if len(terms) < 2 or len(set(terms)) < len(terms) or not all(isinstance(e, exp) for e in terms):
        return Add(*exps)
    return sorted_add(terms)


def quotient(e: Expr, inverse: Expr) -> Expr:
    """e · Z⁻¹ built as SymPy's own evaluation would build it (the same two factors in canonical order)."""
    return sorted_mul([e, inverse])
