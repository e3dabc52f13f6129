"""Sliding-window attention (Longformer, Mistral): self-attention in which query i sees only the keys j with
i − w < j ≤ i, the last w positions up to itself. Composable with a KV cache, which then keeps only the positions the
window still reaches.

Spec keys: self-attention's tokens, X, W_Q, W_K, W_V, focus, scale, d_k / d_model / d_v and heading; `window` (w, a
whole number ≥ 1, required); a cache as past_tokens with past_K and past_V, or with past_X (the cached tokens'
embeddings, whose keys and values then follow from W_K and W_V).

Answers (`symattn solve`), besides self-attention's d_k, scale, Q, K, V, queries (scores, scaled_scores with "-inf"
where masked, weights with exactly 0 there, output) and exact: `window` (w); `causal` (whether the window reaches
position 0 from every query: plain causal attention); `positions` (the tokens' absolute positions); `key_tokens`
and `key_positions` (the keys attended over, in order: K and V have a row each); `mask` (a row per token, a column
per key, 1 inside the window); `visible` (each token's keys inside its window); and with a cache `cache`:
past_tokens, kept_positions and kept_tokens, dropped_positions and dropped_tokens, and `check`: "embeddings" (the
whole sequence recomputed from past_X and X), "cached_rows" (recomputed from the cached K and V as given, dropped
rows included) or "none" (cached rows of which the window drops none: the recomputation would repeat the step)."""

from __future__ import annotations

from typing import Any

from ... import engine
from ...document.steps import FlowFigure, Step
from ...engine import any_symbolic
from ...features.attention.answers import attention_answers, scale_answers
from ...numbers import certify
from .. import carried
from ...features.attention import stages as attention_stages
from ..base import Carried, Kind, Size
from . import engine as window_engine
from . import solution
from .spec import KEYS, KIND, SlidingWindowSpec, parse


class SlidingWindowKind(Kind):
    name = KIND
    stages = attention_stages.STAGES  # `symattn worksheet --blanks`
    stage_of = attention_stages.stage_of
    keys = KEYS

    def parse(self, data: dict[str, Any], field: str) -> SlidingWindowSpec:
        return parse(data, field)

    def compute(self, section: SlidingWindowSpec) -> engine.Attention:
        return window_engine.compute(section)

    def symbolic(self, result: engine.Attention) -> bool:
        return any_symbolic(result.V)

    def steps(self, section: SlidingWindowSpec, result: engine.Attention) -> list[Step]:
        return solution.steps(section, result)

    def outputs(self, section: SlidingWindowSpec, result: engine.Attention) -> Carried | None:
        return carried.attention_outputs(self, section, result)

    def inputs(self, section: SlidingWindowSpec, result: engine.Attention) -> Carried | None:
        return carried.start_rows(section.tokens, section.X.values)

    def error_bound(self, section: SlidingWindowSpec, result: engine.Attention, errors: dict[str, float]) \
            -> certify.Bound:
        """Self-attention's bound: masking keys only leaves fewer terms in each softmax and weighted sum."""
        x = carried.rows_error(section, errors, "X")
        return certify.attention(x, x, section.W_Q, section.W_K, section.W_V,
                                 certify.divisor_of(section.scale, section.d_k),
                                 len(window_engine.key_positions(section)), False,
                                 carried.cached_sizes(section.cache)).printed

    def figure(self, section: SlidingWindowSpec) -> FlowFigure | None:
        from .figure import figure  # the flow's layout: only a document with the figure needs it

        return figure(section)

    def stage(self, section: SlidingWindowSpec) -> str | None:
        return "masked"  # its box in a chain's block figure: masked self-attention's

    def size(self, section: SlidingWindowSpec) -> Size:
        n, keys = len(section.tokens), len(window_engine.key_positions(section))
        d = max(section.X.shape[1], section.W_Q.shape[1], section.W_V.shape[1])
        return Size("focus", len(section.focus.stepwise), keys, d, n * keys if section.focus.matrix_form(n) else 0,
                    work=n * keys)

    def answers(self, section: SlidingWindowSpec, result: engine.Attention) -> dict[str, Any]:
        keys = window_engine.key_tokens(section)
        M = window_engine.mask(section)
        rows = [[int(M[r, c]) for c in range(M.cols)] for r in range(M.rows)]
        out: dict[str, Any] = {
            "kind": self.name, "tokens": list(section.tokens), "window": section.window, "causal": section.causal,
            "positions": list(window_engine.query_positions(section)), "key_tokens": list(keys),
            "key_positions": list(window_engine.key_positions(section)), "mask": rows,
            "visible": {t: [k for k, v in zip(keys, row, strict=True) if v] for t, row in zip(section.tokens, rows,
                                                                                           strict=True)},
        }
        if section.cache is not None:
            given, first = section.cache, section.first
            out["cache"] = {"past_tokens": list(given.tokens), "kept_positions": list(range(first, section.past)),
                            "kept_tokens": list(given.tokens[first:]), "dropped_positions": list(range(first)),
                            "dropped_tokens": list(given.tokens[:first]),
                            "check": "embeddings" if section.past_X is not None
                            else "cached_rows" if section.first else "none"}
        return {**out, **scale_answers(section), **attention_answers(result, section.tokens)}


SLIDING_WINDOW = SlidingWindowKind()
