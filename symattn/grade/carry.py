"""Error carried forward: each later blank's value recomputed from the student's own earlier answers (as STACK's
follow-through marking does), with the guard against answers that make the later work trivial.

A part's carried values come from the answers it builds on: the raw scores from the student's query row and keys
(q · k_j), the scaled scores from their raw scores (÷ the exam's √d_k), the weights from their scaled scores
(softmax), an output from their weights and values (Σ_j w_j v_j), multi-head's concatenation from their head
outputs and the final output from their concatenation (else their head outputs) times W_O. Nothing is carried
from an answer that is trivial where the true one is not: all entries equal (all zeros included: the scores,
scaled scores, weights, query or concatenation) or all rows equal (keys, values), within the tolerance of the
part carried into, or weights with at most one entry above it (the output is then a value row copied). Computed
to 80 significant digits (exactly where the value is a decimal of that length)."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from .exam import GradedBlank, GradedVersion
from .numbers import working

Matrix = dict[tuple[int, int], Decimal | None]  # (row, column) from 1 -> value


@dataclass
class Carried:
    """The carried value of each blank that has one, and why the others of a carrying part have none."""

    values: dict[str, Decimal] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)  # blank id -> the language key of the guard's reason


class Quantities:
    """A version's quantities by (role, head), as matrices of the given answers (the student's, or the true)."""

    def __init__(self, version: GradedVersion, answers: dict[str, Decimal | None]) -> None:
        self.blanks: dict[tuple[str | None, int | None], list[GradedBlank]] = {}
        self.values: dict[tuple[str | None, int | None], Matrix] = {}
        self.ambiguous = False  # two blanks at one place of one quantity: the version is not one the grader knows
        for blank in version.blanks:
            if blank.role is None:
                continue
            self.blanks.setdefault((blank.role, blank.head), []).append(blank)
            place = self.values.setdefault((blank.role, blank.head), {})
            self.ambiguous |= (blank.row, blank.column) in place
            place[(blank.row, blank.column)] = answers.get(blank.id)

    def matrix(self, role: str, head: int | None) -> list[list[Decimal | None]] | None:
        found = self.values.get((role, head))
        if not found:
            return None
        rows, cols = max(r for r, _ in found), max(c for _, c in found)
        return [[found.get((r, c)) for c in range(1, cols + 1)] for r in range(1, rows + 1)]

    def vector(self, role: str, head: int | None) -> list[Decimal | None] | None:
        matrix = self.matrix(role, head)
        return None if matrix is None else [v for row in matrix for v in row]


def carry(version: GradedVersion, answers: dict[str, Decimal | None]) -> Carried:
    """The carried values of a student's answers (None: not answered)."""
    student = Quantities(version, answers)
    true = Quantities(version, {b.id: b.answer for b in version.blanks})
    tolerance = {b.id: p.tolerance for p in version.parts for b in p.blanks}
    out = Carried()
    if student.ambiguous:
        return out
    with working():
        for head in version.divisors:
            for role, computed, reason in _steps(version, student, true, head, tolerance):
                _file(out, student.blanks.get((role, head), []), computed, reason)
        if version.W_O is not None:
            _multi(version, student, true, tolerance, out)
    return out


def _file(out: Carried, blanks: list[GradedBlank], computed: list[Decimal | None] | None, reason: str | None) -> None:
    for blank in blanks:
        if reason is not None:
            out.refused[blank.id] = reason
        elif computed is not None and blank.column <= len(computed) and computed[blank.column - 1] is not None:
            out.values[blank.id] = computed[blank.column - 1]


def _steps(version: GradedVersion, student: Quantities, true: Quantities, head: int | None,
           tolerance: dict[str, Decimal]):
    """(role, carried vector or None, the guard's reason or None) of one head's scores, scaled, weights, output."""
    tol = _tolerance(student, tolerance, "scores", head)
    query = version.query
    q_rows, keys = student.matrix(query, head), student.matrix("K", head)
    if q_rows is not None and keys is not None:
        row = version.focus_row if query == "Q" else 1
        q = q_rows[row - 1]
        true_q = true.matrix(query, head)[row - 1]
        reason = _guard(q, true_q, tol, "grade.trivial_query") or _rows_guard(keys, true.matrix("K", head), tol)
        yield "scores", [_dot(q, k) for k in keys], reason
    scores = student.vector("scores", head)
    if scores is not None:
        reason = _guard(scores, true.vector("scores", head), _tolerance(student, tolerance, "scaled", head),
                        "grade.trivial_scores")
        yield "scaled", [None if s is None else s / version.divisors[head] for s in scores], reason
    scaled = student.vector("scaled", head)
    if scaled is not None:
        reason = _guard(scaled, true.vector("scaled", head), _tolerance(student, tolerance, "weights", head),
                        "grade.trivial_scores")
        yield "weights", softmax(scaled), reason
    weights, values = student.vector("weights", head), student.matrix("V", head)
    if weights is not None and values is not None:
        tol = _tolerance(student, tolerance, "output", head)
        reason = (_guard(weights, true.vector("weights", head), tol, "grade.trivial_weights", peaked=True)
                  or _rows_guard(values, true.matrix("V", head), tol))
        yield "output", weighted(weights, values), reason


def _multi(version: GradedVersion, student: Quantities, true: Quantities, tolerance: dict[str, Decimal],
           out: Carried) -> None:
    """Multi-head: the concatenation from the head outputs, the final output from the concatenation × W_O."""
    heads = [student.vector("output", h) for h in sorted(version.divisors)]
    joined = None if any(h is None for h in heads) else [v for h in heads for v in h]
    _file(out, student.blanks.get(("concat", None), []), joined, None)
    concat = student.vector("concat", None) or joined
    if concat is None or version.W_O is None:
        return
    true_concat = true.vector("concat", None) or [v for h in sorted(version.divisors)
                                                  for v in true.vector("output", h) or []]
    tol = _tolerance(student, tolerance, "final", None)
    reason = _guard(concat, true_concat, tol, "grade.trivial_concat")
    columns = list(zip(*version.W_O, strict=True))
    final = [_dot(concat, list(column)) for column in columns] if len(concat) == len(version.W_O) else None
    _file(out, student.blanks.get(("final", None), []), final, reason)


def _tolerance(student: Quantities, tolerance: dict[str, Decimal], role: str, head: int | None) -> Decimal:
    blanks = student.blanks.get((role, head)) or [next(iter(student.blanks.values()))[0]]
    return tolerance[blanks[0].id]


def trivial(values: list[Decimal | None], tol: Decimal, peaked: bool = False) -> bool:
    """All entries equal within the tolerance; with `peaked` (weights) also: at most one entry above it."""
    given = [v for v in values if v is not None]
    if len(given) < 2:
        return False
    return max(given) - min(given) <= tol or (peaked and sum(1 for v in given if abs(v) > tol) <= 1)


def _guard(values, true, tol: Decimal, reason: str, peaked: bool = False) -> str | None:
    return reason if trivial(values, tol, peaked) and not trivial(true or [], tol, peaked) else None


def _rows_guard(rows, true_rows, tol: Decimal) -> str | None:
    """Keys or values whose rows are all equal (every score, or every output, the same whatever the weights)."""
    def same(matrix) -> bool:
        given = [r for r in matrix if None not in r]
        return len(given) >= 2 and all(abs(a - b) <= tol for r in given[1:] for a, b in zip(r, given[0], strict=True))

    return "grade.trivial_rows" if same(rows) and not same(true_rows or []) else None


def _dot(a: list[Decimal | None], b: list[Decimal | None]) -> Decimal | None:
    if None in a or None in b or len(a) != len(b):
        return None
    return sum((x * y for x, y in zip(a, b, strict=True)), Decimal(0))


def softmax(logits: list[Decimal | None]) -> list[Decimal | None]:
    if None in logits or max(abs(v) for v in logits) > 10**6:  # exp of a typed 1e6 has no place on a paper
        return [None] * len(logits)
    top = max(logits)
    exps = [(v - top).exp() for v in logits]
    total = sum(exps, Decimal(0))
    return [e / total for e in exps]


def weighted(weights: list[Decimal | None], values: list[list[Decimal | None]]) -> list[Decimal | None]:
    if len(weights) != len(values):
        return [None] * (len(values[0]) if values else 0)
    return [_dot(weights, [row[c] for row in values]) for c in range(len(values[0]))]
