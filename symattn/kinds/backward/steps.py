"""The backward pass's own steps (solution.py lays them out, printers.py prints them): a gradient matrix beside
its formula, one row of a product written out, the focus row of dS by the shortcut with the check
of D, and the loss."""

from __future__ import annotations

from dataclasses import dataclass, field

from sympy import Expr

from ...document.steps import Name, Shown, Step
from ...engine import Numbers
from ...spec.model import Scale


@dataclass(frozen=True)
class Gradient(Step):
    """`formula` (a key of printers.FORMULAS: "dV = Pᵀ dO", ...) and the matrix it gives, entry by entry as shown
    ("=" when every entry is exact, else "≈")."""

    formula: str
    value: Shown


@dataclass(frozen=True)
class RowProduct(Step):
    """result = row · matrix (/ divisor: the scores' scale, for dQ and dK) for one row, each entry written out as a
    sum of products (a quotient), both factors rounded with the guard decimals the line needs. A product with an
    exact zero (a masked position's weight) adds nothing and is left out. `scale` None: no divisor."""

    result: Name
    row_name: Name
    row: Shown
    matrix_name: Name
    matrix: Shown
    value: Shown
    scale: Scale | None = None
    d_k: int = 0
    divisor: Expr | None = None
    row_number: int | None = None  # the row's index when it is not a token's (the first row of dW_Q: 1)
    columns: tuple[str, ...] = ()  # the columns' tokens when they are keys (dP, dS), else numbered 1, 2, ...


@dataclass(frozen=True)
class ScoreRow(Step):
    """The focus row i of dS: D_i = Σ_j P_ij dP_ij, the same number as Σ_c dO_ic O_ic (the check), then
    dS_ij = P_ij (dP_ij − D_i) for every key, 0 where the key is masked."""

    token: str
    tokens: tuple[str, ...]
    P: tuple[Expr, ...]
    dP: tuple[Expr, ...]
    D: Expr
    dO: tuple[Expr, ...]
    O: tuple[Expr, ...]
    D_check: Expr
    dS: tuple[Expr, ...]
    visible: tuple[bool, ...]
    known: Numbers | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Loss(Step):
    """L = ½ Σ (O − T)² (mse) or −Σ_i log p_{i,y_i} (cross_entropy), its value."""

    value: Expr
    loss: str = "mse"
    known: Numbers | None = field(default=None, compare=False)


@dataclass(frozen=True)
class FiniteDifference(Step):
    """L at W_Q ± h in entry (1, 1), the central difference (L₊ − L₋) / 2h and the formula's (dW_Q)_{1,1}."""

    h: Expr
    plus: Expr
    minus: Expr
    quotient: Expr
    gradient: Expr
    known: Numbers | None = field(default=None, compare=False)
