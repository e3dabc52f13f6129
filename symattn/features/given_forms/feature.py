"""The given forms of self- and cross-attention: Q, K and V given instead of X and the three W (the derivation starts
at the scores), or the raw scores themselves, with V or without it (it starts at the scaling; without V it ends at
the weights). The kinds parse a section in one of these forms here and hand it back here to compute and lay out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ... import engine
from ...document import sentences
from ...document.phrases import Facts, Formula, Name, Token, Tokens
from ...document.sentences import say
from ...document.size import Size
from ...document.steps import FlowFigure, Heading, Paragraph, Shown, Step, TokenTable, VectorEquation
from ...engine import any_symbolic
from ...errors import SpecError
from ...spec import fields
from ...spec.model import Focus, GivenMatrix, Mask, Scale, Section
from ..attention import solution as common
from ..attention.answers import attention_answers, scale_answers
from ..online_softmax import feature as online
from ..rope import feature as rotary

KEYS = frozenset({"Q", "K", "V", "scores"})
# The keys of the form from X that the given forms replace, in the order an error names them.
FROM_X = ("X", "memory", "W_Q", "W_K", "W_V")
# Keys that apply to X only.
OF_X = ("positional_encoding", "P", "d_model")

# the conditional sentences this folder says, and what must be true of their facts (document/sentences.py)
sentences.contribute({
    "given.scores": lambda f: f.scaling != "none",
    "given.scores_unscaled": lambda f: f.scaling == "none",
    "given.strongest": lambda f: sentences.strongest(f) not in (None, f.token),
    "given.strongest_itself": lambda f: sentences.strongest(f) is not None and sentences.strongest(f) == f.token,
})


@dataclass(frozen=True)
class GivenSpec(Section):
    """A section that gives Q, K and V, or the scores (and perhaps V): `tokens` are the queries, `keys` the key
    tokens (the tokens themselves in self-attention, the memory tokens in cross-attention). d_k is None when the
    scores are given and not scaled by √d_k."""

    cross: ClassVar[bool] = False
    tokens: tuple[str, ...]
    keys: tuple[str, ...]
    Q: GivenMatrix | None
    K: GivenMatrix | None
    V: GivenMatrix | None
    scores: GivenMatrix | None
    focus: Focus
    d_k: int | None
    scale: Scale = Scale()
    mask: Mask | None = None
    online: int | None = None  # keys per block of the online softmax, None: direct


def gives(data: dict[str, Any]) -> bool:
    """Whether a section's data is in a given form (it gives Q, K, V or scores)."""
    return not KEYS.isdisjoint(data)


def parse(spec: type[GivenSpec], data: dict[str, Any], field: str) -> GivenSpec:
    """A section in a given form, validated: either Q, K and V, or scores (and V); none of the keys of X."""
    tokens = fields.tokens(fields.require(data, "tokens", field), f"{field}.tokens")
    keys = fields.tokens(fields.require(data, "memory_tokens", field), f"{field}.memory_tokens") if spec.cross \
        else tokens
    keys_are = "memory_tokens" if spec.cross else "tokens"
    given = "scores (and V)" if "scores" in data else "Q, K and V"
    for key in FROM_X:
        if key in data:
            x_form = "X and memory with W_Q, W_K, W_V" if spec.cross else "X with W_Q, W_K, W_V"
            raise SpecError(f"{field}.{key}", f"give either {x_form}, or {given}, not both")
    if rotary.KEY in data:  # the given Q and K (or scores) are the ones the scores use: rotated already, if at all
        them = ("given scores come from q and k rotated already (for RoPE)" if "scores" in data else
                "a section that gives Q, K and V gives them as the scores use them (rotated already, for RoPE)")
        raise SpecError(f"{field}.{rotary.KEY}", f"applies to the queries and keys projected from X; {them}")
    cached = [key for key in ("past_tokens", "past_K", "past_V") if key in data]
    if cached:  # a cache holds keys and values projected earlier from X; a given form gives every key already
        where = "the cached keys' columns in scores (and their rows in V)" if "scores" in data \
            else "the cached rows in K and V"
        raise SpecError(f"{field}.{cached[0]}", f"a KV cache applies to keys and values projected from X; a "
                                                f"section that gives {given.replace(' (and V)', '')} gives every "
                                                f"key: put {where}")
    for key in OF_X:
        if key in data:
            raise SpecError(f"{field}.{key}", f"applies to X, which a section that gives "
                                              f"{given.replace(' (and V)', '')} does not have")
    sizes = {"n": len(tokens), "m": len(keys)}
    if "scores" in data:
        for key in ("Q", "K"):
            if key in data:
                raise SpecError(f"{field}.{key}", "give either Q, K and V, or scores (and V), not both")
        plan = {"scores": ("n", "m", "s"), **({"V": ("m", "v", "v")} if "V" in data else {})}
    else:
        missing = [key for key in "QKV" if key not in data]
        if missing:
            present = " and ".join(key for key in "QKV" if key in data)
            raise SpecError(f"{field}.{missing[0]}", f"missing: give Q, K and V together (this section gives "
                                                     f"{present})")
        plan = {"Q": ("n", "k", "q"), "K": ("m", "k", "k"), "V": ("m", "v", "v")}
    m = fields.matrices(data, field, plan, sizes)
    for key, matrix in m.items():
        fields.rows_match(matrix, len(tokens) if key in ("Q", "scores") else len(keys), f"{field}.{key}",
                          "tokens" if key in ("Q", "scores") else keys_are)
    scale = fields.scale(data, field)
    if "scores" in m:
        if m["scores"].shape[1] != len(keys):
            raise SpecError(f"{field}.scores", f"{m['scores'].shape[1]} columns, but there are {len(keys)} "
                                               f"{keys_are} (one column per key)")
        if scale.mode == "sqrt_d_k" and "d_k" not in data:
            raise SpecError(f"{field}.d_k", "missing: scores scaled by √d_k need d_k (or give scale = false, or "
                                            "a number)")
        d_k = fields.positive_int(data["d_k"], f"{field}.d_k") if "d_k" in data else None
    else:
        if m["Q"].shape[1] != m["K"].shape[1]:
            raise SpecError(f"{field}.K", f"{m['K'].shape[1]} columns, but Q has {m['Q'].shape[1]} "
                                          "(q·k needs equal lengths)")
        d_k = fields.d_k(data, m["K"], field)
    fields.d_k_used(data, scale, "Q" in m and m["Q"].symbolic and m["K"].symbolic, field)
    block = online.parse(data, field, m)
    if block is not None and "V" not in m:
        raise SpecError(f"{field}.softmax", "\"online\" computes the output block by block, so it needs V "
                                            "(without V, use the standard softmax)")
    return spec(tokens=tokens, keys=keys, Q=m.get("Q"), K=m.get("K"), V=m.get("V"), scores=m.get("scores"),
                focus=fields.focus(data.get("focus", "all"), tokens, f"{field}.focus"), d_k=d_k, scale=scale,
                mask=fields.mask(data, len(tokens), field), online=block)


def compute(section: GivenSpec) -> engine.Attention:
    """The attention of the given Q, K, V, or of the given scores (without V: the weights are the end)."""
    focus = tuple(section.tokens.index(t) for t in section.focus.tokens)
    mask = None if section.mask is None else section.mask.values
    divisor = section.scale.divisor(section.d_k)
    stored = {name: getattr(section, name).values for name in "QKV" if getattr(section, name) is not None}
    raw = None if section.scores is None else {i: tuple(section.scores.values.row(i)) for i in focus}
    return engine.attention_of(stored, divisor, focus, mask, raw=raw)


def symbolic(result: engine.Attention) -> bool:
    """Whether a result without values holds symbols (its scores do)."""
    return any(any_symbolic(q.scores) for q in result.queries.values())


def answers(section: GivenSpec, result: engine.Attention, kind: str) -> dict[str, Any]:
    """The answers in `symattn solve`'s schema: the given matrices, each focus query's scores, scaled scores,
    weights and (with values) output."""
    names = "QKV" if section.scores is None else "V" if section.V is not None else ""
    memory = {"memory_tokens": list(section.keys)} if section.cross else {}
    return {"kind": kind, "tokens": list(section.tokens), **memory, **scale_answers(section),
            **online.add_answers(attention_answers(result, section.tokens, names), result, section.tokens,
                                 section.keys, section.online)}


def size(section: GivenSpec) -> Size:
    n, m = len(section.tokens), len(section.keys)
    d = max([1, *(M.shape[1] for M in (section.Q, section.V) if M is not None)])
    return Size("focus", len(section.focus.stepwise), m, d, n * m if section.focus.matrix_form(n) else 0, work=n * m)


def steps(section: GivenSpec, result: engine.Attention, kind: str) -> list[Step]:
    """The worked solution: what is given (Step 1), any mask, each query's steps from its scores (or from its
    scaling), its result when there are values, the matrix form and the heatmap."""
    focus, keys, cross = section.focus, section.keys, section.cross
    masked = section.mask is not None and any(v == 0 for v in section.mask.values)
    whole = sentences.section_facts(kind, masked, scaling=section.scale.mode,
                                    symbolic=symbolic(result) if section.V is None else any_symbolic(result.V))
    queries = {t: sentences.query_facts(whole, t, keys, result.queries[section.tokens.index(t)],
                                        first=t == focus.stepwise[0]) for t in focus.stepwise}
    shown = {name: Shown.input(getattr(section, name)) for name in ("Q", "K", "V", "scores")
             if getattr(section, name) is not None}
    out: list[Step] = [*_opening(section, whole, queries, result), *_given_steps(section, shown, whole)]
    if section.mask is not None:
        out += common.mask_steps(section.mask)
    several = len(focus.stepwise) > 1
    per_query = 2 if section.V is None else 3
    for number, (token, facts) in enumerate(queries.items()):
        i = section.tokens.index(token)
        query, n = result.queries[i], 2 + per_query * number  # Steps 2-4, then 5-7, ... (2-3, 4-5 without V)
        step_keys = _step_keys(facts, cross, several)
        if section.scores is None:
            out += common.attention_steps(keys, shown["Q"].row(i), shown["K"], shown["V"], query, section.d_k,
                                          section.scale, step_keys, facts, n, section.online)
        else:
            out += [Heading(2, "given.step_scores", {"token": Token(token), "n": n}),
                    Paragraph("given.scores_of", {"token": Token(token), "S": Name("S")}),
                    VectorEquation(Name("s"), shown["scores"].row(i)),
                    *common.scaling_steps(section.scale, section.d_k, query, keys, facts, why="given.d_k")]
            if section.online is not None:  # the blocks replace the softmax and the weighted sum
                out += online.steps(keys, shown["V"], query, section.online, facts, n + 1)
            else:
                out += common.softmax_steps(keys, query, step_keys["softmax"], facts, n + 1)
                if section.V is not None:
                    out += common.sum_steps(keys, shown["V"], query, step_keys["sum"], facts, n + 2)
        if section.V is not None:
            out += _result_steps(token, facts, query, result, cross, several, n + 2)
    if focus.matrix_form(len(section.tokens)):
        intro = "matrix.intro" if section.scores is None else "given.matrix_weights" if section.V is None \
            else "given.matrix_scores"
        out += online.matrix_note(section.online)
        out += common.matrix_form_steps(result, len(section.tokens), section.d_k, section.scale, shown.get("Q"),
                                        shown.get("K"), shown.get("V"), ("matrix.heading", intro))
    rows = tuple(section.tokens.index(t) for t in focus.tokens)
    return out + common.heatmap(focus.tokens, keys, result, rows)


def _opening(section: GivenSpec, whole: Facts, queries: dict[str, Facts], result: engine.Attention) -> list[Step]:
    """The part's heading, what the attention does, and what the computation below shows."""
    focus = section.focus
    if section.cross:
        out: list[Step] = [common.part_heading(section, "cross.heading"), Paragraph("cross.intro")]
        if section.scores is None:
            out.append(Paragraph("cross.roles", {"Q": Name("Q"), "K": Name("K"), "V": Name("V")}))
        return out + ([Paragraph("matrix.only", note=True)] if focus.mode == "matrix" else [])
    out = [common.part_heading(section, "self.heading"),
           say(sentences.first_true(whole, "self.intro", "self.intro_masked"), whole)]
    if focus.mode == "matrix":
        return [*out, Paragraph("matrix.only", note=True)]
    token = focus.tokens[0]
    if section.V is None:
        return [*out, Paragraph("given.goal_weights", {"token": Token(token)})]
    first = queries.get(token) or sentences.query_facts(whole, token, section.keys,
                                                        result.queries[section.tokens.index(token)], True)
    return [*out, say(sentences.first_true(first, "self.goal", "self.goal_visible"), first, {"token": Token(token)})]


def _given_steps(section: GivenSpec, shown: dict[str, Shown], whole: Facts) -> list[Step]:
    """Step 1: the given Q, K and V, or the given scores (and V), in tables by token."""
    key_header = "table.encoder_token" if section.cross else "table.token"
    rows = {"q": Name("q", label="t"), "k": Name("k", label="j"), "v": Name("v", label="j"), "t": Formula("t"),
            "j": Formula("j")}
    names = {letter: Name(letter) for letter in "QKV"}
    if section.scores is None:
        if not section.cross:
            return [Heading(2, "given.step1_qkv"),
                    Paragraph("given.qkv", {**names, **rows, "k": Name("k", label="t"), "v": Name("v", label="t")}),
                    TokenTable(("table.token", *names.values()), section.tokens,
                               (shown["Q"], shown["K"], shown["V"]))]
        return [Heading(2, "given.step1_qkv"), Paragraph("given.cross_qkv", {**names, **rows}),
                TokenTable(("table.token", names["Q"]), section.tokens, (shown["Q"],)),
                TokenTable((key_header, names["K"], names["V"]), section.keys, (shown["K"], shown["V"]))]
    out: list[Step] = [
        Heading(2, "given.step1_scores"),
        say(sentences.first_true(whole, "given.scores", "given.scores_unscaled"), whole,
            {"S": Name("S"), "s": Name("s", label="j"), "keys": Tokens(section.keys)}),
        TokenTable(("table.query", "given.scores_column"), section.tokens, (shown["scores"],)),
    ]
    if section.V is None:
        return [*out, Paragraph("given.no_values", note=True)]
    return [*out, Paragraph("given.values", {"V": names["V"], "v": rows["v"], "j": rows["j"]}),
            TokenTable((key_header, names["V"]), section.keys, (shown["V"],))]


def _step_keys(facts: Facts, cross: bool, several: bool) -> dict[str, str]:
    """The headings of one query's steps: its scores, its softmax, its weighted sum."""
    if cross:
        return {part: f"{key}_of" if several else key
                for part, key in {"scores": "cross.step5", "softmax": "cross.step6", "sum": "cross.step7"}.items()}
    return {"scores": sentences.first_true(facts, "self.step3", "self.step3_visible"),
            "softmax": "self.step4_of" if several else "self.step4",
            "sum": "self.step5_of" if several else "self.step5"}


def _result_steps(token: str, facts: Facts, query: engine.QueryAttention, result: engine.Attention, cross: bool,
                  several: bool, sum_step: int) -> list[Step]:
    """The query's output, the weighted sum of its Step `sum_step`, and what it carries."""
    z = Name("z", token)
    if cross:
        return [Heading(2, "cross.result_of" if several else "cross.result", {"token": Token(token)}),
                Paragraph("cross.result_is", {"token": Token(token)}),
                *common.result_step(z, query.output, result.known, facts, sum_step),
                Paragraph("cross.result_meaning", {"token": Token(token)})]
    meaning = sentences.first_true(facts, "self.result_meaning", "self.result_meaning_visible",
                                   "self.result_meaning_single")
    return [Heading(2, "self.result_of" if several else "self.result", {"token": Token(token)}),
            Paragraph("given.result_is", {"token": Token(token)}),
            *common.result_step(z, query.output, result.known, facts, sum_step),
            say(meaning, facts, {"token": Token(token), "keys": Tokens(facts.visible, token), "z": z,
                                 "v": Name("v", facts.visible[0])})]


def figure(section: GivenSpec) -> FlowFigure:
    """The flow from what is given: Q, K and V, or the scores (and V)."""
    from .figure import figure  # the flow's boxes: only a document with the figure needs them

    return figure(section)
