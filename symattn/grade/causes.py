"""The likely cause of a wrong answer, in two steps.

First `symattn check`'s diagnosis of the whole sheet (diagnosed, self- and cross-attention): the student's answers
are its claims, and a hypothesis that reproduces more of them than the correct derivation names the cause of
each answer it reproduces (a mistake made throughout: every scaled score unscaled, a mask left out), with check's
hypotheses and names. What it leaves (a slip in one entry, multi-head heads) cause_of explains entry by entry:
no_scaling, scaled_by_d_k or transposed (a square weight matrix used transposed) when this entry alone follows
from them to the digits written, on the true earlier values or on the student's own, where the correct computation
from the same values does not, and no other explanation (w·K for w·V) does too; then rounding (one unit off in
the last digit written, or correctly rounded to fewer decimals than asked), typo (check's rule), else unknown."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from ..check.claims import claims_of, path_text
from ..check.diagnose import LOCAL, diagnose, plausible_typo  # LOCAL: causes of one number alone, cause_of looks closer
from ..check.hypotheses import section_from_data
from ..errors import SpecError
from .carry import Quantities, softmax, weighted
from .exam import GradedBlank, GradedVersion
from .numbers import exact, places, rounded, within, working

CAUSES = ("rounding", "renormalised", "rounded_intermediates", "no_scaling", "scaled_by_d_k", "transposed",
          "softmax_axis", "mask", "pe_index", "typo", "unknown")


@dataclass(frozen=True)
class Cause:
    """A diagnosis: one of CAUSES, and the language key of its one-line explanation (grade.cause.<name>)."""

    name: str
    detail: str | None = None  # a finer explanation of the same cause (too_few_decimals: a rounding)

    @property
    def explanation(self) -> str:
        return f"grade.cause.{self.detail or self.name}"


# solve's answer keys of a query's vectors, by blank role
# a rounded stage's own answers are not computed from it: weights written to 2 decimals are rounded, not carried
_STAGE_OF = {"weights": "weights", "scaled_scores": "scaled_scores", "scores": "scores"}
_QUERY_KEYS = {"scores": "scores", "scaled": "scaled_scores", "weights": "weights", "output": "output"}


def diagnosed(version: GradedVersion, written: dict[str, str | None], graded: dict[str, int] | None = None
              ) -> dict[str, Cause]:
    """check's causes of a student's wrong answers, by blank id; {} for a version check cannot recompute.
    `graded`: the decimals each blank is graded to; an answer written with fewer ("0") is checked as that exact
    value at those decimals, so that a hypothesis must reproduce it to them and not merely round to it."""
    section = section_from_data(version.section)
    if section is None or not version.answers:
        return {}
    paths = {}
    for blank in version.blanks:
        at = _path(version, blank)
        if at is not None and written.get(blank.id) not in (None, ""):
            paths[path_text(at)] = blank.id
    try:
        claims = claims_of({path: _padded(written[blank], (graded or {}).get(blank)) for path, blank in paths.items()})
        findings = diagnose(None, claims, answers=version.answers, sections={0: section})
    except (SpecError, ArithmeticError, ValueError):  # a typed answer check cannot read as a printed number
        return {}
    return {paths[f.at]: Cause(f.cause) for f in findings if f.at in paths and f.cause not in LOCAL
            and not (f.cause == "rounded_intermediates" and _STAGE_OF.get(f.claim.at[-2]) == f.stage)}


def _padded(text: str, decimals: int | None) -> str:
    """A typed answer with trailing zeros up to the decimals graded (its value unchanged)."""
    text = text.strip()
    if decimals is None or not re.fullmatch(r"[-−]?[0-9]+(?:\.[0-9]*)?", text) or places(text) >= decimals:
        return text
    return (text if "." in text else text + ".") + "0" * (decimals - places(text))


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
    """The likely cause of the wrong answer `written` in `blank` (answers: the student's, parsed): a hypothesis
    that reproduces it to the digits written, and better than the correct computation on the same values and
    than any other explanation (w·K for w·V among them); else rounding, typo or unknown. `tolerance` is the
    part's; a cause must do better than lie within it."""
    value = answers.get(blank.id)
    if value is None or blank.answer is None:  # unreadable, or a blank without an exact answer to compare
        return Cause("unknown")
    # to the digits written, and within the part's tolerance ("0" for a value of -0.125 reproduces nothing)
    decimals = places(written)
    unit = Decimal(1).scaleb(-decimals)
    with exact(unit, tolerance):
        half = min(unit / 2 * (1 + Decimal("1e-9")), tolerance)
    named = {name for name, alternatives, correct in _hypotheses(version, blank, answers)
             for alt, right in zip(alternatives, correct, strict=True)
             if alt is not None and within(value, alt, half) and (right is None or not within(alt, right, half))}
    if len(named) == 1 and "unknown" not in named:
        return Cause(named.pop())
    if named:  # two explanations reproduce it: neither is the cause
        return Cause("unknown")
    shown_value = rounded(blank.answer, decimals)  # exact, at any number of decimals written
    shown = format(shown_value, "f")
    with exact(value, shown_value, blank.answer, unit):
        one_off = abs(value - shown_value) == unit and abs(value - blank.answer) < unit
    if decimals > 0 and one_off and shown_value != blank.answer:
        return Cause("rounding")  # one unit off in the last digit, on the side the exact value allows
    if decimals > 0 and value == shown_value:
        return Cause("rounding", "too_few_decimals")  # correctly rounded, to fewer decimals than asked
    if decimals >= min(max(-blank.answer.normalize().as_tuple().exponent, 0), 3) and plausible_typo(
            written.strip().replace("\u2212", "-").replace(",", "."), shown, decimals):
        return Cause("typo")
    return Cause("unknown")


def _hypotheses(version: GradedVersion, blank: GradedBlank, answers: dict[str, Decimal | None]):
    """(cause, the values the blank would have under it, the correct computation's values from the same earlier
    values: None where the true answer is that) for the blank's role; "unknown" names a competing explanation that
    is no cause of CAUSES (an output computed with the keys for the values)."""
    head = blank.head if blank.role not in ("concat", "final") else None
    if blank.role in ("Q", "K", "V", "q"):
        yield "transposed", [_transposed(version, blank)], [None]
        return
    if blank.role not in ("scaled", "weights", "output") or head not in version.d_k:
        return
    student = Quantities(version, answers)
    true = Quantities(version, {b.id: b.answer for b in version.blanks})
    d_k = Decimal(version.d_k[head])
    for name, divisor in (("no_scaling", Decimal(1)), ("scaled_by_d_k", d_k), ("correct", version.divisors[head])):
        if name != "correct" and divisor == version.divisors[head]:
            continue
        found, right = [], []
        with working():
            for source in (true, student):
                found.append(_under(source, blank, head, divisor, "V"))
                right.append(_under(source, blank, head, version.divisors[head], "V"))
        if name == "correct":  # the keys for the values: w·K, from either source's weights
            if blank.role == "output":
                with working():
                    yield "unknown", [_under(source, blank, head, divisor, "K") for source in (true, student)], \
                        [None, None]
            continue
        yield name, found, right


def _under(source: Quantities, blank: GradedBlank, head, divisor: Decimal, values: str) -> Decimal | None:
    """The blank's value computed from a source's scores divided by `divisor` (an output: with `values`' rows)."""
    scores = source.vector("scores", head)
    if scores is None or None in scores:
        return None
    scaled = [s / divisor for s in scores]
    if blank.role == "scaled":
        return scaled[blank.column - 1]
    weights = softmax(scaled)
    if blank.role == "weights":
        return weights[blank.column - 1]
    rows = source.matrix(values, head)
    if rows is None or blank.column > len(rows[0]):
        return None
    return weighted(weights, rows)[blank.column - 1]


def _transposed(version: GradedVersion, blank: GradedBlank) -> Decimal | None:
    """The blank's entry of X·Wᵀ (memory·Wᵀ for a cross-attention key or value) when W is square."""
    letter = "Q" if blank.role in ("Q", "q") else blank.role
    W = version.given(f"W_{letter}", blank.head)
    X = version.given("memory" if version.memory and letter in "KV" else "X")
    if W is None or X is None or len(W) != len(W[0]) or blank.row > len(X):
        return None
    with working():
        return sum((x * W[blank.column - 1][k] for k, x in enumerate(X[blank.row - 1])), Decimal(0))
