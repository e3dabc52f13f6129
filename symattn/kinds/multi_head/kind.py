"""Multi-head attention: each head's output (given, or computed from its own weights), their concatenation, and its
projection by W_O. For one focus token as the article's third part; for several tokens, all of them or the matrix
form, every token as torch.nn.MultiheadAttention computes it (without biases): each head's attention, the
concatenation [A_1 V_1 | … | A_h V_h], its product with W_O."""

from __future__ import annotations

import random
from decimal import Decimal
from typing import TYPE_CHECKING, Any, ClassVar

from sympy import ImmutableMatrix

from ... import engine
from ...document.steps import (
    Concat,
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
)
from ...engine import any_symbolic
from ...errors import SpecError
from ...features.attention import solution as common
from ...features.attention.answers import (
    attention_answers,
    exact_texts,
    positional_answers,
    positional_exact,
    row_texts,
)
from ...features.rope import feature as rotary
from ...numbers import certify
from ...spec import fields
from ...spec.model import Focus, GivenMatrix, Positions, Rope
from .. import carried
from ..base import Carried, Kind, Size
from . import solution as heads
from .engine import MultiHeadRows, multi_head_rows
from .spec import HeadSpec, MultiHeadSpec

if TYPE_CHECKING:
    from ...exercises.exercise import Asked
    from ...exercises.levels import Level

_HEAD_KEYS = {"output", "W_Q", "W_K", "W_V", "scale", "d_k", "d_v", "mask", "rope"}
# What a section sets for every computed head unless the head sets its own; and what only a section sets (it
# changes X, which all heads share).
_HEAD_SETTINGS = ("scale", "d_k", "mask", "rope")
_SECTION_SETTINGS = ("positional_encoding", "P")


class MultiHeadKind(Kind):
    name = MultiHeadSpec.kind
    keys = frozenset({"kind", "heading", "focus", "heads", "W_O", "tokens", "X", "d_model", *_HEAD_SETTINGS,
                      *_SECTION_SETTINGS})
    examinable = True
    stages = ("output",)  # `symattn worksheet --blanks`: z · W_O (its heads' outputs are given)

    def stage_of(self, step: Step) -> str | None:
        return "output" if isinstance(step, RowTimesMatrix) else None
    exam_shaped = True  # its exam's token count and d_k follow --tokens and --d-k (exam/fair.py)

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

    def compute(self, section: MultiHeadSpec) -> MultiHeadRows:
        focus = section.indices
        attentions = tuple(None if head.output is not None else _head_attention(section.inputs, head, focus)
                           for head in section.heads)
        outputs = {i: tuple(head.output.values if a is None else a.queries[i].output
                            for head, a in zip(section.heads, attentions, strict=True)) for i in focus}
        return multi_head_rows(focus, outputs, section.W_O.values, attentions)

    def outputs(self, section: MultiHeadSpec, result: MultiHeadRows) -> Carried:
        return carried.combined_outputs(self, section, result)

    def error_bound(self, section: MultiHeadSpec, result: MultiHeadRows, errors: dict[str, float]) \
            -> certify.Bound:
        x = carried.rows_error(section, errors, "X", section.positions)
        heads = [certify.attention(x, x, h.W_Q, h.W_K, h.W_V, certify.divisor_of(h.scale, h.d_k or h.W_Q.shape[1]),
                                   len(section.tokens), h.rope is not None) for h in section.heads]
        return certify.combined(heads, section.W_O).printed

    def inputs(self, section: MultiHeadSpec, result: MultiHeadRows) -> Carried | None:
        return carried.start_rows(section.tokens, None if section.X is None else section.inputs)

    def symbolic(self, result: MultiHeadRows) -> bool:
        return any_symbolic(result.output)

    def steps(self, section: MultiHeadSpec, result: MultiHeadRows) -> list[Step]:
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
            steps.append(heads.computed_for(section))
        shared = heads.shared_mask(section)
        if shared is not None:
            steps += [*common.mask_steps(shared, Name("M")), Paragraph("multi_rows.mask_every_head")]
        if section.matrix_form:
            return steps + heads.matrix_steps(section, result, x, shared)
        outputs: dict[str, list[Shown]] = {t: [] for t in section.focus.tokens}
        for h, (head, attention) in enumerate(zip(section.heads, result.attentions, strict=True), start=1):
            if attention is None:
                output = Shown.input(head.output)
                steps += [Paragraph("multi.head_label", {"h": h}), VectorEquation(Name("z", token, head=h), output)]
                outputs[token].append(output)
            else:
                head_outputs, head_steps = heads.computed_head(section, h, head, attention, x, shared)
                steps += head_steps
                for t, output in head_outputs.items():
                    outputs[t].append(output)
        if section.several:
            return steps + heads.token_rows(section, result, outputs)
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
        from .figure import figure  # the flow's boxes: only a document with the figure needs them

        return figure(section)

    def size(self, section: MultiHeadSpec) -> Size:
        """Each head with its own weights derives each focus token's query over every token (one token: as the
        article), or shows its matrix form (n × n scores, weights and outputs), then the concatenation and W_O."""
        computed = [head for head in section.heads if head.output is None]
        d = max((max(section.X.shape[1], h.W_Q.shape[1], h.W_V.shape[1]) for h in computed), default=0)
        n = len(section.tokens)
        work = max(1, len(computed) * n * n)  # (given head outputs: W_O's product alone)
        if not section.several:
            return Size("heads", len(computed), n, d, work=work)
        if not section.matrix_form:
            return Size("focus", len(computed) * len(section.focus.tokens), n, d,
                        what="queries of heads derived one by one", work=work)
        width, out = section.W_O.shape
        stepwise = len(computed) * n if section.focus.mode == "all" else 0  # "all": each token's steps first
        return Size("focus", stepwise, n, d, len(computed) * n * n + n * (width + out),
                    what="queries of heads derived one by one", work=work)

    def answers(self, section: MultiHeadSpec, result: MultiHeadRows) -> dict[str, Any]:
        """The first focus token's heads, concatenation and output (a one-token section's answers, as before), and
        every focus token's under `queries`, keyed by token."""
        first = _row_answers(result.first)
        answers = {"kind": self.name, "focus": section.token, **positional_answers(section), "heads": first["heads"],
                   "head_details": [_head_details(section, head, a)
                                    for head, a in zip(section.heads, result.attentions, strict=True)],
                   "concat": first["concat"], "output": first["output"],
                   "exact": {**positional_exact(section), **first["exact"]}}  # P, X + P: claimable (check)
        answers["queries"] = ({section.tokens[i]: _row_answers(row) for i, row in result.rows.items()}
                              if section.several else {section.token: first})
        return answers

    # ------------------------------------------------------------ exams (each imports the exam modules it uses when
    # an exam asks: a handout need not load them)

    def draw(self, rng: random.Random, level: Level, lang: str) -> dict[str, Any]:
        from ...exercises.levels import draw_sizes, random_matrix

        s, d = draw_sizes(rng, level, lang), 2
        heads = [{"W_Q": random_matrix(rng, d, s.d_k, level.weights),  # two heads of the exam's d_k, one value
                  "W_K": random_matrix(rng, d, s.d_k, level.weights),  # each

                  "W_V": random_matrix(rng, d, 1, level.weights)} for _ in range(2)]
        return {"kind": self.name, "tokens": s.tokens, "X": random_matrix(rng, s.n, d, level.inputs), "focus": s.focus,
                "heads": heads, "W_O": random_matrix(rng, 2, 2, level.weights)}

    def plausible(self, data: dict[str, Any]) -> bool:
        from ...exercises import fairness as checks

        weights = [h[k] for h in data["heads"] for k in ("W_Q", "W_K", "W_V")]
        (X, *heads), places = checks.integer_matrices([data["X"], *weights])
        if not checks.mixes([[Decimal(v) for v in row_] for row_ in data["W_O"]]):
            return False
        runs = [(X, X, *heads[3 * h:3 * h + 3]) for h in range(len(data["heads"]))]
        return checks.plausible_runs(runs, data["tokens"].index(data["focus"]), places)

    WORK_BAND: ClassVar[dict[str, tuple[int, int]]] = {"easy": (10, 18), "standard": (54, 70)}

    def hand_products(self, data: dict[str, Any]) -> int:
        from ...exercises import work

        X, focus = work.matrix(data["X"]), data["tokens"].index(data["focus"])
        pairs = [pair for h in data["heads"] for pair in work.attention_pairs(
            X, X, *(work.matrix(h[k]) for k in ("W_Q", "W_K", "W_V")), focus)]
        return work.count(pairs + [(0.5, w) for row_ in work.matrix(data["W_O"]) for w in row_])  # z · W_O

    def work_band(self, difficulty: str) -> tuple[int, int] | None:
        return self.WORK_BAND.get(difficulty)

    def friendly(self, section: MultiHeadSpec, result: MultiHeadRows) -> bool:
        from ...exercises import fairness as checks

        if not checks.mixes(section.W_O.values.tolist()):
            return False
        X = section.X.values
        return checks.friendly_runs([(X, X, a) for a in result.attentions], section.tokens.index(section.token))

    def exercise(self, section: MultiHeadSpec, rows: MultiHeadRows, digits: int) -> Asked:
        from ...exercises.exercise import (
            AnswerTable,
            AnswerVector,
            Asked,
            GivenNamed,
            GivenTable,
            Work,
            attention_work,
            focus_params,
            part,
            row,
        )

        focus, result = section.token, rows.first
        i = section.tokens.index(focus)
        heads = list(enumerate(result.attentions, start=1))
        params = focus_params(focus)
        names = {"scores": "s", "scaled": "a", "weights": "w"}
        picks = {"scores": lambda q: Shown(row(q.scores), uniform=False, known=q.softmax.known),
                 "scaled": lambda q: Shown(row(q.scaled), uniform=False, known=q.softmax.known),
                 "weights": lambda q: Shown(row(q.softmax.weights), known=q.softmax.known)}
        n, first = len(section.tokens), section.heads[0]
        work = attention_work(n, n, section.X.shape[1], first.d_k, first.W_V.shape[1], len(section.heads))
        W_O = section.W_O.shape[0] * section.W_O.shape[1]  # z · W_O: one product per entry of W_O
        work["output"] += Work(W_O, W_O)
        parts = [part("qkv", "exam.part_qkv_heads", params, [
            AnswerTable(("table.token", Name("Q", head=h), Name("K", head=h), Name("V", head=h)), section.tokens,
                        tuple(Shown(M, known=a.known) for M in (a.Q, a.K, a.V))) for h, a in heads], digits,
            work["qkv"])]
        for key in ("scores", "scaled", "weights"):
            parts.append(part(key, f"exam.part_{key}_heads", params,
                              [AnswerVector(Name(names[key], head=h), picks[key](a.queries[i])) for h, a in heads],
                              digits, work[key]))
        # each head's output, then z · W_O; the concatenation only lines up the head outputs: no blanks of its own
        outputs = [AnswerVector(Name("z", focus, head=h), Shown(head, known=result.known))
                   for h, head in enumerate(result.heads, start=1)]
        outputs.append(AnswerVector(Name("z", label="final"), Shown(result.output, known=result.known)))
        parts.append(part("output", "exam.part_output_heads", params, outputs, digits, work["output"]))
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
    for key in _SECTION_SETTINGS:  # they change X, which all heads share
        if key in data:
            raise SpecError(f"{field}.{key}", "applies to the whole section (every head projects the same X), "
                                              "not to one head")
    fields.check_keys(data, _HEAD_KEYS, field)
    if "output" in data:
        extra = sorted(set(data) - {"output"})
        if extra:
            weights = extra[0] in ("W_Q", "W_K", "W_V", "d_v")
            raise SpecError(f"{field}.{extra[0]}", "a head with a given output takes no weights" if weights else
                            "applies to a head computed from W_Q, W_K, W_V, not to one with a given output")
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
    which the section's X would then add as well (features/rope refuses the pair, and its sentences say so)."""
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
    return rotary.attention(X, head.W_Q.values, head.W_K.values, head.W_V.values, head.rope, divisor, focus, mask)


def _head_details(section: MultiHeadSpec, head: HeadSpec, result: engine.Attention | None) -> dict[str, Any] | None:
    """A computed head's Q, K, V and queries, as a self-attention section's (with RoPE: Q and K before the
    rotation, Q_rotated, K_rotated and rope)."""
    if result is None:
        return None
    answers = attention_answers(result, section.tokens)
    if head.rope is not None:
        plain = attention_answers(rotary.unrotated(section.inputs, head.W_Q.values, head.W_K.values, result),
                                  section.tokens)
        answers.update(rotary.rope_answers(head.rope, plain, answers, len(section.tokens), head.W_Q.shape[1]))
    return answers


def _row_answers(row: engine.MultiHead) -> dict[str, Any]:
    """One query's head outputs, concatenation and output, as decimals and exactly."""
    return {"heads": [row_texts(head, row.known) for head in row.heads], "concat": row_texts(row.concat, row.known),
            "output": row_texts(row.output, row.known),
            "exact": {"heads": [exact_texts(head) for head in row.heads], "concat": exact_texts(row.concat),
                      "output": exact_texts(row.output)}}


MULTI_HEAD = MultiHeadKind()
