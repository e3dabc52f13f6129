"""`render` at every accepted magnitude ends in seconds, and every e^{a} it prints is correct: scores of −2,000,000,
X entries of 1000 and 1e5, W of 3e6, in cross-attention, multi-head, given Q/K/V and online-softmax sections
alike. (A displayed e^{a} is certified at a precision chosen from the decimals shown, not from |a|: a precision
of |a|/2 digits made these documents take minutes or never finish.)"""

from __future__ import annotations

import json
import re
import time

import mpmath
import pytest

import symattn

I2 = [[1, 0], [0, 1]]


def _self(X, **more) -> dict:
    section = {"kind": "self_attention", "tokens": [f"t{i}" for i in range(len(X))], "X": X,
               "W_Q": I2, "W_K": I2, "W_V": I2}
    return {**section, **more}


SPECS = {
    "scores": {"kind": "self_attention", "tokens": ["a", "b"], "scores": [[0, -2000000], [0, 0]], "scale": False,
               "V": I2},
    "x1000": _self([[1000, 0], [0, 1000], [1000, 1000]]),
    "x1e5": _self([[1e5, 0], [0, 1e5], [1e5, -1e5]]),
    "w3e6": _self([[1, 0], [0, 1], [1, -1]], W_Q=[[3e6, 0], [0, 3e6]]),
    "cross": {"kind": "cross_attention", "tokens": ["q"], "X": [[1000, 0]], "memory_tokens": ["m1", "m2", "m3"],
              "memory": [[1000, 0], [0, 1000], [-1000, 5]], "W_Q": I2, "W_K": I2, "W_V": I2},
    "multi_head": {"kind": "multi_head", "tokens": ["A", "B"], "X": [[1000, 0], [0, 1000]], "focus": "all",
                   "heads": [{"W_Q": I2, "W_K": I2, "W_V": I2}, {"W_Q": [[2, 0], [0, 1]], "W_K": I2, "W_V": I2}],
                   "W_O": [[1, 0], [0, 1], [1, 0], [0, 1]]},
    "given_qkv": {"kind": "self_attention", "tokens": ["a", "b", "c"], "Q": [[1000, 0], [0, 1000], [1000, 1000]],
                  "K": [[1000, 0], [0, 1000], [1000, 1000]], "V": [[1, 0], [0, 1], [1, 1]]},
    "online": _self([[1000, 0], [0, 1000], [1000, 1000], [-1000, 3]], softmax="online", block=1),
}
_NUMBER = r"(-?\d+(?:\.\d+)?)(?: \\times 10\^\{(-?\d+)\})?"  # as printed: a plain decimal or a mantissa × 10^{n}
_POWER = re.compile(r"e\^\{(-?\d+(?:\.\d+)?)\} \\approx " + _NUMBER)  # e^{x} ≈ v
# a power of a logit: e^{a_t} ≈ v, or e^{a_t} ≈ e^{x} ≈ v
_LOGIT_POWER = re.compile(r"^e\^\{\{a\}_\{\\mathrm\{[^}]*\}\}\} &(?:=|\\approx) (?:e\^\{[^}]*\} \\approx )?" + _NUMBER,
                          re.MULTILINE)


def _derivation(section: dict):
    data = symattn.read_spec_text(json.dumps({"lang": "en", "sections": [section]}), "json", "m.json")
    return symattn.derive_spec(symattn.parse_spec(data))


def _rounds_to(x: str, shown: str, exponent: str | None) -> bool:
    """e^x, rounded half-up to the decimals of `shown` (as a mantissa when a power of ten follows), is `shown`."""
    places = len(shown.partition(".")[2])
    with mpmath.workdps(60 + len(x)):
        value = mpmath.exp(mpmath.mpf(x))
        if exponent:
            value /= mpmath.mpf(10) ** int(exponent)
        return mpmath.floor(value * 10**places + mpmath.mpf(1) / 2) == mpmath.mpf(shown.replace(".", ""))


def _logits(answers) -> set[str]:
    """Every scaled score in solve's answers (30 significant digits: enough for e^{a} to 5 digits)."""
    if isinstance(answers, dict):
        found = set(answers.get("scaled_scores", []))
        return found.union(*(_logits(v) for k, v in answers.items() if k != "exact"))
    if isinstance(answers, list):
        return set().union(*(_logits(v) for v in answers))
    return set()


@pytest.mark.parametrize("name", sorted(SPECS))
def test_render_ends_in_seconds_with_correct_powers(name):
    derivation = _derivation(SPECS[name])
    start = time.perf_counter()
    texts = {fmt: render(derivation) for fmt, render in (
        ("tex", symattn.render_latex), ("md", symattn.render_markdown), ("html", symattn.render_html),
        ("json", symattn.render_json))}
    assert time.perf_counter() - start < 20, name
    shown_logits = _POWER.findall(texts["tex"])
    assert shown_logits or name in ("x1000", "x1e5", "w3e6", "multi_head", "given_qkv"), name  # (no tiny e^{a})
    for x, shown, exponent in shown_logits:  # the logit shown gives the power shown
        assert _rounds_to(x, shown, exponent), (name, x, shown, exponent)
    logits = _logits(symattn.answers(derivation))
    powers = _LOGIT_POWER.findall(texts["tex"])
    assert powers or name == "online", name  # (online: e^{a_j − m} only, each checked above)
    for shown, exponent in powers:  # and the power shown is e to a true logit, correctly rounded
        assert any(_rounds_to(a, shown, exponent) for a in logits), (name, shown, exponent)


def test_a_tiny_power_is_certified_against_mpmath():
    """Scores [0, −2000000] without scaling: e^{−2000000} ≈ 0.0000, w_a = 1/(1 + e^{−2000000}) ≈ 1.0000."""
    tex = symattn.render_latex(_derivation(SPECS["scores"]))
    assert r"e^{-2000000.0000} \approx 0.0000" in tex or r"e^{-2000000} \approx 0.0000" in tex
    with mpmath.workdps(60):
        weight = 1 / (1 + mpmath.exp(-2000000))
    assert mpmath.nstr(weight, 5) == "1.0"
    assert r"\approx 1.0000" in tex


@pytest.mark.pdf
def test_the_pdf_at_such_magnitudes_compiles_in_seconds(tmp_path):
    from symattn.cli import main

    spec = tmp_path / "m.json"
    spec.write_text(json.dumps({"lang": "en", "sections": [SPECS["scores"], SPECS["x1e5"], SPECS["online"]]}),
                    encoding="utf-8")
    start = time.perf_counter()
    assert main(["render", str(spec), "--format", "pdf", "--out", str(tmp_path / "out")]) == 0
    assert time.perf_counter() - start < 60
    assert (tmp_path / "out" / "m.pdf").read_bytes().startswith(b"%PDF")
