"""The spec types of a multi-head section and of its heads (the kind's module parses them; solution.py lays
out the steps of its computed heads)."""

from __future__ import annotations

from dataclasses import dataclass

from sympy import ImmutableMatrix

from ...spec.model import Focus, GivenMatrix, Mask, Positions, Rope, Scale, Section


@dataclass(frozen=True)
class HeadSpec:
    """One head of multi-head attention: either its output is given, or its own weights are."""

    output: GivenMatrix | None = None
    W_Q: GivenMatrix | None = None
    W_K: GivenMatrix | None = None
    W_V: GivenMatrix | None = None
    d_k: int | None = None
    scale: Scale = Scale()
    mask: Mask | None = None
    rope: Rope | None = None


@dataclass(frozen=True)
class MultiHeadSpec(Section):
    """Multi-head attention for its focus tokens: head outputs, concatenation, projection by W_O. Heads with given
    outputs have one focus token; computed heads any focus (a token, a list, "all" or "matrix")."""

    kind = "multi_head"
    focus: Focus
    heads: tuple[HeadSpec, ...]
    W_O: GivenMatrix
    tokens: tuple[str, ...] = ()
    X: GivenMatrix | None = None
    positions: Positions | None = None

    @property
    def token(self) -> str:
        """The first focus token (the only one of a one-token section)."""
        return self.focus.tokens[0]

    @property
    def several(self) -> bool:
        """Whether the section derives more than one token (or the matrix form alone)."""
        return len(self.focus.tokens) > 1 or self.focus.mode == "matrix"

    @property
    def matrix_form(self) -> bool:
        """Whether each head is shown in matrix form, every token at once (focus "all" or "matrix")."""
        return self.focus.matrix_form(len(self.tokens))

    @property
    def indices(self) -> tuple[int, ...]:
        """The focus tokens' indices in tokens (0 for heads with given outputs, which have no tokens)."""
        return tuple(self.tokens.index(t) for t in self.focus.tokens) if self.tokens else (0,)

    @property
    def inputs(self) -> ImmutableMatrix:
        """X, or X + P with positional encodings: what every computed head projects."""
        return self.X.values if self.positions is None else ImmutableMatrix(self.X.values + self.positions.P.values)
