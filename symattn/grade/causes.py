"""The likely cause of a wrong answer, in two steps.

First `symattn check`'s diagnosis of the whole sheet (diagnosed, self- and cross-attention): the student's answers
are its claims, and a hypothesis that reproduces more of them than the correct derivation names the cause of
each answer it reproduces (a mistake made throughout: every scaled score unscaled, a mask left out), with check's
hypotheses and names. What it leaves (a slip in one entry, multi-head heads) cause_of explains entry by entry:
no_scaling, scaled_by_d_k or transposed (a square weight matrix used transposed) when this entry alone follows
from them, on the true earlier values or on the student's own; then rounding (one unit off in the last digit
written), typo (check's rule), else unknown."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from ..check.claims import claims_of, path_text
from ..check.diagnose import LOCAL, diagnose, typo  # LOCAL: causes of one number alone, cause_of looks closer
from ..check.hypotheses import section_from_data
from ..errors import SpecError
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


# solve's answer keys of a query's vectors, by blank role
_QUERY_KEYS = {"scores": "scores", "scaled": "scaled_scores", "weights": "weights", "output": "output"}


def diagnosed(version: GradedVersion, written: dict[str, str | None]) -> dict[str, Cause]:
    """check's causes of a student's wrong answers, by blank id; {} for a version check cannot recompute."""
    section = section_from_data(version.section)
    if section is None or not version.answers:
        return {}
    paths = {}
    for blank in version.blanks:
        at = _path(version, blank)
        if at is not None and written.get(blank.id) not in (None, ""):
            paths[path_text(at)] = blank.id
    try:
        claims = claims_of({path: written[blank] for path, blank in paths.items()})
        findings = diagnose(None, claims, answers=version.answers, sections={0: section})
    except (SpecError, ArithmeticError, ValueError):  # a typed answer check cannot read as a printed number
        return {}
    return {paths[f.at]: Cause(f.cause) for f in findings if f.at in paths and f.cause not in LOCAL}


def _path(version: GradedVersion, blank: GradedBlank) -> tuple | None:
    """Where a blank's value is in solve's answers (sections[0]...), or None (another head's, a label's)."""
    if blank.head is not None:
        return None
    focus = version.section["focus"]
    if blank.role in ("Q", "K", "V"):
        return ("sections", 0, blank.role, blank.row - 1, blank.column - 1)
    if blank.role == "q":
        return ("sections", 0, "Q", version.section["tokens"].index(focus), blank.column - 1)
    if blank.role in _QUERY_KEYS:
        return ("sections", 0, "queries", focus, _QUERY_KEYS[blank.role], blank.column - 1)
    return None


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
    shown = format(blank.answer.quantize(Decimal(1).scaleb(-places(written)), rounding=ROUND_HALF_UP), "f")
    if places(written) >= min(max(-blank.answer.normalize().as_tuple().exponent, 0), 2) and typo(
            written.strip().replace("\u2212", "-").replace(",", "."), shown):
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
