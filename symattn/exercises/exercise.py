"""An exam version as data: what it gives, what it asks in parts (points, answers with their tolerance) and what
the paper provides. The drivers (paper, JSON, Moodle) read only this."""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from functools import lru_cache
from typing import Any

from sympy import Expr, ImmutableMatrix, cos, sin

from ..document.steps import Derivation, Name, Shown, Token
from ..engine import matrix_of_entries
from ..numbers.decimals import to_decimal
from ..numbers.display import format_number
from ..spec.model import GivenMatrix, Spec, integer_sqrt

# The writing space of a part on the paper, sized to what it asks: a base, room to write each number asked and to
# work each operation (its products, divisions and e^x, with those of the unasked parts it needs), in mm.
BASE_MM, NUMBER_MM, OPERATION_MM = 12, 2.5, 0.5
MAX_MM = 170  # at most: a part's space and its prompt stay within one page (A4 or Letter)


# How far an answer may be from the exact value, per part: (units of the last decimal asked for, the allowance
# added when √d_k is irrational). The units cover rounding at the end (half a unit) and rounded intermediates
# (weights from e^x rounded to 4 decimals, outputs from rounded weights); the allowance covers √2 ≈ 1.414 and
# 1/√2 ≈ 0.707 (|a| ≤ 3: at most 0.00045 in a scaled score, and what it moves the weights and outputs).
# tests/exam/test_tolerance.py simulates these hand routes and the common mistakes on random versions.
TOLERANCES = {"qkv": ("0.5", "0"), "scores": ("0.5", "0"), "scaled": ("0.5", "0.0005"), "weights": ("2", "0.0002"),
              "output": ("10", "0.001")}
EXACT_TOLERANCE = ("0.5", "0")  # a part of another key: exact values, rounded at the end


@lru_cache(maxsize=256)  # a few parts, digits and d_k
def tolerance(digits: int, part: str, d_k: int = 1) -> str:
    """The tolerance of a part's answers at `digits` decimals for a problem with this d_k (±, as a decimal string):
    the one source Moodle, Canvas, the key and the solutions sheet print."""
    units, allowance = TOLERANCES.get(part, EXACT_TOLERANCE)
    value = Decimal(units).scaleb(-digits) + (Decimal(allowance) if integer_sqrt(d_k) is None else 0)
    return format(value.normalize(), "f")


def accepted(value: Expr, tolerance: str, digits: int, known=None) -> tuple[Decimal, Decimal]:
    """The smallest and largest answer written to `digits` decimals within exact value ± tolerance (what the
    solutions sheet and Canvas accept)."""
    exact, tol, unit = to_decimal(value, 20, known=known), Decimal(tolerance), Decimal(1).scaleb(-digits)
    return (exact - tol).quantize(unit, ROUND_CEILING), (exact + tol).quantize(unit, ROUND_FLOOR)


def with_tolerances(parts: tuple[Part, ...], d_k: int, digits: int) -> tuple[Part, ...]:
    """The parts with the tolerances of a problem with this d_k (part() assumes an integer √d_k; those that have
    it already are kept)."""
    return tuple(p if p.tolerance == (t := tolerance(digits, p.accuracy or p.key, d_k)) else replace(p, tolerance=t)
                 for p in parts)


def exp_rows(table: tuple[tuple[Expr, str], ...]) -> list[tuple[str, str]]:
    """The rows of the paper's e^x table (Exercise.exp_table) as printed: x exactly, e^x as the table rounds it."""
    return [(format_number(x, 10).text, e) for x, e in table]


def angle_rows(angles: tuple[Expr, ...], digits: int) -> list[tuple[str, str, str]]:
    """The rows of the paper's cos/sin table (RoPE's angles) as printed: φ exactly, cos φ and sin φ with two more
    decimals than the answers."""
    return [(format_number(a, 10).text, format_number(cos(a), digits + 2).text, format_number(sin(a), digits + 2).text)
            for a in angles]


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
    space: str  # set with the points (exam/points.py: writing_space), "" until then
    tolerance: str
    work: Work = NO_WORK
    accuracy: str = ""  # the attention part whose tolerance this part's answers share (""; its own key's)


def part(key: str, question: str, params: dict[str, Any], answers: list[Answer], digits: int, work: Work) -> Part:
    """A part with the space and tolerance of its key; its points follow from its work once the asked parts are
    known (exam/points.py)."""
    return Part(key, question, params, tuple(answers), 0, "", tolerance(digits, key), work)


def writing_space(part: Part) -> str:
    """A part's writing space on the paper (BASE_MM, NUMBER_MM, OPERATION_MM), from its answers and its work."""
    numbers = sum(len(column.entries) for a in part.answers for column in (a.columns if isinstance(a, AnswerTable)
                                                                          else (a.values,)))
    return f"{min(MAX_MM, BASE_MM + NUMBER_MM * numbers + OPERATION_MM * part.work.operations):g}mm"


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
    # the new kinds' exams (drawing.py): the sentence said instead of exam.focus (None: exam.focus), the section
    # of the language strings softmax_table and softmax_calculator ("": no softmax), and the angles of the paper's
    # cos/sin table (RoPE; None: no table)
    task: tuple[str, dict[str, Any]] | None = None
    softmax: str = "exam"
    angles: tuple[Expr, ...] | None = None

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
    task: tuple[str, dict[str, Any]] | None = None  # as Exercise's (the new kinds' exams)
    softmax: str = "exam"
    angles: tuple[Expr, ...] | None = None


def row(values) -> ImmutableMatrix:
    """A tuple of values as a row vector."""
    values = tuple(values)
    return matrix_of_entries(1, len(values), values)


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
    return {"token": Token(focus), "W_O": Name("W_O"), "d_k": Name("d_k"), "z": Name("z")}
