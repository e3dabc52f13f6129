"""Steps that several kinds lay out alike: inputs as shown, projections, and one query's scores, scaling, softmax
and weighted sum."""

from __future__ import annotations

from dataclasses import replace

from sympy import Expr, ImmutableMatrix

from .. import engine
from ..engine import any_symbolic
from ..model import (
    Display,
    DotProducts,
    Eq,
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
    VectorEquation,
    VectorList,
    WeightedSum,
    WrittenHeading,
)
from ..spec.model import Scale, Section
from .sentences import heading, say, weight_sentences


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
                  facts: Facts) -> list[Step]:
    """Why and how the scores are scaled, then the scaling of each score."""
    if scale.mode == "none":
        return [say("attend.no_scaling", facts, {"a": Name("a"), "s": Name("s")})]
    if scale.mode == "number":
        intro = [say("attend.scale_by_number", facts, {"c": Num(result.divisor)})]
    else:
        # d_k is the length of q and k unless the spec sets it.
        why = "attend.d_k_is" if result.query.cols == d_k else "attend.d_k_given"
        intro = [say("attend.scale_by", facts, {"scale": SqrtDk(d_k)}),
                 Paragraph(why, {"d": result.query.cols, "d_k": Eq(Name("d_k"), d_k), "q": Name("q", facts.token),
                                 "k": Name("k", label="j")})]
    return [*intro, Scaling(scale, d_k, result.divisor, result.scores, result.scaled, tokens, result.softmax.known)]


def raw_scores(scores: tuple[Expr, ...], known: engine.Numbers) -> list[Step]:
    """The raw scores as one vector (symbolic scores are long: the dot products already show them)."""
    if any_symbolic(scores):
        return []
    return [Paragraph("attend.raw_scores"),
            VectorEquation(None, Shown(ImmutableMatrix([list(scores)]), uniform=False, known=known))]


def result_step(name: Name, output: ImmutableMatrix, known: engine.Numbers, facts: Facts, sum_step: int) -> list[Step]:
    """The output vector; a symbolic one is the weighted sum of its Step `sum_step`, shown as that formula."""
    if any_symbolic(output):
        return [Display(Formula("weighted_sum", (("z", name),))),
                say("attend.symbolic_result", facts, {"z": name, "n": sum_step, "w": Formula("w_j"),
                                                      "v": Formula("v_j")})]
    return [Result(name, Shown(output, known=known))]


def softmax_step(softmax: engine.Softmax, tokens: tuple[str, ...]) -> SoftmaxStep:
    """The softmax of one query written out, from its exact forms."""
    return SoftmaxStep(softmax.logits, softmax.exps, softmax.total, softmax.weights, tokens, softmax.known)


def attention_steps(key_tokens: tuple[str, ...], query: Shown, K: Shown, V: Shown, result: engine.QueryAttention,
                    d_k: int, scale: Scale, step_keys: dict[str, str], facts: Facts, number: int,
                    letters: tuple[str, str] = ("q", "k"), after_scores: tuple[Step, ...] = ()) -> list[Step]:
    """Scores, scaling, softmax and weighted sum for the query of `facts.token`: the heart of every attention kind.
    Its steps are numbered from `number` (Step 3, 4, 5 for the first query, 6, 7, 8 for the next ...).
    `letters`: the names of the query and the keys (RoPE's rotated q̂, k̂), with step_keys["query"] the sentence
    before the query (else attend.query_is); `after_scores`: steps after the dot products (RoPE's scores in m − n)."""
    focus = facts.token
    key_names = tuple(Name(letters[1], t) for t in key_tokens)
    value_names = tuple(Name("v", t) for t in key_tokens)
    query_name = Name(letters[0], focus)
    weights, known = result.softmax.weights, result.softmax.known
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
        heading(2, step_keys["softmax"], facts, {"token": Token(focus), "n": number + 1}),
        softmax_step(result.softmax, key_tokens),
        Paragraph("attend.softmax_note", note=True),
        *weight_sentences(facts, itself=focus in key_tokens),
        heading(2, step_keys["sum"], facts, {"token": Token(focus), "n": number + 2}),
        Paragraph("attend.values"),
        VectorList(value_names, V.rows),
        say("attend.weighted_sum_symbolic" if any_symbolic(result.output) else "attend.weighted_sum", facts),
        WeightedSum(weights, V.rows, result.output, key_tokens, known),
    ]
    return steps


MATRIX_FORM = ("matrix.heading", "matrix.intro")  # the matrix form's heading and the sentence before it


def matrix_form_steps(result: engine.Attention, n: int, d_k: int, scale: Scale, Q: Shown, K: Shown,
                      V: Shown, keys: tuple[str, str] = MATRIX_FORM, rotated: bool = False) -> list[Step]:
    """All n queries at once: S = QKᵀ (S = Q̂K̂ᵀ of the rotated Q and K with RoPE), its scaling, the row-wise
    softmax A and A·V (`keys`: its heading and the sentence before it)."""
    form = engine.matrix_form([result.queries[i] for i in range(n)])
    return [
        Heading(2, keys[0]),
        Paragraph(keys[1]),
        MatrixFormStep(Q, K, V, form, scale, d_k, scale.divisor(d_k), result.known, rotated=rotated),
    ]


def heatmap(queries: tuple[str, ...], keys: tuple[str, ...], result: engine.Attention,
            rows: tuple[int, ...]) -> list[Step]:
    """The weights of the derived queries as a heatmap (numbers only: symbols have no shade)."""
    weights = ImmutableMatrix([list(result.queries[i].softmax.weights) for i in rows])
    if any_symbolic(weights):
        return []
    return [Heading(2, "heatmap.heading"), Paragraph("heatmap.intro"), Heatmap(queries, keys, weights, result.known)]
