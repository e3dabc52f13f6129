"""The steps of a multi-head section's computed heads: each head's weights, projections, mask and RoPE; its
attention for each focus token compactly, or for every token at once in matrix form; and, for several tokens,
the concatenation and the product with W_O (by token, or as matrices)."""

from __future__ import annotations

from ... import engine
from ...document import sentences
from ...document.steps import (
    Concat,
    DotProducts,
    Facts,
    Heading,
    MatrixEquation,
    MatrixFormStep,
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
from ...engine import any_symbolic
from ...features.attention import solution as common
from ...features.rope import feature as rotary
from ...spec.model import Mask
from .engine import MultiHeadRows
from .spec import HeadSpec, MultiHeadSpec
from .steps import MatrixConcat, MatrixProduct


def computed_for(section: MultiHeadSpec) -> Paragraph:
    """What the computed heads derive: one token's output, several tokens' one after the other, every token one
    after the other and then at once in matrix form ("all"), or in matrix form alone ("matrix")."""
    names = {"a": Name("a"), "w": Name("w"), "z": Name("z")}
    if section.matrix_form:
        key = "multi_rows.computed_all" if section.focus.mode == "all" else "multi_rows.computed_matrix"
        return Paragraph(key, {"X": Name("X" if section.positions is None else "Xp"), **names})
    if section.several:
        return Paragraph("multi_rows.computed_for_tokens", {"tokens": Tokens(section.focus.tokens), **names})
    return Paragraph("multi.computed_for", {"token": Token(section.token), **names})


def shared_mask(section: MultiHeadSpec) -> Mask | None:
    """The mask every computed head uses, when they all use one (shown once, as M)."""
    masks = {head.mask for head in section.heads if head.output is None}
    return masks.pop() if len(masks) == 1 else None


def _head_facts(section: MultiHeadSpec, head: HeadSpec) -> Facts:
    masked = head.mask is not None and any(v == 0 for v in head.mask.values)
    return sentences.section_facts(section.kind, masked, section.positions is not None, head.scale.mode,
                                   rotated=head.rope is not None)


def _head_start(section: MultiHeadSpec, h: int, head: HeadSpec, result: engine.Attention, x: Shown,
                shared: Mask | None) -> tuple[dict[str, Shown], list[Step]]:
    """A computed head's weights, its Q, K, V for every token, its own mask (when the heads' masks differ) and
    its RoPE rotation; the projections its scores are taken from (the rotated ones with RoPE)."""
    W = common.given_weights(head)
    QKV = common.projections(dict.fromkeys("QKV", x), W, result)
    plain = QKV
    if head.rope is not None:
        plain = common.projections(dict.fromkeys("QKV", x), W, rotary.unrotated(
            section.inputs, head.W_Q.values, head.W_K.values, result))
    steps: list[Step] = [Paragraph("multi.head_label", {"h": h}), *common.weight_equations(W, head=h),
                         TokenTable(("table.token", Name("Q", head=h), Name("K", head=h), Name("V", head=h)),
                                    section.tokens, (plain["Q"], plain["K"], plain["V"]))]
    if head.mask is not None and shared is None:
        steps += common.mask_steps(head.mask, Name("M", head=h))
    if head.rope is not None:  # RoPE's steps (features/rope/feature.py), compactly: no token's rotation one by one, and
        # without their Step heading (they are part of the head's block)
        steps += rotary.rope_steps(head.rope, section.tokens, plain, QKV, section.focus.tokens,
                                   _head_facts(section, head), 0, stepwise=False, head=h)[1:]
    return QKV, steps


def computed_head(section: MultiHeadSpec, h: int, head: HeadSpec, result: engine.Attention, x: Shown,
                   shared: Mask | None) -> tuple[dict[str, Shown], list[Step]]:
    """A head with its own weights: its projections and its attention for each focus token, compactly; its
    output for each."""
    QKV, steps = _head_start(section, h, head, result, x, shared)
    outputs, token_steps = _token_steps(section, h, head, result, QKV)
    rows = section.indices
    steps += [*token_steps, *common.heatmap(section.focus.tokens, section.tokens, result, rows)[-1:]]  # its weights
    return outputs, steps


def _token_steps(section: MultiHeadSpec, h: int, head: HeadSpec, result: engine.Attention,
                 QKV: dict[str, Shown]) -> tuple[dict[str, Shown], list[Step]]:
    """A head's attention for each focus token, compactly (its scores with the rotated q̂, k̂ under RoPE)."""
    steps: list[Step] = []
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
    return outputs, steps


def token_rows(section: MultiHeadSpec, result: MultiHeadRows,
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


def matrix_steps(section: MultiHeadSpec, result: MultiHeadRows, x: Shown,
                  shared: Mask | None) -> list[Step]:
    """Every token at once, as torch.nn.MultiheadAttention computes it: each head's matrix form (its output
    Z^(h) = A^(h) V^(h), one row per token; with focus "all" after each token's compact steps, as self-attention's
    "all" derives each token before its matrix form), their concatenation as a matrix, its product with W_O."""
    n = len(section.tokens)
    steps: list[Step] = []
    heads = []
    for h, (head, attention) in enumerate(zip(section.heads, result.attentions, strict=True), start=1):
        QKV, head_steps = _head_start(section, h, head, attention, x, shared)
        form = engine.matrix_form([attention.queries[i] for i in range(n)])
        heads.append(Shown(form.output, known=attention.known))
        if section.focus.mode == "all":
            head_steps += _token_steps(section, h, head, attention, QKV)[1]
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
    steps += [MatrixProduct(Name("Z", label="final"), Name("Z", label="concat"), concat, Name("W_O"), W_O, output),
              Heading(2, "multi.result")]
    if any_symbolic(result.output):  # the outputs are the product's formula above
        steps.append(Paragraph("multi_rows.result_symbolic", {"Z": Name("Z", label="final"), "W_O": Name("W_O")}))
    else:
        steps += [Paragraph("multi_rows.result_matrix", {"Z": Name("Z", label="final")}),
                  MatrixEquation(Name("Z", label="final"), output)]
    return [*steps, Paragraph("multi_rows.result_meaning")]
