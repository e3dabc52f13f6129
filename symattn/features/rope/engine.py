"""Rotary position embeddings (RoPE), exactly: the pairs of dimensions, their frequencies θ_i = base^(−2i/d), the
rotation of q and k by the angles m·θ_i, and the score written in m − n alone.

Conventions (where frameworks differ): pair i is (2i, 2i + 1) with "interleaved" pairing (RoFormer, Meta's
original LLaMA code) and (i, i + d/2) with "half" (GPT-NeoX, Hugging Face's rotate_half); either way pair i turns by
m·θ_i: (x_a, x_b) ↦ (x_a cos φ − x_b sin φ, x_a sin φ + x_b cos φ).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import mpmath
from sympy import Add, Expr, ImmutableMatrix, Rational, cos, sin

from ...engine.matrices import file_matrix, matrix_numbers
from ...engine.numbers import WORKING_DIGITS, Numbers
from ...engine.pipeline import Attention, attention_of, dot
from ...engine.symbols import any_symbolic

if TYPE_CHECKING:  # the engine reads a Rope's base and pairing; it does not import the spec
    from ...spec.model import Rope


def pairs(d: int, pairing: str) -> tuple[tuple[int, int], ...]:
    """The (a, b) dimension pairs (0-based) that rotate together, pair i first."""
    if pairing == "half":
        return tuple((i, i + d // 2) for i in range(d // 2))
    return tuple((2 * i, 2 * i + 1) for i in range(d // 2))


def theta(i: int, d: int, base: Expr) -> Expr:
    """θ_i = base^(−2i/d), exact (10000^(−1/2) = 1/100)."""
    return base ** Rational(-2 * i, d)


def angles(m: int, d: int, rope: Rope) -> tuple[Expr, ...]:
    """The angle m·θ_i of each pair at position m."""
    return tuple(m * theta(i, d, rope.base) for i in range(d // 2))


def rotate_row(row: ImmutableMatrix, m: int, rope: Rope) -> ImmutableMatrix:
    """A row vector q or k rotated for position m: each pair (x_a, x_b) turned by m·θ_i."""
    d = row.cols
    out = list(row)
    for (a, b), phi in zip(pairs(d, rope.pairing), angles(m, d, rope), strict=True):
        c, s = cos(phi), sin(phi)
        out[a], out[b] = row[a] * c - row[b] * s, row[a] * s + row[b] * c
    return ImmutableMatrix(1, d, out)


def rotate(M: ImmutableMatrix, positions: tuple[int, ...], rope: Rope) -> ImmutableMatrix:
    """Each row t of M rotated for its position positions[t]."""
    return ImmutableMatrix.vstack(*(rotate_row(M.row(t), m, rope) for t, m in enumerate(positions)))


def relative_score(q: ImmutableMatrix, k: ImmutableMatrix, delta: int, rope: Rope) -> Expr:
    """(R_m q)·(R_n k) from the unrotated q and k and δ = m − n alone:
    Σ_i (q_a k_a + q_b k_b) cos(δθ_i) + (q_a k_b − q_b k_a) sin(δθ_i)."""
    d = q.cols
    terms = []  # one Add of all terms: adding them one by one flattens the growing sum again each time (d²)
    for (a, b), phi in zip(pairs(d, rope.pairing), angles(delta, d, rope), strict=True):
        terms += [(q[a] * k[a] + q[b] * k[b]) * cos(phi), (q[a] * k[b] - q[b] * k[a]) * sin(phi)]
    return Add(*terms)


def rotary_attention(stored: dict[str, ImmutableMatrix], q_positions: tuple[int, ...], k_positions: tuple[int, ...],
                     rope: Rope, divisor: Expr, focus: tuple[int, ...], mask: ImmutableMatrix | None = None,
                     rotated: int = 0) -> Attention:
    """Attention after RoPE: Q's row i rotated for q_positions[i], K's row j for k_positions[j], V unchanged; the
    result's Q and K are the rotated matrices. The first `rotated` rows of K are rotated already (a KV cache's
    keys, as a model stores them): their scores are the dot products of the rotated vectors; every other score is
    written in m − n (relative_score), the same exact value in its simplest form."""
    Q, K = stored["Q"], stored["K"]
    Q_rot = rotate(Q, q_positions, rope)
    K_rot = ImmutableMatrix.vstack(*(K.row(j) if j < rotated else rotate_row(K.row(j), k_positions[j], rope)
                                     for j in range(K.rows)))
    raw = {i: tuple(dot(Q_rot.row(i), K_rot.row(j)) if j < rotated
                    else relative_score(Q.row(i), K.row(j), q_positions[i] - k_positions[j], rope)
                    for j in range(K.rows)) for i in focus}
    known = Numbers()
    if not any(any_symbolic(M) for M in (Q, K)):
        _file_numbers(Q_rot, K_rot, raw, known)
    return attention_of({"Q": Q_rot, "K": K_rot, "V": stored["V"]}, divisor, focus, mask, raw=raw, known=known)


def _file_numbers(Q_rot: ImmutableMatrix, K_rot: ImmutableMatrix, raw: dict[int, tuple[Expr, ...]],
                  known: Numbers) -> None:
    """File the numbers of the rotated entries and of the raw scores: each cos and sin evaluated once, the
    products taken in mpmath at the working precision (evaluating every score's exact form on its own evaluated
    the same sines again for every query and key)."""
    with mpmath.workdps(WORKING_DIGITS + 10):
        rows = {}
        for name, M in (("Q", Q_rot), ("K", K_rot)):
            numbers = matrix_numbers(M, known)  # entries x_a cos φ − x_b sin φ: their cos and sin cached by SymPy
            file_matrix(M, numbers, known)
            rows[name] = numbers
        for i, row in raw.items():
            for j, score in enumerate(row):
                if not score.is_Rational:
                    known.file(score, mpmath.fdot(rows["Q"][i], rows["K"][j]))
