"""What a sentence holds: the parameters of language strings (names, tokens, formulas, phrases) and the facts of a
section or query that decide which sentences may be said of it. The Derivation model's steps carry them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sympy import Expr


@dataclass(frozen=True)
class Name:
    """A mathematical name: base symbol (W_Q, Q, x, z ...), optional token or fixed subscript, head index; `group`:
    the K/V head of grouped-query attention, written in square brackets (K^{[1]}) beside the query heads' (h)."""

    base: str
    token: str | None = None
    label: str | None = None
    head: int | None = None
    group: int | None = None


@dataclass(frozen=True)
class Token:
    """A token name used inside a sentence (user text)."""

    name: str


@dataclass(frozen=True)
class Eq:
    """`name = value` inside a sentence (d_k = 2); a value given as an Expr is shown as the page shows it, after
    "≈" when rounded (p ≈ 0.4959)."""

    name: Name
    value: int | Expr


@dataclass(frozen=True)
class SqrtDk:
    """√d_k with its value inside a sentence (√d_k = √2, or √d_k = √4 = 2)."""

    d_k: int


@dataclass(frozen=True)
class Num:
    """An exact number inside a sentence (a given scale such as 2.5)."""

    value: Expr


@dataclass(frozen=True)
class Nums:
    """Several exact numbers inside a sentence, joined as the language joins a list ("0.2472 and 0.2457")."""

    values: tuple[Expr, ...]


@dataclass(frozen=True)
class Tokens:
    """Several token names inside a sentence, joined as the language joins a list ("I and machine"); the one equal
    to `itself` (the query, in self-attention) is written as the word for "itself"."""

    names: tuple[str, ...]
    itself: str | None = None


@dataclass(frozen=True)
class Formula:
    """A formula inside a sentence, typeset as math by every format: `key` names it in the renderer's table of
    formulas (render/math.py FORMULAS), `names` fill its name slots ($z, $q ...)."""

    key: str
    names: tuple[tuple[str, Name], ...] = ()


@dataclass(frozen=True)
class Phrase:
    """A language string with its own parameters, inside a sentence."""

    key: str
    params: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class Phrases:
    """Several phrases joined as the language joins a list ("most to I, then to …, and least to …"); `last`: the
    language key of the last joint (list.and for two phrases, "most to a and less to b")."""

    items: tuple[Phrase, ...]
    last: str = "list.and_then"


Param = Token | Tokens | Name | Eq | SqrtDk | Num | Nums | Formula | Phrase | Phrases | int


@dataclass(frozen=True)
class Facts:
    """What is true of a section, or of one of its queries, that decides which sentences may be said of it
    (document/sentences.py CONDITIONS maps each conditional sentence to its condition over these facts).

    `keys` are the keys a query may attend to, `visible` those its mask leaves it (all, without a mask), `weights`
    the visible keys' weights as numbers (the engine's mpmath numbers, or Decimals; empty when symbolic).
    `shown` holds the same weights exact (what a sentence prints), `norms` the lengths ‖w_j v_j‖ of the visible
    keys' terms of the weighted sum as numbers and `norm_values` exact (both empty without values or numbers).
    `masked`: some key is hidden from some query of the section. `first`: the query is the first one the section
    derives step by step. `rotated`: the section rotates q and k for their positions. A kind whose sentences depend on more
    says it in a subclass of its own (NormFacts, NextTokenFacts, FeedForwardFacts)."""

    kind: str
    token: str | None = None
    keys: tuple[str, ...] = ()
    visible: tuple[str, ...] = ()
    weights: tuple[Any, ...] = ()
    masked: bool = False
    positional: bool = False
    scaling: str = "sqrt_d_k"
    symbolic: bool = False
    first: bool = True
    rotated: bool = False  # q and k are rotated for their positions (RoPE)
    shown: tuple[Any, ...] = ()
    norms: tuple[Any, ...] = ()
    norm_values: tuple[Any, ...] = ()
