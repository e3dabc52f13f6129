"""The worked solution of a sliding-window section: self-attention's steps (composed from features/attention and the
KV cache's), with the window shown as a mask, each derived query's keys inside and outside it, and with a cache the
positions it drops and the check against the whole sequence."""

from __future__ import annotations

from dataclasses import replace

from sympy import ImmutableMatrix

from ... import engine
from ...document import sentences
from ...document.sentences import say
from ...document.steps import (
    DefinitionTable,
    Eq,
    Facts,
    Formula,
    Heading,
    MatrixEquation,
    Name,
    Paragraph,
    Phrase,
    Phrases,
    Result,
    Shown,
    Step,
    Token,
    Tokens,
    TokenTable,
    VectorEquation,
)
from ...engine import any_symbolic
from ...features.attention import solution as common
from ...features.kv_cache import feature as cache
from ..self_attention import kind as _self_attention  # noqa: F401  (the conditions of its sentences, said here)
from . import engine as window_engine
from .spec import KIND, SlidingWindowSpec

W = Name("w")  # the window's length

# Its sentences that hold only for some queries: whether some key is outside the query's window (the facts' keys
# include the positions a cache dropped), and whether the mask has a 0
sentences.contribute({
    f"{KIND}.outside": lambda f: not sentences.sees_all(f),
    f"{KIND}.outside_none": sentences.sees_all,
    f"{KIND}.mask_none": lambda f: not f.masked,
    f"{KIND}.mask_none_dropped": lambda f: not f.masked,
})


def facts(section: SlidingWindowSpec, result: engine.Attention) -> Facts:
    """The section's facts: masked when some query's window leaves out some key."""
    M = window_engine.mask(section)
    masked = any(v == 0 for v in M)
    symbolic = any_symbolic(result.V)
    return sentences.section_facts(KIND, masked, False, section.scale.mode, symbolic)


def positions(first: int, last: int) -> Phrase:
    """"position 3" or "positions 0–2" (the KV cache's phrases)."""
    return cache.at(first, last)


def regime(section: SlidingWindowSpec) -> Paragraph:
    """What the window amounts to for this input: each query sees only itself (w = 1), ordinary causal attention
    (the window reaches back to position 0 from every query), or a window narrower than the sequence."""
    n = section.past + len(section.tokens)
    params = {"w": Eq(W, section.window), "n": n, "i": Formula("i"), "low": Formula("sliding_window_low")}
    if section.window == 1:
        return Paragraph(f"{KIND}.only_itself", params)
    if section.causal:
        return Paragraph(f"{KIND}.causal", params)
    return Paragraph(f"{KIND}.narrow", params)


def sees(section: SlidingWindowSpec, token: str, facts: Facts) -> list[Step]:
    """Which keys the query of `token` sees (inside its window) and which it does not: those too far back, and
    those after it (weight exactly 0)."""
    i = section.past + section.tokens.index(token)
    keys, at = window_engine.key_tokens(section), window_engine.key_positions(section)
    inside = tuple(k for k, j in zip(keys, at, strict=True) if window_engine.visible(i, j, section.window))
    low = max(0, i - section.window + 1)
    steps: list[Step] = [Paragraph(f"{KIND}.sees", {"token": Token(token), "pos": i, "range": positions(low, i),
                                                   "keys": Tokens(inside, token)})]
    before = tuple(k for k, j in zip(keys, at, strict=True) if j < low)
    after = tuple(k for k, j in zip(keys, at, strict=True) if j > i)
    parts = []
    if before:
        parts.append(Phrase(f"{KIND}.too_far", (("tokens", Tokens(before)), ("low", low))))
    if section.first:  # the cached positions the window dropped are too far back for every new token
        parts.append(Phrase(f"{KIND}.too_far_dropped", (("dropped", positions(0, section.first - 1)),)))
    if after:
        parts.append(Phrase(f"{KIND}.after", (("tokens", Tokens(after)),)))
    if parts:
        steps.append(say(f"{KIND}.outside", facts, {"parts": Phrases(tuple(parts))}))
    else:
        steps.append(say(f"{KIND}.outside_none", facts, {"token": Token(token)}))
    return steps


def mask_steps(section: SlidingWindowSpec, whole: Facts, queries: dict[str, Facts]) -> list[Step]:
    """The window as the mask M (a row per query, a column per key), and for each query derived step by step which
    keys are inside its window and which outside."""
    M = window_engine.mask(section)
    cached = section.cache is not None
    steps: list[Step] = [
        Heading(2, f"{KIND}.mask_heading"),
        Paragraph(f"{KIND}.mask_cached" if cached else f"{KIND}.mask", {"M": Name("M"), "w": Eq(W, section.window)}),
        MatrixEquation(Name("M"), Shown(M)),
    ]
    for token, facts in queries.items():
        steps += sees(section, token, facts)
    if whole.masked:
        steps.append(Paragraph("mask.effect", {"e": Formula("exp_minus_inf")}))
    else:  # with a cache, the window may have dropped the positions it masks
        steps.append(say(f"{KIND}.mask_none_dropped" if section.first else f"{KIND}.mask_none", whole,
                         {"M": Name("M")}))
    return steps


def cache_steps(section: SlidingWindowSpec, QKV: dict[str, Shown], everything: dict[str, Shown]) -> list[Step]:
    """The cache as given (every cached position), the positions the window drops, and the keys and values this
    step attends over: the kept cached ones and the new tokens' (QKV: as shown, K and V of the kept and new;
    `everything`: K and V of every position, the dropped ones included, whose decimals they all share)."""
    given, p, first = section.cache, section.past, section.first
    n = len(section.tokens)
    K_c, V_c = (Name(c, label="cache") for c in "KV")
    before = tuple(cache.part(everything[c], 0, p) for c in "KV")
    steps: list[Step] = [
        Heading(2, f"{KIND}.cache_heading"),
        *([] if section.past_X is None else [
            Paragraph(f"{KIND}.past_embeddings"),
            TokenTable(("table.token", "table.embedding"), given.tokens, (Shown.input(section.past_X),),
                       tuple(range(p)))]),
        Paragraph("cache.before" if section.past_X is None else f"{KIND}.before_embedded", {"K": K_c, "V": V_c}),
        TokenTable(("table.token", K_c, V_c), given.tokens, before, tuple(range(p))),
    ]
    w = Eq(W, section.window)
    if first == 0:
        steps.append(Paragraph(f"{KIND}.dropped_none", {"pos": p, "w": w}))
    elif first < p:
        steps.append(Paragraph(f"{KIND}.dropped", {"pos": p, "w": w, "range": positions(first, p),
                                                   "dropped": positions(0, first - 1),
                                                   "tokens": Tokens(given.tokens[:first]),
                                                   "kept": Tokens(given.tokens[first:])}))
    else:  # w = 1: the new token sees only itself
        steps.append(Paragraph(f"{KIND}.dropped_all", {"pos": p, "w": w, "dropped": positions(0, p - 1),
                                                       "tokens": Tokens(given.tokens)}))
    total = p - first + n
    steps += [
        Paragraph(f"{KIND}.append" if first < p else f"{KIND}.append_only", {"total": total}),
        TokenTable(("table.token", Name("K"), Name("V")), window_engine.key_tokens(section), (QKV["K"], QKV["V"]),
                   window_engine.key_positions(section)),
    ]
    return steps


def check_steps(section: SlidingWindowSpec, result: engine.Attention) -> list[Step]:
    """The check: the whole sequence of p + n positions recomputed with the (p + n) × (p + n) window mask gives the
    new tokens' rows exactly (from the embeddings when past_X is given, else from the cached rows as given; from
    cached rows of which the window drops none it would be the same computation again, and is left out)."""
    check = window_engine.recomputed(section)
    if not window_engine.agrees(section, result, check):
        raise AssertionError("a sliding window's decoding step differs from the whole sequence recomputed")
    if not check.embedded and not section.first:  # the same rows, nothing dropped: the same computation again
        return [Paragraph(f"{KIND}.check_none", note=True)]
    p = section.past
    total = p + len(section.tokens)
    steps: list[Step] = [
        Heading(2, "cache.check_heading"),
        Paragraph(f"{KIND}.check_embedded" if check.embedded else f"{KIND}.check_cached",
                  {"total": total, "w": Eq(W, section.window)}),
    ]
    for token in section.focus.tokens:
        t = section.tokens.index(token)
        steps += [Paragraph("cache.check_row", {"pos": p + t, "token": Token(token)}),
                  Result(Name("z", token), Shown(check.whole.queries[p + t].output, known=check.whole.known))]
    if section.first:
        steps.append(Paragraph(f"{KIND}.check_dropped", {"dropped": positions(0, section.first - 1)}))
    steps.append(Paragraph("cache.check_equal", {"n": len(section.focus.tokens)}))
    return steps


def steps(section: SlidingWindowSpec, result: engine.Attention) -> list[Step]:
    x = Shown.input(section.X)
    Wts = common.given_weights(section)
    cached = section.cache
    QKV = common.projections(dict.fromkeys("QKV", x), Wts, result)
    keys = window_engine.key_tokens(section)
    everything: dict[str, Shown] = {}
    if cached is not None:  # one count of decimals for every position's keys (values), the dropped ones included
        decimals = max(QKV["Q"].decimals, cached.K.decimals, cached.V.decimals)
        n = len(section.tokens)
        everything = {c: Shown(ImmutableMatrix.vstack(getattr(cached, c).values, cache.last(QKV[c], n).values),
                               decimals, known=result.known) for c in "KV"}
        QKV = {"Q": replace(QKV["Q"], decimals=decimals),
               **{c: cache.part(everything[c], section.first, section.past + n) for c in "KV"}}
        new = {c: cache.last(s, n) for c, s in QKV.items()}
    else:
        new = QKV
    focus, whole = section.focus, facts(section, result)
    queries = {t: sentences.query_facts(whole, t, keys, result.queries[section.tokens.index(t)],
                                        first=t == focus.stepwise[0]) for t in focus.stepwise}
    if section.first:  # the dropped positions are keys no query sees, as the whole sequence's (the sentences')
        dropped = cached.tokens[:section.first]
        queries = {t: replace(f, keys=(*dropped, *f.keys)) for t, f in queries.items()}
    goal: list[Step] = [Paragraph("matrix.only", note=True)]
    if focus.mode != "matrix" and len(focus.stepwise) > 1:  # several tokens derived: each in turn, not the first
        goal = [Paragraph(f"{KIND}.goal_all", {"tokens": Tokens(focus.stepwise)})]
    elif focus.mode != "matrix":
        first = queries[focus.tokens[0]]
        goal = [say(sentences.first_true(first, "self.goal", "self.goal_visible"), first,
                    {"token": Token(focus.tokens[0])})]
    out: list[Step] = [
        common.part_heading(section, f"{KIND}.heading"),
        *([cache.intro(cached, section.tokens)] if cached else []),
        Paragraph(f"{KIND}.intro", {"wn": W, "i": Formula("i"), "j": Formula("j"),
                                    "rule": Formula("sliding_window_rule")}),
        regime(section),
        *goal,
        Heading(2, "self.step1"),
        TokenTable(("table.token", "table.embedding"), section.tokens, (x,)),
        *([] if section.X.symbolic else [Paragraph("note.dummy_embeddings", note=True)]),
        Paragraph("self.x_is", {"X": Name("X"), "x": Name("x", label="t"), "t": Formula("t")}),
        Heading(2, "cache.step2" if cached else "self.step2", {"Q": Name("Q"), "K": Name("K"), "V": Name("V")}),
        Paragraph("cache.projections" if cached else "self.projections"),
        DefinitionTable(Name("X"), Name("X")),
        *common.weight_equations(Wts),
        Paragraph("note.dummy_weights", note=True),
    ]
    for token, f in queries.items():
        i = section.tokens.index(token)
        lead = "self.for_the_token" if len(section.tokens) == 1 else sentences.first_true(
            f, "self.for_example", "self.for_next")
        out += [say(lead, f, {"token": Token(token)}), say("self.embedding_of", f, {"token": Token(token)}),
                VectorEquation(Name("x", token), x.row(i))]
        out += common.projection_steps(token, Name("x", token), x.row(i), Wts, {c: v.row(i) for c, v in new.items()},
                                       "self.projection_of")
    out += [Paragraph("cache.new_tokens" if cached else "self.all_tokens"),
            TokenTable(("table.token", Name("Q"), Name("K"), Name("V")), section.tokens,
                       (new["Q"], new["K"], new["V"]))]
    if cached:
        out += cache_steps(section, QKV, everything)
    out += mask_steps(section, whole, queries)
    several = len(focus.stepwise) > 1
    for number, (token, f) in enumerate(queries.items()):
        i = section.tokens.index(token)
        query = result.queries[i]
        n = 3 + 3 * number
        step_keys = {"scores": sentences.first_true(f, "self.step3", "self.step3_visible"),
                     "softmax": "self.step4_of" if several else "self.step4",
                     "sum": "self.step5_of" if several else "self.step5"}
        out += common.attention_steps(keys, new["Q"].row(i), QKV["K"], QKV["V"],
                                      query, section.d_k, section.scale, step_keys, f, n)
        out += common.query_result_steps(token, f"{KIND}.result_of" if several else f"{KIND}.result",
                                         "self.result_from", (Name("x", token), x.row(i)), query.output,
                                         result.known, f, n + 2)
    if focus.matrix_form(len(section.tokens)):
        out += common.matrix_form_steps(result, len(section.tokens), section.d_k, section.scale, new["Q"], QKV["K"],
                                        QKV["V"], cache.MATRIX_FORM if cached else common.MATRIX_FORM)
    if cached:
        out += check_steps(section, result)
    out += common.heatmap(focus.tokens, keys, result, tuple(section.tokens.index(t) for t in focus.tokens))
    return out
