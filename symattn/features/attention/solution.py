"""Steps that several kinds lay out alike: inputs as shown, projections, and one query's scores, scaling, softmax
and weighted sum."""

from __future__ import annotations

from dataclasses import replace

from sympy import Expr, ImmutableMatrix

from ... import engine
from ...document.sentences import first_true, heading, say, weight_sentences
from ...document.steps import (
    Display,
    DotProducts,
    Eq,
    ExactMatrix,
    Facts,
    Formula,
    Heading,
    Heatmap,
    MatrixEquation,
    MatrixFormStep,
    Name,
    Num,
    Paragraph,
    Result,
    RowTimesMatrix,
    Scaling,
    Shown,
    SoftmaxStep,
    SqrtDk,
    Step,
    Token,
    Tokens,
    TokenTable,
    VectorEquation,
    VectorList,
    WeightedSum,
    WrittenHeading,
)
from ...engine import any_symbolic
from ...spec.model import Mask, Positions, Scale, Section
from ..online_softmax.feature import steps as online_steps


def part_heading(section: Section, key: str) -> Heading:
    """A section's level-1 heading: the one its spec wrote (`heading`), else the language file's `key`."""
    return Heading(1, key) if section.heading is None else WrittenHeading(1, key, text=section.heading)


def given_weights(owner) -> dict[str, Shown]:
    """W_Q, W_K, W_V of a section or a head, as shown."""
    return {letter: Shown.input(getattr(owner, f"W_{letter}")) for letter in "QKV"}


def weight_equations(W: dict[str, Shown], head: int | None = None) -> list[Step]:
    """W_Q = [...], W_K = [...], W_V = [...] (of head h, if given)."""
    return [MatrixEquation(Name(f"W_{letter}", head=head), W[letter]) for letter in "QKV"]


def product(left: Shown, right: Shown, values: ImmutableMatrix, known: engine.Numbers | None = None) -> Shown:
    """A computed product shown with at least as many decimals as its operands were written with (`known`: the
    numbers of the result it belongs to)."""
    return Shown(values, max(left.decimals, right.decimals), known=known)


def projections(sources: dict[str, Shown], weights: dict[str, Shown], result: engine.Attention) -> dict[str, Shown]:
    """Q, K and V (each from its source: X, or the encoder's memory) with one count of decimals for all three, as
    the table of the projected vectors shows them (not Q_猫 = [1.0, 2.0] beside K = [1, 1])."""
    shown = {letter: product(sources[letter], weights[letter], getattr(result, letter), result.known)
             for letter in "QKV"}
    whole = tuple(entry for s in shown.values() for entry in s.entries)
    decimals = max(s.decimals for s in shown.values())
    return {letter: replace(s, decimals=decimals, whole=whole) for letter, s in shown.items()}


def projection_steps(token: str, row_name: Name, row: Shown, weights: dict[str, Shown], results: dict[str, Shown],
                     key_prefix: str) -> list[Step]:
    """x_token · W_Q / W_K / W_V (row_name: the row's symbol), each written out term by term, each after its own
    sentence."""
    steps: list[Step] = []
    for letter in weights:
        steps.append(Paragraph(f"{key_prefix}.{letter}", {"token": Token(token)}))
        steps.append(RowTimesMatrix(Name(letter.lower(), token), row_name, row, Name(f"W_{letter}"),
                                    weights[letter], results[letter]))
    return steps


def scaling_steps(scale: Scale, d_k: int, result: engine.QueryAttention, tokens: tuple[str, ...],
                  facts: Facts, why: str | None = None) -> list[Step]:
    """Why and how the scores are scaled, then the scaling of each score; `why`: the sentence on d_k when no query
    vector gives its length (given scores)."""
    if scale.mode == "none":
        return [say("attend.no_scaling", facts, {"a": Name("a"), "s": Name("s")})]
    if scale.mode == "number":
        intro = [say("attend.scale_by_number", facts, {"c": Num(result.divisor)})]
    else:
        # d_k is the length of q and k unless the spec sets it.
        width = {} if why else {"d": result.query.cols}
        why = why or ("attend.d_k_is" if result.query.cols == d_k else "attend.d_k_given")
        if width and result.query.cols == 1:
            why += "_one"  # "one entry each", not "1 entries each"
        q, k = ("qh", "kh") if facts.rotated else ("q", "k")  # RoPE: the rotated q̂, k̂ give the scores
        intro = [say("attend.scale_by", facts, {"scale": SqrtDk(d_k)}),
                 Paragraph(why, {**width, "d_k": Eq(Name("d_k"), d_k), "q": Name(q, facts.token),
                                 "k": Name(k, label="j")})]
    return [*intro, Scaling(scale, d_k, result.divisor, result.scores, result.scaled, tokens, result.softmax.known)]


def raw_scores(scores: tuple[Expr, ...], known: engine.Numbers) -> list[Step]:
    """The raw scores as one vector (symbolic scores are long: the dot products already show them)."""
    if any_symbolic(scores):
        return []
    return [Paragraph("attend.raw_scores"),
            VectorEquation(None, Shown(engine.matrix_of_entries(1, len(scores), scores), uniform=False, known=known))]


def result_step(name: Name, output: ImmutableMatrix, known: engine.Numbers, facts: Facts, sum_step: int) -> list[Step]:
    """The output vector; a symbolic one is the weighted sum of its Step `sum_step`, shown as that formula."""
    if any_symbolic(output):
        return [Display(Formula("weighted_sum", (("z", name),))),
                say("attend.symbolic_result", facts, {"z": name, "n": sum_step, "w": Formula("w_j"),
                                                      "v": Formula("v_j")})]
    return [Result(name, Shown(output, known=known))]


def query_result_steps(token: str, heading_key: str, from_key: str, row: tuple[Name, Shown], output: ImmutableMatrix,
                       known: engine.Numbers, facts: Facts, sum_step: int) -> list[Step]:
    """The end of one query derived step by step: its heading, where its row came from (`from_key`), the row, the
    output z_t, and what z_t carries (the sentence true of the keys the query sees)."""
    meaning = first_true(facts, "self.result_meaning", "self.result_meaning_visible", "self.result_meaning_single")
    return [Heading(2, heading_key, {"token": Token(token)}),
            say(from_key, facts, {"token": Token(token)}),
            VectorEquation(*row),
            Paragraph("self.result_to", {"token": Token(token)}),
            *result_step(Name("z", token), output, known, facts, sum_step),
            say(meaning, facts, {"token": Token(token), "keys": Tokens(facts.visible, token), "z": Name("z", token),
                                 "v": Name("v", facts.visible[0])})]


def softmax_step(softmax: engine.Softmax, tokens: tuple[str, ...]) -> SoftmaxStep:
    """The softmax of one query written out, from its exact forms."""
    return SoftmaxStep(softmax.logits, softmax.exps, softmax.total, softmax.weights, tokens, softmax.known)


def attention_steps(key_tokens: tuple[str, ...], query: Shown, K: Shown, V: Shown, result: engine.QueryAttention,
                    d_k: int, scale: Scale, step_keys: dict[str, str], facts: Facts, number: int,
                    online: int | None = None, letters: tuple[str, str] = ("q", "k"),
                    after_scores: tuple[Step, ...] = ()) -> list[Step]:
    """Scores, scaling, softmax and weighted sum for the query of `facts.token`: the heart of every attention kind.
    Its steps are numbered from `number` (Step 3, 4, 5 for the first query, 6, 7, 8 for the next ...). `online`:
    the keys per block of FlashAttention's online softmax, which then replaces the softmax and the weighted sum.
    `letters`: the names of the query and the keys (RoPE's rotated q̂, k̂), with step_keys["query"] the sentence
    before the query (else attend.query_is); `after_scores`: steps after the dot products (RoPE's scores in m − n)."""
    focus = facts.token
    key_names = tuple(Name(letters[1], t) for t in key_tokens)
    query_name = Name(letters[0], focus)
    known = result.softmax.known
    steps: list[Step] = [
        heading(2, step_keys["scores"], facts, {"token": Token(focus), "n": number}),
        Paragraph(step_keys.get("query", "attend.query_is"), {"token": Token(focus)}),
        VectorEquation(query_name, query),
        Paragraph("attend.dot_products", {"s": Formula("score", (("s", Name("s", label="j")), ("q", query_name),
                                                                   ("k", Name(letters[1], label="j"))))}),
        DotProducts(query_name, key_names, query, K.rows, result.scores, known),
        *after_scores,
        *raw_scores(result.scores, known),
        *scaling_steps(scale, d_k, result, key_tokens, facts),
    ]
    if online is not None:
        return steps + online_steps(key_tokens, V, result, online, facts, number + 1)
    return [*steps, *softmax_steps(key_tokens, result, step_keys["softmax"], facts, number + 1),
            *sum_steps(key_tokens, V, result, step_keys["sum"], facts, number + 2)]


def softmax_steps(key_tokens: tuple[str, ...], result: engine.QueryAttention, key: str, facts: Facts,
                  number: int) -> list[Step]:
    """Step `number` (heading `key`): the softmax of the query of `facts.token`, and what its weights say."""
    return [heading(2, key, facts, {"token": Token(facts.token), "n": number}),
            softmax_step(result.softmax, key_tokens),
            Paragraph("attend.softmax_note", note=True),
            *weight_sentences(facts, itself=facts.token in key_tokens, values=result.values is not None)]


def sum_steps(key_tokens: tuple[str, ...], V: Shown, result: engine.QueryAttention, key: str, facts: Facts,
              number: int) -> list[Step]:
    """Step `number` (heading `key`): the weighted sum of the values with the query's weights."""
    return [heading(2, key, facts, {"token": Token(facts.token), "n": number}),
            Paragraph("attend.values"),
            VectorList(tuple(Name("v", t) for t in key_tokens), V.rows),
            # this query's sum (a symbolic section may have a numeric one: the causal first token's v)
            say("attend.weighted_sum_symbolic" if any_symbolic(result.output) else "attend.weighted_sum",
                replace(facts, symbolic=any_symbolic(result.output))),
            WeightedSum(result.softmax.weights, V.rows, result.output, key_tokens, result.softmax.known)]


MATRIX_FORM = ("matrix.heading", "matrix.intro")  # the matrix form's heading and the sentence before it


def matrix_form_steps(result: engine.Attention, n: int, d_k: int, scale: Scale, Q: Shown | None, K: Shown | None,
                      V: Shown | None, keys: tuple[str, str] = MATRIX_FORM, rotated: bool = False) -> list[Step]:
    """All n queries at once: S = QKᵀ (the given S when Q and K are None; S = Q̂K̂ᵀ of the rotated Q and K with
    RoPE), its scaling, the row-wise softmax A and A·V (not without V; `keys`: its heading and the sentence
    before it)."""
    form = engine.matrix_form([result.queries[i] for i in range(n)])
    unscaled = scale.mode == "none" and keys[1] in ("matrix.intro", "cache.matrix")  # no "its scaling"
    return [
        Heading(2, keys[0]),
        Paragraph(keys[1] + ("_unscaled" if unscaled else ""), {"S": Name("S")}),
        MatrixFormStep(Q, K, V, form, scale, d_k, scale.divisor(d_k), result.known, rotated=rotated),
    ]


def heatmap(queries: tuple[str, ...], keys: tuple[str, ...], result: engine.Attention,
            rows: tuple[int, ...]) -> list[Step]:
    """The weights of the derived queries as a heatmap (numbers only: symbols have no shade)."""
    rows_of = [result.queries[i].softmax.weights for i in rows]
    weights = engine.matrix_of_entries(len(rows_of), len(rows_of[0]), (w for row in rows_of for w in row))
    if any_symbolic(weights):
        return []
    return [Heading(2, "heatmap.heading"), Paragraph("heatmap.intro"), Heatmap(queries, keys, weights, result.known)]


def positional_steps(P: Positions | None, tokens: tuple[str, ...], x: Shown, titled: bool = True) -> list[Step]:
    """Positional encodings P, exact and in decimals, and X + P (`x`, as shown): what the projections then use;
    under a heading of their own unless `titled` is false (inside a multi-head section's Step 1)."""
    if P is None:
        return []
    return [
        *([Heading(2, "pe.heading")] if titled else []),
        Paragraph("pe.sinusoidal" if P.mode == "sinusoidal" else "pe.given",
                  {"P": Name("P"), "pos": Formula("pos"), "dims": Formula("pe_dims"), "even": Formula("pe_even"),
                   "odd": Formula("pe_odd")}),
        ExactMatrix(Name("P"), Shown(P.P.values, P.P.decimals, written=P.P.written)),
        Paragraph("pe.sum", {"sum": Formula("x_plus_p", (("Xp", Name("Xp")), ("X", Name("X")), ("P", Name("P")))),
                             "x": Name("xp", label="t"), "t": Formula("t")}),
        TokenTable(("table.token", "table.with_position"), tokens, (x,)),
    ]


def mask_steps(mask: Mask, name: Name | None = None) -> list[Step]:
    """The mask, causal or given, what 1 and 0 mean, and that a masked weight is exactly 0: under its own heading
    as M, or (`name`: M or a head's M^(h)) inside a multi-head section's step."""
    if name is None:
        return [Heading(2, "mask.heading"), *mask_steps(mask, Name("M"))]
    return [Paragraph("mask.causal" if mask.mode == "causal" else "mask.given", {"M": name}),
            MatrixEquation(name, Shown(mask.values)),
            Paragraph("mask.effect", {"e": Formula("exp_minus_inf")})]
