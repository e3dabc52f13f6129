"""Sliding-window attention, exactly: the window as a 0/1 mask over absolute positions, the attention of a whole
sequence or of a decoding step whose cache keeps only the positions the window still reaches, and the check that
the step's rows equal the whole sequence's.

Alignment: positions count from 0; the cache's p tokens are at 0 … p − 1, the n new ones at p … p + n − 1. Query
i sees key j exactly when i − w < j ≤ i: the last w positions, itself included (causal within the window)."""

from __future__ import annotations

from dataclasses import dataclass

from sympy import Expr, ImmutableMatrix, simplify

from ... import engine
from ...features.kv_cache import engine as kv_engine
from .spec import SlidingWindowSpec


def visible(i: int, j: int, w: int) -> bool:
    """Whether query position i sees key position j in a window of w."""
    return i - w < j <= i


def window_mask(rows: tuple[int, ...], columns: tuple[int, ...], w: int) -> ImmutableMatrix:
    """The mask of queries at positions `rows` over keys at positions `columns` (1: visible, 0: masked)."""
    return ImmutableMatrix(len(rows), len(columns), lambda r, c: 1 if visible(rows[r], columns[c], w) else 0)


def query_positions(section: SlidingWindowSpec) -> tuple[int, ...]:
    """The absolute positions of the section's tokens (after a cache's p)."""
    return tuple(range(section.past, section.past + len(section.tokens)))


def key_positions(section: SlidingWindowSpec) -> tuple[int, ...]:
    """The absolute positions of the keys the section's queries attend over: the kept cached ones, then the new."""
    return tuple(range(section.first, section.past + len(section.tokens)))


def key_tokens(section: SlidingWindowSpec) -> tuple[str, ...]:
    """The tokens of those keys."""
    kept = () if section.cache is None else section.cache.tokens[section.first:]
    return (*kept, *section.tokens)


def mask(section: SlidingWindowSpec) -> ImmutableMatrix:
    """The section's window mask: n × (kept + n)."""
    return window_mask(query_positions(section), key_positions(section), section.window)


def new_projections(section: SlidingWindowSpec) -> dict[str, ImmutableMatrix]:
    """The section's own tokens' Q, K and V."""
    return {c: engine.project(section.X.values, getattr(section, f"W_{c}").values) for c in "QKV"}


def focus_rows(section: SlidingWindowSpec) -> tuple[int, ...]:
    return tuple(section.tokens.index(t) for t in section.focus.tokens)


def compute(section: SlidingWindowSpec) -> engine.Attention:
    """The queries' attention over their windows; with a cache, over the kept cached keys and values followed by the
    new ones (the dropped positions are not there at all)."""
    divisor = section.scale.divisor(section.d_k)
    if section.cache is None:
        X = section.X.values
        return engine.attention(X, X, section.W_Q.values, section.W_K.values, section.W_V.values, divisor,
                                focus_rows(section), mask(section))
    kept = section.first
    return kv_engine.decode(new_projections(section), section.cache.K.values[kept:, :],
                            section.cache.V.values[kept:, :], divisor, focus_rows(section), mask(section))


@dataclass(frozen=True)
class Check:
    """The whole sequence recomputed: `whole` its attention (queries keyed by absolute position, keys at positions
    0 … p + n − 1); `embedded`: from the embeddings of every token (past_X given), else from the cache's rows as given
    (then what is checked is that dropping positions changes nothing)."""

    whole: engine.Attention
    embedded: bool


def recomputed(section: SlidingWindowSpec) -> Check:
    """The whole sequence of p + n positions with the (p + n) × (p + n) window mask, for the new tokens' rows."""
    p, divisor = section.past, section.scale.divisor(section.d_k)
    positions = tuple(range(p + len(section.tokens)))
    rows = tuple(p + t for t in focus_rows(section))
    if section.past_X is not None:
        X = ImmutableMatrix.vstack(section.past_X.values, section.X.values)
        whole = engine.attention(X, X, section.W_Q.values, section.W_K.values, section.W_V.values, divisor, rows,
                                 window_mask(positions, positions, section.window))
        return Check(whole, True)
    mask_rows = window_mask(query_positions(section), positions, section.window)
    whole = kv_engine.recompute(new_projections(section), section.cache.K.values, section.cache.V.values, divisor,
                                mask_rows)
    return Check(whole, False)


def agrees(section: SlidingWindowSpec, step: engine.Attention, check: Check) -> bool:
    """Whether each new query's weights and output equal the whole sequence's row, exactly: there the weights of the
    dropped positions 0 … first − 1 are 0 and the others are the step's, over the same value rows, so the two
    weighted sums have the same terms (SymPy may write them in another order: each is compared as a value)."""
    first = section.first
    values = check.whole.V[first:, :]
    if values != step.V:
        return False
    for t, query in step.queries.items():
        row = check.whole.queries[section.past + t]
        weights = row.softmax.weights
        if any(weight != 0 for weight in weights[:first]):
            return False
        if not all(same(a, b) for a, b in zip(weights[first:], query.softmax.weights, strict=True)):
            return False
        if not all(same(a, b) for a, b in zip(row.output, query.output, strict=True)):
            return False
    return True


def same(a: Expr, b: Expr) -> bool:
    """Whether two exact values are equal: the same expression, the same once written out (an output entry keeps
    its sum's parts, engine/weighted.py: the whole sequence's holds the masked keys' zero terms too), or else a
    difference that simplifies to 0."""
    return a == b or a.doit() == b.doit() or simplify(a - b) == 0
