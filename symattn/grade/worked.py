"""The worked line of a blank, as a plain line: how its true value comes from the true earlier values
(`s[2] = q · k_2 = 1·0.5 + (−1)·2 = −1.5`). Numbers are rounded to the exam's decimals for display only: "="
where every number shown is exact, "≈" where any is rounded."""

from __future__ import annotations

from decimal import Decimal

from .carry import Quantities
from .exam import GradedBlank, GradedVersion
from .numbers import rounded


def shown(value: Decimal, digits: int) -> tuple[str, bool]:
    """A number as shown (−0.25, U+2212 for the minus) and whether it is exact at `digits` decimals."""
    near = rounded(value, digits)
    exact = near == value
    written = format(value.normalize() if exact else near, "f")
    if written.startswith("-"):
        written = "\u2212" + written[1:]
    return ("0" if written in ("\u22120", "-0") else written), exact


def where(blank: GradedBlank) -> str:
    """The blank's place as the feedback names it: s[3], K[2][1] (and its id)."""
    symbol = blank.id.split(".")[2]
    table = blank.id.count(".") == 4
    return f"{symbol}[{blank.row}][{blank.column}]" if table else f"{symbol}[{blank.column}]"


class Missing(Exception):
    """A value a worked line would show is not in exam.json (the line is left out)."""


def products(num, left: list, right: list) -> str:
    """left·right written out term by term ("a·b + c·d"); Missing when exam.json gives them of unequal lengths."""
    if len(left) != len(right):
        raise Missing
    return " + ".join(f"{num(a)}·{num(b)}" for a, b in zip(left, right, strict=True))


class Lines:
    """The worked lines of one version (the true values of its blanks, read once)."""

    def __init__(self, version: GradedVersion, digits: int) -> None:
        self.version, self.digits = version, digits
        self.true = Quantities(version, {b.id: b.answer for b in version.blanks})

    def line(self, blank: GradedBlank) -> str | None:
        """The blank's worked line, or None for a quantity without one."""
        exact: list[bool] = []

        def num(value: Decimal | None, brackets: bool = True) -> str:
            if value is None:  # a value exam.json does not give: no line can show it
                raise Missing
            written, ok = shown(value, self.digits)
            exact.append(ok)
            return f"({written})" if brackets and value < 0 else written

        try:
            body = self._body(blank, num)
            if body is None:
                return None
            result = num(blank.answer, brackets=False)
        except (Missing, IndexError):  # a blank's row or column outside the matrix exam.json gives: no line
            return None
        return f"{where(blank)} = {body} {'=' if all(exact) else '≈'} {result}"

    def _body(self, blank: GradedBlank, num) -> str | None:
        v, head, c = self.version, blank.head, blank.column
        if blank.role in ("Q", "K", "V", "q"):
            letter = "Q" if blank.role in ("Q", "q") else blank.role
            X = v.given("memory" if v.memory and letter in "KV" else "X")
            W = v.given(f"W_{letter}", head)
            if X is None or W is None:
                return None
            return " + ".join(f"{num(x)}·{num(W[k][c - 1])}" for k, x in enumerate(X[blank.row - 1]))
        if blank.role == "scores":
            q_name = v.query
            Q, K = self.true.matrix(q_name, head), self.true.matrix("K", head)
            if Q is None or K is None:
                return None
            q = Q[(v.focus_row if q_name == "Q" else 1) - 1]
            return products(num, q, K[c - 1])
        if blank.role == "scaled":
            s = self.true.vector("scores", head)
            d_k = v.d_k.get(head)
            return None if s is None or d_k is None else f"{num(s[c - 1])} / √{d_k}"
        if blank.role == "weights":
            a = self.true.vector("scaled", head)
            if a is None:
                return None
            return f"exp({num(a[c - 1], False)}) / ({' + '.join(f'exp({num(x, False)})' for x in a)})"
        if blank.role == "output":
            w, V = self.true.vector("weights", head), self.true.matrix("V", head)
            if w is None or V is None:
                return None
            return products(num, w, [row[c - 1] for row in V])
        if blank.role == "final" and v.W_O is not None:
            z = self.true.vector("concat", None)
            if z is None:  # the heads' outputs (grouped-query versions have no heads table: their output blanks')
                heads = sorted(v.divisors) or sorted({b.head for b in v.blanks if b.role == "output" and b.head})
                z = [x for h in heads for x in self.true.vector("output", h) or []]
            # a head's output not at hand (z shorter than W_O): no worked line rather than a wrong one
            return products(num, z, [row[c - 1] for row in v.W_O])
        return None
