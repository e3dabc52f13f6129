"""The steps of next-token prediction (kinds/next_token/kind.py), beside document.steps': the logits term by term, their
division by the temperature and the ranking table. The softmax is model.SoftmaxStep's, with its own letters."""

from __future__ import annotations

from dataclasses import dataclass, field

from sympy import Expr

from ...document.steps import Name, Shown, Step
from ...engine import Numbers


@dataclass(frozen=True)
class LogitLines(Step):
    """ℓ_j = x · c_j (+ b_j) for every vocabulary entry j, written out term by term: c_j is column j of W_vocab
    (`column` "w") or, with tied embeddings, row j of E (`column` "E"); `bias` the row b, if given."""

    state: Name
    row: Shown
    column: str
    columns: tuple[Shown, ...]
    bias: Shown | None
    logits: tuple[Expr, ...]
    tokens: tuple[str, ...]
    known: Numbers | None = field(default=None, compare=False)


@dataclass(frozen=True)
class TemperatureLines(Step):
    """a_j = ℓ_j / T for every vocabulary entry."""

    temperature: Expr
    logits: tuple[Expr, ...]
    scaled: tuple[Expr, ...]
    tokens: tuple[str, ...]
    known: Numbers | None = field(default=None, compare=False)


@dataclass(frozen=True)
class RankingTable(Step):
    """The vocabulary from the largest logit down: each entry's rank (equal logits share one, as 1, 1, 3), token,
    logit and probability; with top-k also the renormalised probability of the kept entries (None: not kept)."""

    ranks: tuple[int, ...]
    tokens: tuple[str, ...]
    logits: tuple[Expr, ...]
    probabilities: tuple[Expr, ...]
    renormalised: tuple[Expr | None, ...] = ()
    known: Numbers | None = field(default=None, compare=False)
