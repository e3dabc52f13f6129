"""The input model: frozen dataclasses of exact values. The options shared by kinds are tagged values (Focus, Mask,
Positions, Scale); each kind's section type lives in its own module under symattn.kinds."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from math import isqrt
from typing import Any, ClassVar, Literal

from sympy import Expr, ImmutableMatrix, Integer, cos, sin, sqrt

LANGUAGES = ("ja", "en")
MAX_DIGITS = 30
# A name a spec may write as a matrix entry (a, b1, x_2, beta_k): letters and digits, then an optional _subscript;
# its groups are the letters, trailing digits and subscript, as the exact forms print them.
WRITTEN_NAME = re.compile(r"([A-Za-z][A-Za-z0-9]*?)([0-9]*)(?:_([A-Za-z0-9]+))?")


@dataclass(frozen=True)
class GivenMatrix:
    """A matrix from the input, exact, with how each entry was written (for display).

    written holds, row by row, each entry's decimals as typed ('0.800' -> 3), or None for a fraction ('1/3');
    decimals is the most decimals of any entry (products of this matrix are shown with at least as many).
    """

    values: ImmutableMatrix
    decimals: int
    written: tuple[int | None, ...] = ()

    @property
    def shape(self) -> tuple[int, int]:
        return self.values.shape

    @property
    def symbolic(self) -> bool:
        return bool(self.values.args[2].free_symbols)  # the entries' Tuple: iterating the matrix converts each


def integer_sqrt(n: int) -> int | None:
    """√n when it is a whole number (√4 = 2), else None (√2)."""
    root = isqrt(n)
    return root if root * root == n else None


@dataclass(frozen=True)
class Scale:
    """How scores are scaled: by √d_k (the default), not at all, or divided by a given number."""

    mode: Literal["sqrt_d_k", "none", "number"] = "sqrt_d_k"
    number: Expr | None = None

    def divisor(self, d_k: int) -> Expr:
        """What the scores are divided by: √d_k (exact: √4 = 2, √2 stays a surd), 1, or the given number."""
        if self.mode == "none":
            return Integer(1)
        if self.mode == "number":
            return self.number
        return sqrt(Integer(d_k))


@dataclass(frozen=True)
class Focus:
    """Which queries a section derives: given tokens, all of them (then the matrix form too), or the matrix form
    alone. `tokens` are the queries computed, in order; `stepwise` those derived one by one."""

    mode: Literal["tokens", "all", "matrix"]
    tokens: tuple[str, ...]

    @property
    def stepwise(self) -> tuple[str, ...]:
        return () if self.mode == "matrix" else self.tokens

    def matrix_form(self, n: int) -> bool:
        """Whether the section ends with the matrix form of its n tokens."""
        return self.mode == "matrix" or (self.mode == "all" and n > 1)


@dataclass(frozen=True)
class Mask:
    """Which keys each query sees: the decoder's causal mask or a given 0/1 matrix (1: visible)."""

    mode: Literal["causal", "matrix"]
    values: ImmutableMatrix

    @classmethod
    def causal(cls, n: int, past: int = 0) -> Mask:
        """The decoder's mask: token i sees tokens 0..i (ones on and below the diagonal). With `past` cached
        positions before the n new ones, n × (past + n): new token t, at absolute position past + t, sees
        positions 0 … past + t."""
        return cls("causal", ImmutableMatrix(n, past + n, lambda i, j: 1 if j <= past + i else 0))


@dataclass(frozen=True)
class Positions:
    """Positional encodings added to X before the projections: the original paper's sinusoids, or given."""

    mode: Literal["sinusoidal", "given"]
    P: GivenMatrix

    @classmethod
    def sinusoidal(cls, n: int, d: int, offset: int = 0) -> Positions:
        """The original paper's PE(pos, 2i) = sin(pos / 10000^{2i/d}), PE(pos, 2i+1) = cos(pos / 10000^{2i/d}),
        exact (sin 1, cos(1/100), ...), positions counted from 0; the n rows are positions offset … offset + n − 1
        (after `offset` tokens of a KV cache)."""
        def entry(row: int, column: int) -> Expr:
            pos = offset + row
            angle = Integer(pos) / Integer(10000) ** (Integer(2 * (column // 2)) / d)
            return sin(angle) if column % 2 == 0 else cos(angle)

        return cls("sinusoidal", GivenMatrix(ImmutableMatrix(n, d, entry), 0, (0,) * (n * d)))


@dataclass(frozen=True)
class Rope:
    """Rotary position embeddings (RoFormer): each pair of dimensions of q and k is rotated by the angle m·θ_i at
    position m, θ_i = base^(−2i/d). `pairing` "interleaved" pairs (0, 1), (2, 3), … as the paper does; "half" pairs
    (i, i + d/2) as GPT-NeoX and LLaMA do. `positions` are the tokens' positions (None: 0, 1, … after any cached
    ones)."""

    base: Expr = Integer(10000)
    pairing: Literal["interleaved", "half"] = "interleaved"
    positions: tuple[int, ...] | None = None

    def at(self, n: int, past: int = 0) -> tuple[int, ...]:
        """The positions of n tokens that follow `past` cached ones."""
        return self.positions if self.positions is not None else tuple(range(past, past + n))


@dataclass(frozen=True)
class Cache:
    """A KV cache: the keys and values of earlier positions as a model stores them (with RoPE, keys already
    rotated); the section's own tokens follow them."""

    tokens: tuple[str, ...]
    K: GivenMatrix
    V: GivenMatrix


@dataclass(frozen=True)
class MathText:
    """Plain text inside math (\\text{…}): escaped like any user text."""

    text: str


@dataclass(frozen=True)
class Math:
    """Inline math as checked: LaTeX pieces from the safe subset, and MathText for each \\text{…}."""

    parts: tuple[str | MathText, ...]


Inline = str | Math  # plain text, or inline math (spec.textmath reads them from a spec's strings)


@dataclass(frozen=True)
class Written:
    """A string a spec writes, as pieces of plain text and math, for each language (the same text for every
    language unless the spec gave a table by language)."""

    texts: tuple[tuple[str, tuple[Inline, ...]], ...]

    def pieces(self, lang: str) -> tuple[Inline, ...]:
        """The pieces in the document's language."""
        return dict(self.texts)[lang]


@dataclass(frozen=True)
class Carry:
    """Where one of a section's matrices came from (pipeline.chain): `field` (X, Y, memory) is `what` ("from": the
    output rows, "input": the input rows) of the earlier section `source`, carried as `mode` says ("shown": as
    that section's document shows them, to `digits` decimals; "full": at the working precision); `exact`: every
    carried value is the exact one (nothing was rounded); `columns`: how wide the rows are; `size`: their largest
    entry's size."""

    field: str
    what: Literal["from", "input"]
    source: str
    mode: Literal["shown", "full"]
    digits: int
    exact: bool
    columns: int  # the carried rows' width
    size: float = 0.0  # the largest |entry| of the rows as the source computed them (certify bounds from it)


@dataclass(frozen=True)
class Section:
    """Base of every kind's section type; `kind` names its kind in the registry (symattn.kinds). `heading` is the
    level-1 heading the spec wrote for it, if its kind takes one (spec.files reads it for every kind); `name` the
    name later sections refer to it by, and `carried` where its referenced matrices came from (pipeline.chain)."""

    kind: ClassVar[str]
    heading: Written | None = field(default=None, kw_only=True)
    name: str | None = field(default=None, kw_only=True)
    carried: tuple[Carry, ...] = field(default=(), kw_only=True)


# How much text a document keeps around its math (a spec's `prose`, --prose): everything; the definitions and the
# steps' text without the interpretations (document/sentences.py INTERPRETATIONS); headings, math and tables only.
PROSE = ("full", "plain", "none")


@dataclass(frozen=True)
class Spec:
    """A whole document: optional title, language and digit budget, and its sections in order."""

    sections: tuple[Section, ...]
    title: str | None = None
    lang: str | None = None
    digits: int | None = None
    name: str = "spec"
    stage_digits: tuple[tuple[str, int], ...] = ()  # (stage, decimals) for the stages with their own (scores, result)
    prose: str | None = None  # "full", "plain" or "none" (PROSE): how much of the text around the math is kept
    # A chained spec (symattn.pipeline.chain): its parsed document, to carry again at other digits (--digits), and the
    # results computed while parsing it, as (section, result) pairs, so that nothing is computed twice.
    source: Any = field(default=None, compare=False, repr=False)
    computed: tuple[tuple[Section, Any], ...] = field(default=(), compare=False, repr=False)
    carry_digits: int | None = field(default=None, compare=False, repr=False)  # the digits it was carried at
