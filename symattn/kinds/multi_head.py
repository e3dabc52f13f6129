"""Multi-head attention: each head's output (given, or computed from its own weights), their concatenation, and its
projection by W_O. For one focus token as the article's third part; for several tokens, all of them or the matrix
form, every token as torch.nn.MultiheadAttention computes it (without biases): each head's attention, the
concatenation [A_1 V_1 | … | A_h V_h], its product with W_O."""

from __future__ import annotations

import random
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from sympy import ImmutableMatrix

from .. import engine
from ..engine import any_symbolic
from ..errors import SpecError
from ..model import (
    Concat,
    DotProducts,
    Facts,
    FlowFigure,
    Heading,
    HeadWeights,
    MatrixConcat,
    MatrixEquation,
    MatrixFormStep,
    MatrixProduct,
    Name,
    Paragraph,
    Result,
    RowTimesMatrix,
    Shown,
    Step,
    Token,
    Tokens,
    TokenTable,
    VectorEquation,
    WeightedSum,
)
from ..spec import fields
from ..spec.model import Focus, GivenMatrix, Mask, Positions, Rope, Scale, Section
from . import rope as rotary
from . import sentences
from . import steps as common
from .answers import attention_answers, exact_texts, row_texts
from .base import Kind, Size

if TYPE_CHECKING:
    from ..exam.exercise import Asked
    from ..exam.levels import Level

_HEAD_KEYS = {"output", "W_Q", "W_K", "W_V", "scale", "d_k", "d_v", "mask", "rope"}
# What a section sets for every computed head unless the head sets its own; and what only a section sets (it
# changes X, which all heads share).
_HEAD_SETTINGS = ("scale", "d_k", "mask", "rope")
_SECTION_SETTINGS = ("positional_encoding", "P")


@dataclass(frozen=True)
class HeadSpec:
    """One head of multi-head attention: either its output is given, or its own weights are."""

    output: GivenMatrix | None = None
    W_Q: GivenMatrix | None = None
    W_K: GivenMatrix | None = None
    W_V: GivenMatrix | None = None
    d_k: int | None = None
    scale: Scale = Scale()
    mask: Mask | None = None
    rope: Rope | None = None


@dataclass(frozen=True)
class MultiHeadSpec(Section):
    """Multi-head attention for its focus tokens: head outputs, concatenation, projection by W_O. Heads with given
    outputs have one focus token; computed heads any focus (a token, a list, "all" or "matrix")."""

    kind = "multi_head"
    focus: Focus
    heads: tuple[HeadSpec, ...]
    W_O: GivenMatrix
    tokens: tuple[str, ...] = ()
    X: GivenMatrix | None = None
    positions: Positions | None = None

    @property
    def token(self) -> str:
        """The first focus token (the only one of a one-token section)."""
        return self.focus.tokens[0]

    @property
    def several(self) -> bool:
        """Whether the section derives more than one token (or the matrix form alone)."""
        return len(self.focus.tokens) > 1 or self.focus.mode == "matrix"

    @property
    def matrix_form(self) -> bool:
        """Whether each head is shown in matrix form, every token at once (focus "all" or "matrix")."""
        return self.focus.matrix_form(len(self.tokens))

    @property
    def indices(self) -> tuple[int, ...]:
        """The focus tokens' indices in tokens (0 for heads with given outputs, which have no tokens)."""
        return tuple(self.tokens.index(t) for t in self.focus.tokens) if self.tokens else (0,)

    @property
    def inputs(self) -> ImmutableMatrix:
        """X, or X + P with positional encodings: what every computed head projects."""
        return self.X.values if self.positions is None else ImmutableMatrix(self.X.values + self.positions.P.values)


class MultiHeadKind(Kind):
    name = MultiHeadSpec.kind
    keys = frozenset({"kind", "heading", "focus", "heads", "W_O", "tokens", "X", "d_model", *_HEAD_SETTINGS,
                      *_SECTION_SETTINGS})
    examinable = True

    def parse(self, data: dict[str, Any], field: str) -> MultiHeadSpec:
        tokens: tuple[str, ...] = ()
        X = positions = None
        if "tokens" in data or "X" in data:
            tokens = fields.tokens(fields.require(data, "tokens", field), f"{field}.tokens")
            X = fields.matrices(data, field, {"X": ("n", "d", "x")}, {"n": len(tokens)})["X"]
            fields.rows_match(X, len(tokens), f"{field}.X", "tokens")
            positions = fields.positions(data, X, field)
        else:
            for key in (*_HEAD_SETTINGS, *_SECTION_SETTINGS):
                if key in data:
                    raise SpecError(f"{field}.{key}", "applies to heads computed from weights, which need the "
                                                      "section's 'tokens' and 'X'")
        focus_data = fields.require(data, "focus", field)
        if tokens:
            focus = fields.focus(focus_data, tokens, f"{field}.focus")
        else:
            focus = Focus("tokens", (fields.name(focus_data, f"{field}.focus", "one token name"),))
        heads_data = fields.require(data, "heads", field)
        if not isinstance(heads_data, list) or not heads_data:
            raise SpecError(f"{field}.heads", "expected a non-empty list of heads")
        heads = tuple(_parse_head(head, f"{field}.heads[{h}]", h + 1, X, data, field, positions)
                      for h, head in enumerate(heads_data))
        W_O = fields.matrix(fields.require(data, "W_O", field), f"{field}.W_O")
        width = sum(head.output.shape[1] if head.output is not None else head.W_V.shape[1] for head in heads)
        if W_O.shape[0] != width:
            raise SpecError(f"{field}.W_O",
                                   f"{W_O.shape[0]} rows, but the concatenated heads have {width} entries")
        section = MultiHeadSpec(focus=focus, heads=heads, W_O=W_O, tokens=tokens, X=X, positions=positions)
        given = next((h for h, head in enumerate(heads) if head.output is not None), None)
        if section.several and given is not None:
            raise SpecError(f"{field}.focus", f"heads[{given}] gives its output for one token: a section with "
                                              "given head outputs derives one token (give focus one token)")
        return section

    def compute(self, section: MultiHeadSpec) -> engine.MultiHeadRows:
        focus = section.indices
        attentions = tuple(None if head.output is not None else _head_attention(section.inputs, head, focus)
                           for head in section.heads)
        outputs = {i: tuple(head.output.values if a is None else a.queries[i].output
                            for head, a in zip(section.heads, attentions, strict=True)) for i in focus}
        return engine.multi_head_rows(focus, outputs, section.W_O.values, attentions)

    def symbolic(self, result: engine.MultiHeadRows) -> bool:
        return any_symbolic(result.output)

    def steps(self, section: MultiHeadSpec, result: engine.MultiHeadRows) -> list[Step]:
        token = section.token
        steps: list[Step] = [
            common.part_heading(section, "multi.heading"),
            Paragraph("multi.intro"),
            Heading(2, "multi.step1"),
            Paragraph("multi.each_head"),
            HeadWeights(len(section.heads)),
        ]
        x = None
        if section.X is not None:  # heads computed from weights work on the section's embeddings
            x = (Shown.input(section.X) if section.positions is None
                 else Shown(section.inputs, max(section.X.decimals, section.positions.P.decimals)))
            steps += [Paragraph("multi.embeddings", {"X": Name("X")}),
                      TokenTable(("table.token", "table.embedding"), section.tokens, (Shown.input(section.X),)),
                      *common.positional_steps(section.positions, section.tokens, x, titled=False)]
        if any(head.output is not None for head in section.heads):
            steps.append(Paragraph("multi.assume", {"token": Token(token)}))
        if any(head.output is None for head in section.heads):  # the queries the computed heads derive
            steps.append(_computed_for(section))
        shared = _shared_mask(section)
        if shared is not None:
            steps += [*common.mask_steps(shared, Name("M")), Paragraph("multi_rows.mask_every_head")]
        if section.matrix_form:
            return steps + _matrix_steps(section, result, x, shared)
        outputs: dict[str, list[Shown]] = {t: [] for t in section.focus.tokens}
        for h, (head, attention) in enumerate(zip(section.heads, result.attentions, strict=True), start=1):
            if attention is None:
                output = Shown.input(head.output)
                steps += [Paragraph("multi.head_label", {"h": h}), VectorEquation(Name("z", token, head=h), output)]
                outputs[token].append(output)
            else:
                head_outputs, head_steps = _computed_head(section, h, head, attention, x, shared)
                steps += head_steps
                for t, output in head_outputs.items():
                    outputs[t].append(output)
        if section.several:
            return steps + _token_rows(section, result, outputs)
        mh = result.first
        concat = Shown(mh.concat, max(o.decimals for o in outputs[token]), known=mh.known)
        W_O = Shown.input(section.W_O)
        steps += [
            Heading(2, "multi.step2"),
            Paragraph("multi.concat"),
            Concat(Name("z", label="concat"), tuple(outputs[token]), concat),
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
        return FlowFigure("multi", positions=section.positions is not None, heads=len(section.heads),
                          computed=section.X is not None, rows=section.matrix_form)

    def size(self, section: MultiHeadSpec) -> Size:
        """Each head with its own weights derives each focus token's query over every token (one token: as the
        article), or shows its matrix form (n × n scores, weights and outputs), then the concatenation and W_O."""
        computed = [head for head in section.heads if head.output is None]
        d = max((max(section.X.shape[1], h.W_Q.shape[1], h.W_V.shape[1]) for h in computed), default=0)
        n = len(section.tokens)
        if not section.several:
            return Size("heads", len(computed), n, d)
        if not section.matrix_form:
            return Size("focus", len(computed) * len(section.focus.tokens), n, d,
                        what="queries of heads derived one by one")
        width, out = section.W_O.shape
        rows = n * out * (2 if section.focus.mode == "all" else 1)  # "all": each token's row of the product too
        return Size("focus", 0, n, d, len(computed) * n * n + n * width + rows)

    def answers(self, section: MultiHeadSpec, result: engine.MultiHeadRows) -> dict[str, Any]:
        """The first focus token's heads, concatenation and output (a one-token section's answers); with several
        focus tokens, every token's under `queries` too."""
        first = _row_answers(result.first)
        answers = {"kind": self.name, "focus": section.token, "heads": first["heads"],
                   "head_details": [None if a is None else attention_answers(a, section.tokens)
                                    for a in result.attentions],
                   "concat": first["concat"], "output": first["output"], "exact": first["exact"]}
        if section.several:
            answers["queries"] = {section.tokens[i]: _row_answers(row) for i, row in result.rows.items()}
        return answers

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

    def friendly(self, section: MultiHeadSpec, result: engine.MultiHeadRows) -> bool:
        from ..exam import checks

        if all(v == 0 for v in section.W_O.values):
            return False
        X = section.X.values
        return checks.friendly_runs([(X, X, a) for a in result.attentions], section.tokens.index(section.token))

    def exercise(self, section: MultiHeadSpec, rows: engine.MultiHeadRows, digits: int) -> Asked:
        from ..exam.exercise import AnswerTable, AnswerVector, Asked, GivenNamed, GivenTable, focus_params, part, row

        focus, result = section.token, rows.first
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


def _parse_head(data: Any, field: str, number: int, X: GivenMatrix | None, section: dict[str, Any],
                section_field: str, positions: Positions | None) -> HeadSpec:
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

    def where(key: str) -> tuple[dict[str, Any], str]:
        """The head's own setting, else the section's (for every head), with the field that gave it."""
        return (data, field) if key in data or key not in section else (section, section_field)

    n = X.shape[0]
    (d_k, d_k_at), (mask, mask_at), (rope, rope_at) = where("d_k"), where("mask"), where("rope")
    return HeadSpec(W_Q=m["W_Q"], W_K=m["W_K"], W_V=m["W_V"], d_k=fields.d_k(d_k, m["W_K"], d_k_at),
                    scale=fields.scale(*where("scale")), mask=fields.mask(mask, n, mask_at),
                    rope=_parse_rope(rope, rope_at, section, {"X": X, **m}, positions))


def _parse_rope(data: dict[str, Any], field: str, section: dict[str, Any], m: dict[str, GivenMatrix],
                positions: Positions | None) -> Rope | None:
    """A head's RoPE (its own or the section's), as a self-attention section's: not with positional encodings,
    which the section's X would then add as well (kinds/rope.py refuses the pair, and its sentences say so)."""
    if data.get("rope", False) is not False and positions is not None:
        other = "P" if "P" in section else "positional_encoding"
        raise SpecError(f"{field}.rope", f"RoPE gives the positions, so the section's {other} may not be given as "
                                         "well (RoPE models add no positional encoding to X)")
    return rotary.parse(data, field, m, m["X"].shape[0], None)


def _head_attention(X: ImmutableMatrix, head: HeadSpec, focus: tuple[int, ...]) -> engine.Attention:
    """A computed head's attention for the focus queries: its projections of X, its scaling and mask, and RoPE's
    rotation of its queries and keys when it has one (positions 0, 1, … unless given)."""
    divisor = head.scale.divisor(head.d_k)
    mask = None if head.mask is None else head.mask.values
    if head.rope is None:
        return engine.attention(X, X, head.W_Q.values, head.W_K.values, head.W_V.values, divisor, focus, mask)
    stored = {c: X * getattr(head, f"W_{c}").values for c in "QKV"}
    positions = head.rope.at(X.rows)
    return engine.rope.rotary_attention(stored, positions, positions, head.rope, divisor, focus, mask)


@dataclass(frozen=True)
class _Projected:
    """A rotated head's projections before RoPE (its attention's Q and K are the rotated ones)."""

    Q: ImmutableMatrix
    K: ImmutableMatrix
    V: ImmutableMatrix
    known: engine.Numbers


def _computed_for(section: MultiHeadSpec) -> Paragraph:
    """What the computed heads derive: one token's output, several tokens' one after the other, or every token
    at once in matrix form."""
    names = {"a": Name("a"), "w": Name("w"), "z": Name("z")}
    if section.matrix_form:
        return Paragraph("multi_rows.computed_all", {"X": Name("X" if section.positions is None else "Xp")})
    if section.several:
        return Paragraph("multi_rows.computed_for_tokens", {"tokens": Tokens(section.focus.tokens), **names})
    return Paragraph("multi.computed_for", {"token": Token(section.token), **names})


def _shared_mask(section: MultiHeadSpec) -> Mask | None:
    """The mask every computed head uses, when they all use one (shown once, as M)."""
    masks = {head.mask for head in section.heads if head.output is None}
    return masks.pop() if len(masks) == 1 else None


def _head_facts(section: MultiHeadSpec, head: HeadSpec) -> Facts:
    masked = head.mask is not None and any(v == 0 for v in head.mask.values)
    return sentences.section_facts(MultiHeadSpec.kind, masked, section.positions is not None, head.scale.mode,
                                   rope=head.rope is not None)


def _head_start(section: MultiHeadSpec, h: int, head: HeadSpec, result: engine.Attention, x: Shown,
                shared: Mask | None) -> tuple[dict[str, Shown], list[Step]]:
    """A computed head's weights, its Q, K, V for every token, its own mask (when the heads' masks differ) and
    its RoPE rotation; the projections its scores are taken from (the rotated ones with RoPE)."""
    W = common.given_weights(head)
    QKV = common.projections(dict.fromkeys("QKV", x), W, result)
    plain = QKV
    if head.rope is not None:
        plain = common.projections(dict.fromkeys("QKV", x), W, _Projected(
            *(section.inputs * getattr(head, f"W_{c}").values for c in "QKV"), result.known))
    steps: list[Step] = [Paragraph("multi.head_label", {"h": h}), *common.weight_equations(W, head=h),
                         TokenTable(("table.token", Name("Q", head=h), Name("K", head=h), Name("V", head=h)),
                                    section.tokens, (plain["Q"], plain["K"], plain["V"]))]
    if head.mask is not None and shared is None:
        steps += common.mask_steps(head.mask, Name("M", head=h))
    if head.rope is not None:  # RoPE's steps (kinds/rope.py), compactly: no token's rotation one by one, and
        # without their Step heading (they are part of the head's block)
        steps += rotary.rope_steps(head.rope, section.tokens, plain, QKV, section.focus.tokens,
                                   _head_facts(section, head), 0, stepwise=False, head=h)[1:]
    return QKV, steps


def _computed_head(section: MultiHeadSpec, h: int, head: HeadSpec, result: engine.Attention, x: Shown,
                   shared: Mask | None) -> tuple[dict[str, Shown], list[Step]]:
    """A head with its own weights: its projections and its attention for each focus token, compactly; its
    output for each."""
    QKV, steps = _head_start(section, h, head, result, x, shared)
    q, k = (rotary.ROTATED["q"], rotary.ROTATED["k"]) if head.rope is not None else ("q", "k")
    key_names = tuple(Name(k, t, head=h) for t in section.tokens)
    outputs: dict[str, Shown] = {}
    for token in section.focus.tokens:
        i = section.tokens.index(token)
        query = result.queries[i]
        outputs[token] = Shown(query.output, known=result.known)
        if section.several:
            steps.append(Paragraph("multi_rows.query_of", {"token": Token(token)}))
        steps += [
            DotProducts(Name(q, token, head=h), key_names, QKV["Q"].row(i), QKV["K"].rows, query.scores,
                        result.known),
            *common.scaling_steps(head.scale, head.d_k, query, section.tokens, _head_facts(section, head))[-1:],
            common.softmax_step(query.softmax, section.tokens),
            WeightedSum(query.softmax.weights, QKV["V"].rows, query.output, section.tokens, result.known),
            VectorEquation(Name("z", token, head=h), outputs[token]),
        ]
    rows = section.indices
    steps += common.heatmap(section.focus.tokens, section.tokens, result, rows)[-1:]  # the head's weights
    return outputs, steps


def _token_rows(section: MultiHeadSpec, result: engine.MultiHeadRows,
                outputs: dict[str, list[Shown]]) -> list[Step]:
    """Several focus tokens, one after the other: each one's concatenation, its product with W_O, its output."""
    W_O = Shown.input(section.W_O)
    steps: list[Step] = [Heading(2, "multi.step2"), Paragraph("multi_rows.concat_tokens")]
    finals = {}
    for token, i in zip(section.focus.tokens, section.indices, strict=True):
        row = result.rows[i]
        concat = Shown(row.concat, max(o.decimals for o in outputs[token]), known=row.known)
        finals[token] = (concat, common.product(concat, W_O, row.output, row.known))
        steps.append(Concat(Name("z", token, label="concat"), tuple(outputs[token]), concat))
    steps += [Paragraph("multi.concat_size", {"size": result.first.concat.cols}),
              Heading(2, "multi.step3"),
              Paragraph("multi.project", {"W_O": Name("W_O")}),
              MatrixEquation(Name("W_O"), W_O)]
    for token, (concat, final) in finals.items():
        steps.append(RowTimesMatrix(Name("z", token, label="final"), Name("z", token, label="concat"), concat,
                                    Name("W_O"), W_O, final))
    steps.append(Heading(2, "multi.result"))
    for token, (_, final) in finals.items():
        steps += [Paragraph("multi_rows.result_of", {"token": Token(token)}),
                  Result(Name("z", token, label="final"), final)]
    return [*steps, Paragraph("multi_rows.result_meaning")]


def _matrix_steps(section: MultiHeadSpec, result: engine.MultiHeadRows, x: Shown,
                  shared: Mask | None) -> list[Step]:
    """Every token at once, as torch.nn.MultiheadAttention computes it: each head's matrix form (its output
    Z^(h) = A^(h) V^(h), one row per token), their concatenation as a matrix, its product with W_O; with focus
    "all" each token's row of that product written out too."""
    n = len(section.tokens)
    steps: list[Step] = []
    heads = []
    for h, (head, attention) in enumerate(zip(section.heads, result.attentions, strict=True), start=1):
        QKV, head_steps = _head_start(section, h, head, attention, x, shared)
        form = engine.matrix_form([attention.queries[i] for i in range(n)])
        heads.append(Shown(form.output, known=attention.known))
        steps += [*head_steps, Paragraph("multi_rows.matrix_form", {"h": h}),
                  MatrixFormStep(QKV["Q"], QKV["K"], QKV["V"], form, head.scale, head.d_k,
                                 head.scale.divisor(head.d_k), attention.known, head=h, rotated=head.rope is not None),
                  *common.heatmap(section.tokens, section.tokens, attention, tuple(range(n)))[-1:]]
    known = result.known
    concat = Shown(result.concat, max(z.decimals for z in heads), known=known)
    W_O = Shown.input(section.W_O)
    output = common.product(concat, W_O, result.output, known)
    steps += [Heading(2, "multi.step2"),
              Paragraph("multi_rows.concat_matrix", {"Z": Name("Z", label="concat")}),
              MatrixConcat(Name("Z", label="concat"), tuple(Name("Z", head=h) for h in range(1, len(heads) + 1)),
                           concat),
              Paragraph("multi.concat_size", {"size": result.concat.cols}),
              Heading(2, "multi.step3"),
              Paragraph("multi_rows.project_matrix", {"Z": Name("Z", label="concat"), "W_O": Name("W_O")}),
              MatrixEquation(Name("W_O"), W_O)]
    symbolic = any_symbolic(result.output)
    if section.focus.mode == "all" and not symbolic:  # each token's row of the product, term by term
        steps.append(Paragraph("multi_rows.rows_of_product", {"Z": Name("Z", label="concat"), "W_O": Name("W_O")}))
        for t, token in enumerate(section.tokens):
            steps.append(RowTimesMatrix(Name("z", token, label="final"), Name("z", token, label="concat"),
                                        concat.row(t), Name("W_O"), W_O, output.row(t)))
    else:  # the matrix form alone: the product as one matrix
        steps.append(MatrixProduct(Name("Z", label="final"), Name("Z", label="concat"), concat, Name("W_O"), W_O,
                                   output))
    steps.append(Heading(2, "multi.result"))
    if symbolic:  # the outputs are the product's formula above
        steps.append(Paragraph("multi_rows.result_symbolic", {"Z": Name("Z", label="final"), "W_O": Name("W_O")}))
    else:
        steps += [Paragraph("multi_rows.result_matrix", {"Z": Name("Z", label="final")}),
                  MatrixEquation(Name("Z", label="final"), output)]
    return [*steps, Paragraph("multi_rows.result_meaning")]


def _row_answers(row: engine.MultiHead) -> dict[str, Any]:
    """One query's head outputs, concatenation and output, as decimals and exactly."""
    return {"heads": [row_texts(head, row.known) for head in row.heads], "concat": row_texts(row.concat, row.known),
            "output": row_texts(row.output, row.known),
            "exact": {"heads": [exact_texts(head) for head in row.heads], "concat": exact_texts(row.concat),
                      "output": exact_texts(row.output)}}


MULTI_HEAD = MultiHeadKind()
