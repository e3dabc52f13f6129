"""Cross-attention: queries from the decoder's tokens X, keys and values from the encoder's outputs (memory).
The article's second part."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ... import engine
from ...document import sentences
from ...document.sentences import say
from ...document.steps import (
    DefinitionTable,
    FlowFigure,
    Formula,
    Heading,
    Name,
    Paragraph,
    RowTimesMatrix,
    Shown,
    Step,
    Token,
    TokenTable,
    VectorEquation,
)
from ...engine import any_symbolic
from ...features.attention import solution as common
from ...features.attention.answers import attention_answers, scale_answers
from ...features.given_forms import feature as given
from ...features.online_softmax import feature as online
from ...numbers import certify
from ...spec import fields
from ...spec.model import Focus, GivenMatrix, Scale, Section
from .. import carried
from ...features.attention import stages as attention_stages
from ..base import Carried, Kind, Size

if TYPE_CHECKING:
    from ...exercises.exercise import Asked
    from ...exercises.levels import Level

# the conditional sentences this folder says, and what must be true of their facts (document/sentences.py)
sentences.contribute({
    "cross.decoder_state": lambda f: f.first,
    "cross.decoder_state_next": lambda f: not f.first,
})


@dataclass(frozen=True)
class CrossAttentionSpec(Section):
    """Cross-attention: queries from decoder tokens X, keys and values from the encoder's memory."""

    kind = "cross_attention"
    tokens: tuple[str, ...]
    X: GivenMatrix
    memory_tokens: tuple[str, ...]
    memory: GivenMatrix
    W_Q: GivenMatrix
    W_K: GivenMatrix
    W_V: GivenMatrix
    focus: Focus
    d_k: int
    scale: Scale = Scale()
    online: int | None = None  # keys per block of the online softmax (softmax = "online"), None: direct


@dataclass(frozen=True)
class GivenCrossAttentionSpec(given.GivenSpec):
    """Cross-attention of given Q (for the tokens), K and V (for the memory tokens), or of given scores
    (features/given_forms/feature.py)."""

    kind = CrossAttentionSpec.kind
    cross = True


class CrossAttentionKind(Kind):
    name = CrossAttentionSpec.kind
    stages = attention_stages.STAGES  # `symattn worksheet --blanks`
    stage_of = attention_stages.stage_of
    keys = frozenset({"kind", "tokens", "X", "memory_tokens", "memory", "W_Q", "W_K", "W_V", "focus", "scale",
                      *fields.SIZE_KEYS, "heading", *given.KEYS, *online.KEYS})
    examinable = True
    exam_shaped = True  # its exam's token count and d_k follow --tokens and --d-k (exam/fair.py)
    shown_as = {"X": "Y"}  # what its document calls a key a chain gives (symattn.pipeline.chain): X is the decoder's Y

    def parse(self, data: dict[str, Any], field: str) -> CrossAttentionSpec | GivenCrossAttentionSpec:
        if given.gives(data):
            return given.parse(GivenCrossAttentionSpec, data, field)
        tokens = fields.tokens(fields.require(data, "tokens", field), f"{field}.tokens")
        memory_tokens = fields.tokens(fields.require(data, "memory_tokens", field), f"{field}.memory_tokens")
        m = fields.matrices(data, field, {"X": ("n", "d", "x"), "memory": ("m", "dm", "h"),
                                          "W_Q": ("d", "k", "w^Q"), "W_K": ("dm", "k", "w^K"),
                                          "W_V": ("dm", "v", "w^V")}, {"n": len(tokens), "m": len(memory_tokens)})
        fields.rows_match(m["X"], len(tokens), f"{field}.X", "tokens")
        fields.rows_match(m["memory"], len(memory_tokens), f"{field}.memory", "memory_tokens")
        fields.check_projections(m, field, m["X"].shape[1], m["memory"].shape[1], "memory")
        fields.d_k_used(data, fields.scale(data, field), m["W_Q"].symbolic and m["W_K"].symbolic, field)
        return CrossAttentionSpec(
            tokens=tokens, X=m["X"], memory_tokens=memory_tokens, memory=m["memory"], W_Q=m["W_Q"],
            W_K=m["W_K"], W_V=m["W_V"], focus=fields.focus(data.get("focus", "all"), tokens, f"{field}.focus"),
            d_k=fields.d_k(data, m["W_K"], field), scale=fields.scale(data, field),
            online=online.parse(data, field, m))

    def compute(self, section: CrossAttentionSpec) -> engine.Attention:
        if isinstance(section, given.GivenSpec):
            return given.compute(section)
        focus = tuple(section.tokens.index(t) for t in section.focus.tokens)
        return engine.attention(section.X.values, section.memory.values, section.W_Q.values,
                                   section.W_K.values, section.W_V.values, section.scale.divisor(section.d_k),
                                   focus)

    def outputs(self, section: CrossAttentionSpec, result: engine.Attention) -> Carried | None:
        return carried.attention_outputs(self, section, result)

    def error_bound(self, section: CrossAttentionSpec, result: engine.Attention, errors: dict[str, float]) \
            -> certify.Bound:
        return certify.attention(carried.rows_error(section, errors, "X"),
                                 carried.rows_error(section, errors, "memory"), section.W_Q, section.W_K,
                                 section.W_V, certify.divisor_of(section.scale, section.d_k),
                                 len(section.memory_tokens), online=section.online is not None).printed

    def inputs(self, section: CrossAttentionSpec, result: engine.Attention) -> Carried | None:
        """The decoder's rows Y (the queries' side; the memory is another section's)."""
        return None if isinstance(section, given.GivenSpec) else carried.start_rows(section.tokens, section.X.values)

    def symbolic(self, result: engine.Attention) -> bool:
        return any_symbolic(result.V) if result.V is not None else given.symbolic(result)

    def steps(self, section: CrossAttentionSpec, result: engine.Attention) -> list[Step]:
        if isinstance(section, given.GivenSpec):
            return given.steps(section, result, self.name)
        # the decoder's representations are Y (rows y_t), the encoder's outputs H (rows h_j): X names the
        # encoder's embeddings in a document that has self-attention too
        y, memory = Shown.input(section.X), Shown.input(section.memory)
        W = common.given_weights(section)
        Q, K, V = common.projections({"Q": y, "K": memory, "V": memory}, W, result).values()
        focus = section.focus
        matrix_only = focus.mode == "matrix"
        whole = sentences.section_facts(self.name, scaling=section.scale.mode, symbolic=self.symbolic(result))
        queries = {t: sentences.query_facts(whole, t, section.memory_tokens, result.queries[section.tokens.index(t)],
                                            first=t == focus.stepwise[0]) for t in focus.stepwise}
        memory_table = TokenTable(("table.encoder_token", "table.encoder_output"), section.memory_tokens, (memory,))
        steps: list[Step] = [
            common.part_heading(section, "cross.heading"),
            Paragraph("cross.intro"),
            *([Paragraph("matrix.only", note=True)] if matrix_only else []),
            Paragraph("cross.roles", {"Q": Name("Q"), "K": Name("K"), "V": Name("V")}),
            Heading(2, "cross.step1"),
            Paragraph("cross.encoder_outputs", {"H": Name("memory"), "h": Name("h", label="j")}),
            memory_table,
            Paragraph("cross.encoder_note", note=True),
            Heading(2, "cross.step2"),
            Paragraph("cross.decoder_is", {"Y": Name("Y"), "y": Name("y", label="t"), "t": Formula("t")}),
        ]
        if matrix_only:
            steps.append(TokenTable(("table.token", "table.decoder_state"), section.tokens, (y,)))
        for token, facts in queries.items():
            steps += [say(sentences.first_true(facts, "cross.decoder_state", "cross.decoder_state_next"), facts,
                          {"token": Token(token)}),
                      VectorEquation(Name("y", token), y.row(section.tokens.index(token)))]
        steps += [
            Paragraph("cross.weights"),
            DefinitionTable(Name("Y"), Name("memory")),
            *common.weight_equations(W),
            Paragraph("note.dummy_weights", note=True),
        ]
        if not matrix_only:
            steps += _projection_steps(section, y, memory, memory_table, W, Q, K, V)
        several = len(focus.tokens) > 1  # several decoder tokens: each heading says whose step it is
        keys = {part: f"{key}_of" if several else key
                for part, key in {"scores": "cross.step5", "softmax": "cross.step6", "sum": "cross.step7"}.items()}
        for number, (token, facts) in enumerate(queries.items()):
            i = section.tokens.index(token)
            query = result.queries[i]
            n = 5 + 3 * number  # each query's Steps continue the numbers: 5-7, then 8-10, ...
            steps += common.attention_steps(section.memory_tokens, Q.row(i), K, V, query, section.d_k,
                                            section.scale, keys, facts, n, section.online)
            steps += [
                Heading(2, "cross.result_of" if several else "cross.result", {"token": Token(token)}),
                Paragraph("cross.result_is", {"token": Token(token)}),
                *common.result_step(Name("z", token), query.output, result.known, facts, n + 2),
                Paragraph("cross.result_meaning", {"token": Token(token)}),
            ]
        if focus.matrix_form(len(section.tokens)):
            steps += online.matrix_note(section.online)
            steps += common.matrix_form_steps(result, len(section.tokens), section.d_k, section.scale, Q, K, V)
        rows = tuple(section.tokens.index(t) for t in focus.tokens)
        steps += common.heatmap(focus.tokens, section.memory_tokens, result, rows)
        return steps

    def figure(self, section: CrossAttentionSpec) -> FlowFigure | None:
        if isinstance(section, given.GivenSpec):
            return given.figure(section)
        from ...features.attention import figure as attention  # the flow's boxes: only a document with the figure

        return attention.figure("cross", "figure.caption_cross", attention.attention_flow(section.scale, cross=True))

    def size(self, section: CrossAttentionSpec) -> Size:
        if isinstance(section, given.GivenSpec):
            return given.size(section)
        n, m = len(section.tokens), len(section.memory_tokens)
        d = max(section.X.shape[1], section.memory.shape[1], section.W_Q.shape[1], section.W_V.shape[1])
        return Size("focus", len(section.focus.stepwise), m, d, n * m if section.focus.matrix_form(n) else 0, work=n * m)

    def answers(self, section: CrossAttentionSpec, result: engine.Attention) -> dict[str, Any]:
        if isinstance(section, given.GivenSpec):
            return given.answers(section, result, self.name)
        return {"kind": self.name, "tokens": list(section.tokens), "memory_tokens": list(section.memory_tokens),
                **scale_answers(section), **online.add_answers(attention_answers(result, section.tokens), result,
                                                              section.tokens, section.memory_tokens, section.online)}

    # ------------------------------------------------------------ exams (each imports the exam modules it uses when
    # an exam asks: a handout need not load them)

    def draw(self, rng: random.Random, level: Level, lang: str) -> dict[str, Any]:
        from ...exercises.levels import draw_sizes, random_matrix

        s, d, d_v = draw_sizes(rng, level, lang), 2, 2
        return {"kind": self.name, "tokens": [s.extra], "X": random_matrix(rng, 1, d, level.inputs),
                "memory_tokens": s.tokens, "memory": random_matrix(rng, s.n, d, level.inputs),
                "W_Q": random_matrix(rng, d, s.d_k, level.weights), "W_K": random_matrix(rng, d, s.d_k, level.weights),
                "W_V": random_matrix(rng, d, d_v, level.weights), "focus": s.extra}

    def plausible(self, data: dict[str, Any]) -> bool:
        from ...exercises import fairness as checks

        (X, memory, W_Q, W_K, W_V), places = checks.integer_matrices(
            [data[k] for k in ("X", "memory", "W_Q", "W_K", "W_V")])
        return checks.plausible_runs([(X, memory, W_Q, W_K, W_V)], data["tokens"].index(data["focus"]), places)

    WORK_BAND: ClassVar[dict[str, tuple[int, int]]] = {"easy": (6, 11), "standard": (20, 28)}

    def hand_products(self, data: dict[str, Any]) -> int:
        from ...exercises import work

        return work.count(work.attention_pairs(work.matrix(data["X"]), work.matrix(data["memory"]),
                                               *(work.matrix(data[k]) for k in ("W_Q", "W_K", "W_V")), 0))

    def work_band(self, difficulty: str) -> tuple[int, int] | None:
        return self.WORK_BAND.get(difficulty)

    def friendly(self, section: CrossAttentionSpec, result: engine.Attention) -> bool:
        from ...exercises import fairness as checks

        return checks.friendly_runs([(section.X.values, section.memory.values, result)],
                                    section.tokens.index(section.focus.tokens[0]))

    def exercise(self, section: CrossAttentionSpec, result: engine.Attention, digits: int) -> Asked:
        from ...exercises.exercise import (
            AnswerTable,
            AnswerVector,
            Asked,
            GivenNamed,
            GivenTable,
            GivenVector,
            attention_work,
            focus_params,
            query_parts,
        )

        focus = section.focus.tokens[0]
        query = result.queries[section.tokens.index(focus)]
        qkv = [AnswerVector(Name("q", section.tokens[0]), Shown(result.Q, known=result.known)),
               AnswerTable(("table.encoder_token", Name("K"), Name("V")), section.memory_tokens,
                           (Shown(result.K, known=result.known), Shown(result.V, known=result.known)))]
        given = (GivenVector(Name("y", section.tokens[0]), section.tokens[0], section.X),
                 GivenTable("table.encoder_token", "table.encoder_output", section.memory_tokens, section.memory),
                 *(GivenNamed(Name(f"W_{c}"), getattr(section, f"W_{c}")) for c in "QKV"))
        return Asked(("exam.given_cross", {"token": Token(section.tokens[0])}), given, focus, section.d_k,
                     query_parts(focus, query, qkv, _question, focus_params(focus), digits,
                                 attention_work(1, len(section.memory_tokens), section.X.shape[1], section.d_k,
                                                section.W_V.shape[1])),
                     tuple(q.scaled for q in result.queries.values()))


def _question(part: str) -> str:
    """The language key of a part's question: part (a) speaks of both sides."""
    return "exam.part_qkv_cross" if part == "qkv" else f"exam.part_{part}"


def _projection_steps(section: CrossAttentionSpec, y: Shown, memory: Shown, memory_table: Step,
                      W: dict[str, Shown], Q: Shown, K: Shown, V: Shown) -> list[Step]:
    """Steps 3 and 4: each query, then each key and value, written out term by term."""
    steps: list[Step] = [Heading(2, "cross.step3")]
    for token in section.focus.tokens:
        i = section.tokens.index(token)
        steps.append(RowTimesMatrix(Name("q", token), Name("y", token), y.row(i), Name("W_Q"), W["Q"], Q.row(i)))
    steps += [Heading(2, "cross.step4"), Paragraph("cross.encoder_again"), memory_table, Paragraph("cross.keys")]
    for j, token in enumerate(section.memory_tokens):
        steps.append(RowTimesMatrix(Name("k", token), Name("h", token), memory.row(j), Name("W_K"), W["K"], K.row(j)))
    steps.append(Paragraph("cross.values"))
    for j, token in enumerate(section.memory_tokens):
        steps.append(RowTimesMatrix(Name("v", token), Name("h", token), memory.row(j), Name("W_V"), W["V"], V.row(j)))
    return steps


CROSS_ATTENTION = CrossAttentionKind()
