"""Answers of attention results as plain data: decimals to 30 significant digits and exact LaTeX, read from the
engine's results (their fractions and numbers where it kept them so). Used by every attention kind's answers()."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from sympy import Expr, S

from ...engine import Attention, FractionRow, Numbers, QueryAttention, entries, is_symbolic
from ...numbers.exact_latex import (
    Coefficients,
    coefficients_latex,
    exact_latex,
    exponent_latex,
    exponential_latex,
    fraction_coefficients_latex,
    fraction_latex,
    normaliser_latex,
    output_reference_latex,
    softmax_latex,
    surd_latex,
)
from ...numbers.significant import (
    FIGURES,
    asked,
    significant,
    significant_approximation,
    significant_fraction,
    significant_surd,
)

ZERO = significant(S.Zero, FIGURES)
# The most keys whose terms an output entry's exact form writes out: each of n queries × d entries repeating n
# terms made the JSON grow as n²·d (257 MB for n = 256, d = 64).
EXPLICIT_TERMS = 16


def number_text(value: Expr, known: Numbers | None = None) -> str | None:
    """A decimal string with at least 30 significant digits; "-inf" for a masked score; None for a symbol.
    `known`: the numbers of the result the value belongs to."""
    if value.is_Rational:  # most entries: no symbol search
        return significant(value, asked())
    if is_symbolic(value):
        return None
    if value is S.Infinity or value is S.NegativeInfinity:  # a masked score (singletons: no evaluation)
        return "-inf" if value is S.NegativeInfinity else "inf"
    return significant(value, asked(), known)


# a masked logit, −∞
_MINUS_INFINITY = number_text(S.NegativeInfinity)
_MINUS_INFINITY_LATEX = exact_latex(S.NegativeInfinity, decimals=False)


def row_texts(values, known: Numbers | None = None) -> list[str | None]:
    """number_text() of each value."""
    return [number_text(v, known) for v in values]


def exact_texts(values) -> list[str]:
    return [exact_text(v) for v in values]


@lru_cache(maxsize=1 << 10)  # a multi-head row's head outputs are printed as the heads, as the concatenation, and
def exact_text(value: Expr) -> str:  # again under `queries`: SymPy's printer, slow on them, once (exact: no Floats)
    """exact_latex() without decimals."""
    return exact_latex(value, decimals=False)


def fraction_texts(fractions: FractionRow) -> list[str]:
    """row_texts() of rationals given as fractions (None: −∞)."""
    return [_MINUS_INFINITY if f is None else significant_fraction(*f, asked()) for f in fractions]


def fraction_exact_texts(fractions: FractionRow, radicand: int = 1) -> list[str]:
    """exact_texts() of the numbers c·√radicand given as fractions c (None: −∞)."""
    return [_MINUS_INFINITY_LATEX if f is None else surd_latex(*f, radicand) for f in fractions]


def query_answers(query: QueryAttention, coefficients: Coefficients) -> dict[str, Any]:
    """One query's scores, scaled scores, weights and output, as decimals and as exact LaTeX."""
    (scores, scaled), (exact_scores, exact_scaled), terms = score_texts(query)
    answer: dict[str, Any] = {"scores": scores, "scaled_scores": scaled}
    answer["weights"], answer["output"] = softmax_texts(query)
    values = query.values is not None  # without (given scores alone), the answers end at the weights
    # The softmax forms, in token order: Z = Σ_k e^{a_k}, e^{a_j} / Z and (Σ_j v_j e^{a_j}) / Z; beyond
    # EXPLICIT_TERMS keys an output entry refers to the scaled scores and V instead of repeating n terms.
    if query.softmax.tied and (not values or query.values.is_numeric):  # the common e^{a} cancels: weights 1/k,
        total = exact_latex(query.softmax.total, decimals=False)  # the mean of the values
        weights, outputs = exact_texts(query.softmax.weights), exact_texts(tuple(query.output or ()))
    elif not values:
        (total, weights), outputs = normaliser_latex(terms), []
    elif len(terms) <= EXPLICIT_TERMS:
        total, weights, outputs = softmax_latex(terms, coefficients)
    else:
        (total, weights), outputs = normaliser_latex(terms), [
            output_reference_latex(c + 1, len(terms)) for c in range(len(coefficients.columns))]
    answer["exact"] = {"scores": exact_scores, "scaled_scores": exact_scaled, "Z": total, "weights": weights,
                       "output": outputs}
    if not values:
        del answer["output"], answer["exact"]["output"]
    return answer


def score_texts(query: QueryAttention) -> tuple[list[list[str | None]], list[list[str]], list[str | None]]:
    """A query's raw and scaled scores as decimals and as exact LaTeX, and the softmax's terms e^{a_j}; read from
    their fractions when the engine kept them so (no SymPy number is made)."""
    if query.softmax.fractions is None:
        rows = (query.scores, query.scaled)
        known = query.softmax.known
        return ([row_texts(r, known) for r in rows], [exact_texts(r) for r in rows],
                [exponential_latex(a) for a in rows[1]])
    raw, logits, radicand = query.score_fractions, query.softmax.fractions, query.softmax.radicand
    if radicand == 1:
        scaled = fraction_texts(logits)
    else:  # logits c·√m (√d_k not an integer): their decimals exactly from the integers
        scaled = [_MINUS_INFINITY if f is None else ZERO if f[0] == 0 else significant_surd(*f, radicand, asked())
                  for f in logits]
    exact = fraction_exact_texts(logits, radicand)
    terms = [None if f is None else exponent_latex(text) for f, text in zip(logits, exact, strict=True)]
    return [fraction_texts(raw), scaled], [fraction_exact_texts(raw), exact], terms


def softmax_texts(query: QueryAttention) -> tuple[list[str | None], list[str | None]]:
    """The weights and outputs of a query. A numeric row's are read from the engine's numbers: its exact forms
    need not be built. Each output entry is a WeightedAverage, as irrational as the weights when they are (else
    it is read as its exact form is); a zero column gives exactly 0, as does a masked key's weight."""
    numbers = query.softmax.numbers
    if numbers is None or not numbers.irrational:
        known = query.softmax.known
        return row_texts(query.softmax.weights, known), row_texts(tuple(query.output or ()), known)
    weights = [ZERO if masked else significant_approximation(w, asked())
               for masked, w in zip(query.softmax.masked, numbers.weights, strict=True)]
    if query.values is None:
        return weights, []
    # the exact entry only where terms cancelled: building every output's exact form costs more than the softmax
    outputs = [ZERO if zero else number_text(query.output[c]) if value is None
               else significant_approximation(value, asked())
               for c, (zero, value) in enumerate(zip(query.values.zero_columns, numbers.outputs, strict=True))]
    return weights, outputs


def attention_answers(result: Attention, tokens: tuple[str, ...], names: str = "QKV") -> dict[str, Any]:
    """Q, K, V (those of `names` the section has: given scores have no Q and K, perhaps no V) and the focus
    queries of one attention computation."""
    numbers, exact, columns = projection_answers(result, names)
    queries = {tokens[i]: query_answers(q, columns) for i, q in result.queries.items()}
    return {**numbers, "queries": queries, "exact": exact}


def projection_answers(result: Attention, names: str) -> tuple[dict[str, Any], dict[str, Any], Coefficients | None]:
    """The matrices `names` (of Q, K, V) of an attention computation as decimals and as exact LaTeX, and V's
    columns as the coefficients of the output's exact forms (None without V)."""
    numbers, exact, columns = {}, {}, None
    for name in names:
        fractions = result.fractions(name)  # a rational projection's entries, without building SymPy numbers
        if fractions is None:
            rows = entries(getattr(result, name))
            numbers[name] = [row_texts(row, result.known) for row in rows]
            exact[name] = [exact_texts(row) for row in rows]
            columns = coefficients_latex(list(zip(*rows, strict=True))) if name == "V" else columns
        else:
            numbers[name] = [[significant_fraction(p, q, asked()) for p, q in row] for row in fractions]
            exact[name] = [[fraction_latex(p, q) for p, q in row] for row in fractions]
            columns = fraction_coefficients_latex(list(zip(*fractions, strict=True))) if name == "V" else columns
    return numbers, exact, columns


def scale_answers(section) -> dict[str, Any]:
    """d_k and how the scores were scaled, as the answers give them."""
    scale = section.scale
    return {"d_k": section.d_k,
            "scale": {"sqrt_d_k": "sqrt(d_k)", "none": "none"}.get(scale.mode) or number_text(scale.number)}


def positional_answers(section) -> dict[str, Any]:
    """A section's added positional encoding P and the rows X + P the projections use, as decimals ({} without
    positional encodings); positional_exact() gives their exact forms."""
    if getattr(section, "positions", None) is None:
        return {}
    return {"P": [row_texts(row) for row in entries(section.positions.P.values)],
            "X_plus_P": [row_texts(row) for row in entries(section.inputs)]}


def positional_exact(section) -> dict[str, Any]:
    """The exact forms of positional_answers() (LaTeX), for the section's `exact`."""
    if getattr(section, "positions", None) is None:
        return {}
    return {"P": [exact_texts(row) for row in entries(section.positions.P.values)],
            "X_plus_P": [exact_texts(row) for row in entries(section.inputs)]}
