"""The KV cache of a decoding step, for any kind whose keys and values come from its own tokens (self-attention, and
each K/V head of grouped-query attention): its spec keys, the step's attention with the cached rows first, and the
steps that show the cache before and after, the offset mask, and the check against the whole sequence.

A cache's p tokens sit at absolute positions 0 … p − 1 and the section's n new tokens at p … p + n − 1; new token t
sees positions 0 … p + t (engine.cache states the alignment)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sympy import ImmutableMatrix

from ... import engine
from ...document import sentences
from ...document.sentences import say
from ...document.steps import (
    Eq,
    Facts,
    Formula,
    Heading,
    MatrixEquation,
    Name,
    Paragraph,
    Phrase,
    Result,
    Shown,
    Step,
    Token,
    Tokens,
    TokenTable,
)
from ...errors import SpecError
from ...spec import fields
from ...spec.model import Cache, Focus, GivenMatrix, Mask, Rope
from ..rope import feature as rotary
from . import engine as kv_engine

KEYS = fields.CACHE_KEYS
MATRIX_FORM = ("cache.matrix_heading", "cache.matrix")  # the matrix form of the new queries: heading, sentence


# ------------------------------------------------------------ the spec

# the conditional sentences this folder says, and what must be true of their facts (document/sentences.py)
sentences.contribute({
    "cache.mask_none": lambda f: not f.masked,  # a KV cache's mask with no 0 (one new token, causal)
    "cache.relative": lambda f: f.rotated,  # RoPE's scores in m − n, with the new keys of a KV cache
})


def parse(data: dict[str, Any], field: str, tokens: tuple[str, ...], W_K: GivenMatrix,
          W_V: GivenMatrix) -> tuple[Cache | None, Mask | None]:
    """A self-attention section's cache (of) and its mask (mask)."""
    cached = of(data, field, tokens, W_K, W_V)
    return cached, mask(data, field, len(tokens), cached)


def of(data: dict[str, Any], field: str, tokens: tuple[str, ...], W_K: GivenMatrix,
       W_V: GivenMatrix) -> Cache | None:
    """The cache a section (or a K/V head's entry) gives: past_tokens, past_K and past_V, the keys as wide as
    W_K's columns and the values as W_V's; None without one."""
    return fields.cache(data, field, W_K.shape[1], W_V.shape[1], tokens)


def per_head(data: dict[str, Any], field: str, tokens: tuple[str, ...], entries: list[dict[str, Any]],
             W_K: tuple[GivenMatrix, ...], W_V: tuple[GivenMatrix, ...]) -> tuple[Cache, ...] | None:
    """Grouped-query attention's caches, one per K/V head: past_tokens on the section, past_K and past_V in every
    kv_heads entry (each as wide as its W_K's and W_V's columns); None without a cache."""
    has = [any(key in entry for key in ("past_K", "past_V")) for entry in entries]
    if "past_tokens" not in data and not any(has):
        return None
    if "past_tokens" not in data:
        raise SpecError(f"{field}.past_tokens", f"missing: kv_heads[{has.index(True)}] gives a KV cache (past_K, "
                                                f"past_V), whose tokens the section names in past_tokens")
    if not all(has):
        raise SpecError(f"{field}.kv_heads[{has.index(False)}].past_K",
                        "missing: with past_tokens every K/V head gives its cached past_K and past_V")
    return tuple(fields.cache({"past_tokens": data["past_tokens"], **{k: v for k, v in entry.items() if k in KEYS}},
                              f"{field}.kv_heads[{g}]", W_K[g].shape[1], W_V[g].shape[1], tokens, field)
                 for g, entry in enumerate(entries))


def mask(data: dict[str, Any], field: str, n: int, cache: Cache | None) -> Mask | None:
    """The section's mask: as given (n × (p + n) with a cache), else with a cache the causal mask with the
    offset p."""
    p = past(cache)
    given = fields.mask(data, n, field, p)
    return Mask.causal(n, p) if given is None and cache is not None else given


def past(cache: Cache | None) -> int:
    """p, the number of cached positions (0 without a cache): the new tokens' positions start there."""
    return 0 if cache is None else len(cache.tokens)


def key_tokens(cache: Cache | None, tokens: tuple[str, ...]) -> tuple[str, ...]:
    """The keys' tokens in position order: the cached ones, then the new ones."""
    return tokens if cache is None else (*cache.tokens, *tokens)


def positions(cache: Cache | None, n: int) -> tuple[int, ...]:
    """The absolute positions of the n new tokens."""
    p = past(cache)
    return tuple(range(p, p + n))


# ------------------------------------------------------------ the engine


def attention(new: dict[str, ImmutableMatrix], cache: Cache, divisor, focus: tuple[int, ...],
              mask: Mask | None, rope: Rope | None = None) -> engine.Attention:
    """The decoding step: the new queries against the cached keys and values followed by the new ones (new: the
    new tokens' Q, K and V; with `rope`, unrotated: they are turned for their absolute positions)."""
    n = new["Q"].rows
    at = rope.at(n, past(cache)) if rope is not None else None
    return kv_engine.decode(new, cache.K.values, cache.V.values, divisor, focus,
                               None if mask is None else mask.values, rope, at)


def recomputed(new: dict[str, ImmutableMatrix], cache: Cache, divisor, mask: Mask | None,
               rope: Rope | None = None) -> engine.Attention:
    """The whole sequence's attention without a cache, its rows of the new tokens (keyed p + t)."""
    n = new["Q"].rows
    at = rope.at(n, past(cache)) if rope is not None else None
    return kv_engine.recompute(new, cache.K.values, cache.V.values, divisor,
                                  None if mask is None else mask.values, rope, at)


# ------------------------------------------------------------ the steps


def at(first: int, last: int) -> Phrase:
    """"position 3" or "positions 0–2"."""
    if first == last:
        return Phrase("cache.position", (("first", first),))
    return Phrase("cache.positions", (("first", first), ("last", last)))


def intro(cache: Cache, tokens: tuple[str, ...]) -> Paragraph:
    """What a decoding step with a cache is, for this input: which tokens are cached and which are new."""
    p, n = past(cache), len(tokens)
    return Paragraph("cache.intro_one" if n == 1 else "cache.intro_several",
                     {"past": Tokens(cache.tokens), "past_at": at(0, p - 1), "new": Tokens(tokens),
                      "new_at": at(p, p + n - 1)})


def positional(cache: Cache, tokens: tuple[str, ...]) -> Paragraph:
    """With positional encodings: the new tokens' rows of P are those of their absolute positions."""
    p, n = past(cache), len(tokens)
    return Paragraph("cache.positional", {"P": Name("P"), "at": at(p, p + n - 1)})


def shown(QKV: dict[str, Shown], cache: Cache) -> tuple[dict[str, Shown], dict[str, Shown]]:
    """(the new tokens' Q, K, V; Q and the whole K, V of all positions) as shown, from the projections' Shown of the
    result (whose K and V hold the cached rows first), with one count of decimals for all, the cache's included."""
    decimals = max(QKV["Q"].decimals, cache.K.decimals, cache.V.decimals)
    whole = {letter: replace(s, decimals=decimals) for letter, s in QKV.items()}
    n = QKV["Q"].values.rows
    return {letter: last(s, n) for letter, s in whole.items()}, whole


def last(shown: Shown, n: int) -> Shown:
    """The last n rows (the new tokens') of keys or values of all positions; the rows themselves when only the new
    tokens' are there (with RoPE, the keys before their rotation)."""
    rows = shown.values.rows
    return shown if rows == n else part(shown, rows - n, rows)


def part(shown: Shown, start: int, stop: int) -> Shown:
    """Rows start … stop − 1 of a matrix as shown, with the decimals of the whole (as its rows have)."""
    return replace(shown, values=shown.values[start:stop, :], whole=shown.whole or shown.entries)


def table_steps(cache: Cache, tokens: tuple[str, ...], whole: dict[str, Shown], head: int | None = None,
                rotated: bool = False, group: int | None = None, keys: str | None = None) -> list[Step]:
    """The cache before this step (the given rows, as typed) and after it (the new rows appended), with absolute positions,
    and the work it saves (`head`: a head's names, K^(h); `group`: a K/V head's, K^[g]; `rotated`: with RoPE, the
    keys are rotated ones, named K̂ unless `keys` names them as the kind does)."""
    p, n = past(cache), len(tokens)
    total = p + n
    K_c, V_c = (Name(c, label="cache", head=head, group=group) for c in "KV")
    K = Name(keys or ("Kh" if rotated else "K"), head=head, group=group)
    V = Name("V", head=head, group=group)
    rope = "_rope" if rotated else ""
    before = (Shown.input(cache.K), Shown.input(cache.V))  # the given rows as typed ([1.0, 0.0] stays so)
    return [
        Heading(2, "cache.heading"),
        Paragraph(f"cache.before{rope}", {"K": K_c, "V": V_c}),
        TokenTable(("table.token", K_c, V_c), cache.tokens, before, tuple(range(p))),
        Paragraph(f"cache.append{rope}", {"K": K, "V": V, "total": total}),
        TokenTable(("table.token", K, V), key_tokens(cache, tokens), (whole["K"], whole["V"]),
                   tuple(range(total))),
        Paragraph("cache.saved", {"n": n, "total": total}),
    ]


def rotation_steps(rope: Rope, cache: Cache, tokens: tuple[str, ...], new: dict[str, Shown],
                   rotated: dict[str, Shown], focus: Focus, facts: Facts, head: int | None = None) -> list[Step]:
    """RoPE's Step 3 for the new tokens, at their absolute positions (the cached keys are rotated already): `new`
    holds their Q and K before the rotation, `rotated` Q̂ and the K̂ of all positions."""
    p, n = past(cache), len(tokens)
    turned = {"Q": rotated["Q"], "K": last(rotated["K"], n)}
    steps = rotary.rope_steps(rope, tokens, new, turned, focus.stepwise, facts, 3, stepwise=focus.mode != "matrix",
                              head=head, positions=rope.at(n, p))
    return [replace(s, key="cache.rope_new") if isinstance(s, Paragraph) and s.key == "rope.all_tokens" else s
            for s in steps]


def relative_steps(rope: Rope, cache: Cache, tokens: tuple[str, ...], query: str, new: dict[str, Shown],
                   scores: tuple, facts: Facts, head: int | None = None) -> list[Step]:
    """After a new query's dot products: the scores with the new keys from the unrotated vectors, in m − n (the
    cache holds the earlier keys only after their rotation)."""
    p, n = past(cache), len(tokens)
    steps = rotary.relative_steps(rope, tokens, query, new, scores[p:], facts, head, rope.at(n, p))
    return [replace(steps[0], key="cache.relative"), *steps[1:]]


def mask_steps(cache: Cache, tokens: tuple[str, ...], mask: Mask, facts: Facts) -> list[Step]:
    """The mask of the step, n × (p + n), and which positions each new token sees (`facts`: the section's)."""
    p = past(cache)
    keys = key_tokens(cache, tokens)
    causal = mask.mode == "causal"
    steps: list[Step] = [
        Heading(2, "mask.heading"),
        Paragraph("cache.mask_causal" if causal else "cache.mask_given",
                  {"M": Name("M"), "p": Eq(Name("p"), p), "n": len(tokens), "total": len(keys), "t": Formula("t"),
                   "pt": Formula("cache_position"),
                   "seen": Formula("cache_seen")}),
        MatrixEquation(Name("M"), Shown(mask.values)),
    ]
    for t, token in enumerate(tokens):
        seen = tuple(k for j, k in enumerate(keys) if mask.values[t, j])
        key = "cache.sees_causal" if causal else "cache.sees"
        steps.append(Paragraph(key, {"token": Token(token), "pos": p + t, "keys": Tokens(seen, token),
                                     "range": at(0, p + t)}))
    if facts.masked:
        steps.append(Paragraph("mask.effect", {"e": Formula("exp_minus_inf")}))
    else:
        steps.append(say("cache.mask_none", facts, {"M": Name("M")}))
    return steps


def check_steps(cache: Cache, tokens: tuple[str, ...], step: engine.Attention, whole: engine.Attention,
                mask: Mask, focus: tuple[str, ...], heads: tuple[tuple[engine.Attention, engine.Attention], ...] = (),
                results: dict[str, Result] | None = None) -> list[Step]:
    """The check: row p + t of the whole sequence's attention, recomputed without the cache, is the output of new
    token t, exactly (kv_engine.same_rows; refused if not, which would be a bug). `heads`: further (step, whole)
    pairs that must agree too (the other query heads of grouped-query attention); `results`: the rows to show per
    token, if not the whole sequence's outputs (grouped-query attention's outputs after W_O)."""
    p = past(cache)
    if not all(kv_engine.same_rows(s, w, p) for s, w in ((step, whole), *heads)):
        raise AssertionError("a KV cache's step differs from the whole sequence recomputed")
    total = p + len(tokens)
    steps: list[Step] = [
        Heading(2, "cache.check_heading"),
        Paragraph("cache.check" if mask.mode == "causal" else "cache.check_given",
                  {"total": total, "M": Name("M"), "pt": Formula("cache_position")}),
    ]
    for token in focus:
        t = tokens.index(token)
        steps += [Paragraph("cache.check_row", {"pos": p + t, "token": Token(token)}),
                  results[token] if results else Result(Name("z", token),
                                                        Shown(whole.queries[p + t].output, known=whole.known))]
    steps.append(Paragraph("cache.check_equal", {"n": len(focus)}))
    return steps


# ------------------------------------------------------------ the answers


def answers(cache: Cache | None, tokens: tuple[str, ...]) -> dict[str, Any]:
    """What `solve` adds for a cache: the past tokens, the keys' tokens in order (K and V have a row each) and the
    new tokens' absolute positions."""
    if cache is None:
        return {}
    return {"past_tokens": list(cache.tokens), "key_tokens": list(key_tokens(cache, tokens)),
            "positions": list(positions(cache, len(tokens)))}
