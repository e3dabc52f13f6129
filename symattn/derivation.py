"""From a Spec to a Derivation: run the engine and lay out the steps a teacher would write."""

from __future__ import annotations

from pathlib import Path

from sympy import Expr, ImmutableMatrix, Integer

from . import engine as attention
from .engine import any_symbolic
from .load import load_example, load_spec
from .model import (
    Concat,
    DefinitionTable,
    Derivation,
    DerivedSection,
    DotProducts,
    Eq,
    ExactMatrix,
    FlowFigure,
    Heading,
    HeadWeights,
    Heatmap,
    MatrixEquation,
    MatrixFormStep,
    Name,
    Num,
    Paragraph,
    RowTimesMatrix,
    ScaleFactor,
    Scaling,
    Shown,
    SoftmaxStep,
    Step,
    Token,
    TokenTable,
    VectorEquation,
    VectorList,
    WeightedSum,
)
from .numfmt import DEFAULT_DIGITS
from .spec import CrossAttentionSpec, GivenMatrix, MultiHeadSpec, Scale, SelfAttentionSpec, Spec


def derive(source: str | Path | Spec, lang: str | None = None, digits: int | None = None) -> Derivation:
    """A Derivation from a built-in example name, a spec file path or a Spec; options override the spec."""
    if isinstance(source, Spec):
        spec = source
    elif isinstance(source, Path) or str(source).endswith((".toml", ".json")):
        spec = load_spec(source)
    else:
        spec = load_example(str(source))
    return derive_spec(spec, lang=lang, digits=digits)


def derive_spec(spec: Spec, lang: str | None = None, digits: int | None = None, steps: bool = True,
                results: tuple | None = None) -> Derivation:
    """Compute every section of the spec exactly and build its steps (steps=False: results only, for answers;
    `results`: the sections' results when they were computed already, as by compute())."""
    lang = lang or spec.lang or "ja"
    if digits is None:
        digits = spec.digits if spec.digits is not None else DEFAULT_DIGITS
    results = results if results is not None else tuple(compute(section) for section in spec.sections)
    sections = tuple(_section(section, result, steps) for section, result in zip(spec.sections, results, strict=True))
    return Derivation(title=spec.title, lang=lang, digits=digits, sections=sections, name=spec.name,
                      opening=(FlowFigure(),))


def _section(spec: SelfAttentionSpec | CrossAttentionSpec | MultiHeadSpec, result: attention.Attention |
             attention.MultiHead, steps: bool) -> DerivedSection:
    return DerivedSection(spec.kind, spec, result, tuple(_BUILDERS[type(spec)](spec, result)) if steps else ())


def compute(spec: SelfAttentionSpec | CrossAttentionSpec | MultiHeadSpec) -> attention.Attention | attention.MultiHead:
    """The engine's exact result for one section of a spec."""
    if isinstance(spec, MultiHeadSpec):
        i = spec.tokens.index(spec.focus) if spec.tokens else 0
        heads = [None if head.output is not None else attention.attention(
                     spec.X.values, spec.X.values, head.W_Q.values, head.W_K.values, head.W_V.values,
                     divisor(head.scale, head.d_k), (i,)) for head in spec.heads]
        outputs = tuple(head.output.values if result is None else result.queries[i].output
                        for head, result in zip(spec.heads, heads, strict=True))
        return attention.multi_head(outputs, spec.W_O.values, tuple(heads))
    focus = tuple(spec.tokens.index(t) for t in spec.focus)
    if isinstance(spec, CrossAttentionSpec):
        return attention.attention(spec.X.values, spec.memory.values, spec.W_Q.values, spec.W_K.values,
                                   spec.W_V.values, divisor(spec.scale, spec.d_k), focus)
    X = _positioned(spec)
    return attention.attention(X, X, spec.W_Q.values, spec.W_K.values, spec.W_V.values,
                               divisor(spec.scale, spec.d_k), focus, spec.mask)


def _positioned(spec: SelfAttentionSpec) -> ImmutableMatrix:
    """X, or X + P with positional encodings."""
    return spec.X.values if spec.P is None else ImmutableMatrix(spec.X.values + spec.P.values)


# ------------------------------------------------------------------ helpers


def shown(given: GivenMatrix) -> Shown:
    """An input matrix as shown: each entry as it was typed."""
    return Shown(given.values, given.decimals, written=given.written)


def given_weights(owner) -> dict[str, Shown]:
    """W_Q, W_K, W_V of a section or a head, as shown."""
    return {letter: shown(getattr(owner, f"W_{letter}")) for letter in "QKV"}


def weight_equations(W: dict[str, Shown], head: int | None = None) -> list[Step]:
    """W_Q = [...], W_K = [...], W_V = [...] (of head h, if given)."""
    return [MatrixEquation(Name(f"W_{letter}", head=head), W[letter]) for letter in "QKV"]


def _product(left: Shown, right: Shown, values: ImmutableMatrix) -> Shown:
    """A computed product shown with at least as many decimals as its operands were written with."""
    return Shown(values, max(left.decimals, right.decimals))


def _projection_steps(
    token: str, row: Shown, weights: dict[str, Shown], results: dict[str, Shown], key_prefix: str
) -> list[Step]:
    """x_token · W_Q / W_K / W_V, each written out term by term, each after its own sentence."""
    steps: list[Step] = []
    for letter in weights:
        steps.append(Paragraph(f"{key_prefix}.{letter}", {"token": Token(token)}))
        steps.append(RowTimesMatrix(Name(letter, token), Name("x", token), row, Name(f"W_{letter}"),
                                    weights[letter], results[letter]))
    return steps


def divisor(scale: Scale, d_k: int) -> Expr:
    """What the scores are divided by: √d_k, 1 (no scaling) or the given number."""
    if scale.mode == "none":
        return Integer(1)
    if scale.mode == "number":
        return scale.number
    return attention.scale_factor(d_k)


def _scaling_steps(scale: Scale, d_k: int, result: attention.QueryAttention, tokens: tuple[str, ...]) -> list[Step]:
    if scale.mode == "none":
        return [Paragraph("attend.no_scaling", {"a": Name("a"), "s": Name("s")})]
    if scale.mode == "number":
        intro = [Paragraph("attend.scale_by_number", {"c": Num(result.scale)})]
    else:
        # d_k is the length of q and k unless the spec sets it.
        why = "attend.d_k_is" if result.query.cols == d_k else "attend.d_k_given"
        intro = [Paragraph("attend.scale_by", {"scale": ScaleFactor(d_k)}),
                 Paragraph(why, {"d": result.query.cols, "d_k": Eq(Name("d_k"), d_k)})]
    return [*intro, Scaling(d_k, scale.mode == "sqrt_d_k", result.scale, result.scores, result.scaled, tokens)]


def _raw_scores(scores: tuple[Expr, ...]) -> list[Step]:
    """The raw scores as one vector (symbolic scores are long: the dot products already show them)."""
    if any_symbolic(scores):
        return []
    return [Paragraph("attend.raw_scores"), VectorEquation(None, Shown(ImmutableMatrix([list(scores)]), uniform=False))]


def _result(name: Name, output: ImmutableMatrix) -> Step:
    """The output vector; a symbolic one is the weighted sum of Step 5, too long to repeat."""
    if any_symbolic(output):
        return Paragraph("attend.symbolic_result", {"z": name})
    return VectorEquation(name, Shown(output))


def _strongest(tokens: tuple[str, ...], scores: tuple[Expr, ...]) -> str | None:
    """The token with the largest weight (the largest score), when there is exactly one."""
    if any_symbolic(scores) or list(scores).count(max(scores)) > 1:
        return None
    return tokens[list(scores).index(max(scores))]


def _attention_steps(query_name: Name, key_tokens: tuple[str, ...], query: Shown, K: Shown, V: Shown,
                     result: attention.QueryAttention, d_k: int, scale: Scale, step_keys: dict[str, str],
                     focus: str) -> list[Step]:
    """Scores, scaling, softmax and weighted sum for one query: the heart of every section."""
    key_names = tuple(Name("K", t) for t in key_tokens)
    value_names = tuple(Name("V", t) for t in key_tokens)
    weights = result.softmax.weights
    strongest = _strongest(key_tokens, result.scores)
    steps: list[Step] = [
        Heading(2, step_keys["scores"], {"token": Token(focus)}),
        Paragraph("attend.query_is", {"token": Token(focus)}),
        VectorEquation(query_name, query),
        Paragraph("attend.dot_products"),
        DotProducts(query_name, key_names, query, K.rows, result.scores),
        *_raw_scores(result.scores),
        *_scaling_steps(scale, d_k, result, key_tokens),
        Heading(2, step_keys["softmax"], {"token": Token(focus)}),
        SoftmaxStep(result.softmax, key_tokens),
        Paragraph("attend.softmax_note", note=True),
    ]
    if strongest is not None:
        steps.append(Paragraph("attend.strongest", {"token": Token(focus), "strongest": Token(strongest)}))
    steps += [
        Heading(2, step_keys["sum"], {"token": Token(focus)}),
        Paragraph("attend.values"),
        VectorList(value_names, V.rows),
        Paragraph("attend.weighted_sum_symbolic" if any_symbolic(result.output) else "attend.weighted_sum"),
        WeightedSum(weights, V.rows, result.output, key_tokens),
    ]
    return steps


def _matrix_form_steps(spec: SelfAttentionSpec | CrossAttentionSpec, result: attention.Attention,
                       Q: Shown, K: Shown, V: Shown) -> list[Step]:
    """The whole section at once, for focus = "all"."""
    form = attention.matrix_form([result.queries[i] for i in range(len(spec.tokens))])
    return [
        Heading(2, "matrix.heading"),
        Paragraph("matrix.intro"),
        MatrixFormStep(Q, K, V, form, spec.d_k, spec.scale.mode, divisor(spec.scale, spec.d_k)),
    ]


# ------------------------------------------------------------------ sections


def _self_attention(spec: SelfAttentionSpec, result: attention.Attention) -> list[Step]:
    X = _positioned(spec)
    x = shown(spec.X) if spec.P is None else Shown(X, max(spec.X.decimals, spec.P.decimals))
    W = given_weights(spec)
    QKV = {letter: _product(x, W[letter], getattr(result, letter)) for letter in "QKV"}
    steps: list[Step] = [
        Heading(1, "self.heading"),
        Paragraph("self.intro"),
        Paragraph("matrix.only", note=True) if spec.matrix_only
        else Paragraph("self.goal", {"token": Token(spec.focus[0])}),
        Heading(2, "self.step1"),
        TokenTable(("table.token", "table.embedding"), spec.tokens, (shown(spec.X),)),
        *([] if spec.X.symbolic else [Paragraph("note.dummy_embeddings", note=True)]),
        Paragraph("self.x_is", {"X": Name("X")}),
        *_positional_steps(spec, x),
        Heading(2, "self.step2"),
        Paragraph("self.projections"),
        *([] if spec.P is not None else [Paragraph("self.no_positional", note=True)]),
        DefinitionTable(Name("X"), Name("X")),
        *weight_equations(W),
        Paragraph("note.dummy_weights", note=True),
    ]
    per_token = () if spec.matrix_only else spec.focus  # focus = "matrix": all tokens at once only
    for token in per_token:
        i = spec.tokens.index(token)
        steps += [Paragraph("self.for_example", {"token": Token(token)}),
                  VectorEquation(Name("x", token), x.row(i))]
        steps += _projection_steps(token, x.row(i), W, {k: v.row(i) for k, v in QKV.items()}, "self.projection_of")
    steps += [
        Paragraph("self.all_tokens"),
        TokenTable(("table.token", Name("Q"), Name("K"), Name("V")), spec.tokens, (QKV["Q"], QKV["K"], QKV["V"])),
    ]
    keys = {"scores": "self.step3", "softmax": "self.step4", "sum": "self.step5"}
    if len(spec.focus) > 1:
        keys.update(softmax="self.step4_of", sum="self.step5_of")
    if spec.mask is not None:
        steps += [Heading(2, "mask.heading"), Paragraph("mask.causal" if spec.causal else "mask.given"),
                  MatrixEquation(Name("M"), Shown(spec.mask)), Paragraph("mask.effect")]
    for token in per_token:
        i = spec.tokens.index(token)
        query = result.queries[i]
        steps += _attention_steps(Name("Q", token), spec.tokens, QKV["Q"].row(i), QKV["K"], QKV["V"], query,
                                  spec.d_k, spec.scale, keys, token)
        steps += [
            Heading(2, "self.result"),
            Paragraph("self.result_from", {"token": Token(token)}),
            VectorEquation(Name("x", token), x.row(i)),
            Paragraph("self.result_to", {"token": Token(token)}),
            _result(Name("z", token), query.output),
            Paragraph("self.result_meaning"),
        ]
    if spec.matrix_only or (spec.all_tokens and len(spec.tokens) > 1):
        steps += _matrix_form_steps(spec, result, QKV["Q"], QKV["K"], QKV["V"])
    steps += _heatmap(spec.focus, spec.tokens, result, tuple(spec.tokens.index(t) for t in spec.focus))
    return steps


def _positional_steps(spec: SelfAttentionSpec, x: Shown) -> list[Step]:
    """Positional encodings P, exact and in decimals, and X + P: what the projections then use."""
    if spec.P is None:
        return []
    return [
        Heading(2, "pe.heading"),
        Paragraph("pe.sinusoidal" if spec.sinusoidal else "pe.given", {"P": Name("P")}),
        ExactMatrix(Name("P"), Shown(spec.P.values, spec.P.decimals, written=spec.P.written)),
        Paragraph("pe.sum", {"X": Name("X"), "P": Name("P")}),
        TokenTable(("table.token", "table.with_position"), spec.tokens, (x,)),
    ]


def _heatmap(queries: tuple[str, ...], keys: tuple[str, ...], result: attention.Attention,
             rows: tuple[int, ...]) -> list[Step]:
    """The weights of the derived queries as a heatmap (numbers only: symbols have no shade)."""
    weights = ImmutableMatrix([list(result.queries[i].softmax.weights) for i in rows])
    if any_symbolic(weights):
        return []
    return [Heading(2, "heatmap.heading"), Paragraph("heatmap.intro"), Heatmap(queries, keys, weights)]


def _cross_attention(spec: CrossAttentionSpec, result: attention.Attention) -> list[Step]:
    x, memory = shown(spec.X), shown(spec.memory)
    W = given_weights(spec)
    Q = _product(x, W["Q"], result.Q)
    K = _product(memory, W["K"], result.K)
    V = _product(memory, W["V"], result.V)
    memory_table = TokenTable(("table.encoder_token", "table.encoder_output"), spec.memory_tokens, (memory,))
    steps: list[Step] = [
        Heading(1, "cross.heading"),
        Paragraph("cross.intro"),
        *([Paragraph("matrix.only", note=True)] if spec.matrix_only else []),
        Paragraph("cross.roles", {"Q": Name("Q"), "K": Name("K"), "V": Name("V")}),
        Heading(2, "cross.step1"),
        Paragraph("cross.encoder_outputs"),
        memory_table,
        Paragraph("cross.encoder_note", note=True),
        Heading(2, "cross.step2"),
    ]
    per_token = () if spec.matrix_only else spec.focus  # focus = "matrix": all tokens at once only
    if spec.matrix_only:
        steps.append(TokenTable(("table.token", "table.embedding"), spec.tokens, (x,)))
    for token in per_token:
        steps += [Paragraph("cross.decoder_state", {"token": Token(token)}),
                  VectorEquation(Name("x", token), x.row(spec.tokens.index(token)))]
    steps += [
        Paragraph("cross.weights"),
        DefinitionTable(Name("X"), Name("memory")),
        *weight_equations(W),
        Paragraph("note.dummy_weights", note=True),
    ]
    if not spec.matrix_only:
        steps += _cross_projection_steps(spec, x, memory, memory_table, W, Q, K, V)
    keys = {"scores": "cross.step5", "softmax": "cross.step6", "sum": "cross.step7"}
    if len(spec.focus) > 1:  # several decoder tokens: each heading says whose step it is
        keys = {part: f"{key}_of" for part, key in keys.items()}
    for token in per_token:
        i = spec.tokens.index(token)
        query = result.queries[i]
        steps += _attention_steps(Name("Q", token), spec.memory_tokens, Q.row(i), K, V, query, spec.d_k,
                                  spec.scale, keys, token)
        steps += [
            Heading(2, "cross.result"),
            Paragraph("cross.result_is", {"token": Token(token)}),
            _result(Name("z", token), query.output),
            Paragraph("cross.result_meaning", {"token": Token(token)}),
        ]
    if spec.matrix_only or (spec.all_tokens and len(spec.tokens) > 1):
        steps += _matrix_form_steps(spec, result, Q, K, V)
    steps += _heatmap(spec.focus, spec.memory_tokens, result, tuple(spec.tokens.index(t) for t in spec.focus))
    return steps


def _cross_projection_steps(spec: CrossAttentionSpec, x: Shown, memory: Shown, memory_table: Step,
                            W: dict[str, Shown], Q: Shown, K: Shown, V: Shown) -> list[Step]:
    """Steps 3 and 4 of cross-attention: each query, then each key and value, written out term by term."""
    steps: list[Step] = [Heading(2, "cross.step3")]
    for token in spec.focus:
        i = spec.tokens.index(token)
        steps.append(RowTimesMatrix(Name("Q", token), Name("x", token), x.row(i), Name("W_Q"), W["Q"], Q.row(i)))
    steps += [Heading(2, "cross.step4"), Paragraph("cross.encoder_again"), memory_table, Paragraph("cross.keys")]
    for j, token in enumerate(spec.memory_tokens):
        steps.append(RowTimesMatrix(Name("K", token), Name("x", token), memory.row(j), Name("W_K"), W["K"], K.row(j)))
    steps.append(Paragraph("cross.values"))
    for j, token in enumerate(spec.memory_tokens):
        steps.append(RowTimesMatrix(Name("V", token), Name("x", token), memory.row(j), Name("W_V"), W["V"], V.row(j)))
    return steps


def _multi_head(spec: MultiHeadSpec, mh: attention.MultiHead) -> list[Step]:
    token = spec.focus
    steps: list[Step] = [
        Heading(1, "multi.heading"),
        Paragraph("multi.intro"),
        Heading(2, "multi.step1"),
        Paragraph("multi.each_head"),
        HeadWeights(len(spec.heads)),
    ]
    if spec.X is not None:  # heads computed from weights work on the section's embeddings
        steps += [Paragraph("multi.embeddings", {"X": Name("X")}),
                  TokenTable(("table.token", "table.embedding"), spec.tokens, (shown(spec.X),))]
    outputs: list[Shown] = []
    if any(head.output is not None for head in spec.heads):
        steps.append(Paragraph("multi.assume", {"token": Token(token)}))
    for h, (head, result) in enumerate(zip(spec.heads, mh.attentions, strict=True), start=1):
        if result is None:
            output = shown(head.output)
            steps += [Paragraph("multi.head_label", {"h": h}), VectorEquation(Name("z", token, head=h), output)]
        else:
            output, head_steps = _computed_head(spec, h, head, result)
            steps += head_steps
        outputs.append(output)
    concat = Shown(mh.concat, max(o.decimals for o in outputs))
    W_O = shown(spec.W_O)
    steps += [
        Heading(2, "multi.step2"),
        Paragraph("multi.concat"),
        Concat(Name("z", label="concat"), tuple(outputs), concat),
        Paragraph("multi.concat_size", {"size": mh.concat.cols}),
        Heading(2, "multi.step3"),
        Paragraph("multi.project", {"W_O": Name("W_O")}),
        MatrixEquation(Name("W_O"), W_O),
        RowTimesMatrix(Name("z", label="final"), Name("z", label="concat"), concat, Name("W_O"), W_O,
                       _product(concat, W_O, mh.output)),
        Heading(2, "multi.result"),
        Paragraph("multi.result_is", {"token": Token(token)}),
        VectorEquation(Name("z", label="final"), _product(concat, W_O, mh.output)),
        Paragraph("multi.result_meaning"),
    ]
    return steps


def _computed_head(spec: MultiHeadSpec, h: int, head, result: attention.Attention) -> tuple[Shown, list[Step]]:
    """A head with its own weights: its projections and its attention for the focus token, compactly."""
    assert spec.X is not None
    i = spec.tokens.index(spec.focus)
    d_k = head.d_k
    x = shown(spec.X)
    W = given_weights(head)
    QKV = {letter: _product(x, W[letter], getattr(result, letter)) for letter in "QKV"}
    query = result.queries[i]
    steps: list[Step] = [Paragraph("multi.head_label", {"h": h})]
    steps += weight_equations(W, head=h)
    steps.append(TokenTable(("table.token", Name("Q", head=h), Name("K", head=h), Name("V", head=h)),
                            spec.tokens, (QKV["Q"], QKV["K"], QKV["V"])))
    key_names = tuple(Name("K", t, head=h) for t in spec.tokens)
    steps += [
        DotProducts(Name("Q", spec.focus, head=h), key_names, QKV["Q"].row(i), QKV["K"].rows, query.scores),
        *_scaling_steps(head.scale, d_k, query, spec.tokens)[-1:],
        SoftmaxStep(query.softmax, spec.tokens),
        WeightedSum(query.softmax.weights, QKV["V"].rows, query.output, spec.tokens),
        VectorEquation(Name("z", spec.focus, head=h), Shown(query.output)),
        *_heatmap((spec.focus,), spec.tokens, result, (i,))[-1:],  # the head's weights, without a heading
    ]
    return Shown(query.output), steps


_BUILDERS = {
    SelfAttentionSpec: _self_attention,
    CrossAttentionSpec: _cross_attention,
    MultiHeadSpec: _multi_head,
}
