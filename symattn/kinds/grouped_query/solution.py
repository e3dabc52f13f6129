"""The worked solution of grouped-query attention: the inputs, K and V once per K/V head, which query heads share
which K/V head and what that saves in a K/V cache, each query head's attention (compact steps per focus token,
its matrix form for "all" and "matrix"), the concatenation, W_O and the result. `section` is a
kinds.grouped_query.GroupedQuerySpec (not imported: that module imports this one)."""

from __future__ import annotations

from dataclasses import replace

from sympy import ImmutableMatrix

from ... import engine
from ...document import sentences
from ...document.steps import (
    Concat,
    DotProducts,
    Eq,
    Formula,
    Heading,
    MatrixEquation,
    MatrixFormStep,
    Name,
    Num,
    Paragraph,
    Result,
    RowTimesMatrix,
    Shown,
    SqrtDk,
    Step,
    Token,
    TokenTable,
    VectorEquation,
    WeightedSum,
)
from ...features.attention import solution as common
from ...features.rope import engine as rope_engine
from ...features.rope import feature as rope_feature
from ...features.rope.steps import RopeRotation
from ...features.kv_cache import engine as kv_engine
from ...features.kv_cache import feature as cache
from ...spec.model import Section
from .engine import GroupedQuery

# the conditional sentences this folder says, and what must be true of their facts (document/sentences.py)
sentences.contribute({
    # grouped-query attention's one scaling sentence for all heads
    "gqa.scale_sqrt": lambda f: f.scaling == "sqrt_d_k",
    "gqa.scale_none": lambda f: f.scaling == "none",
    "gqa.scale_number": lambda f: f.scaling == "number",
})


def grouped_steps(section: Section, result: GroupedQuery) -> list[Step]:
    H, G = len(section.W_Q), len(section.kv_heads)
    d_k, d_v = section.W_Q[0].shape[1], section.kv_heads[0].W_V.shape[1]
    x = Shown.input(section.X)
    shown = _projections(section, result, x)
    cached, n = section.cache, len(section.tokens)
    steps: list[Step] = [
        common.part_heading(section, "gqa.heading"),
        Paragraph(_variant(H, G), {"H": H, "G": G, "r": H // G}),
        Paragraph("gqa.convention", {"mapping": Formula("gqa_mapping"), "zero": Formula("gqa_mapping_zero"),
                                     "r": H // G}),
        *([cache.intro(cached, section.tokens)] if cached else []),
        Heading(2, "gqa.step_inputs"),
        TokenTable(("table.token", "table.embedding"), section.tokens, (x,)),
        Paragraph("gqa.x_is", {"X": Name("X")}),
        *_mask_and_rope(section, result),
        Heading(2, "gqa.step_kv" if G > 1 else "gqa.step_kv_one", {"G": G}),  # not "each of the 1 K/V heads"
        Paragraph("gqa.kv_once" if G > 1 else "gqa.kv_once_one", {"K": _projection("K"), "V": _projection("V")}),
        *([Paragraph("gqa.kv_rotated")] if section.rope is not None else []),
    ]
    one = "_one" if G == H else "_two" if H == 2 * G else ""  # "(1) and (2)", not "(1) to (2)"
    for g in range(G):
        steps += [Paragraph(f"gqa.kv_label{one}", {"g": g + 1, "first": g * H // G + 1, "last": (g + 1) * H // G}),
                  MatrixEquation(Name("W_K", group=g + 1), Shown.input(section.kv_heads[g].W_K)),
                  MatrixEquation(Name("W_V", group=g + 1), Shown.input(section.kv_heads[g].W_V)),
                  TokenTable(("table.token", Name(_rotated(section, "K"), group=g + 1), Name("V", group=g + 1)),
                             section.tokens,
                             (cache.last(shown["K"][g], n), cache.last(shown["V"][g], n)))]
    if cached:
        steps += _cache_tables(section, shown, one)
    steps += [Heading(2, "gqa.step_sharing"),
              *(Paragraph(f"gqa.group{one}", {"g": g + 1, "first": g * H // G + 1, "last": (g + 1) * H // G})
                for g in range(G)),
              *_cache_sentence(H, G, d_k, d_v, cache.past(cached) + n if cached else 0),
              Heading(2, "gqa.step_heads", {"H": H}),
              _scale_sentence(section)]
    for h in range(H):
        steps += _head_steps(section, result, h, shown)
    steps += _combine_steps(section, result)
    if cached:
        steps += _check_steps(section, result)
    return steps


def _cache_tables(section: Section, shown: dict[str, list[Shown]], one: str) -> list[Step]:
    """Each K/V head's own cache before and after this step (engine.cache's tables; the heading, and what the
    cache saves, once)."""
    H, G = len(section.W_Q), len(section.kv_heads)
    steps: list[Step] = []
    for g in range(G):
        tables = cache.table_steps(section.kv_heads[g].cache, section.tokens, {"K": shown["K"][g], "V": shown["V"][g]},
                                   rotated=section.rope is not None, group=g + 1)  # K̂^[g] with RoPE
        label = Paragraph(f"gqa.kv_label{one}", {"g": g + 1, "first": g * H // G + 1, "last": (g + 1) * H // G})
        steps += [*tables[:1] * (g == 0), label, *tables[1:-1], *tables[-1:] * (g == G - 1)]
    return steps


def _rotated(section: Section, letter: str) -> str:
    """The name of a query's or key's letter on the page: rotated (q̂, K̂) with RoPE."""
    return rope_feature.ROTATED[letter] if section.rope is not None else letter


def _projection(letter: str) -> Formula:
    """K^{[1]} = X W_K^{[1]} (or V's)."""
    names = (("P", Name(letter, group=1)), ("X", Name("X")), ("W", Name(f"W_{letter}", group=1)))
    return Formula("gqa_projection", names)


def _variant(H: int, G: int) -> str:
    """Multi-query attention (one K/V head), grouped-query attention, or plain multi-head attention (one each)."""
    return "gqa.intro_single" if H == 1 else "gqa.intro_mqa" if G == 1 else "gqa.intro_mha" if G == H else \
        "gqa.intro_gqa"


def _projections(section: Section, result: GroupedQuery, x: Shown) -> dict[str, list[Shown]]:
    """Q of each query head, K and V of each K/V head (rotated, with RoPE), all with one count of decimals."""
    W = {"Q": [Shown.input(M) for M in section.W_Q], "K": [Shown.input(h.W_K) for h in section.kv_heads],
         "V": [Shown.input(h.W_V) for h in section.kv_heads]}
    values = {"Q": [a.Q for a in result.heads], "K": [result.K(g) for g in range(len(section.kv_heads))],
              "V": [result.V(g) for g in range(len(section.kv_heads))]}
    known = engine.Numbers(*(a.known for a in result.heads))
    shown = {k: [common.product(x, w, v, known) for w, v in zip(W[k], values[k], strict=True)] for k in "QKV"}
    every = [s for group in shown.values() for s in group]
    caches = [h.cache for h in section.kv_heads if h.cache is not None]
    decimals = max([s.decimals for s in every] + [m.decimals for c in caches for m in (c.K, c.V)])
    whole = tuple(e for s in every for e in s.entries)
    return {k: [replace(s, decimals=decimals, whole=whole) for s in group] for k, group in shown.items()}


def _rotation_once(section: Section, result: GroupedQuery, positions: tuple[int, ...]) -> list[Step]:
    """RoPE's rotation worked out once, for the first focus token's query in query head 1 (q -> q̂), as
    self-attention's RoPE step works it out; every other query and key turns the same way for its position."""
    rope, token = section.rope, section.focus.stepwise[0] if section.focus.stepwise else section.tokens[-1]
    i, d = section.tokens.index(token), section.W_Q[0].shape[1]
    plain = Shown(engine.project(section.X.values, section.W_Q[0].values), known=result.heads[0].known)
    rotated = Shown(result.heads[0].Q, known=result.heads[0].known)
    vectors = ((Name("qh", token, head=1), Name("q", token, head=1), plain.row(i), rotated.row(i)),)
    return [Paragraph("gqa.rope_once", {"token": Token(token), "m": Eq(Name("m"), positions[i]),
                                        "q": Name("q", token, head=1), "qh": Name("qh", token, head=1)}),
            VectorEquation(Name("q", token, head=1), plain.row(i)),
            RopeRotation(token, positions[i], rope_engine.pairs(d, rope.pairing), rope_feature.thetas(rope, d),
                         rope_engine.angles(positions[i], d, rope), vectors, result.heads[0].known)]


def _mask_and_rope(section: Section, result: GroupedQuery) -> list[Step]:
    steps: list[Step] = []
    if section.cache is not None:  # the offset mask, n × (p + n)
        masked = any(v == 0 for v in section.mask.values)
        steps += cache.mask_steps(section.cache, section.tokens, section.mask,
                                  sentences.section_facts(section.kind, masked, scaling=section.scale.mode))
    elif section.mask is not None:
        steps += [Heading(2, "mask.heading"),
                  Paragraph("gqa.mask_causal" if section.mask.mode == "causal" else "mask.given", {"M": Name("M")}),
                  MatrixEquation(Name("M"), Shown(section.mask.values)),
                  Paragraph("mask.effect", {"e": Formula("exp_minus_inf")})]
    rope = section.rope
    if rope is not None:
        positions = rope.at(len(section.tokens), cache.past(section.cache))
        steps += [Heading(2, "gqa.rope_heading"),
                  Paragraph(f"gqa.rope_{rope.pairing}", {"theta": Formula("gqa_theta"), "base": Eq(Name("b"), rope.base),
                                                         "angle": Formula("gqa_angle")}),
                  TokenTable(("table.token",), section.tokens, (), positions=positions),  # positions as numbers
                  *_rotation_once(section, result, positions)]
    return steps


def _cache_sentence(H: int, G: int, d_k: int, d_v: int, total: int = 0) -> list[Paragraph]:
    """What a K/V cache holds per token, against full multi-head attention's H K/V heads; with a KV cache of
    `total` positions (cached and new), what this one holds after the step."""
    params = {"G": G, "H": H, "d_k": d_k, "d_v": d_v, "kv": G * (d_k + d_v), "full": H * (d_k + d_v),
              "factor": H // G, "total": total, "held": total * G * (d_k + d_v), "full_held": total * H * (d_k + d_v)}
    key = "gqa.cache_single" if H == 1 else "gqa.cache_same" if G == H else "gqa.cache_mqa" if G == 1 else "gqa.cache"
    if not total:
        return [Paragraph(key, params)]
    return [Paragraph(key, params), Paragraph("gqa.cache_held_same" if G == H else "gqa.cache_held", params)]


def _scale_sentence(section: Section) -> Paragraph:
    """How every head scales its scores (a sentence checked against the section's facts)."""
    scale = section.scale
    facts = sentences.section_facts(section.kind, scaling=scale.mode)
    if scale.mode == "none":
        return sentences.say("gqa.scale_none", facts)
    if scale.mode == "number":
        return sentences.say("gqa.scale_number", facts, {"c": Num(scale.number)})
    return sentences.say("gqa.scale_sqrt", facts, {"scale": SqrtDk(section.d_k)})


def _head_steps(section: Section, result: GroupedQuery, h: int,
                shown: dict[str, list[Shown]]) -> list[Step]:
    """Query head h: its W_Q, its queries, and its attention with its K/V head's keys and values."""
    g = result.mapping[h]
    attention = result.heads[h]
    tokens = section.tokens
    Q, K, V = shown["Q"][h], shown["K"][g], shown["V"][g]
    q, k = _rotated(section, "q"), _rotated(section, "k")  # q̂, k̂ with RoPE
    steps: list[Step] = [
        Paragraph("gqa.head_label", {"h": h + 1, "g": g + 1}),
        MatrixEquation(Name("W_Q", head=h + 1), Shown.input(section.W_Q[h])),
        TokenTable(("table.token", Name(_rotated(section, "Q"), head=h + 1)), tokens, (Q,)),
    ]
    facts = sentences.section_facts(section.kind, scaling=section.scale.mode)
    keys = cache.key_tokens(section.cache, tokens)  # the cached positions' first
    key_names = tuple(Name(k, t, group=g + 1) for t in keys)
    for token in section.focus.stepwise:
        i = tokens.index(token)
        query = attention.queries[i]
        steps += [
            Paragraph("gqa.query_of", {"token": Token(token), "h": h + 1, "g": g + 1}),
            DotProducts(Name(q, token, head=h + 1), key_names, Q.row(i), K.rows, query.scores, attention.known),
            *common.scaling_steps(section.scale, section.d_k, query, keys, facts)[-1:],
            common.softmax_step(query.softmax, keys),
            WeightedSum(query.softmax.weights, V.rows, query.output, keys, attention.known),
            VectorEquation(Name("z", token, head=h + 1), Shown(query.output, known=attention.known)),
        ]
    if section.focus.matrix_form(len(tokens)):
        steps += [Paragraph("gqa.head_matrix", {"h": h + 1, "g": g + 1, "Q": Name("Q", head=h + 1),
                                                "K": Name("K", group=g + 1), "V": Name("V", group=g + 1)}),
                  MatrixFormStep(Q, K, V, engine.matrix_form([attention.queries[i] for i in range(len(tokens))]),
                                 section.scale, section.d_k, section.scale.divisor(section.d_k), attention.known)]
    return steps


def _combine_steps(section: Section, result: GroupedQuery) -> list[Step]:
    """The heads' outputs concatenated (per focus token, or as the matrix Z), times W_O, and the result."""
    H = len(section.W_Q)
    W_O = Shown.input(section.W_O)
    tokens = section.tokens
    focus = section.focus
    steps: list[Step] = [Heading(2, "gqa.step_concat"),
                         Paragraph("gqa.concat" if H > 1 else "gqa.concat_one",
                                   {"H": H, "size": H * section.kv_heads[0].W_V.shape[1]})]
    products: list[Step] = []
    results: list[Step] = []
    for token in focus.stepwise:
        combined = result.combined(tokens.index(token))
        parts = tuple(Shown(z, known=combined.known) for z in combined.heads)
        concat = Shown(combined.concat, known=combined.known)
        output = common.product(concat, W_O, combined.output, combined.known)
        name, final = Name("z", token, label="concat"), Name("z", token, label="final")
        steps.append(Concat(name, parts, concat))
        products.append(RowTimesMatrix(final, name, concat, Name("W_O"), W_O, output))
        results.append(Result(final, output))
    if not focus.stepwise:  # the matrix form alone: Z = [Z^(1) ‖ … ‖ Z^(H)] and Z W_O
        rows = [result.combined(i) for i in range(len(tokens))]
        known = engine.Numbers(*(c.known for c in rows))
        concat = Shown(ImmutableMatrix.vstack(*(c.concat for c in rows)), known=known)
        output = common.product(concat, W_O, ImmutableMatrix.vstack(*(c.output for c in rows)), known)
        steps += [Paragraph("gqa.concat_matrix", {"Z": Name("Z", label="concat")}),
                  MatrixEquation(Name("Z", label="concat"), concat)]
        results.append(MatrixEquation(Name("Z", label="final"), output))
    steps += [Heading(2, "gqa.step_project"), Paragraph("gqa.project", {"W_O": Name("W_O")}),
              MatrixEquation(Name("W_O"), W_O), *products,
              Heading(2, "gqa.result"), Paragraph("gqa.result_is", {"W_O": Name("W_O")}), *results,
              Paragraph(_meaning(section))]
    return steps


def _meaning(section: Section) -> str:
    """What the heads did: shared keys and values only when a K/V head serves several query heads."""
    H, G = len(section.W_Q), len(section.kv_heads)
    return "gqa.result_meaning_single" if H == 1 else "gqa.result_meaning_mha" if G == H else "gqa.result_meaning"


def _check_steps(section: Section, result: GroupedQuery) -> list[Step]:
    """With a KV cache: every query head's rows equal those of its attention over the whole sequence recomputed
    without the cache (kv_engine.recompute), so each new token's output after W_O does too."""
    divisor, mask = section.scale.divisor(section.d_k), section.mask.values
    p = cache.past(section.cache)
    positions = section.rope.at(len(section.tokens), p) if section.rope is not None else None
    X, wholes = section.X.values, []
    for h, W_Q in enumerate(section.W_Q):  # the new rows unrotated: engine.cache rotates them for their positions
        kv = section.kv_heads[result.mapping[h]]
        new = {"Q": engine.project(X, W_Q.values), "K": engine.project(X, kv.W_K.values),
               "V": engine.project(X, kv.W_V.values)}
        wholes.append(kv_engine.recompute(new, kv.cache.K.values, kv.cache.V.values, divisor, mask, section.rope,
                                             positions))
    results = {}
    for token in section.focus.tokens:
        t = section.tokens.index(token)
        combined = engine.combine_heads(tuple(w.queries[p + t].output for w in wholes), section.W_O.values,
                                     tuple(wholes))
        results[token] = Result(Name("z", token, label="final"), Shown(combined.output, known=combined.known))
    return cache.check_steps(section.cache, section.tokens, result.heads[0], wholes[0], section.mask,
                             section.focus.tokens, tuple(zip(result.heads[1:], wholes[1:], strict=True)), results)

