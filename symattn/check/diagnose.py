"""Diagnosis: for each printed number that does not hold, its most likely cause. The pipeline is recomputed under
every hypothesis (check.hypotheses); a hypothesis that reproduces the wrong number and more of the section's printed
numbers than the correct derivation does is the cause (the one reproducing the most); otherwise the local causes
are tried: weights renormalised to sum to 1, the last digit off by one (rounding), a typo; else unknown.

The public entry is diagnose(spec, claims) (grade reuses it for students' answers)."""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from .claims import Claim, path_text
from .compare import correct_text, holds, rounded, truth
from .hypotheses import TIE, Section, Variant, answer_variants, run, section_of, variants

CAUSES = ("rounding", "renormalised", "rounded_intermediates", "no_scaling", "scaled_by_d_k", "transposed",
          "softmax_axis", "mask", "pe_index", "times_sqrt_d_k", "unnormalised_softmax", "keys_for_values",
          "pe_concatenated", "positions_from_1", "unbiased_variance", "no_eps", "rms_for_layer", "layer_for_rms",
          "gelu_tanh", "gelu_erf", "silu_for_gelu", "gelu_for_silu", "mask_constant", "sign", "float32", "typo",
          "unknown")
LOCAL = ("rounding", "mask_constant", "sign", "float32", "typo", "unknown")  # the causes of one number alone
_STAGE_NAMES = {"X_plus_P": "X + P", "projections": "Q, K and V", "scores": "the scores",
                "scaled_scores": "the scaled scores", "weights": "the weights"}


@dataclass(frozen=True)
class Finding:
    """A printed number that does not hold: where, as printed, the correct value at the same precision, the
    likely cause (one of CAUSES) and a one-line explanation; stage and places for rounded_intermediates."""

    claim: Claim
    correct: str
    cause: str
    explanation: str
    stage: str | None = None
    places: int | None = None

    @property
    def at(self) -> str:
        return path_text(self.claim.at)

    def as_json(self) -> dict[str, str]:
        return {"at": self.at, "printed": self.claim.printed, "correct": self.correct, "cause": self.cause,
                "explanation": self.explanation}


def diagnose(spec: Any, claims: list[Claim], answers: dict[str, Any] | None = None,
             sections: dict[int, Section] | None = None) -> list[Finding]:
    """The findings (wrong claims, in claim order) of claims against a parsed spec (spec.files.load_spec);
    `answers`: solve's answers of it when computed already; `sections`: the recomputable sections' float inputs
    by answer index, when known without the spec (hypotheses.section_from_data; spec may then be None). Bad claims
    raise SpecError (exit 2)."""
    if answers is None:
        answers = answers_of(spec)
    exact = [truth(answers, claim.at) for claim in claims]  # every path checked before any diagnosis
    wrong = [i for i, (claim, value) in enumerate(zip(claims, exact, strict=True)) if not holds(claim, value)]
    if not wrong:
        return []
    sections = _recomputable(spec) if sections is None else sections
    given = answered(spec) if spec is not None else []
    scored: dict[Any, tuple[int, list[tuple[Variant, int, set[int]]]]] = {}  # per section: base, hypotheses
    findings = []
    for i in wrong:
        index = _section_index(claims[i])
        if index not in scored:
            own = given[index] if isinstance(index, int) and index < len(given) else None
            scored[index] = _scored(sections.get(index), answers, index, claims, exact, own)
        findings.append(_finding(i, claims, exact, *scored[index]))
    return _one_cause_per_row(findings, claims, exact)


def _one_cause_per_row(findings: list[Finding], claims: list[Claim], exacts: list[Decimal]) -> list[Finding]:
    """A vector with two wrong entries or more that only local causes explain, and not all by rounding, was
    computed wrongly as a whole (from wrong earlier values, or by a mistake no hypothesis models): one cause for
    the row, not a typo here and a rounding slip there."""
    exact = {c.at: e for c, e in zip(claims, exacts, strict=True)}
    rows: dict[tuple, list[Finding]] = {}
    for f in findings:
        if f.claim.at and isinstance(f.claim.at[-1], int):
            rows.setdefault(f.claim.at[:-1], []).append(f)
    changed: dict[int, Finding] = {}
    for at, row in rows.items():
        if len({f.claim.at for f in row}) < 2 or any(f.cause not in LOCAL for f in row) \
                or all(f.cause == "rounding" for f in row):
            continue
        wrong, size = len({f.claim.at for f in row}), len({c.at for c in claims if c.at[:-1] == at})
        for f in row:
            changed[id(f)] = replace(f, cause="unknown", explanation=(
                f"{wrong} of the {size} entries of this vector are wrong, more than a slip: no hypothesis "
                f"reproduces it; the exact value is {_digits(exact[f.claim.at])}"))
    return [changed.get(id(f), f) for f in findings]


def _section_index(claim: Claim) -> Any:
    return claim.at[1] if len(claim.at) > 1 and claim.at[0] == "sections" else None


def answers_of(spec: Any) -> dict[str, Any]:
    """solve's answers of a spec, as plain data, with what a derivation prints beside them (check.derived)."""
    from ..pipeline.derive import derive_spec
    from ..render.answers import answers
    from .derived import with_centred

    return with_centred(answers(derive_spec(spec, steps=False)))


def answered(spec: Any) -> list[Any]:
    """The sections that have answers (all but text blocks), in order: sections[i] of the answers is the i-th."""
    from ..kinds.text.kind import TextSpec

    return [section for section in spec.sections if not isinstance(section, TextSpec)]


def _recomputable(spec: Any) -> dict[int, Any]:
    """The float inputs of each answered section (by its index in the answers) the hypotheses can recompute."""
    out = {}
    for index, section in enumerate(answered(spec)):
        inputs = section_of(section)
        if inputs is not None:
            out[index] = inputs
    return out


def _scored(section, answers: dict[str, Any], index, claims: list[Claim], exacts: list[Decimal], spec: Any = None
            ) -> tuple[int, list[tuple[Variant, int, set[int]]]]:
    """How many of the section's claims the correct derivation makes hold, and for each hypothesis how many and
    which (by claim index) it reproduces: computed once per section, whatever the number of wrong claims."""
    same = [i for i, c in enumerate(claims) if _section_index(c) == index]
    base = sum(holds(claims[i], exacts[i]) for i in same)
    if section is None:  # a kind whose mistakes follow from its answers alone (a norm's)
        data = answers["sections"][index] if isinstance(index, int) and index < len(answers["sections"]) else {}
        return base, [(variant, len(reproduced), reproduced) for variant, predicted in answer_variants(data, spec)
                      for reproduced in [{i for i in same if _reproduces(claims[i], predicted)}]]
    tokens = answers["sections"][index].get("queries", {})
    queries = {t: section.tokens.index(t) for t in tokens if t in section.tokens}
    out = []
    for variant in variants(section)[1:]:  # the first is the correct computation
        predicted = run(section, variant, queries)
        reproduced = {i for i in same if _reproduces(claims[i], predicted)}
        out.append((variant, len(reproduced), reproduced))
    return base, out


def _reproduces(claim: Claim, predicted: dict[tuple, float]) -> bool:
    """Whether a hypothesis's float value prints as the claim (within half a unit, a float's error allowed)."""
    value = predicted.get(claim.at[2:])
    if value is None or not math.isfinite(value):
        return False
    return abs(float(claim.value) - value) <= float(claim.unit) * (0.5 + TIE)


def _finding(i: int, claims: list[Claim], exacts: list[Decimal], base: int,
             hypotheses: list[tuple[Variant, int, set[int]]]) -> Finding:
    claim, exact = claims[i], exacts[i]
    correct = correct_text(claim, exact)
    best, best_score = None, base
    for variant, score, reproduced in hypotheses:
        if i in reproduced and score > best_score:
            best, best_score = variant, score
    # a hypothesis that explains other wrong numbers too outranks renormalising, which explains this one
    renormalised = _renormalised(claim, claims, exacts) if best is None or best_score < base + 2 else None
    if renormalised is not None:
        return Finding(claim, correct, "renormalised", renormalised)
    if best is not None:
        return Finding(claim, correct, best.cause, _explain(best), best.stage or None, best.places or None)
    return _local(claim, exact, correct)


def _renormalised(claim: Claim, claims: list[Claim], exacts: list[Decimal]) -> str | None:
    """Whether the claim is an entry of a fully printed weight vector that sums to exactly 1 where the correctly
    rounded entries do not, each entry within one unit of its rounding, and the claim its largest or last entry:
    the rounded weights nudged to sum to 1."""
    if len(claim.at) < 2 or claim.at[-2] not in ("weights", "probabilities") or not isinstance(claim.at[-1], int):
        return None
    # the vector as printed at the claim's precision (once per entry: a document may print it twice)
    row = list({c.at[-1]: (c, e) for c, e in zip(claims, exacts, strict=True)
                if c.at[:-1] == claim.at[:-1] and c.places == claim.places}.values())
    if any(e.is_infinite() for _, e in row):
        return None
    correct = [rounded(e, c.places) for c, e in row]
    if sum(c.value for c, _ in row) != 1 or sum(correct) == 1 \
            or any(abs(c.value - r) > c.unit for (c, _), r in zip(row, correct, strict=True)):
        return None
    # the entry nudged is the largest weight (correctly rounded) or the last one, as people nudge them
    own = rounded(_exact_of(claim, row), claim.places)
    if own != max(correct) and claim.at[-1] != max(c.at[-1] for c, _ in row):
        return None
    shown = ", ".join(f"{r:f}" for r in correct)
    return (f"the correctly rounded weights ({shown}) sum to {sum(correct):f}; this one was adjusted so that the "
            f"printed weights sum to 1")


def _exact_of(claim: Claim, row: list[tuple[Claim, Decimal]]) -> Decimal:
    return next(e for c, e in row if c.at == claim.at)


def _local(claim: Claim, exact: Decimal, correct: str) -> Finding:
    if exact.is_infinite() and claim.value <= -10 ** 4:  # −1e9, −10⁴: the float convention for −∞
        return Finding(claim, correct, "mask_constant", f"{claim.printed} stands in for −∞ (as code masks with a "
                                                        "large negative number): the weights agree to float "
                                                        "precision, e^(" + claim.printed + ") underflows to 0, "
                                                        "but exactly the score is −∞")
    if exact.is_infinite():  # a number printed where the mask hides the key
        return Finding(claim, correct, "mask", "this key is masked: its scaled score is −∞ and its weight 0")
    if claim.value.is_infinite():  # −∞ printed for a key the query sees
        return Finding(claim, correct, "mask", f"this key is not masked: its scaled score is {correct}, not −∞")
    if exact and claim.value == -rounded(exact, claim.places):
        return Finding(claim, correct, "sign", f"the sign is wrong: the correct value is {correct}")
    single = _float32(exact)
    if claim.places >= 6 and single != exact and rounded(single, claim.places) == claim.value:
        return Finding(claim, correct, "float32", f"printed from a float32 computation (float32 gives "
                                                  f"{single.normalize():f}); the exact value is {_digits(exact)}")
    off = abs(claim.value - rounded(exact, claim.places))
    if off == claim.unit and exact != rounded(exact, claim.places):  # an exact value has nothing to round
        return Finding(claim, correct, "rounding", f"the last digit is off by one: the exact value {_digits(exact)} "
                                                   f"rounds to {correct}")
    if plausible_typo(claim.printed, correct, claim.places):
        return Finding(claim, correct, "typo", f"one digit wrong or two swapped: the correct value is {correct}")
    return Finding(claim, correct, "unknown", f"no hypothesis reproduces it; the exact value is {_digits(exact)}")


def _float32(exact: Decimal) -> Decimal:
    """The value nearest to `exact` that a float32 holds (as numpy's float32 prints it, at its full digits)."""
    try:
        return Decimal(struct.unpack("<f", struct.pack("<f", float(exact)))[0])
    except OverflowError:
        return exact


def plausible_typo(printed: str, correct: str, places: int) -> bool:
    """A typo that chance does not explain as well: two adjacent digits swapped, or one digit wrong in a number of
    three decimals or more (two numbers of two decimals that differ at all mostly differ in one digit)."""
    if not typo(printed, correct):
        return False
    differ = sum(x != y for x, y in zip(printed.replace("−", "-"), correct, strict=True))
    return differ == 2 or places >= 3


def typo(printed: str, correct: str) -> bool:
    """One digit different, or two adjacent digits swapped, in strings of the same form."""
    a, b = printed.replace("−", "-"), correct
    if len(a) != len(b) or a == b:
        return False
    differ = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    if not all(a[i].isdigit() and b[i].isdigit() for i in differ):
        return False
    return len(differ) == 1 or (len(differ) == 2 and differ[1] == differ[0] + 1
                                and a[differ[0]] == b[differ[1]] and a[differ[1]] == b[differ[0]])


def _digits(exact: Decimal) -> str:
    return f"{rounded(exact, 8).normalize():f}…" if exact != rounded(exact, 8) else f"{exact.normalize():f}"


def _explain(variant: Variant) -> str:
    cause = variant.cause
    if variant.explanation:
        return variant.explanation
    if cause == "rounded_intermediates":
        return (f"computed from {_STAGE_NAMES[variant.stage]} rounded to {variant.places} decimals "
                f"(stage {variant.stage}, k = {variant.places}) rather than from the exact values")
    if cause == "no_scaling":
        return "the scores were not divided by √d_k"
    if cause == "scaled_by_d_k":
        return "the scores were divided by d_k instead of √d_k"
    if cause == "times_sqrt_d_k":
        return "the scores were multiplied by √d_k instead of divided by it"
    if cause == "unnormalised_softmax":
        return "the weights are e^a, never divided by their sum Z (softmax's denominator left out)"
    if cause == "keys_for_values":
        return "the output was computed as the weights times K (w·K) instead of V (w·V)"
    if cause == "pe_concatenated":
        return ("the positional encoding put the sines in the first half and the cosines in the second "
                "(concatenated) instead of interleaving them: sin in even dimensions, cos in odd")
    if cause == "positions_from_1":
        return "the positions were counted from 1 instead of 0 in the positional encoding"
    if cause == "transposed":
        return f"{variant.transposed} was used transposed"
    if cause == "softmax_axis":
        return "the softmax ran over the queries (each column of the scores) instead of over each query's keys"
    if cause == "pe_index":
        exponent = "2j/d" if variant.pe == "dim2" else "j/d"
        return (f"the positional encoding took the dimension index j into the exponent, 10000^({exponent}), "
                "instead of the pair index: 10000^(2⌊j/2⌋/d)")
    return {"none": "the mask was left out: masked keys got weight", "transposed": "the mask was applied transposed",
            "zero": "masked scores were set to 0 instead of −∞ (e^0 = 1 entered the sum)",
            "causal": "a causal mask was applied where the section has none"}[variant.mask]
