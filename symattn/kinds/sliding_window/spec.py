"""The sliding-window section's spec: self-attention's inputs, the window w, and an optional KV cache, given as the
cached keys and values (past_K, past_V) or as the earlier tokens' embeddings (past_X), from which they follow."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sympy import ImmutableMatrix

from ... import engine
from ...errors import SpecError
from ...spec import fields
from ...spec.model import Cache, Focus, GivenMatrix, Scale, Section

KIND = "sliding_window"
MAX_WINDOW = 10**6
CACHE_KEYS = frozenset({"past_tokens", "past_K", "past_V", "past_X"})
KEYS = frozenset({"kind", "tokens", "X", "W_Q", "W_K", "W_V", "focus", "scale", *fields.SIZE_KEYS, "heading",
                  "window", *CACHE_KEYS})


@dataclass(frozen=True)
class SlidingWindowSpec(Section):
    """Self-attention over one sequence in which query i sees the keys j with i − w < j ≤ i (w = window). With a
    cache, the tokens are the new ones after the cached positions 0 … p − 1; `past_X`, when given, the cached
    tokens' embeddings (the cache's keys and values are then their projections)."""

    kind = KIND
    tokens: tuple[str, ...]
    X: GivenMatrix
    W_Q: GivenMatrix
    W_K: GivenMatrix
    W_V: GivenMatrix
    focus: Focus
    d_k: int
    window: int
    scale: Scale = Scale()
    cache: Cache | None = None
    past_X: GivenMatrix | None = None

    @property
    def past(self) -> int:
        """p, the cached positions (0 without a cache)."""
        return 0 if self.cache is None else len(self.cache.tokens)

    @property
    def first(self) -> int:
        """The first position the step's keys start at: the first new token's window reaches back to it (0 without
        a cache); the cached positions before it are dropped."""
        return max(0, self.past - self.window + 1) if self.cache is not None else 0

    @property
    def causal(self) -> bool:
        """Whether no query's window leaves out an earlier position: the window is plain causal attention."""
        return self.window >= self.past + len(self.tokens)


def window(value: Any, field: str) -> int:
    """w: a whole number ≥ 1."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_WINDOW:
        raise SpecError(field, f"expected a whole number of keys from 1 to {MAX_WINDOW} (each query sees the last w "
                               f"positions, itself included), got {fields.shown(value)}")
    return value


def parse(data: dict[str, Any], field: str) -> SlidingWindowSpec:
    tokens = fields.tokens(fields.require(data, "tokens", field), f"{field}.tokens")
    m = fields.matrices(data, field, {"X": ("n", "d", "x"), "W_Q": ("d", "k", "w^Q"), "W_K": ("d", "k", "w^K"),
                                      "W_V": ("d", "v", "w^V")}, {"n": len(tokens)})
    fields.rows_match(m["X"], len(tokens), f"{field}.X", "tokens")
    fields.check_projections(m, field, m["X"].shape[1], m["X"].shape[1], "X")
    w = window(fields.require(data, "window", field), f"{field}.window")
    cached, past_X = cache(data, field, tokens, m)
    scale = fields.scale(data, field)
    fields.d_k_used(data, scale, m["W_Q"].symbolic and m["W_K"].symbolic, field)
    return SlidingWindowSpec(tokens=tokens, X=m["X"], W_Q=m["W_Q"], W_K=m["W_K"], W_V=m["W_V"],
                             focus=fields.focus(data.get("focus", "all"), tokens, f"{field}.focus"),
                             d_k=fields.d_k(data, m["W_K"], field), window=w, scale=scale, cache=cached,
                             past_X=past_X)


def cache(data: dict[str, Any], field: str, tokens: tuple[str, ...],
          m: dict[str, GivenMatrix]) -> tuple[Cache | None, GivenMatrix | None]:
    """The cache: past_tokens with past_K and past_V (as self-attention's), or past_tokens with past_X, the earlier
    tokens' embeddings, whose projections by W_K and W_V are then the cached keys and values."""
    if "past_X" not in data:
        return fields.cache(data, field, m["W_K"].shape[1], m["W_V"].shape[1], tokens), None
    both = [key for key in ("past_K", "past_V") if key in data]
    if both:
        raise SpecError(f"{field}.{both[0]}", "give the cache as past_X (the earlier tokens' embeddings, whose keys "
                                              "and values follow from W_K and W_V) or as past_K and past_V, not both")
    if "past_tokens" not in data:
        raise SpecError(f"{field}.past_tokens", "missing: past_X gives the embeddings of the cached tokens, which "
                                                "past_tokens names")
    past = fields.tokens(data["past_tokens"], f"{field}.past_tokens")
    for i, token in enumerate(past):
        if token in tokens:
            raise SpecError(f"{field}.past_tokens[{i}]", f"token {token!r} is also one of the new tokens")
    X = fields.matrix(data["past_X"], f"{field}.past_X")
    fields.rows_match(X, len(past), f"{field}.past_X", "past_tokens")
    if X.shape[1] != m["X"].shape[1]:
        raise SpecError(f"{field}.past_X", f"{X.shape[1]} columns, but X has {m['X'].shape[1]}")

    def projected(W: GivenMatrix) -> GivenMatrix:
        return GivenMatrix(ImmutableMatrix(engine.project(X.values, W.values)), max(X.decimals, W.decimals))

    return Cache(past, projected(m["W_K"]), projected(m["W_V"])), X
