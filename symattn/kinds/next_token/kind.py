"""Next-token prediction: the decoder's final state of one position mapped to a logit per vocabulary entry
(x·W_vocab + b, or x·Eᵀ + b with tied embeddings), divided by a temperature, turned into probabilities by a
softmax, ranked, and the greedy pick; with top-k, the k largest kept and renormalised. What the article leaves out
at its end."""

from __future__ import annotations

import itertools
import unicodedata
from dataclasses import dataclass
from typing import Any

from sympy import Expr, ImmutableMatrix, Integer

from ... import engine
from ...document import sentences
from ...document.sentences import heading, say
from ...document.steps import (
    Eq,
    Facts,
    Formula,
    MatrixEquation,
    Name,
    Num,
    Paragraph,
    Shown,
    SoftmaxStep,
    Step,
    Token,
    Tokens,
    VectorEquation,
)
from ...errors import SpecError
from ...features.attention.answers import exact_texts, row_texts
from ...features.attention.solution import part_heading
from ...numbers import certify
from ...numbers.exact_latex import exact_latex, exponential_latex, normaliser_latex
from ...numbers.significant import asked, significant_approximation
from ...spec import fields
from ...spec.model import GivenMatrix, Section
from ...spec.numbers import parse_number
from ...spec.vectors import vector
from ..base import Kind, Size
from ..carried import rows_error
from . import engine as vocab
from .steps import LogitLines, RankingTable, TemperatureLines


@dataclass(frozen=True)
class NextTokenFacts(Facts):
    """A prediction's facts: the vocabulary ranked, in groups of exactly equal logits (largest first), and the k of
    top-k (0: none)."""

    ties: tuple[tuple[str, ...], ...] = ()
    top_k: int = 0


def cut_tie(facts: NextTokenFacts) -> tuple[str, ...]:
    """The entries of equal logits that top-k's k-th place cuts through (some kept, some not), else ()."""
    start = 0
    for group in facts.ties:
        if start < facts.top_k < start + len(group):
            return group
        start += len(group)
    return ()


# the conditional sentences this folder says, and what must be true of their facts (document/sentences.py)
sentences.contribute({
    # next-token prediction (kinds/next_token/kind.py): a tie is said only where logits are exactly equal
    "next_token.predicted": lambda f: len(f.ties[0]) == 1,
    "next_token.predicted_tie": lambda f: len(f.ties[0]) > 1,
    "next_token.rank_ties": lambda f: any(len(group) > 1 for group in f.ties),
    "next_token.top_k_cut": lambda f: bool(cut_tie(f)),
    "next_token.top_k_one": lambda f: f.top_k == 1,
    "next_token.sampling": lambda f: f.top_k > 1,
})


@dataclass(frozen=True)
class NextTokenSpec(Section):
    """One position's next-token prediction: `weights` is W_vocab (d × |V|) or, tied, the embeddings E (|V| × d)."""

    kind = "next_token"
    tokens: tuple[str, ...]
    X: GivenMatrix
    focus: str
    vocabulary: tuple[str, ...]
    weights: GivenMatrix
    tied: bool
    bias: GivenMatrix | None
    temperature: Expr
    top_k: int | None

    @property
    def projection(self) -> ImmutableMatrix:
        """The d × |V| matrix the state is multiplied by: W_vocab, or Eᵀ when tied (PyTorch's weight tying)."""
        return self.weights.values.T if self.tied else self.weights.values

    @property
    def state(self) -> ImmutableMatrix:
        return self.X.values[self.tokens.index(self.focus), :]


class NextTokenKind(Kind):
    name = NextTokenSpec.kind
    examinable = True
    stages = ("logits", "probabilities")  # `symattn worksheet --blanks`

    def stage_of(self, step: Step) -> str | None:
        return {LogitLines: "logits", TemperatureLines: "logits", SoftmaxStep: "probabilities"}.get(type(step))
    exam_module = "exam"  # its exam: kinds/next_token/exam.py
    keys = frozenset({"kind", "tokens", "X", "focus", "vocabulary", "W_vocab", "tied", "embeddings", "b_vocab",
                      "temperature", "top_k", "heading"})

    def parse(self, data: dict[str, Any], field: str) -> NextTokenSpec:
        tokens = fields.tokens(fields.require(data, "tokens", field), f"{field}.tokens")
        X = _numeric(fields.matrix(fields.require(data, "X", field), f"{field}.X"), f"{field}.X")
        fields.rows_match(X, len(tokens), f"{field}.X", "tokens")
        vocabulary = fields.tokens(fields.require(data, "vocabulary", field), f"{field}.vocabulary")
        tied = data.get("tied", False)
        if not isinstance(tied, bool):
            raise SpecError(f"{field}.tied", f"expected true or false, got {tied!r}")
        d, size = X.shape[1], len(vocabulary)
        if tied:
            if "W_vocab" in data:
                raise SpecError(f"{field}.W_vocab", "give either W_vocab or tied = true with embeddings, not both")
            weights = _numeric(fields.matrix(fields.require(data, "embeddings", field), f"{field}.embeddings"),
                               f"{field}.embeddings")
            fields.rows_match(weights, size, f"{field}.embeddings", "vocabulary entries (one row each)")
            if weights.shape[1] != d:
                raise SpecError(f"{field}.embeddings", f"{weights.shape[1]} columns, but X has {d} (the model width)")
        else:
            if "embeddings" in data:
                raise SpecError(f"{field}.embeddings", "applies with tied = true (logits = x·Eᵀ); without it give "
                                                       "W_vocab")
            weights = _numeric(fields.matrix(fields.require(data, "W_vocab", field), f"{field}.W_vocab"),
                               f"{field}.W_vocab")
            fields.rows_match(weights, d, f"{field}.W_vocab", "X columns (the model width)")
            if weights.shape[1] != size:
                raise SpecError(f"{field}.W_vocab", f"{weights.shape[1]} columns, but there are {size} vocabulary "
                                                    "entries (one column each)")
        bias = None
        if "b_vocab" in data:
            bias = _numeric(vector(data["b_vocab"], f"{field}.b_vocab"), f"{field}.b_vocab")
            if bias.shape[1] != size:
                raise SpecError(f"{field}.b_vocab", f"{bias.shape[1]} entries, but there are {size} vocabulary "
                                                    "entries (one each)")
        temperature = Integer(1)
        if "temperature" in data:
            temperature, _ = parse_number(data["temperature"], f"{field}.temperature")
            if temperature <= 0:
                raise SpecError(f"{field}.temperature", f"expected a number above 0, got {data['temperature']!r}")
        top_k = None
        if "top_k" in data:
            top_k = fields.positive_int(data["top_k"], f"{field}.top_k", size)
        return NextTokenSpec(tokens=tokens, X=X, focus=_focus(data.get("focus", tokens[-1]), tokens, f"{field}.focus"),
                             vocabulary=vocabulary, weights=weights, tied=tied, bias=bias,
                             temperature=temperature, top_k=top_k)

    def compute(self, section: NextTokenSpec) -> vocab.Prediction:
        return vocab.predict(section.state, section.projection, None if section.bias is None else section.bias.values,
                             section.temperature, section.top_k)

    def error_bound(self, section: NextTokenSpec, result: vocab.Prediction, errors: dict[str, float]) \
            -> certify.Bound:
        """The logits, the softmax (top-k's too: a softmax over fewer logits), and the ranking: two logits ranked
        apart must differ by more than both their errors, or the order printed is not certain."""
        e, _ = rows_error(section, errors)
        logit = e * certify.spread(section.projection)
        scaled = logit / (float(section.temperature) * (1 - 1e-12))
        for group, following in itertools.pairwise(result.ties):
            a, b = result.logits[group[-1]], result.logits[following[0]]
            if abs(float(result.known.number(a) - result.known.number(b))) <= 2 * certify.SAFETY * logit:
                raise SpecError("X", f'with carry = "full", the logits of {section.vocabulary[group[-1]]!r} and '
                                     f"{section.vocabulary[following[0]]!r} are too close to rank them for the "
                                     'unrounded chain: use carry = "shown" for this section')
        return certify.Bound(max(e, logit, scaled), certify.softmax(scaled))

    def symbolic(self, result: vocab.Prediction) -> bool:
        return False

    def stage(self, section: NextTokenSpec) -> str:
        return "next"

    def size(self, section: NextTokenSpec) -> Size:
        # the document shows W_vocab (or E) and one line of d terms per entry: a matrix of |V| × d entries, twice
        # (the given matrices count once, the lines here); solve computes a logit and a probability per entry
        v, d = len(section.vocabulary), section.X.shape[1]
        return Size(field="vocabulary", matrix=v * d, matrix_what=f"a vocabulary of {v} entries, a line of d = {d} "
                                                                  f"terms each ({v * d} entries),", work=v, lines=v)

    def steps(self, section: NextTokenSpec, result: vocab.Prediction) -> list[Step]:
        vocabulary = section.vocabulary
        ties = tuple(tuple(vocabulary[j] for j in group) for group in result.ties)
        facts = NextTokenFacts(self.name, section.focus, vocabulary, vocabulary, ties=ties, top_k=section.top_k or 0)
        n = iter(range(1, 7))  # the Steps' numbers: the temperature's and top-k's only when they are asked for
        out: list[Step] = [part_heading(section, "next_token.heading"),
                           Paragraph("next_token.intro", {"token": Token(section.focus), "count": len(vocabulary)}),
                           heading(2, "next_token.step_logits", facts, {"n": next(n)}),
                           *_logit_steps(section, result)]
        letter = "l"  # the softmax's inputs: the logits, or a_j = ℓ_j / T
        if section.temperature != 1:
            letter = "a"
            out += [heading(2, "next_token.step_temperature", facts, {"n": next(n)}),
                    Paragraph("next_token.temperature", {"T": Num(section.temperature), "a": Name("a", label="j")}),
                    TemperatureLines(section.temperature, result.logits, result.scaled, vocabulary, result.known)]
        softmax = result.softmax
        out += [heading(2, "next_token.step_softmax", facts, {"n": next(n)}),
                Paragraph("next_token.softmax", {"a": Name(letter, label="j"), "p": Name("p", label="j")}),
                SoftmaxStep(softmax.logits, softmax.exps, softmax.total, softmax.weights, vocabulary, result.known,
                            letters=(letter, "p", "Z")),
                *self._ranking(section, result, facts, next(n))]
        if result.kept is not None:
            out += [heading(2, "next_token.step_top_k", facts, {"n": next(n), "k": section.top_k}),
                    *_top_k_steps(section, result, facts, letter)]
        predicted = vocabulary[result.predicted]
        out += [heading(2, "next_token.step_predicted", facts, {"n": next(n)}),
                say("next_token.predicted" if len(ties[0]) == 1 else "next_token.predicted_tie", facts,
                    {"token": Token(predicted), "p": Eq(Name("p", predicted), softmax.weights[result.predicted]),
                     "tied": Tokens(ties[0])}, stage="weights")]
        if facts.top_k > 1:
            out.append(say("next_token.sampling", facts, {"p": Name("pt", label="j")}))
        return out

    def _ranking(self, section: NextTokenSpec, result: vocab.Prediction, facts: Facts, n: int) -> list[Step]:
        """The ranking table (equal logits share a rank), and the sentence on ties where there are any."""
        ranks, place = [], 1
        for group in result.ties:
            ranks += [place] * len(group)
            place += len(group)
        renormalised: tuple[Expr | None, ...] = ()
        if result.kept is not None:
            chosen = dict(zip(result.kept, result.renormalised.weights, strict=True))
            renormalised = tuple(chosen.get(j) for j in result.ranking)
        out: list[Step] = [heading(2, "next_token.step_ranking", facts, {"n": n}),
                           Paragraph("next_token.ranking"),
                           RankingTable(tuple(ranks), tuple(section.vocabulary[j] for j in result.ranking),
                                        tuple(result.logits[j] for j in result.ranking),
                                        tuple(result.softmax.weights[j] for j in result.ranking), renormalised,
                                        result.known)]
        if any(len(group) > 1 for group in facts.ties):
            out.append(say("next_token.rank_ties", facts))
        return out

    def answers(self, section: NextTokenSpec, result: vocab.Prediction) -> dict[str, Any]:
        vocabulary = section.vocabulary
        answer: dict[str, Any] = {
            "kind": self.name, "tokens": list(section.tokens), "focus": section.focus,
            "vocabulary": list(vocabulary), "tied": section.tied,
            "temperature": row_texts((section.temperature,))[0], "logits": row_texts(result.logits, result.known)}
        exact: dict[str, Any] = {"logits": exact_texts(result.logits)}
        if section.temperature != 1:
            answer["scaled_logits"] = row_texts(result.scaled, result.known)
            exact["scaled_logits"] = exact_texts(result.scaled)
        answer["probabilities"], exact["Z"], exact["probabilities"] = _softmax_answers(result.softmax)
        answer["ranking"] = [vocabulary[j] for j in result.ranking]
        answer["predicted"] = vocabulary[result.predicted]
        answer["ties"] = [[vocabulary[j] for j in group] for group in result.ties if len(group) > 1]
        if result.kept is not None:
            probabilities, total, forms = _softmax_answers(result.renormalised)
            answer["top_k"] = {"k": section.top_k, "tokens": [vocabulary[j] for j in result.kept],
                               "probabilities": probabilities, "exact": {"Z": total, "probabilities": forms}}
        answer["exact"] = exact
        return answer


def _softmax_answers(softmax: engine.Softmax) -> tuple[list[str | None], str, list[str]]:
    """A softmax's weights as 30-digit decimals, and exactly: Z = Σ_k e^{a_k} and each e^{a_j}/Z (equal logits:
    the common e^{a} cancels, each 1/k)."""
    numbers = softmax.numbers
    if numbers is not None and numbers.irrational:
        decimals = [significant_approximation(w, asked()) for w in numbers.weights]
    else:
        decimals = row_texts(softmax.weights, softmax.known)
    if softmax.tied:
        return decimals, exact_latex(softmax.total, decimals=False), exact_texts(softmax.weights)
    total, forms = normaliser_latex([exponential_latex(a) for a in softmax.logits])
    return decimals, total, forms


def _numeric(given: GivenMatrix, field: str) -> GivenMatrix:
    """A matrix of numbers: the ranking compares logits, which names (a, b1) would leave undecided."""
    if given.symbolic:
        raise SpecError(field, "expected numbers (the ranking compares the logits), got names such as "
                               f"{sorted(map(str, given.values.free_symbols))[0]!r}")
    return given


def _logit_steps(section: NextTokenSpec, result: vocab.Prediction) -> list[Step]:
    """The state x, the output projection (W_vocab, or E when tied), the bias, and each logit term by term."""
    state = Name("x", section.focus)
    row = Shown.input(section.X).row(section.tokens.index(section.focus))
    weights = Shown.input(section.weights)
    j = Formula("j")
    if section.tied:
        out: list[Step] = [Paragraph("next_token.tied", {"W": Name("W_vocab"), "E": Name("E"),
                                                         "e": Name("E", label="j"), "j": j}),
                           MatrixEquation(Name("E"), weights)]
        columns = weights.rows
    else:
        out = [Paragraph("next_token.projection", {"W": Name("W_vocab"), "w": Name("w", label="j"), "j": j}),
               MatrixEquation(Name("W_vocab"), weights)]
        columns = Shown(section.weights.values.T, section.weights.decimals, written=_transposed(section.weights)).rows
    bias = None if section.bias is None else Shown.input(section.bias)
    if bias is not None:
        out += [Paragraph("next_token.bias", {"b": Name("b")}), VectorEquation(Name("b"), bias)]
    key = "next_token.logits" + "_tied" * section.tied + "_bias" * (bias is not None)
    return [Paragraph("next_token.state", {"token": Token(section.focus), "x": state}), VectorEquation(state, row),
            *out, Paragraph(key, {"l": Name("l", label="j")}),
            LogitLines(state, row, "E" if section.tied else "w", columns, bias, result.logits, section.vocabulary,
                       result.known)]


def _top_k_steps(section: NextTokenSpec, result: vocab.Prediction, facts: Facts, letter: str) -> list[Step]:
    """The kept entries and their softmax renormalised over them alone; a tie the k-th place cuts, said."""
    kept = tuple(section.vocabulary[j] for j in result.kept)
    top = result.renormalised
    out: list[Step] = [say("next_token.top_k", facts, {"k": section.top_k, "kept": Tokens(kept)}),
                       SoftmaxStep(top.logits, top.exps, top.total, top.weights, kept, result.known,
                                   letters=(letter, "pt", "Zt"))]
    if cut_tie(facts):
        out.append(say("next_token.top_k_cut", facts, {"tied": Tokens(cut_tie(facts))}))
    if section.top_k == 1:
        out.append(say("next_token.top_k_one", facts, {"token": Token(kept[0])}))
    return out


def _focus(value: Any, tokens: tuple[str, ...], field: str) -> str:
    """The one position that predicts: a token name (the last token unless given)."""
    if not isinstance(value, str):
        raise SpecError(field, f"expected one token name (the position that predicts), got {value!r}")
    token = unicodedata.normalize("NFC", value)
    if token not in tokens:
        raise SpecError(field, f"no token {value!r} in tokens{fields.suggest(value, tokens)}")
    return token


def _transposed(given: GivenMatrix) -> tuple[int | None, ...]:
    """How each entry of the transposed matrix was written, row by row."""
    rows, cols = given.shape
    return tuple(given.written[i * cols + j] for j in range(cols) for i in range(rows))


NEXT_TOKEN = NextTokenKind()
