"""The likely cause of a wrong answer, by recomputing the exercise under a few hypotheses and keeping the first
that reproduces the answer within the part's tolerance.

A seam: `symattn check` (symattn/check/) diagnoses printed numbers with the full set of hypotheses and the same
cause names; once it is merged, cause_of() should ask it instead. Until then this module knows the mistakes an
exam shows: no_scaling (the scores not divided by √d_k), scaled_by_d_k (divided by d_k), transposed (a weight
matrix used transposed in Q, K or V), rounding (one unit off in the last digit written), typo (one digit wrong or
two neighbours swapped), else unknown. Each hypothesis is tried on the true earlier values and on the student's
own."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from .carry import Quantities, softmax, weighted
from .exam import GradedBlank, GradedVersion
from .numbers import places, working

CAUSES = ("rounding", "renormalised", "rounded_intermediates", "no_scaling", "scaled_by_d_k", "transposed",
          "softmax_axis", "mask", "pe_index", "typo", "unknown")


@dataclass(frozen=True)
class Cause:
    """A diagnosis: one of CAUSES, and the language key of its one-line explanation (grade.cause.<name>)."""

    name: str

    @property
    def explanation(self) -> str:
        return f"grade.cause.{self.name}"


def cause_of(version: GradedVersion, blank: GradedBlank, written: str, answers: dict[str, Decimal | None],
             tolerance: Decimal) -> Cause:
    """The likely cause of the wrong answer `written` in `blank` (answers: the student's, parsed)."""
    value = answers.get(blank.id)
    if value is None:
        return Cause("unknown")
    for name, alternatives in _hypotheses(version, blank, answers):
        if any(alt is not None and abs(value - alt) <= tolerance for alt in alternatives):
            return Cause(name)
    if abs(value - blank.answer) <= Decimal(1).scaleb(-places(written)) and places(written) > 0:
        return Cause("rounding")
    if _typo(written, blank.answer):
        return Cause("typo")
    return Cause("unknown")


def _hypotheses(version: GradedVersion, blank: GradedBlank, answers: dict[str, Decimal | None]):
    """(cause, the values the blank would have under it) for the blank's role."""
    head = blank.head if blank.role not in ("concat", "final") else None
    if blank.role in ("Q", "K", "V", "q"):
        yield "transposed", [_transposed(version, blank)]
        return
    if blank.role not in ("scaled", "weights", "output") or head not in version.d_k:
        return
    student = Quantities(version, answers)
    true = Quantities(version, {b.id: b.answer for b in version.blanks})
    d_k = Decimal(version.d_k[head])
    for name, divisor in (("no_scaling", Decimal(1)), ("scaled_by_d_k", d_k)):
        if divisor == version.divisors[head]:
            continue
        found = []
        with working():
            for source in (true, student):
                scores = source.vector("scores", head)
                if scores is None or None in scores:
                    continue
                scaled = [s / divisor for s in scores]
                if blank.role == "scaled":
                    found.append(scaled[blank.column - 1])
                    continue
                weights = softmax(scaled)
                if blank.role == "weights":
                    found.append(weights[blank.column - 1])
                    continue
                values = source.matrix("V", head)
                if values is not None:
                    found.append(weighted(weights, values)[blank.column - 1])
        yield name, found


def _transposed(version: GradedVersion, blank: GradedBlank) -> Decimal | None:
    """The blank's entry of X·Wᵀ (memory·Wᵀ for a cross-attention key or value) when W is square."""
    letter = "Q" if blank.role in ("Q", "q") else blank.role
    W = version.given(f"W_{letter}", blank.head)
    X = version.given("memory" if version.memory and letter in "KV" else "X")
    if W is None or X is None or len(W) != len(W[0]) or blank.row > len(X):
        return None
    with working():
        return sum((x * W[blank.column - 1][k] for k, x in enumerate(X[blank.row - 1])), Decimal(0))


def _typo(written: str, answer: Decimal) -> bool:
    """The typed digits are the answer's at the same decimals but for one digit, or two neighbours swapped (with
    at least two decimals, unless the answer has fewer)."""
    typed = written.strip().replace("\u2212", "-")
    negative, typed = typed.startswith("-"), typed.lstrip("+-").replace(",", ".")
    if "e" in typed.lower() or negative != (answer < 0):
        return False
    own = -answer.normalize().as_tuple().exponent  # the decimals the answer needs (30 or so: it does not end)
    if places(written) < min(max(own, 0), 2):  # a slip of one digit, not an answer to one decimal
        return False
    shown = format(abs(answer).quantize(Decimal(1).scaleb(-places(written)), rounding=ROUND_HALF_UP), "f")
    if len(typed) != len(shown) or typed == shown:
        return False
    diff = [k for k, (a, b) in enumerate(zip(typed, shown, strict=True)) if a != b]
    if len(diff) == 1:
        return typed[diff[0]].isdigit()
    return len(diff) == 2 and diff[1] == diff[0] + 1 and typed[diff[0]] == shown[diff[1]] and \
        typed[diff[1]] == shown[diff[0]]
