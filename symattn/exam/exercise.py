"""An exam version as data: what it gives, what it asks in parts (points, answers with their tolerance) and what
the paper provides. The drivers (paper, JSON, Moodle) read only this."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sympy import Expr, ImmutableMatrix

from ..model import Derivation, Name, Shown, Token
from ..spec.model import GivenMatrix, Spec

SPACE = {"qkv": "5cm", "scores": "2.5cm", "scaled": "2.5cm", "weights": "3.5cm", "output": "3cm"}


def tolerance(digits: int, part: str) -> str:
    """How far an answer may be from the exact value. Exact values (Q, K, V, scores, scaled scores): half a unit
    in the last place asked for (±0.00005 at 4 decimals). Weights: one unit, as they are divided out of rounded
    e^x. Outputs: ten units, as students sum rounded weights times the values."""
    units = {"weights": Decimal(10), "output": Decimal(100)}.get(part, Decimal(5))
    return format(units.scaleb(-(digits + 1)).normalize(), "f")


# ---------------------------------------------------------------- what is given


@dataclass(frozen=True)
class GivenTable:
    """Input rows, one per token, under a header (language keys of the token column and of the vectors)."""

    token_key: str
    header_key: str
    tokens: tuple[str, ...]
    matrix: GivenMatrix


@dataclass(frozen=True)
class GivenVector:
    """One token's input row, named (x_token)."""

    name: Name
    token: str
    matrix: GivenMatrix


@dataclass(frozen=True)
class GivenNamed:
    """A named input matrix (W_Q = ...)."""

    name: Name
    matrix: GivenMatrix


Given = GivenTable | GivenVector | GivenNamed


# ---------------------------------------------------------------- what is asked


@dataclass(frozen=True)
class AnswerVector:
    """A named vector of answers (s = [...], z_token = [...])."""

    name: Name
    values: Shown

    @property
    def entries(self) -> tuple[Expr, ...]:
        return self.values.entries


@dataclass(frozen=True)
class AnswerTable:
    """A table of answers, one row per token: header (the token column's language key, then the columns' names)."""

    header: tuple[str | Name, ...]
    tokens: tuple[str, ...]
    columns: tuple[Shown, ...]


Answer = AnswerVector | AnswerTable


@dataclass(frozen=True)
class Work:
    """What a part costs by hand: its scalar products (a·b, as in Q = XW_Q, q·k, Σ w·v, z·W_O) and its operations
    (the products, plus a division per scaled score and an e^x and a division per weight). Points follow the
    operations (exam/points.py)."""

    products: int
    operations: int

    def __add__(self, other: Work) -> Work:
        return Work(self.products + other.products, self.operations + other.operations)


NO_WORK = Work(0, 0)


def attention_work(queries: int, keys: int, d: int, d_k: int, d_v: int, heads: int = 1) -> dict[str, Work]:
    """The work of the five parts for `heads` heads of attention, each with `queries` rows of Q asked, `keys` keys
    and values, inputs of width d, and one query's scores, weights and output."""
    qkv = heads * (queries + keys) * d * d_k + heads * keys * d * d_v
    return {"qkv": Work(qkv, qkv), "scores": Work(heads * keys * d_k, heads * keys * d_k),
            "scaled": Work(0, heads * keys), "weights": Work(0, 2 * heads * keys),
            "output": Work(heads * keys * d_v, heads * keys * d_v)}


@dataclass(frozen=True)
class Part:
    """One part of the question: its language key and parameters, its points, the writing space on the paper, the
    tolerance of its answers, the answers, and its work (with that of the parts before it that were not asked)."""

    key: str  # qkv, scores, scaled, weights, output
    question: str  # the language key of the part's question
    params: dict[str, Any]
    answers: tuple[Answer, ...]
    points: int
    space: str
    tolerance: str
    work: Work = NO_WORK


def part(key: str, question: str, params: dict[str, Any], answers: list[Answer], digits: int, work: Work) -> Part:
    """A part with the space and tolerance of its key; its points follow from its work once the asked parts are
    known (exam/points.py)."""
    return Part(key, question, params, tuple(answers), 0, SPACE[key], tolerance(digits, key), work)


@dataclass(frozen=True)
class Exercise:
    """One version: its label, spec (as data and parsed), worked solution, what it gives and asks."""

    label: str
    data: dict[str, Any]
    spec: Spec
    derivation: Derivation
    intro: tuple[str, dict[str, Any]]  # the language key and parameters of the sentence before the inputs
    given: tuple[Given, ...]
    focus: str
    d_k: int
    parts: tuple[Part, ...]
    # the paper's fixed e^x table, (x exactly, e^x rounded to digits + 2 decimals) per row; None: a calculator
    exp_table: tuple[tuple[Expr, str], ...] | None = None

    @property
    def points(self) -> int:
        return sum(p.points for p in self.parts)

    @property
    def workload(self) -> Work:
        """The work of the asked parts, with the unasked parts they need: the same for every version of an exam."""
        return sum((p.work for p in self.parts), NO_WORK)


@dataclass(frozen=True)
class Asked:
    """What a kind's exercise() gives: the inputs, the focus, d_k, the parts and the scaled scores met."""

    intro: tuple[str, dict[str, Any]]
    given: tuple[Given, ...]
    focus: str
    d_k: int
    parts: tuple[Part, ...]
    scaled: tuple[tuple[Expr, ...], ...]


def row(values) -> ImmutableMatrix:
    """A tuple of values as a row vector."""
    return ImmutableMatrix([list(values)])


def query_parts(focus: str, query, qkv: list[Answer], question_key, params: dict[str, Any],
                digits: int, work: dict[str, Work]) -> tuple[Part, ...]:
    """The five parts of one query's attention: Q/K/V, raw scores, scaled scores, weights, output, with the work
    of each (attention_work)."""
    known = query.softmax.known
    answers = {"scores": AnswerVector(Name("s"), Shown(row(query.scores), uniform=False, known=known)),
               "scaled": AnswerVector(Name("a"), Shown(row(query.scaled), uniform=False, known=known)),
               "weights": AnswerVector(Name("w"), Shown(row(query.softmax.weights), known=known)),
               "output": AnswerVector(Name("z", focus), Shown(query.output, known=known))}
    return (part("qkv", question_key("qkv"), params, qkv, digits, work["qkv"]),
            *(part(key, question_key(key), params, [answer], digits, work[key]) for key, answer in answers.items()))


def focus_params(focus: str) -> dict[str, Any]:
    """The parameters every part's question may use."""
    return {"token": Token(focus), "W_O": Name("W_O")}
