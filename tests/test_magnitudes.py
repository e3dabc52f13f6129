"""Numbers at every accepted magnitude: the input caps give one-line errors at once, and solve's answers for huge
and tiny values agree digit for digit with an independent mpmath implementation of attention at 80 digits."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time

import mpmath
import pytest

import symattn

REFERENCE_DIGITS = 80
HEADROOM = 300  # digits for the logits' own size (scores up to 10^250): e^{a} needs a to its units and beyond


def _spec(X, W_Q=None, W_K=None, W_V=None, scale=None) -> dict:
    identity = [[1, 0], [0, 1]]
    section = {"kind": "self_attention", "tokens": [f"t{i}" for i in range(len(X))], "X": X,
               "W_Q": W_Q or identity, "W_K": W_K or identity, "W_V": W_V or identity}
    if scale is not None:
        section["scale"] = scale
    return {"sections": [section]}


def _solve(spec: dict) -> dict:
    data = symattn.read_spec_text(json.dumps(spec), "json", "t.json")
    return symattn.answers(symattn.derive_spec(symattn.parse_spec(data)))["sections"][0]


def _reference(spec: dict) -> dict:
    """Attention in mpmath, from the spec's texts: softmax through the largest logit (log-sum-exp)."""
    section = spec["sections"][0]
    with mpmath.workdps(REFERENCE_DIGITS + HEADROOM):
        def matrix(rows):
            return mpmath.matrix([[mpmath.mpf(str(v)) for v in row] for row in rows])
        X = matrix(section["X"])
        Q, K, V = X * matrix(section["W_Q"]), X * matrix(section["W_K"]), X * matrix(section["W_V"])
        scale = section.get("scale", True)
        divisor = mpmath.sqrt(K.cols) if scale is True else mpmath.mpf(1) if scale is False else mpmath.mpf(scale)
        queries = {}
        for i, token in enumerate(section["tokens"]):
            scores = [sum(Q[i, c] * K[j, c] for c in range(K.cols)) for j in range(K.rows)]
            logits = [s / divisor for s in scores]
            top = max(logits)
            shifted = [mpmath.exp(a - top) for a in logits]
            total = mpmath.fsum(shifted)
            weights = [e / total for e in shifted]
            output = [mpmath.fsum(w * V[j, c] for j, w in enumerate(weights)) for c in range(V.cols)]
            queries[token] = {"scores": scores, "scaled_scores": logits, "weights": weights, "output": output}
        return queries


def _assert_digits(text: str, true: mpmath.mpf, where: str) -> None:
    """text is the true value rounded to 30 significant digits (an exact decimal: all its digits)."""
    with mpmath.workdps(REFERENCE_DIGITS):
        if true == 0:
            assert mpmath.mpf(text) == 0, where
            return
        mantissa = text.lstrip("-").split("E")[0].replace(".", "").lstrip("0")
        printed = mpmath.mpf(text)
        if "." not in text and "E" not in text:  # a rounded value of 10^30 or more: zeros stand for its units
            mantissa = mantissa.rstrip("0")
        if len(mantissa) > 30:  # an exact decimal keeps all its digits
            assert abs(printed - true) <= abs(true) * mpmath.mpf(10) ** (5 - REFERENCE_DIGITS), (where, text)
            return
        assert len(mantissa) == 30 or "." not in text, (where, text)
        unit = mpmath.mpf(10) ** (mpmath.floor(mpmath.log10(abs(true))) - 29)
        assert abs(printed - true) <= unit / 2 * (1 + mpmath.mpf(10) ** -20), (where, text, mpmath.nstr(true, 40))


def _check(spec: dict) -> dict:
    answers, reference = _solve(spec), _reference(spec)
    for token, expected in reference.items():
        for key, values in expected.items():
            for j, true in enumerate(values):
                _assert_digits(answers["queries"][token][key][j], true, f"{token}.{key}[{j}]")
    return answers


def test_a_score_of_ten_billion_is_solved_in_seconds_with_every_digit_right():
    start = time.perf_counter()
    _check(_spec([[1, "1e5"], [0.5, 1]]))
    assert time.perf_counter() - start < 5


@pytest.mark.parametrize("entry", ["1e4", "1e10", "9.99e30", "-3e30", "1e-30", "1e-60", "-7.5e-60",
                                   "123456789.123456789e-20"])
def test_huge_and_tiny_entries_give_correct_digits(entry):
    start = time.perf_counter()
    _check(_spec([[1, entry], [0.5, 1], [entry, "-2"]], W_V=[[1, 0], ["-1e-30", 1]]))
    assert time.perf_counter() - start < 5


def test_an_output_below_1e_minus_99_is_not_rounded_to_zero():
    answers = _check(_spec([[20, 0], [0, 20]], scale=False))
    assert answers["queries"]["t0"]["output"][1] == "3.83033919342801139003967955731E-173"
    assert answers["queries"]["t0"]["weights"][1] == "1.91516959671400569501983977865E-174"


def test_an_output_whose_terms_cancel_to_1e_minus_100_has_every_digit_right():
    """Inputs of 50 digits can make Σ_j e^{a_j} v_j 10^-100 of its terms (v_b ≈ −e^{-1} v_a to 100 digits): the
    engine's 90-digit numbers then held no correct digit of it, and the exact form is evaluated instead."""
    with mpmath.workdps(200):
        target = -1 - mpmath.exp(-1)
        w00 = mpmath.nstr(target, 50)
        w20 = mpmath.nstr((target - mpmath.mpf(w00)) * mpmath.mpf(10) ** 25, 50)
    identity = [[1, 0], [0, 1], [0, 0]]
    spec = _spec([[0, 1, 0], [1, 1, "1e-25"]], W_Q=identity, W_K=identity, W_V=[[w00, 0], [1, 1], [w20, 0]],
                 scale=False)
    answers = _check(spec)
    assert answers["queries"]["t1"]["output"][0].startswith("-1.8523026744679299387972529818")


def _term(a: int) -> str:
    return "1" if a == 0 else "e" if a == 1 else f"e^{{{a}}}"


def _expected_output(logits: list[int], column: list[int]) -> str:
    """The exact output numerator over Z, built by hand: v e^{a}, with v = 1 and e^0 = 1 left out."""
    products = []
    for a, v in zip(logits, column, strict=True):
        if v == 0:
            continue
        term = _term(a)
        products.append(term if v == 1 else str(v) if term == "1" else f"{v} {term}")
    text = products[0] if products else "0"
    for product in products[1:]:
        text += f" - {product[1:]}" if product.startswith("-") else f" + {product}"
    return rf"\frac{{{text}}}{{Z}}"


@pytest.mark.parametrize("seed", range(12))
def test_exact_strings_with_zero_scores_and_values_zero_and_one(seed):
    rng = random.Random(seed)
    X = [[rng.choice([0, 0, 1, -1, 2]) for _ in range(2)] for _ in range(3)]
    W_V = [[rng.choice([0, 1, 1, -1, 2, 5]) for _ in range(2)] for _ in range(2)]
    answers = _check(_spec(X, W_V=W_V, scale=False))
    V = [[sum(x[k] * W_V[k][c] for k in range(2)) for c in range(2)] for x in X]
    for i, x in enumerate(X):
        logits = [sum(x[k] * y[k] for k in range(2)) for y in X]
        exact = answers["queries"][f"t{i}"]["exact"]
        if len(set(logits)) == 1:  # tied: the common e^{a} cancels, each weight is 1/3 and the output the mean
            assert exact["Z"] == ("3" if logits[0] == 0 else f"3 {_term(logits[0])}")
            assert exact["weights"] == [r"\frac{1}{3}"] * 3
            assert exact["output"] == [_fraction(sum(row[c] for row in V), 3) for c in range(2)]
            continue
        assert exact["output"] == [_expected_output(logits, [row[c] for row in V]) for c in range(2)]
        Z = " + ".join(_term(a) for a in logits)
        assert exact["Z"] == Z
        assert exact["weights"] == [rf"\frac{{{_term(a)}}}{{Z}}" for a in logits]


def _fraction(p: int, q: int) -> str:
    """p/q in lowest terms as the answers write it: 2, - \\frac{4}{3}."""
    from math import gcd
    g = gcd(p, q)
    p, q = p // g, q // g
    return str(p) if q == 1 else rf"{'- ' if p < 0 else ''}\frac{{{abs(p)}}}{{{q}}}"


def _cli_error(tmp_path, entry) -> str:
    path = tmp_path / "spec.json"
    path.write_text('{"sections": [{"kind": "self_attention", "tokens": ["a", "b"], "X": [[1, ' + entry
                    + '], [0.5, 1]], "W_Q": [[1, 0], [0, 1]], "W_K": [[1, 0], [0, 1]], "W_V": [[1, 0], [0, 1]]}]}',
                    encoding="utf-8")
    start = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "symattn", "solve", str(path)], capture_output=True, text=True,
                         timeout=60)
    assert time.perf_counter() - start < 10
    assert run.returncode == 2 and run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("symattn: error: sections[0].X[0][1]: expected ")
    return lines[0]


@pytest.mark.parametrize(("entry", "message"), [
    ('"1e1000000000"', "size 1e-60 or more and below 1e31"),
    ('"1e400"', "size 1e-60 or more and below 1e31"),
    ("1e31", "size 1e-60 or more and below 1e31"),
    ('"1e-61"', "size 1e-60 or more and below 1e31"),
    ("1" + "0" * 4000, "size 1e-60 or more and below 1e31"),
    ('"' + "1" * 5000 + '"', "at most 50 significant digits"),
    ("0." + "3" * 51, "at most 50 significant digits"),
    ('"0e-1000"', "at most 80 decimals"),
    ('"' + "7" * 51 + '/3"', "at most 50 digits in a fraction"),
    ('"1' + "0" * 31 + '/1"', "size 1e-60 or more"),
    ('"\u0661.5"', "ASCII digits"),
    ('"\uff11"', "ASCII digits"),
])
def test_each_cap_gives_one_line_and_exit_2_at_once(tmp_path, entry, message):
    assert message in _cli_error(tmp_path, entry)


def test_entries_at_the_caps_are_accepted():
    for entry in ["9" * 31, "1e-30", "1e-60", "1/1" + "0" * 49, "1" * 30 + "." + "1" * 20, "-" + "9" * 50 + "e-30", "0e-80",
                  "1" * 50 + "/" + "3" * 50]:
        symattn.parse_spec(symattn.read_spec_text(json.dumps(_spec([[1, entry], [0.5, 1]])), "json", "t.json"))


def test_the_page_shows_e_to_a_huge_score_by_its_logarithm():
    """render of scores of 10^20: e^{a} has 10^19 digits, beyond any Decimal; the page gives its mantissa and power
    of ten, and the weights 1 and 0 (rounded), as mpmath's logarithm of e^{a} says."""
    spec = _spec([["1e10", 0], [0, 1]])
    derivation = symattn.derive_spec(symattn.parse_spec(symattn.read_spec_text(json.dumps(spec), "json", "t.json")),
                                     lang="en")
    tex = symattn.render_latex(derivation)
    with mpmath.workdps(60):
        log10 = mpmath.mpf(10) ** 20 / mpmath.sqrt(2) * mpmath.log10(mpmath.e)
        exponent = int(mpmath.floor(log10))
        mantissa = mpmath.nstr(mpmath.power(10, log10 - exponent), 5, strip_zeros=False)
    assert rf"e^{{{{a}}_{{\mathrm{{t0}}}}}} &\approx {mantissa} \times 10^{{{exponent}}}" in tex
    assert r"\approx 1.0000 \\" in tex and r"\approx 0.0000 \\" in tex
    assert "1.0000" in symattn.render_markdown(derivation) and "1.0000" in symattn.render_html(derivation)
