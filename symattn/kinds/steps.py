"""Steps that several kinds lay out alike: inputs as shown, projections, and one query's scores, scaling, softmax
and weighted sum."""

from __future__ import annotations

from dataclasses import replace

from sympy import Expr, ImmutableMatrix

from .. import engine
from ..decimals import to_decimal
from ..engine import any_symbolic
from ..model import (
    DotProducts,
    Eq,
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
    VectorEquation,
    VectorList,
    WeightedSum,
)
from ..spec.model import Scale


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


def projection_steps(token: str, row: Shown, weights: dict[str, Shown], results: dict[str, Shown],
                     key_prefix: str) -> list[Step]:
    """x_token · W_Q / W_K / W_V, each written out term by term, each after its own sentence."""
    steps: list[Step] = []
    for letter in weights:
        steps.append(Paragraph(f"{key_prefix}.{letter}", {"token": Token(token)}))
        steps.append(RowTimesMatrix(Name(letter, token), Name("x", token), row, Name(f"W_{letter}"),
                                    weights[letter], results[letter]))
    return steps


def scaling_steps(scale: Scale, d_k: int, result: engine.QueryAttention, tokens: tuple[str, ...]) -> list[Step]:
    """Why and how the scores are scaled, then the scaling of each score."""
    if scale.mode == "none":
        return [Paragraph("attend.no_scaling", {"a": Name("a"), "s": Name("s")})]
    if scale.mode == "number":
        intro = [Paragraph("attend.scale_by_number", {"c": Num(result.divisor)})]
    else:
        # d_k is the length of q and k unless the spec sets it.
        why = "attend.d_k_is" if result.query.cols == d_k else "attend.d_k_given"
        intro = [Paragraph("attend.scale_by", {"scale": SqrtDk(d_k)}),
                 Paragraph(why, {"d": result.query.cols, "d_k": Eq(Name("d_k"), d_k)})]
    return [*intro, Scaling(scale, d_k, result.divisor, result.scores, result.scaled, tokens, result.softmax.known)]


def raw_scores(scores: tuple[Expr, ...], known: engine.Numbers) -> list[Step]:
    """The raw scores as one vector (symbolic scores are long: the dot products already show them)."""
    if any_symbolic(scores):
        return []
    return [Paragraph("attend.raw_scores"),
            VectorEquation(None, Shown(ImmutableMatrix([list(scores)]), uniform=False, known=known))]


def result_step(name: Name, output: ImmutableMatrix, known: engine.Numbers) -> Step:
    """The output vector; a symbolic one is the weighted sum of Step 5, too long to repeat."""
    if any_symbolic(output):
        return Paragraph("attend.symbolic_result", {"z": name})
    return Result(name, Shown(output, known=known))


def softmax_step(softmax: engine.Softmax, tokens: tuple[str, ...]) -> SoftmaxStep:
    """The softmax of one query written out, from its exact forms."""
    return SoftmaxStep(softmax.logits, softmax.exps, softmax.total, softmax.weights, tokens, softmax.known)


def strongest(tokens: tuple[str, ...], scores: tuple[Expr, ...], known: engine.Numbers | None = None) -> str | None:
    """The token with the largest weight (the largest score), when there is exactly one. Compared as 40-place
    decimals from the result's numbers: SymPy orders sums of sines by evaluating them again, pair by pair."""
    if any_symbolic(scores):
        return None
    sizes = [to_decimal(score, 40, known=known) for score in scores]
    top = max(sizes)
    return None if sizes.count(top) > 1 else tokens[sizes.index(top)]


def attention_steps(query_name: Name, key_tokens: tuple[str, ...], query: Shown, K: Shown, V: Shown,
                    result: engine.QueryAttention, d_k: int, scale: Scale, step_keys: dict[str, str],
                    focus: str) -> list[Step]:
    """Scores, scaling, softmax and weighted sum for one query: the heart of every attention kind."""
    key_names = tuple(Name("K", t) for t in key_tokens)
    value_names = tuple(Name("V", t) for t in key_tokens)
    weights, known = result.softmax.weights, result.softmax.known
    top = strongest(key_tokens, result.scores, known)
    steps: list[Step] = [
        Heading(2, step_keys["scores"], {"token": Token(focus)}),
        Paragraph("attend.query_is", {"token": Token(focus)}),
        VectorEquation(query_name, query),
        Paragraph("attend.dot_products"),
        DotProducts(query_name, key_names, query, K.rows, result.scores, known),
        *raw_scores(result.scores, known),
        *scaling_steps(scale, d_k, result, key_tokens),
        Heading(2, step_keys["softmax"], {"token": Token(focus)}),
        softmax_step(result.softmax, key_tokens),
        Paragraph("attend.softmax_note", note=True),
    ]
    if top is not None:
        steps.append(Paragraph("attend.strongest", {"token": Token(focus), "strongest": Token(top)}))
    steps += [
        Heading(2, step_keys["sum"], {"token": Token(focus)}),
        Paragraph("attend.values"),
        VectorList(value_names, V.rows),
        Paragraph("attend.weighted_sum_symbolic" if any_symbolic(result.output) else "attend.weighted_sum"),
        WeightedSum(weights, V.rows, result.output, key_tokens, known),
    ]
    return steps


def matrix_form_steps(result: engine.Attention, n: int, d_k: int, scale: Scale, Q: Shown, K: Shown,
                      V: Shown) -> list[Step]:
    """All n queries at once: S = QKᵀ, its scaling, the row-wise softmax A and A·V."""
    form = engine.matrix_form([result.queries[i] for i in range(n)])
    return [
        Heading(2, "matrix.heading"),
        Paragraph("matrix.intro"),
        MatrixFormStep(Q, K, V, form, scale, d_k, scale.divisor(d_k), result.known),
    ]


def heatmap(queries: tuple[str, ...], keys: tuple[str, ...], result: engine.Attention,
            rows: tuple[int, ...]) -> list[Step]:
    """The weights of the derived queries as a heatmap (numbers only: symbols have no shade)."""
    weights = ImmutableMatrix([list(result.queries[i].softmax.weights) for i in rows])
    if any_symbolic(weights):
        return []
    return [Heading(2, "heatmap.heading"), Paragraph("heatmap.intro"), Heatmap(queries, keys, weights, result.known)]
