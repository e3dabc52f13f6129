"""The Derivation model's steps of rotary position embeddings (RoPE), beside document.steps': the frequencies θ_i, one
token's rotation of q and k, and a query's scores written in m − n alone. Exact values only, no rendering."""

from __future__ import annotations

from dataclasses import dataclass, field

from sympy import Expr

from ...document.steps import Name, Shown, Step
from ...engine import Numbers


@dataclass(frozen=True)
class RopeFrequencies(Step):
    """θ_i = base^(−2i/d) for each pair i of the d dimensions."""

    base: Expr
    d: int
    thetas: tuple[Expr, ...]


@dataclass(frozen=True)
class RopeRotation(Step):
    """One token at position m: each pair's angle φ_i = m·θ_i with cos φ_i and sin φ_i, then each vector of the
    token (q and/or k) rotated: x̂_a = x_a cos φ_i − x_b sin φ_i, x̂_b = x_a sin φ_i + x_b cos φ_i for pair (a, b).
    `vectors`: (rotated name, plain name, plain row, rotated row) of each vector shown."""

    token: str
    position: int
    pairs: tuple[tuple[int, int], ...]
    thetas: tuple[Expr, ...]
    angles: tuple[Expr, ...]
    vectors: tuple[tuple[Name, Name, Shown, Shown], ...]
    known: Numbers | None = field(default=None, compare=False)


@dataclass(frozen=True)
class RelativeScores(Step):
    """A query's scores q̂_m · k̂_n from the unrotated q and k and m − n alone:
    Σ_i (q_a k_a + q_b k_b) cos((m − n)θ_i) + (q_a k_b − q_b k_a) sin((m − n)θ_i), for every key it sees."""

    query_name: Name
    key_names: tuple[Name, ...]
    position: int
    key_positions: tuple[int, ...]
    query: Shown
    keys: tuple[Shown, ...]
    pairs: tuple[tuple[int, int], ...]
    thetas: tuple[Expr, ...]
    scores: tuple[Expr, ...]
    known: Numbers | None = field(default=None, compare=False)


@dataclass(frozen=True)
class RopeFigure(Step):
    """One pair (a, b) of one vector at position m turned by φ_i = m·θ_i, as the rotation matrix times the pair,
    and (PDF, HTML) drawn in the plane of the two dimensions: the pair, the rotated pair, the angle between them."""

    name: Name  # the vector before the rotation (q_love)
    rotated: Name  # and after it (q̂_love)
    position: int
    index: int  # i, the pair's number
    pair: tuple[int, int]  # (a, b), 0-based
    angle: Expr  # φ_i, exact
    before: tuple[Expr, Expr]  # (x_a, x_b)
    after: tuple[Expr, Expr]  # (x̂_a, x̂_b)
    known: Numbers | None = field(default=None, compare=False)
