"""An exam version as data: what it gives, what it asks in parts (points, answers with their tolerance) and what
the paper provides. The drivers (paper, JSON, Moodle) read only this."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sympy import Expr, ImmutableMatrix

from ..model import Derivation, Name, Shown, Token
from ..spec.model import GivenMatrix, Spec, integer_sqrt

POINTS = {"qkv": 4, "scores": 2, "scaled": 2, "weights": 3, "output": 3}
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
class Part:
    """One part of the question: its language key and parameters, its points, the writing space on the paper, the
    tolerance of its answers, and the answers."""

    key: str  # qkv, scores, scaled, weights, output
    question: str  # the language key of the part's question
    params: dict[str, Any]
    answers: tuple[Answer, ...]
    points: int
    space: str
    tolerance: str


def part(key: str, question: str, params: dict[str, Any], answers: list[Answer], digits: int) -> Part:
    """A part with the points, space and tolerance of its key."""
    return Part(key, question, params, tuple(answers), POINTS[key], SPACE[key], tolerance(digits, key))


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
    exp_table: tuple[Expr, ...] | None = None  # the x of the paper's e^x table (None: a calculator is needed)
    # the new kinds' exams (exam/drawing.py): the sentence said instead of exam.focus (None: exam.focus), the section
    # of the language strings softmax_table and softmax_calculator ("": no softmax), and the angles of the paper's
    # cos/sin table (RoPE; None: no table)
    task: tuple[str, dict[str, Any]] | None = None
    softmax: str = "exam"
    angles: tuple[Expr, ...] | None = None

    @property
    def points(self) -> int:
        return sum(p.points for p in self.parts)


@dataclass(frozen=True)
class Asked:
    """What a kind's exercise() gives: the inputs, the focus, d_k, the parts and the scaled scores met."""

    intro: tuple[str, dict[str, Any]]
    given: tuple[Given, ...]
    focus: str
    d_k: int
    parts: tuple[Part, ...]
    scaled: tuple[tuple[Expr, ...], ...]
    task: tuple[str, dict[str, Any]] | None = None  # as Exercise's (the new kinds' exams)
    softmax: str = "exam"
    angles: tuple[Expr, ...] | None = None


def exp_table(d_k: int, scaled: tuple[tuple[Expr, ...], ...]) -> tuple[Expr, ...] | None:
    """With an integer √d_k the scaled scores are short decimals, and the paper gives e^x for each; else None."""
    if integer_sqrt(d_k) is None:
        return None
    return tuple(sorted({a for scores in scaled for a in scores}, key=float))


def row(values) -> ImmutableMatrix:
    """A tuple of values as a row vector."""
    return ImmutableMatrix([list(values)])


def query_parts(focus: str, query, qkv: list[Answer], question_key, params: dict[str, Any],
                digits: int) -> tuple[Part, ...]:
    """The five parts of one query's attention: Q/K/V, raw scores, scaled scores, weights, output."""
    known = query.softmax.known
    answers = {"scores": AnswerVector(Name("s"), Shown(row(query.scores), uniform=False, known=known)),
               "scaled": AnswerVector(Name("a"), Shown(row(query.scaled), uniform=False, known=known)),
               "weights": AnswerVector(Name("w"), Shown(row(query.softmax.weights), known=known)),
               "output": AnswerVector(Name("z", focus), Shown(query.output, known=known))}
    return (part("qkv", question_key("qkv"), params, qkv, digits),
            *(part(key, question_key(key), params, [answer], digits) for key, answer in answers.items()))


def focus_params(focus: str) -> dict[str, Any]:
    """The parameters every part's question may use."""
    return {"token": Token(focus), "W_O": Name("W_O")}
