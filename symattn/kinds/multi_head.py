"""Multi-head attention for one focus token: each head's output (given, or computed from its own weights), their
concatenation, and its projection by W_O. The article's third part."""

from __future__ import annotations

import random
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from .. import engine
from ..engine import any_symbolic
from ..errors import SpecError
from ..model import (
    Concat,
    DotProducts,
    FlowFigure,
    Heading,
    HeadWeights,
    MatrixEquation,
    Name,
    Paragraph,
    Result,
    RowTimesMatrix,
    Shown,
    Step,
    Token,
    TokenTable,
    VectorEquation,
    WeightedSum,
)
from ..spec import fields
from ..spec.model import GivenMatrix, Scale, Section
from . import sentences
from . import steps as common
from .answers import attention_answers, exact_texts, row_texts
from .base import Kind, Size

if TYPE_CHECKING:
    from ..exam.exercise import Asked
    from ..exam.levels import Level

_HEAD_KEYS = {"output", "W_Q", "W_K", "W_V", "scale", "d_k", "d_v"}


@dataclass(frozen=True)
class HeadSpec:
    """One head of multi-head attention: either its output is given, or its own weights are."""

    output: GivenMatrix | None = None
    W_Q: GivenMatrix | None = None
    W_K: GivenMatrix | None = None
    W_V: GivenMatrix | None = None
    d_k: int | None = None
    scale: Scale = Scale()


@dataclass(frozen=True)
class MultiHeadSpec(Section):
    """Multi-head attention for one focus token: head outputs, concatenation, projection by W_O."""

    kind = "multi_head"
    focus: str
    heads: tuple[HeadSpec, ...]
    W_O: GivenMatrix
    tokens: tuple[str, ...] = ()
    X: GivenMatrix | None = None


class MultiHeadKind(Kind):
    name = MultiHeadSpec.kind
    keys = frozenset({"kind", "heading", "focus", "heads", "W_O", "tokens", "X", "d_model"})
    examinable = True

    def parse(self, data: dict[str, Any], field: str) -> MultiHeadSpec:
        tokens: tuple[str, ...] = ()
        X = None
        if "tokens" in data or "X" in data:
            tokens = fields.tokens(fields.require(data, "tokens", field), f"{field}.tokens")
            X = fields.matrices(data, field, {"X": ("n", "d", "x")}, {"n": len(tokens)})["X"]
            fields.rows_match(X, len(tokens), f"{field}.X", "tokens")
        focus = fields.name(fields.require(data, "focus", field), f"{field}.focus", "one token name")
        if tokens and focus not in tokens:
            raise SpecError(f"{field}.focus", f"no token {focus!r} in tokens{fields.suggest(focus, tokens)}")
        heads_data = fields.require(data, "heads", field)
        if not isinstance(heads_data, list) or not heads_data:
            raise SpecError(f"{field}.heads", "expected a non-empty list of heads")
        heads = tuple(_parse_head(head, f"{field}.heads[{h}]", h + 1, X) for h, head in enumerate(heads_data))
        W_O = fields.matrix(fields.require(data, "W_O", field), f"{field}.W_O")
        width = sum(head.output.shape[1] if head.output is not None else head.W_V.shape[1] for head in heads)
        if W_O.shape[0] != width:
            raise SpecError(f"{field}.W_O",
                                   f"{W_O.shape[0]} rows, but the concatenated heads have {width} entries")
        return MultiHeadSpec(focus=focus, heads=heads, W_O=W_O, tokens=tokens, X=X)

    def compute(self, section: MultiHeadSpec) -> engine.MultiHead:
        i = section.tokens.index(section.focus) if section.tokens else 0
        heads = [None if head.output is not None else engine.attention(
                     section.X.values, section.X.values, head.W_Q.values, head.W_K.values, head.W_V.values,
                     head.scale.divisor(head.d_k), (i,)) for head in section.heads]
        outputs = tuple(head.output.values if result is None else result.queries[i].output
                        for head, result in zip(section.heads, heads, strict=True))
        return engine.multi_head(outputs, section.W_O.values, tuple(heads))

    def symbolic(self, result: engine.MultiHead) -> bool:
        return any_symbolic(result.output)

    def steps(self, section: MultiHeadSpec, mh: engine.MultiHead) -> list[Step]:
        token = section.focus
        steps: list[Step] = [
            common.part_heading(section, "multi.heading"),
            Paragraph("multi.intro"),
            Heading(2, "multi.step1"),
            Paragraph("multi.each_head"),
            HeadWeights(len(section.heads)),
        ]
        if section.X is not None:  # heads computed from weights work on the section's embeddings
            steps += [Paragraph("multi.embeddings", {"X": Name("X")}),
                      TokenTable(("table.token", "table.embedding"), section.tokens, (Shown.input(section.X),))]
        outputs: list[Shown] = []
        if any(head.output is not None for head in section.heads):
            steps.append(Paragraph("multi.assume", {"token": Token(token)}))
        if any(head.output is None for head in section.heads):  # the query the computed heads derive
            steps.append(Paragraph("multi.computed_for", {"token": Token(token), "a": Name("a"), "w": Name("w"),
                                                          "z": Name("z")}))
        for h, (head, result) in enumerate(zip(section.heads, mh.attentions, strict=True), start=1):
            if result is None:
                output = Shown.input(head.output)
                steps += [Paragraph("multi.head_label", {"h": h}), VectorEquation(Name("z", token, head=h), output)]
            else:
                output, head_steps = _computed_head(section, h, head, result)
                steps += head_steps
            outputs.append(output)
        concat = Shown(mh.concat, max(o.decimals for o in outputs), known=mh.known)
        W_O = Shown.input(section.W_O)
        steps += [
            Heading(2, "multi.step2"),
            Paragraph("multi.concat"),
            Concat(Name("z", label="concat"), tuple(outputs), concat),
            Paragraph("multi.concat_size", {"size": mh.concat.cols}),
            Heading(2, "multi.step3"),
            Paragraph("multi.project", {"W_O": Name("W_O")}),
            MatrixEquation(Name("W_O"), W_O),
            RowTimesMatrix(Name("z", label="final"), Name("z", label="concat"), concat, Name("W_O"), W_O,
                           common.product(concat, W_O, mh.output, mh.known)),
            Heading(2, "multi.result"),
            Paragraph("multi.result_is", {"token": Token(token)}),
            Result(Name("z", label="final"), common.product(concat, W_O, mh.output, mh.known)),
            Paragraph("multi.result_meaning"),
        ]
        return steps

    def figure(self, section: MultiHeadSpec) -> FlowFigure:
        return FlowFigure("multi", heads=len(section.heads), computed=section.X is not None)

    def size(self, section: MultiHeadSpec) -> Size:
        """Each head with its own weights derives the focus token's query over every token."""
        computed = [head for head in section.heads if head.output is None]
        d = max((max(section.X.shape[1], h.W_Q.shape[1], h.W_V.shape[1]) for h in computed), default=0)
        return Size("heads", len(computed), len(section.tokens), d)

    def answers(self, section: MultiHeadSpec, result: engine.MultiHead) -> dict[str, Any]:
        return {
            "kind": self.name,
            "focus": section.focus,
            "heads": [row_texts(head, result.known) for head in result.heads],
            "head_details": [None if a is None else attention_answers(a, section.tokens) for a in result.attentions],
            "concat": row_texts(result.concat, result.known),
            "output": row_texts(result.output, result.known),
            "exact": {"heads": [exact_texts(head) for head in result.heads], "concat": exact_texts(result.concat),
                      "output": exact_texts(result.output)},
        }

    # ------------------------------------------------------------ exams (each imports the exam modules it uses when
    # an exam asks: a handout need not load them)

    def draw(self, rng: random.Random, level: Level, lang: str) -> dict[str, Any]:
        from ..exam.levels import draw_sizes, random_matrix

        s, d = draw_sizes(rng, level, lang), 2
        head_d_k = 1 if s.d_k == 4 else s.d_k  # two small heads: d_k = 1 (easy) or 2 (standard), one value each
        heads = [{"W_Q": random_matrix(rng, d, head_d_k, level.weights),
                  "W_K": random_matrix(rng, d, head_d_k, level.weights),
                  "W_V": random_matrix(rng, d, 1, level.weights)} for _ in range(2)]
        return {"kind": self.name, "tokens": s.tokens, "X": random_matrix(rng, s.n, d, level.inputs), "focus": s.focus,
                "heads": heads, "W_O": random_matrix(rng, 2, 2, level.weights)}

    def plausible(self, data: dict[str, Any]) -> bool:
        from ..exam import checks

        weights = [h[k] for h in data["heads"] for k in ("W_Q", "W_K", "W_V")]
        (X, *heads), places = checks.integer_matrices([data["X"], *weights])
        if all(Decimal(v) == 0 for row_ in data["W_O"] for v in row_):
            return False
        runs = [(X, X, *heads[3 * h:3 * h + 3]) for h in range(len(data["heads"]))]
        return checks.plausible_runs(runs, data["tokens"].index(data["focus"]), places)

    def friendly(self, section: MultiHeadSpec, result: engine.MultiHead) -> bool:
        from ..exam import checks

        if all(v == 0 for v in section.W_O.values):
            return False
        X = section.X.values
        return checks.friendly_runs([(X, X, a) for a in result.attentions], section.tokens.index(section.focus))

    def exercise(self, section: MultiHeadSpec, result: engine.MultiHead, digits: int) -> Asked:
        from ..exam.exercise import AnswerTable, AnswerVector, Asked, GivenNamed, GivenTable, focus_params, part, row

        focus = section.focus
        i = section.tokens.index(focus)
        heads = list(enumerate(result.attentions, start=1))
        params = focus_params(focus)
        names = {"scores": "s", "scaled": "a", "weights": "w"}
        picks = {"scores": lambda q: Shown(row(q.scores), uniform=False, known=q.softmax.known),
                 "scaled": lambda q: Shown(row(q.scaled), uniform=False, known=q.softmax.known),
                 "weights": lambda q: Shown(row(q.softmax.weights), known=q.softmax.known)}
        parts = [part("qkv", "exam.part_qkv_heads", params, [
            AnswerTable(("table.token", Name("Q", head=h), Name("K", head=h), Name("V", head=h)), section.tokens,
                        tuple(Shown(M, known=a.known) for M in (a.Q, a.K, a.V))) for h, a in heads], digits)]
        for key in ("scores", "scaled", "weights"):
            parts.append(part(key, f"exam.part_{key}_heads", params,
                              [AnswerVector(Name(names[key], head=h), picks[key](a.queries[i])) for h, a in heads],
                              digits))
        outputs = [AnswerVector(Name("z", focus, head=h), Shown(head, known=result.known))
                   for h, head in enumerate(result.heads, start=1)]
        outputs += [AnswerVector(Name("z", label="concat"), Shown(result.concat, known=result.known)),
                    AnswerVector(Name("z", label="final"), Shown(result.output, known=result.known))]
        parts.append(part("output", "exam.part_output_heads", params, outputs, digits))
        given = [GivenTable("table.token", "table.embedding", section.tokens, section.X)]
        given += [GivenNamed(Name(f"W_{c}", head=h), getattr(head, f"W_{c}"))
                  for h, head in enumerate(section.heads, start=1) for c in "QKV"]
        given.append(GivenNamed(Name("W_O"), section.W_O))
        return Asked(("exam.given_multi", {}), tuple(given), focus, section.heads[0].d_k, tuple(parts),
                     tuple(a.queries[i].scaled for a in result.attentions))


def _parse_head(data: Any, field: str, number: int, X: GivenMatrix | None) -> HeadSpec:
    if not isinstance(data, dict):
        raise SpecError(field, "expected a table with 'output' or with 'W_Q', 'W_K', 'W_V'")
    fields.check_keys(data, _HEAD_KEYS, field)
    if "output" in data:
        extra = sorted(set(data) - {"output"})
        if extra:
            raise SpecError(f"{field}.{extra[0]}", "a head with a given output takes no weights")
        output = data["output"]
        return HeadSpec(output=fields.matrix([output] if isinstance(output, list) else output, f"{field}.output"))
    if X is None:
        raise SpecError(field, "a head computed from weights needs the section's 'tokens' and 'X'")
    m = fields.matrices(data, field, {"W_Q": ("d", "k", f"w^{{Q({number})}}"), "W_K": ("d", "k", f"w^{{K({number})}}"),
                                      "W_V": ("d", "v", f"w^{{V({number})}}")}, {"d": X.shape[1]})
    fields.check_projections(m, field, X.shape[1], X.shape[1], "X")
    return HeadSpec(W_Q=m["W_Q"], W_K=m["W_K"], W_V=m["W_V"], d_k=fields.d_k(data, m["W_K"], field),
                    scale=fields.scale(data, field))


def _computed_head(section: MultiHeadSpec, h: int, head: HeadSpec,
                   result: engine.Attention) -> tuple[Shown, list[Step]]:
    """A head with its own weights: its projections and its attention for the focus token, compactly."""
    i = section.tokens.index(section.focus)
    x = Shown.input(section.X)
    W = common.given_weights(head)
    QKV = common.projections(dict.fromkeys("QKV", x), W, result)
    query = result.queries[i]
    steps: list[Step] = [Paragraph("multi.head_label", {"h": h})]
    steps += common.weight_equations(W, head=h)
    steps.append(TokenTable(("table.token", Name("Q", head=h), Name("K", head=h), Name("V", head=h)),
                            section.tokens, (QKV["Q"], QKV["K"], QKV["V"])))
    key_names = tuple(Name("k", t, head=h) for t in section.tokens)
    output = Shown(query.output, known=result.known)
    steps += [
        DotProducts(Name("q", section.focus, head=h), key_names, QKV["Q"].row(i), QKV["K"].rows, query.scores,
                    result.known),
        *common.scaling_steps(head.scale, head.d_k, query, section.tokens,
                              sentences.section_facts(MultiHeadSpec.kind, scaling=head.scale.mode))[-1:],
        common.softmax_step(query.softmax, section.tokens),
        WeightedSum(query.softmax.weights, QKV["V"].rows, query.output, section.tokens, result.known),
        VectorEquation(Name("z", section.focus, head=h), output),
        *common.heatmap((section.focus,), section.tokens, result, (i,))[-1:],  # the head's weights, no heading
    ]
    return output, steps


MULTI_HEAD = MultiHeadKind()
