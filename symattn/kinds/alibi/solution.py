"""The worked solution of an ALiBi section: the embeddings (no positional encoding), then per head its projections,
its slope and bias matrix, and for each focus query its biased scores, softmax and weighted sum; for a list of heads
the concatenation (and W_O); all queries at once for focus "all" or "matrix"; the weights as a heatmap."""

from __future__ import annotations

from dataclasses import replace

from sympy import ImmutableMatrix

from ...document import sentences
from ...document.sentences import heading, say
from ...document.steps import (
    Concat,
    DefinitionTable,
    DotProducts,
    Eq,
    Facts,
    Formula,
    Heading,
    MatrixEquation,
    Name,
    Num,
    Paragraph,
    Phrase,
    Result,
    RowTimesMatrix,
    Shown,
    Step,
    Token,
    Tokens,
    TokenTable,
    VectorEquation,
    VectorList,
)
from ...features.attention import solution as common
from .engine import AlibiResult, HeadResult
from .spec import AlibiHead, AlibiSpec
from .steps import AlibiMatrices, AlibiRule, BiasedScores, BiasMatrix, Slopes

# the conditional sentences this folder says, and what must be true of a query's facts (document/sentences.py): what
# the causal mask lets it see, and the bias's effect, said only where a key lies before the query
sentences.contribute({
    "alibi.sees_itself": lambda f: len(f.visible) == 1,
    "alibi.sees_all": lambda f: len(f.visible) > 1 and f.visible == f.keys,
    "alibi.sees_earlier_one": lambda f: len(f.visible) > 1 and len(f.keys) - len(f.visible) == 1,
    "alibi.sees_earlier": lambda f: len(f.visible) > 1 and len(f.keys) - len(f.visible) > 1,
    "alibi.bias_effect": lambda f: len(f.visible) > 1,
})


class Counter:
    """The Step numbers, continued over the heads."""

    def __init__(self) -> None:
        self.n = 0

    def next(self) -> int:
        self.n += 1
        return self.n


def steps(spec: AlibiSpec, result: AlibiResult) -> list[Step]:
    x = Shown.input(spec.X)
    number = Counter()
    out: list[Step] = [
        common.part_heading(spec, "alibi.heading"),
        Paragraph("alibi.intro"),
        Paragraph("alibi.rule", {"i": Formula("i"), "j": Formula("j")}),
        AlibiRule(spec.scale, spec.scale.divisor(spec.heads[0].d_k)),
        Paragraph("alibi.causal", {"i": Formula("i"), "j": Formula("alibi_past"), "future": Formula("alibi_future")}),
        _goal(spec),
        Heading(2, "alibi.step_embeddings", {"n": number.next()}),
        TokenTable(("table.token", "table.embedding"), spec.tokens, (x,)),
        Paragraph("note.dummy_embeddings", note=True),
        Paragraph("self.x_is", {"X": Name("X"), "x": Name("x", label="t"), "t": Formula("t")}),
        Paragraph("alibi.no_positional", {"X": Name("X")}),
    ]
    if spec.several:
        out += [Paragraph("alibi.heads_intro_W_O" if spec.W_O is not None else "alibi.heads_intro",
                          {"H": len(spec.heads), "W_O": Name("W_O"), "slopes": Phrase(_slopes_phrase(spec))}),
                Paragraph("alibi.slopes_geometric" if spec.geometric else "alibi.slopes_given",
                          {"H": spec.of, "formula": Formula("alibi_geometric")}),
                Slopes(tuple(h.slope for h in spec.heads), spec.of, tuple(range(1, len(spec.heads) + 1)),
                       tuple(h.number or 0 for h in spec.heads))]
        if any(not h.slope.is_Rational for h in spec.heads):
            out.append(Paragraph("alibi.slopes_irrational", note=True))
        out += _authors_code(spec)
    for h, (head, found) in enumerate(zip(spec.heads, result.heads, strict=True)):
        out += head_steps(spec, head, found, x, h + 1 if spec.several else None, number)
    if spec.several:
        out += combined_steps(spec, result, number)
    return out


def head_steps(spec: AlibiSpec, head: AlibiHead, found: HeadResult, x: Shown, h: int | None,
               number: Counter) -> list[Step]:
    """One head: its projections, slope and bias matrix, each focus query's steps, its matrix form, its heatmap."""
    attention = found.attention
    W = common.given_weights(head)
    QKV = common.projections(dict.fromkeys("QKV", x), W, attention)
    suffix = "" if h is None else "_head"
    names = {c: Name(c, head=h) for c in "QKV"}
    out: list[Step] = [Heading(2, f"alibi.step_projections{suffix}", {"n": number.next(), "h": h, **names}),
                       Paragraph("self.projections")]
    if h is None:
        out.append(DefinitionTable(Name("X"), Name("X")))
    out += [*common.weight_equations(W, h), Paragraph("note.dummy_weights", note=True)]
    if h is None:  # one head: each focus query's projections written out, as self-attention's
        for token in spec.focus.stepwise:
            i = spec.tokens.index(token)
            out += [Paragraph("alibi.projections_of", {"token": Token(token)}),
                    VectorEquation(Name("x", token), x.row(i)),
                    *common.projection_steps(token, Name("x", token), x.row(i), W,
                                             {c: QKV[c].row(i) for c in "QKV"}, "self.projection_of")]
    out += [Paragraph("self.all_tokens"),
            TokenTable(("table.token", *names.values()), spec.tokens, (QKV["Q"], QKV["K"], QKV["V"]))]
    # the slope and the bias matrix
    m = Name("m", head=h)
    out.append(Heading(2, f"alibi.step_bias{suffix}", {"n": number.next(), "h": h}))
    if h is None:
        key = "alibi.slope_geometric" if spec.geometric else "alibi.slope_given"
        out += [Paragraph(key, {"m": m, "h": head.number, "H": spec.of, "formula": Formula("alibi_geometric")}),
                Slopes((head.slope,), spec.of, None, (head.number or 0,))]
        if not head.slope.is_Rational:
            out.append(Paragraph("alibi.slope_irrational", {"H": spec.of, "eight_h": 8 * head.number}, note=True))
        out += _authors_code(spec)
    else:
        out += [Paragraph("alibi.slope_of_head", {"m": m, "h": h}), Slopes((head.slope,), spec.of, (h,),
                                                                          (head.number or 0,))]
    n = len(spec.tokens)
    out += [Paragraph("alibi.bias_matrix" if n > 1 else "alibi.bias_matrix_one", {"m": m}),
            BiasMatrix(Shown(found.bias, uniform=False), head.slope, spec.tokens, h)]
    whole = sentences.section_facts("alibi", masked=n > 1, scaling=spec.scale.mode)
    for token in spec.focus.stepwise:
        out += query_steps(spec, head, found, QKV, token, whole, h, number)
    if spec.focus.matrix_form(n):
        form = [attention.queries[i] for i in range(n)]
        out += [Heading(2, "alibi.matrix_heading" + suffix, {"n": number.next(), "h": h}),
                Paragraph("alibi.matrix_intro" + ("_unscaled" if spec.scale.mode == "none" else "")),
                AlibiMatrices(ImmutableMatrix([list(q.scores) for q in form]),
                              ImmutableMatrix([list(q.scaled) for q in form]),
                              ImmutableMatrix([list(q.softmax.weights) for q in form]),
                              ImmutableMatrix.vstack(*[q.output for q in form]), spec.scale, head.d_k, found.divisor,
                              h, attention.known)]
    if h is not None:  # a list of heads: no heatmap per head
        return out
    rows = tuple(spec.tokens.index(t) for t in spec.focus.tokens)
    return out + common.heatmap(spec.focus.tokens, spec.tokens, attention, rows)


def query_steps(spec: AlibiSpec, head: AlibiHead, found: HeadResult, QKV: dict[str, Shown], token: str,
                whole: Facts, h: int | None, number: Counter) -> list[Step]:
    """One query's biased scores (the visible keys' dot products, then scaling and bias), softmax and weighted sum."""
    i = spec.tokens.index(token)
    query = found.attention.queries[i]
    facts = sentences.query_facts(whole, token, spec.tokens, query, first=token == spec.focus.stepwise[0])
    visible = spec.tokens[:i + 1]
    suffix = "" if h is None else "_head"
    q, m = Name("q", token, head=h), Name("m", head=h)  # q^(h) of head h: each head has its own vectors
    sees = sentences.first_true(facts, "alibi.sees_itself", "alibi.sees_all", "alibi.sees_earlier_one",
                                "alibi.sees_earlier")
    scale_key = {"sqrt_d_k": "alibi.biased_sqrt", "number": "alibi.biased_number", "none": "alibi.biased_none"}
    out: list[Step] = [
        heading(2, f"alibi.step_scores{suffix}", facts, {"token": Token(token), "n": number.next(), "h": h}),
        say(sees, facts, {"token": Token(token), "keys": Tokens(visible, token), "later": Tokens(spec.tokens[i + 1:])}),
        Paragraph("attend.query_is", {"token": Token(token)}),
        VectorEquation(q, QKV["Q"].row(i)),
        Paragraph("alibi.dot_products", {"s": Formula("score", (("s", Name("s", label="j")), ("q", q),
                                                                 ("k", Name("k", label="j", head=h))))}),
        DotProducts(q, tuple(Name("k", t, head=h) for t in visible), QKV["Q"].row(i), QKV["K"].rows[:i + 1],
                    query.scores[:i + 1], query.softmax.known),
    ]
    if spec.scale.mode == "sqrt_d_k":
        d = query.query.cols
        out.append(Paragraph("attend.d_k_is" + ("_one" if d == 1 else "") if d == head.d_k else "attend.d_k_given",
                             {"d": d, "d_k": Eq(Name("d_k"), head.d_k), "q": q, "k": Name("k", label="j", head=h)}))
    out += [Paragraph(scale_key[spec.scale.mode], {"c": Num(found.divisor), "m": m, "token": Token(token)}),
            BiasedScores(i, spec.tokens, query.scores[:i + 1], spec.scale, head.d_k, found.divisor,
                         tuple(found.bias.row(i))[:i + 1], query.scaled, head.slope, h, query.softmax.known)]
    if len(facts.visible) > 1:
        out.append(say("alibi.bias_effect", facts, {"token": Token(token), "m": m, "far": Token(spec.tokens[0])}))
    out += _of_head(common.softmax_steps(spec.tokens, query, "alibi.step_softmax", facts, number.next()), h)
    out += _of_head(common.sum_steps(spec.tokens, QKV["V"], query, "alibi.step_sum", facts, number.next()), h)
    z = Name("z", token, head=h)
    out += [Heading(2, f"alibi.result{suffix}", {"token": Token(token), "h": h}),
            Paragraph("alibi.result_is", {"token": Token(token)}),
            Result(z, Shown(query.output, known=query.softmax.known))]
    return out


def _of_head(steps: list[Step], h: int | None) -> list[Step]:
    """The shared softmax and weighted-sum steps of head h: the heading names the head ("Softmax (cats, head 2)")
    and the values are v^(h); one head's (h None) as they are."""
    if h is None:
        return steps
    out: list[Step] = []
    for step in steps:
        if isinstance(step, Heading):
            step = replace(step, key=step.key + "_head", params={**step.params, "h": h})
        elif isinstance(step, VectorList):
            step = replace(step, names=tuple(replace(name, head=h) for name in step.names))
        out.append(step)
    return out


def combined_steps(spec: AlibiSpec, result: AlibiResult, number: Counter) -> list[Step]:
    """Each focus token's heads' outputs side by side, and their product with W_O when it is given."""
    out: list[Step] = [Heading(2, "alibi.concat_heading", {"n": number.next()})]
    for i in result.focus:
        token = spec.tokens[i]
        parts = tuple(Shown(h.attention.queries[i].output, known=h.attention.known) for h in result.heads)
        concat = Shown(result.concats[i], known=result.known)
        out += [Paragraph("alibi.concat", {"token": Token(token)}), Concat(Name("z", token, label="concat"), parts,
                                                                          concat)]
    if spec.W_O is None:
        return out
    out += [Heading(2, "alibi.output_heading", {"n": number.next(), "W_O": Name("W_O")}),
            Paragraph("alibi.output_W_O", {"W_O": Name("W_O")})]
    W_O = Shown.input(spec.W_O)
    out.append(MatrixEquation(Name("W_O"), W_O))
    for i in result.focus:
        token = spec.tokens[i]
        row = result.rows[i]
        out += [Paragraph("alibi.output_of", {"token": Token(token), "W_O": Name("W_O")}),
                RowTimesMatrix(Name("z", token, label="final"), Name("z", token, label="concat"),
                               Shown(row.concat, known=row.known), Name("W_O"), W_O,
                               Shown(row.output, known=row.known))]
    return out


def _authors_code(spec: AlibiSpec) -> list[Step]:
    """The note that the paper's rule 2^(−8h/H) is not what the authors' released code (get_slopes) uses when H is
    not a power of two: said only then, and only of geometric slopes."""
    H = spec.of
    if not spec.geometric or H & (H - 1) == 0:
        return []
    return [Paragraph("alibi.authors_code", {"H": H}, note=True)]


def _slopes_phrase(spec: AlibiSpec) -> str:
    """What the heads' slopes make of them: each prefers nearby tokens to a different degree only when no two
    slopes are equal."""
    distinct = len({h.slope for h in spec.heads})
    if distinct == len(spec.heads):
        return "alibi.slopes_differ"
    return "alibi.slopes_same" if distinct == 1 else "alibi.slopes_some_same"


def _goal(spec: AlibiSpec) -> Paragraph:
    """What the section derives: the matrix form alone, every token in order, or its focus tokens from the first."""
    if spec.focus.mode == "matrix":
        return Paragraph("matrix.only", note=True)
    if spec.focus.mode == "all" and len(spec.tokens) > 1:
        return Paragraph("alibi.goal_all")
    first = spec.focus.tokens[0]
    return Paragraph("alibi.goal_first" if spec.tokens.index(first) == 0 else "alibi.goal", {"token": Token(first)})
