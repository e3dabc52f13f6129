"""One entry of an attention output, (Σ_j e^{a_j} v_j) / Z, kept exact as its parts.

Writing the n-term sum out for every one of the n·d output entries would build n²·d SymPy nodes. A
WeightedAverage holds the row's e^{a_j} (one shared Tuple per query), the value column (one shared Tuple per
column) and Z, and writes the sum out only when asked: for printing, for evalf and for doit().
"""

from __future__ import annotations

from mpmath.libmp import prec_to_dps
from sympy import Add, Expr, Integer, Mul, Pow, S, Tuple

from .fast import hash_once, new_expr


class Parts(Tuple):
    """A Tuple whose hash is computed once: SymPy's Tuple hashes all its entries on every call, and a row's
    e^{a_j} and a value column are shared by d and n WeightedAverages respectively."""

    __hash__ = hash_once


class WeightedAverage(Expr):
    """(Σ_j e^{a_j} v_j) / Z over the visible keys; equal to the written-out sum, which `expanded` returns."""

    is_commutative = True

    def __new__(cls, exps: Tuple, column: Tuple, total: Expr) -> WeightedAverage:
        return new_expr(cls, exps, column, total)  # the parts are exact: no sympify, no canonical sorting

    @property
    def exps(self) -> Tuple:
        return self.args[0]

    @property
    def column(self) -> Tuple:
        return self.args[1]

    @property
    def total(self) -> Expr:
        return self.args[2]

    def expanded(self) -> Expr:
        """The sum written out (unevaluated, terms in key order) over Z."""
        terms = [Mul(v, e, evaluate=False) for v, e in zip(self.column, self.exps, strict=True)
                 if v is not S.Zero and e is not S.Zero]
        return Mul(Add(*terms, evaluate=False) if terms else Integer(0), Pow(self.total, -1), evaluate=False)

    def doit(self, **hints) -> Expr:
        return Add(*(v * e for v, e in zip(self.column, self.exps, strict=True))) / self.total

    def _eval_evalf(self, prec: int) -> Expr:
        # The evaluated sum through evalf(), which raises the precision when terms cancel: the Add's own hook
        # works at `prec` and gave 0 for terms cancelling to 10^-100.
        return self.doit().evalf(prec_to_dps(prec))

    @property
    def is_number(self) -> bool:
        return all(part.is_number for part in (*self.exps, *self.column, self.total))

    def _eval_is_finite(self) -> bool | None:
        # A number here averages finite values with positive weights. SymPy asks it of every 0·x in an EXRAW matrix
        # product (x·W_O with a zero weight), and without this hook would evaluate the sum for its sign first.
        return True if self.is_number else None

    def _latex(self, printer) -> str:
        return printer._print(self.expanded())

    def _sympystr(self, printer) -> str:
        return printer._print(self.expanded())
