"""Grouped-query attention (GQA) and multi-query attention (MQA): several query heads share one K/V head, whose
keys and values are computed once; the query heads' outputs are concatenated and projected by W_O.

Convention (PyTorch's scaled_dot_product_attention(..., enable_gqa=True), which repeat_interleaves the K/V heads):
query head h (0-based) of H uses K/V head ⌊h / (H / G)⌋ of G; the document numbers both from 1 (engine.grouped).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...document.steps import FlowFigure, Step
from ...errors import SpecError
from ...features.attention.answers import (
    EXPLICIT_TERMS,
    exact_texts,
    projection_answers,
    query_answers,
    row_texts,
    scale_answers,
)
from ...features.kv_cache import feature as cache
from ...features.rope.spec import rope_of
from ...numbers import certify
from ...numbers.significant import asked, significant_approximation
from ...spec import fields
from ...spec.model import Cache, Focus, GivenMatrix, Mask, Rope, Scale, Section
from .. import carried
from ...features.attention import stages as attention_stages
from ..base import Carried, Kind, Size
from .engine import GroupedQuery, grouped_attention, head_mapping

_HEAD_KEYS = {"W_Q"}
_KV_KEYS = {"W_K", "W_V"}
_KV_CACHE = cache.KEYS - {"past_tokens"}  # a K/V head's own cache: past_K, past_V (past_tokens: the section's)


@dataclass(frozen=True)
class KVHead:
    """One K/V head: its key and value projections, shared by its group of query heads, and its KV cache."""

    W_K: GivenMatrix
    W_V: GivenMatrix
    cache: Cache | None = None  # the earlier positions' keys (rotated, with RoPE) and values


@dataclass(frozen=True)
class GroupedQuerySpec(Section):
    """Grouped-query attention over one sequence: query heads (each W_Q), K/V heads (each W_K, W_V) and W_O."""

    kind = "grouped_query"
    tokens: tuple[str, ...]
    X: GivenMatrix
    W_Q: tuple[GivenMatrix, ...]
    kv_heads: tuple[KVHead, ...]
    W_O: GivenMatrix
    focus: Focus
    d_k: int
    scale: Scale = Scale()
    mask: Mask | None = None
    rope: Rope | None = None

    @property
    def mapping(self) -> tuple[int, ...]:
        """The K/V head (0-based) of each query head."""
        return head_mapping(len(self.W_Q), len(self.kv_heads))

    @property
    def cache(self) -> Cache | None:
        """The KV cache of K/V head 1 (the past tokens of all of them), or None."""
        return self.kv_heads[0].cache


class GroupedQueryKind(Kind):
    examinable = True
    exam_module = "exam"  # its exam: kinds/grouped_query/exam.py
    name = GroupedQuerySpec.kind
    stages = attention_stages.STAGES  # `symattn worksheet --blanks`
    stage_of = attention_stages.stage_of
    keys = frozenset({"kind", "tokens", "X", "heads", "kv_heads", "W_O", "focus", "mask", "rope", "scale", "d_k",
                      "heading", "past_tokens"})

    def parse(self, data: dict[str, Any], field: str) -> GroupedQuerySpec:
        tokens = fields.tokens(fields.require(data, "tokens", field), f"{field}.tokens")
        X = fields.matrix(fields.require(data, "X", field), f"{field}.X")
        fields.rows_match(X, len(tokens), f"{field}.X", "tokens")
        d = X.shape[1]
        W_Q = tuple(_weights(head, f"{field}.heads[{h}]", _HEAD_KEYS, d)["W_Q"]
                    for h, head in enumerate(_heads(data, "heads", field)))
        entries = _heads(data, "kv_heads", field)
        kv = tuple(KVHead(**_weights(head, f"{field}.kv_heads[{g}]", _KV_KEYS, d, _KV_CACHE))
                   for g, head in enumerate(entries))
        if len(W_Q) % len(kv):
            raise SpecError(f"{field}.kv_heads", f"{len(kv)} K/V heads do not divide {len(W_Q)} query heads")
        width = {"W_Q": [m.shape[1] for m in W_Q], "W_K": [h.W_K.shape[1] for h in kv],
                 "W_V": [h.W_V.shape[1] for h in kv]}
        for key, group in (("W_Q", "heads"), ("W_K", "kv_heads"), ("W_V", "kv_heads")):
            for i, w in enumerate(width[key]):
                if w != width[key][0]:
                    raise SpecError(f"{field}.{group}[{i}].{key}", f"{w} columns, but {group}[0].{key} has "
                                                                   f"{width[key][0]} (every head is as wide)")
        if width["W_Q"][0] != width["W_K"][0]:
            raise SpecError(f"{field}.kv_heads[0].W_K", f"{width['W_K'][0]} columns, but the query heads' W_Q have "
                                                        f"{width['W_Q'][0]} (q·k needs equal lengths)")
        caches = cache.per_head(data, field, tokens, entries, tuple(h.W_K for h in kv), tuple(h.W_V for h in kv))
        if caches is not None:
            kv = tuple(KVHead(h.W_K, h.W_V, c) for h, c in zip(kv, caches, strict=True))
        W_O = fields.matrix(fields.require(data, "W_O", field), f"{field}.W_O")
        concat = len(W_Q) * width["W_V"][0]
        if W_O.shape[0] != concat:
            raise SpecError(f"{field}.W_O", f"{W_O.shape[0]} rows, but the concatenated heads have {concat} entries "
                                            f"({len(W_Q)} heads × d_v = {width['W_V'][0]})")
        return GroupedQuerySpec(
            tokens=tokens, X=X, W_Q=W_Q, kv_heads=kv, W_O=W_O,
            focus=fields.focus(data.get("focus", "all"), tokens, f"{field}.focus"),
            d_k=fields.d_k(data, kv[0].W_K, field), scale=fields.scale(data, field),
            mask=cache.mask(data, field, len(tokens), kv[0].cache),
            rope=rope_of(data, width["W_Q"][0], len(tokens), field))

    def compute(self, section: GroupedQuerySpec) -> GroupedQuery:
        focus = tuple(section.tokens.index(t) for t in section.focus.tokens)
        mask = None if section.mask is None else section.mask.values
        positions = (section.rope.at(len(section.tokens), cache.past(section.cache)) if section.rope is not None
                     else ())
        past = None if section.cache is None else tuple((h.cache.K.values, h.cache.V.values)
                                                        for h in section.kv_heads)
        return grouped_attention(section.X.values, tuple(W.values for W in section.W_Q),
                                    tuple(h.W_K.values for h in section.kv_heads),
                                    tuple(h.W_V.values for h in section.kv_heads), section.W_O.values,
                                    section.scale.divisor(section.d_k), focus, mask, section.rope, positions, past)

    def outputs(self, section: GroupedQuerySpec, result: GroupedQuery) -> Carried:
        return carried.combined_outputs(self, section, result)

    def error_bound(self, section: GroupedQuerySpec, result: GroupedQuery, errors: dict[str, float]) \
            -> certify.Bound:
        x = carried.rows_error(section, errors, "X")
        divisor = certify.divisor_of(section.scale, section.d_k)
        heads = []
        for W_Q, g in zip(section.W_Q, result.mapping, strict=True):
            kv = section.kv_heads[g]
            keys = len(section.tokens) + (len(kv.cache.tokens) if kv.cache is not None else 0)
            heads.append(certify.attention(x, x, W_Q, kv.W_K, kv.W_V, divisor, keys, section.rope is not None,
                                           carried.cached_sizes(kv.cache)))
        return certify.combined(heads, section.W_O).printed

    def inputs(self, section: GroupedQuerySpec, result: GroupedQuery) -> Carried | None:
        return carried.start_rows(section.tokens, section.X.values)

    def symbolic(self, result: GroupedQuery) -> bool:
        return result.symbolic

    def steps(self, section: GroupedQuerySpec, result: GroupedQuery) -> list[Step]:
        from .solution import grouped_steps

        return grouped_steps(section, result)

    def figure(self, section: GroupedQuerySpec) -> FlowFigure:
        from .figure import figure  # the flow's boxes: only a document with the figure needs them

        return figure(section)

    def size(self, section: GroupedQuerySpec) -> Size:
        """Every query head derives each focus token over every key (and its matrix form)."""
        n, heads = len(section.tokens), len(section.W_Q)
        keys = n + cache.past(section.cache)
        d = max(section.X.shape[1], section.W_Q[0].shape[1], section.kv_heads[0].W_V.shape[1])
        matrix = heads * n * keys if section.focus.matrix_form(n) else 0
        return Size("focus", heads * len(section.focus.stepwise), keys, d, matrix,
                    what=f"queries ({len(section.focus.stepwise)} tokens × {heads} query heads) derived one by one",
                    work=heads * n * keys)

    def answers(self, section: GroupedQuerySpec, result: GroupedQuery) -> dict[str, Any]:
        tokens = section.tokens
        kv, columns = [], []
        for g in range(len(section.kv_heads)):
            numbers, exact, coefficients = projection_answers(result.heads[result.mapping.index(g)], "KV")
            kv.append({**numbers, "exact": exact})
            columns.append(coefficients)
        heads = []
        for h, attention in enumerate(result.heads):
            numbers, exact, _ = projection_answers(attention, "Q")
            queries = {tokens[i]: query_answers(q, columns[result.mapping[h]]) for i, q in attention.queries.items()}
            heads.append({"kv_head": result.mapping[h], **numbers, "queries": queries, "exact": exact})
        return {"kind": self.name, "tokens": list(tokens), **cache.answers(section.cache, tokens),
                **scale_answers(section), "mapping": list(result.mapping),
                "kv_heads": kv, "heads": heads,
                "queries": {tokens[i]: _combined_answers(result, i, len(tokens)) for i in result.focus}}


def _heads(data: dict[str, Any], key: str, field: str) -> list[Any]:
    heads = fields.require(data, key, field)
    if not isinstance(heads, list) or not heads:
        raise SpecError(f"{field}.{key}", "expected a non-empty list of heads")
    return heads


def _weights(data: Any, field: str, keys: set[str], d: int,
             more: frozenset[str] = frozenset()) -> dict[str, GivenMatrix]:
    """A head's matrices, each with a row per X column (`more`: further keys the entry may hold, read elsewhere)."""
    if not isinstance(data, dict):
        raise SpecError(field, f"expected a table with {', '.join(sorted(keys))}")
    fields.check_keys(data, keys | more, field)
    out = {key: fields.matrix(fields.require(data, key, field), f"{field}.{key}") for key in sorted(keys)}
    for key, given in out.items():
        fields.rows_match(given, d, f"{field}.{key}", "X columns")
    return out


def _combined_answers(result: GroupedQuery, i: int, n: int) -> dict[str, Any]:
    """One focus query's head outputs, concatenation and output: decimals from the heads' numbers, exact forms
    when the rows are short enough to write (answers.EXPLICIT_TERMS keys), else null."""
    numbers = result.numbers(i)
    exact = None
    if numbers is None or n <= EXPLICIT_TERMS:
        combined = result.combined(i)
        exact = {"concat": exact_texts(combined.concat), "output": exact_texts(combined.output)}
    if numbers is None:
        concat, output = row_texts(combined.concat, combined.known), row_texts(combined.output, combined.known)
    else:
        concat, output = ([significant_approximation(x, asked()) for x in row] for row in numbers)
    width = len(concat) // len(result.heads)
    return {"heads": [concat[h * width:(h + 1) * width] for h in range(len(result.heads))], "concat": concat,
            "output": output, "exact": exact}


GROUPED_QUERY = GroupedQueryKind()
