"""The work that costs a student time, counted from a drawn problem's numbers (exact fractions): the scalar
products in which neither factor is 0, 1 or −1 (a product by those is read off, not worked). Each kind's exam hooks
say which products its parts ask (`hand_products`) and the band of counts its versions are drawn within
(`WORK_BAND`, per difficulty), so that every version of a kind costs about the same."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

TRIVIAL = (0, 1, -1)


def worked(a: Any, b: Any) -> bool:
    """Whether a · b is a product worked by hand: neither factor 0, 1 or −1 (exact, or a float to 1e-12)."""
    return not (_trivial(a) or _trivial(b))


def _trivial(x: Any) -> bool:
    return x in TRIVIAL if isinstance(x, Fraction) else min(abs(x), abs(abs(x) - 1)) <= 1e-12


def count(pairs) -> int:
    return sum(1 for a, b in pairs if worked(a, b))


def matrix(rows) -> list[list[Fraction]]:
    return [[Fraction(v) for v in row] for row in rows]


def times(A, B) -> list[list[Any]]:
    """A · B, rows of fractions (or floats)."""
    return [[sum(a * b for a, b in zip(row, col, strict=True)) for col in zip(*B, strict=True)] for row in A]


def product_pairs(A, B) -> list[tuple[Any, Any]]:
    """The factor pairs of A · B: a_ik · b_kj for every entry."""
    return [(a, b) for row in A for col in zip(*B, strict=True) for a, b in zip(row, col, strict=True)]


def attention_pairs(queries, source, W_Q, W_K, W_V, focus: int, asked: list[int] | None = None,
                    values: bool = True) -> list[tuple[Any, Any]]:
    """One head's products: the asked rows of Q (all: None), K and V of the source (values=False: V computed
    elsewhere), q · k of the focus query, and the output's w · v (a weight is never 0 or ±1: each entry of V counts
    as its own)."""
    Q, K, V = times(queries, W_Q), times(source, W_K), times(source, W_V)
    rows = range(len(queries)) if asked is None else asked
    pairs = product_pairs([queries[i] for i in rows], W_Q) + product_pairs(source, W_K)
    pairs += product_pairs(source, W_V) if values else []
    pairs += [(q, k) for row in K for q, k in zip(Q[focus], row, strict=True)]
    return pairs + [(Fraction(1, 2), v) for row in V for v in row]
