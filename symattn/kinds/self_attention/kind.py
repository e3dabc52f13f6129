"""Self-attention over one sequence: Q, K and V all come from X (plus positional encodings), with an optional
mask. The article's first part."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from sympy import ImmutableMatrix

from ... import engine
from ...document import sentences
from ...document.sentences import say
from ...document.steps import (
    DefinitionTable,
    Facts,
    FlowFigure,
    Formula,
    Heading,
    Name,
    Paragraph,
    Shown,
    Step,
    Token,
    TokenTable,
    VectorEquation,
)
from ...engine import any_symbolic
from ...features.attention import solution as common
from ...features.attention.answers import attention_answers, positional_answers, positional_exact, scale_answers
from ...features.given_forms import feature as given
from ...features.kv_cache import feature as cache
from ...features.online_softmax import feature as online
from ...features.rope import feature as rotary
from ...numbers import certify
from ...spec import fields
from ...spec.model import Cache, Focus, GivenMatrix, Mask, Positions, Rope, Scale, Section
from .. import carried
from ...features.attention import stages as attention_stages
from ..base import Carried, Kind, Size

if TYPE_CHECKING:
    from ...exercises.exercise import Asked
    from ...exercises.levels import Level

# the conditional sentences this folder says, and what must be true of their facts (document/sentences.py)
sentences.contribute({
    "self.intro": lambda f: not f.masked,
    "self.intro_masked": lambda f: f.masked,
    "self.goal": sentences.sees_all,
    "self.goal_visible": lambda f: not sentences.sees_all(f),
    "self.for_example": lambda f: f.first,
    "self.for_next": lambda f: not f.first,
    "self.embedding_of": lambda f: not f.positional,
    "self.input_of": lambda f: f.positional,
    "self.no_positional": lambda f: not f.positional and not f.rotated and not f.masked,
    "self.no_positional_masked": lambda f: not f.positional and not f.rotated and f.masked,  # a decoder's
    "self.step3": lambda f: sentences.sees_all(f) and f.token in f.keys,
    "self.step3_visible": lambda f: not sentences.sees_all(f),
    "self.result_from": lambda f: not f.positional,
    "self.result_from_input": lambda f: f.positional,
    "self.result_meaning": lambda f: sentences.sees_all(f) and sentences.several(f),
    "self.result_meaning_visible": lambda f: not sentences.sees_all(f) and sentences.several(f),
    "self.result_meaning_single": lambda f: len(f.visible) == 1,
})


@dataclass(frozen=True)
class SelfAttentionSpec(Section):
    """Self-attention over one sequence: Q, K, V all come from X (+ P)."""

    kind = "self_attention"
    tokens: tuple[str, ...]
    X: GivenMatrix
    W_Q: GivenMatrix
    W_K: GivenMatrix
    W_V: GivenMatrix
    focus: Focus
    d_k: int
    scale: Scale = Scale()
    mask: Mask | None = None
    positions: Positions | None = None
    online: int | None = None  # keys per block of the online softmax (softmax = "online"), None: direct
    cache: Cache | None = None  # a KV cache: the tokens are then the new ones, after the cached positions
    rope: Rope | None = None  # RoPE: q and k rotated for their positions (features/rope/feature.py)

    @property
    def inputs(self) -> ImmutableMatrix:
        """X, or X + P with positional encodings: what the projections use."""
        return self.X.values if self.positions is None else ImmutableMatrix(self.X.values + self.positions.P.values)


@dataclass(frozen=True)
class GivenSelfAttentionSpec(given.GivenSpec):
    """Self-attention of given Q, K and V, or of given scores (features/given_forms/feature.py)."""

    kind = SelfAttentionSpec.kind


class SelfAttentionKind(Kind):
    name = SelfAttentionSpec.kind
    stages = attention_stages.STAGES  # `symattn worksheet --blanks`
    stage_of = attention_stages.stage_of
    keys = frozenset({"kind", "tokens", "X", "W_Q", "W_K", "W_V", "focus", "scale", "mask", "positional_encoding",
                      "P", *fields.SIZE_KEYS, "heading", *given.KEYS, *online.KEYS, "rope", *cache.KEYS})
    examinable = True
    exam_shaped = True  # its exam's token count and d_k follow --tokens and --d-k (exam/fair.py)

    def parse(self, data: dict[str, Any], field: str) -> SelfAttentionSpec | GivenSelfAttentionSpec:
        if given.gives(data):
            return given.parse(GivenSelfAttentionSpec, data, field)
        tokens = fields.tokens(fields.require(data, "tokens", field), f"{field}.tokens")
        m = fields.matrices(data, field, {"X": ("n", "d", "x"), "W_Q": ("d", "k", "w^Q"), "W_K": ("d", "k", "w^K"),
                                          "W_V": ("d", "v", "w^V")}, {"n": len(tokens)})
        fields.rows_match(m["X"], len(tokens), f"{field}.X", "tokens")
        fields.check_projections(m, field, m["X"].shape[1], m["X"].shape[1], "X")
        cached, mask = cache.parse(data, field, tokens, m["W_K"], m["W_V"])
        positions = fields.positions(data, m["X"], field, cache.past(cached))
        fields.d_k_used(data, fields.scale(data, field), m["W_Q"].symbolic and m["W_K"].symbolic, field)
        return SelfAttentionSpec(
            tokens=tokens, X=m["X"], W_Q=m["W_Q"], W_K=m["W_K"], W_V=m["W_V"],
            focus=fields.focus(data.get("focus", "all"), tokens, f"{field}.focus"),
            d_k=fields.d_k(data, m["W_K"], field), scale=fields.scale(data, field),
            mask=mask, positions=positions, cache=cached, online=online.parse(data, field, m),
            rope=rotary.parse(data, field, m, len(tokens), positions, cache.past(cached)))

    def compute(self, section: SelfAttentionSpec) -> engine.Attention:
        if isinstance(section, given.GivenSpec):
            return given.compute(section)
        X = section.inputs
        focus = tuple(section.tokens.index(t) for t in section.focus.tokens)
        if section.cache is not None:  # a decoding step: the cached keys and values first
            return cache.attention(_new(section), section.cache, section.scale.divisor(section.d_k), focus,
                                   section.mask, section.rope)
        mask = None if section.mask is None else section.mask.values
        if section.rope is not None:
            return rotary.attention(X, section.W_Q.values, section.W_K.values, section.W_V.values, section.rope,
                                    section.scale.divisor(section.d_k), focus, mask)
        return engine.attention(X, X, section.W_Q.values, section.W_K.values, section.W_V.values,
                                   section.scale.divisor(section.d_k), focus, mask)

    def outputs(self, section: SelfAttentionSpec, result: engine.Attention) -> Carried | None:
        return carried.attention_outputs(self, section, result)

    def error_bound(self, section: SelfAttentionSpec, result: engine.Attention, errors: dict[str, float]) \
            -> certify.Bound:
        x = carried.rows_error(section, errors, "X", section.positions)
        keys = len(section.tokens) + (len(section.cache.tokens) if section.cache is not None else 0)
        return certify.attention(x, x, section.W_Q, section.W_K, section.W_V,
                                 certify.divisor_of(section.scale, section.d_k), keys, section.rope is not None,
                                 carried.cached_sizes(section.cache), section.online is not None).printed

    def inputs(self, section: SelfAttentionSpec, result: engine.Attention) -> Carried | None:
        return None if isinstance(section, given.GivenSpec) else carried.start_rows(section.tokens, section.inputs)

    def symbolic(self, result: engine.Attention) -> bool:
        return any_symbolic(result.V) if result.V is not None else given.symbolic(result)

    def steps(self, section: SelfAttentionSpec, result: engine.Attention) -> list[Step]:
        if isinstance(section, given.GivenSpec):
            return given.steps(section, result, self.name)
        P = section.positions
        # the rows the projections use: x_t of X, or x̃_t of X̃ = X + P with positional encodings
        x = (Shown.input(section.X) if P is None
             else Shown(section.inputs, max(section.X.decimals, P.P.decimals)))
        rows = "x" if P is None else "xp"
        W = common.given_weights(section)
        rope = section.rope
        # with RoPE the table shows Q and K before the rotation; the rope steps then rotate them
        QKV = common.projections(dict.fromkeys("QKV", x), W, result if rope is None else rotary.unrotated(
            section.inputs, section.W_Q.values, section.W_K.values, result))
        rotated = None if rope is None else {c: Shown(getattr(result, c), known=result.known) for c in "QK"}
        cached, seen = section.cache, cache.key_tokens(section.cache, section.tokens)  # the keys' tokens
        new, QKV = cache.shown(QKV, cached) if cached else (QKV, QKV)  # the new tokens', and all keys and values
        scores_from = QKV if rotated is None else rotated
        focus = section.focus
        whole = self.facts(section, result)
        queries = {t: sentences.query_facts(whole, t, seen, result.queries[section.tokens.index(t)],
                                            first=t == focus.stepwise[0]) for t in focus.stepwise}
        goal = [Paragraph("matrix.only", note=True)] if focus.mode == "matrix" else []
        if not goal:
            first = queries.get(focus.tokens[0]) or sentences.query_facts(
                whole, focus.tokens[0], seen, result.queries[section.tokens.index(focus.tokens[0])], True)
            goal = [say(sentences.first_true(first, "self.goal", "self.goal_visible"), first,
                        {"token": Token(focus.tokens[0])})]
        steps: list[Step] = [
            common.part_heading(section, "self.heading"),
            cache.intro(cached, section.tokens) if cached else say(sentences.first_true(whole, "self.intro",
                                                                                        "self.intro_masked"), whole),
            *goal,
            Heading(2, "self.step1"),
            TokenTable(("table.token", "table.embedding"), section.tokens, (Shown.input(section.X),)),
            *([] if section.X.symbolic else [Paragraph("note.dummy_embeddings", note=True)]),
            Paragraph("self.x_is", {"X": Name("X"), "x": Name("x", label="t"), "t": Formula("t")}),
            *common.positional_steps(section.positions, section.tokens, x),
            *([cache.positional(cached, section.tokens)] if cached and P is not None and P.mode == "sinusoidal"
              else []),
            Heading(2, "cache.step2" if cached else "self.step2", {"Q": Name("Q"), "K": Name("K"), "V": Name("V")}),
            Paragraph("cache.projections" if cached else "self.projections"),
            *([] if P is not None or rope is not None else [Paragraph("cache.no_positional", note=True) if cached
                                                            else say("self.no_positional_masked" if whole.masked
                                                                     else "self.no_positional", whole, note=True)]),
            *([] if rope is None else [say("rope.later", whole, {"n": 3}, note=True)]),
            DefinitionTable(Name(rows.upper() if P is None else "Xp"), Name(rows.upper() if P is None else "Xp")),
            *common.weight_equations(W),
            Paragraph("note.dummy_weights", note=True),
        ]
        for token, facts in queries.items():
            i = section.tokens.index(token)
            lead = "self.for_the_token" if len(section.tokens) == 1 else sentences.first_true(
                facts, "self.for_example", "self.for_next")  # one token: no "for example"
            steps += [say(lead, facts, {"token": Token(token)}),
                      say(sentences.first_true(facts, "self.embedding_of", "self.input_of"), facts,
                          {"token": Token(token), "X": Name("Xp")}),
                      VectorEquation(Name(rows, token), x.row(i))]
            steps += common.projection_steps(token, Name(rows, token), x.row(i), W,
                                             {k: v.row(i) for k, v in new.items()}, "self.projection_of")
        steps += [
            Paragraph("cache.new_tokens" if cached else "self.all_tokens"),
            TokenTable(("table.token", Name("Q"), Name("K"), Name("V")), section.tokens,
                       (new["Q"], new["K"], new["V"])),
        ]
        if cached:  # RoPE's rotation of the new tokens (Step 3), the cache they join, and its mask
            steps += [*([] if rope is None else cache.rotation_steps(rope, cached, section.tokens, new, rotated, focus,
                                                                     whole)),
                      *cache.table_steps(cached, section.tokens, QKV if rope is None else {**QKV, "K": rotated["K"]},
                                         rotated=rope is not None),
                      *cache.mask_steps(cached, section.tokens, section.mask, whole)]
        elif section.mask is not None:
            steps += common.mask_steps(section.mask)
        if rope is not None and not cached:  # Step 3: the rotation of q and k
            steps += rotary.rope_steps(rope, section.tokens, QKV, rotated, focus.stepwise, whole, 3,
                                       stepwise=focus.mode != "matrix")
        several = len(focus.stepwise) > 1
        for number, (token, facts) in enumerate(queries.items()):
            i = section.tokens.index(token)
            query = result.queries[i]
            # each query's Steps continue the numbers: 3-5, then 6-8, ... (4-6, 7-9, ... after RoPE's Step 3)
            n = 3 + 3 * number + (rope is not None)
            keys = {"scores": sentences.first_true(facts, "self.step3", "self.step3_visible"),
                    "softmax": "self.step4_of" if several else "self.step4",
                    "sum": "self.step5_of" if several else "self.step5"}
            rope_keys = {} if rope is None else {"letters": ("qh", "kh"), "after_scores": tuple(
                cache.relative_steps(rope, cached, section.tokens, token, new, query.scores, facts) if cached
                else rotary.relative_steps(rope, section.tokens, token, QKV, query.scores, facts))}
            if rope is not None:
                keys["query"] = "rope.query_is"
            steps += common.attention_steps(seen, scores_from["Q"].row(i), scores_from["K"], QKV["V"],
                                            query, section.d_k, section.scale, keys, facts, n, section.online,
                                            **rope_keys)
            said_from = sentences.first_true(facts, "self.result_from", "self.result_from_input")
            steps += common.query_result_steps(token, "self.result_of" if several else "self.result", said_from,
                                               (Name(rows, token), x.row(i)), query.output, result.known, facts, n + 2)
        if focus.matrix_form(len(section.tokens)):
            steps += online.matrix_note(section.online)
            steps += common.matrix_form_steps(result, len(section.tokens), section.d_k, section.scale,
                                              scores_from["Q"], scores_from["K"], QKV["V"],
                                              cache.MATRIX_FORM if cached else common.MATRIX_FORM, rope is not None)
        if cached:  # the check: the whole sequence recomputed without the cache gives the same rows
            whole_sequence = cache.recomputed(_new(section), cached, section.scale.divisor(section.d_k), section.mask,
                                              rope)
            steps += cache.check_steps(cached, section.tokens, result, whole_sequence, section.mask, focus.tokens)
        rows_shown = tuple(section.tokens.index(t) for t in focus.tokens)
        steps += common.heatmap(focus.tokens, seen, result, rows_shown)
        return steps

    def facts(self, section: SelfAttentionSpec, result: engine.Attention) -> Facts:
        """The section's facts: masked (some key hidden from some query), positional encodings, scaling, symbols."""
        masked = section.mask is not None and any(v == 0 for v in section.mask.values)
        return sentences.section_facts(self.name, masked, section.positions is not None, section.scale.mode,
                                       self.symbolic(result), rotated=section.rope is not None)

    def figure(self, section: SelfAttentionSpec) -> FlowFigure | None:
        if isinstance(section, given.GivenSpec):
            return given.figure(section)
        from .figure import figure  # the flow's boxes: only a document with the figure needs them

        return figure(section)

    def size(self, section: SelfAttentionSpec) -> Size:
        if isinstance(section, given.GivenSpec):
            return given.size(section)
        n, keys = len(section.tokens), len(section.tokens) + cache.past(section.cache)
        d = max(section.X.shape[1], section.W_Q.shape[1], section.W_V.shape[1])
        return Size("focus", len(section.focus.stepwise), keys, d, n * keys if section.focus.matrix_form(n) else 0,
                    work=n * keys)

    def answers(self, section: SelfAttentionSpec, result: engine.Attention) -> dict[str, Any]:
        if isinstance(section, given.GivenSpec):
            return given.answers(section, result, self.name)
        answers = online.add_answers(attention_answers(result, section.tokens), result, section.tokens,
                                     cache.key_tokens(section.cache, section.tokens), section.online)
        if section.rope is not None:  # Q and K before the rotation, Q_rotated and K_rotated after it, and rope
            plain = attention_answers(rotary.unrotated(section.inputs, section.W_Q.values, section.W_K.values,
                                                       result), section.tokens)
            answers.update(rotary.rope_answers(section.rope, plain, answers, len(section.tokens),
                                               section.W_Q.shape[1], cache.past(section.cache)))
        if section.positions is not None:  # P and X + P are claimable too (symattn check)
            answers["exact"] = {**positional_exact(section), **answers["exact"]}
        return {"kind": self.name, "tokens": list(section.tokens), **cache.answers(section.cache, section.tokens),
                **scale_answers(section), **positional_answers(section), **answers}

    # ------------------------------------------------------------ exams (each imports the exam modules it uses when
    # an exam asks: a handout need not load them)

    def draw(self, rng: random.Random, level: Level, lang: str) -> dict[str, Any]:
        from ...exercises.levels import draw_sizes, random_matrix

        s, d, d_v = draw_sizes(rng, level, lang), 2, 2
        return {"kind": self.name, "tokens": s.tokens, "X": random_matrix(rng, s.n, d, level.inputs),
                "W_Q": random_matrix(rng, d, s.d_k, level.weights), "W_K": random_matrix(rng, d, s.d_k, level.weights),
                "W_V": random_matrix(rng, d, d_v, level.weights), "focus": s.focus}

    def plausible(self, data: dict[str, Any]) -> bool:
        from ...exercises import fairness as checks

        (X, W_Q, W_K, W_V), places = checks.integer_matrices([data[k] for k in ("X", "W_Q", "W_K", "W_V")])
        return checks.plausible_runs([(X, X, W_Q, W_K, W_V)], data["tokens"].index(data["focus"]), places)

    WORK_BAND: ClassVar[dict[str, tuple[int, int]]] = {"easy": (6, 11), "standard": (22, 32)}

    def hand_products(self, data: dict[str, Any]) -> int:
        from ...exercises import work

        X = work.matrix(data["X"])
        return work.count(work.attention_pairs(X, X, *(work.matrix(data[k]) for k in ("W_Q", "W_K", "W_V")),
                                               data["tokens"].index(data["focus"])))

    def work_band(self, difficulty: str) -> tuple[int, int] | None:
        return self.WORK_BAND.get(difficulty)

    def friendly(self, section: SelfAttentionSpec, result: engine.Attention) -> bool:
        from ...exercises import fairness as checks

        X = section.X.values
        return checks.friendly_runs([(X, X, result)], section.tokens.index(section.focus.tokens[0]))

    def exercise(self, section: SelfAttentionSpec, result: engine.Attention, digits: int) -> Asked:
        from ...exercises.exercise import (
            AnswerTable,
            Asked,
            GivenNamed,
            GivenTable,
            attention_work,
            focus_params,
            query_parts,
        )

        focus, n = section.focus.tokens[0], len(section.tokens)
        query = result.queries[section.tokens.index(focus)]
        qkv = AnswerTable(("table.token", Name("Q"), Name("K"), Name("V")), section.tokens,
                          tuple(Shown(M, known=result.known) for M in (result.Q, result.K, result.V)))
        given = (GivenTable("table.token", "table.embedding", section.tokens, section.X),
                 *(GivenNamed(Name(f"W_{c}"), getattr(section, f"W_{c}")) for c in "QKV"))
        return Asked(("exam.given_self", {}), given, focus, section.d_k,
                     query_parts(focus, query, [qkv], lambda part: f"exam.part_{part}", focus_params(focus), digits,
                                 attention_work(n, n, section.X.shape[1], section.d_k, section.W_V.shape[1])),
                     tuple(q.scaled for q in result.queries.values()))


def _new(section: SelfAttentionSpec) -> dict[str, ImmutableMatrix]:
    """The section's own tokens' Q, K and V (with a KV cache: the new tokens')."""
    return {c: engine.project(section.inputs, getattr(section, f"W_{c}").values) for c in "QKV"}


SELF_ATTENTION = SelfAttentionKind()
