"""The input model: frozen dataclasses for a spec (document options and attention sections), exact values only."""

from __future__ import annotations

from dataclasses import dataclass

from sympy import Expr, ImmutableMatrix

LANGUAGES = ("ja", "en")
MAX_DIGITS = 30


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
        return bool(self.values.free_symbols)


@dataclass(frozen=True)
class Scale:
    """How scores are scaled: by √d_k (the default), not at all, or divided by a given number."""

    mode: str = "sqrt_d_k"  # "sqrt_d_k" | "none" | "number"
    number: Expr | None = None


@dataclass(frozen=True)
class SelfAttentionSpec:
    """Self-attention over one sequence: Q, K, V all come from X."""

    tokens: tuple[str, ...]
    X: GivenMatrix
    W_Q: GivenMatrix
    W_K: GivenMatrix
    W_V: GivenMatrix
    focus: tuple[str, ...]
    d_k: int
    scale: Scale = Scale()
    all_tokens: bool = False
    matrix_only: bool = False  # focus = "matrix": the matrix form without the per-token steps
    mask: ImmutableMatrix | None = None  # 1 = query i may attend to key j, 0 = masked
    causal: bool = False  # the mask is the decoder's causal mask
    P: GivenMatrix | None = None  # positional encodings, added to X before the projections
    sinusoidal: bool = False  # P is the original paper's sinusoidal encoding
    kind: str = "self_attention"


@dataclass(frozen=True)
class CrossAttentionSpec:
    """Cross-attention: queries from decoder tokens X, keys and values from the encoder's memory."""

    tokens: tuple[str, ...]
    X: GivenMatrix
    memory_tokens: tuple[str, ...]
    memory: GivenMatrix
    W_Q: GivenMatrix
    W_K: GivenMatrix
    W_V: GivenMatrix
    focus: tuple[str, ...]
    d_k: int
    scale: Scale = Scale()
    all_tokens: bool = False
    matrix_only: bool = False  # focus = "matrix": the matrix form without the per-token steps
    kind: str = "cross_attention"


@dataclass(frozen=True)
class HeadSpec:
    """One head of multi-head attention: either its output is given, or its own weights are."""

    output: GivenMatrix | None = None
    W_Q: GivenMatrix | None = None
    W_K: GivenMatrix | None = None
    W_V: GivenMatrix | None = None
    d_k: int | None = None
    scale: Scale = Scale()


@dataclass(frozen=True)
class MultiHeadSpec:
    """Multi-head attention for one focus token: head outputs, concatenation, projection by W_O."""

    focus: str
    heads: tuple[HeadSpec, ...]
    W_O: GivenMatrix
    tokens: tuple[str, ...] = ()
    X: GivenMatrix | None = None
    kind: str = "multi_head"


SectionSpec = SelfAttentionSpec | CrossAttentionSpec | MultiHeadSpec


@dataclass(frozen=True)
class Spec:
    """A whole document: optional title, language and digit budget, and its sections in order."""

    sections: tuple[SectionSpec, ...]
    title: str | None = None
    lang: str | None = None
    digits: int | None = None
    name: str = "spec"
