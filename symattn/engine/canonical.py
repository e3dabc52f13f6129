"""SymPy expressions of the softmax built directly in the form SymPy's own evaluation gives them.

Evaluating them would find nothing to simplify, yet it costs: exp searches its exponent for multiples of πi, Add
imports SymPy's tensor module on first use, and Mul re-sorts a quotient per weight. Each builder here takes the
shortcut only where the result is provably the same object SymPy would build (the tests compare them on random
inputs), and otherwise lets SymPy evaluate.
"""

from __future__ import annotations

from sympy import Add, Expr, I, Integer, Mul, S, exp, log, pi

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
    """Z = Σ e^{a_j} as SymPy's Add would build it (SymPy's first Add evaluation in a process imports its tensor
    and combinatorics modules, ~70 ms): equal exponentials (tied scores) collected as k·e^{a}, the e^0 = 1 terms as
    the coefficient in front, the rest in canonical order. Other terms are left to Add."""
    counts: dict[Expr, int] = {}
    for e in exps:
        if e is not S.Zero:
            counts[e] = counts.get(e, 0) + 1
    ones = counts.pop(S.One, 0)
    if not all(isinstance(e, exp) or e is S.Exp1 for e in counts):
        return Add(*exps)
    terms = [e if k == 1 else Mul._from_args((Integer(k), e)) for e, k in counts.items()]
    if len(terms) + bool(ones) < 2:
        return Add(*exps)  # a single term (or none) is no sum
    ordered = sorted_add(terms).args if len(terms) > 1 else tuple(terms)
    return Add._from_args([Integer(ones), *ordered]) if ones else Add._from_args(list(ordered))


def quotient(e: Expr, inverse: Expr) -> Expr:
    """e · Z⁻¹ built as SymPy's own evaluation would build it (the same two factors in canonical order)."""
    return sorted_mul([e, inverse])
