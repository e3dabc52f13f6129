"""How well `symattn check` diagnoses injected mistakes: random self-attention specs, their answers computed in
numpy (independently of symattn) with one mistake of each cause injected, and the confusion table of the causes
diagnosed. A case counts as diagnosed when every wrong number it has is given the injected cause.

    python -m bench.confusion --count 200    # prints the Markdown table the README shows
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter

import numpy as np

from symattn.check import check
from symattn.check.claims import claims_of
from symattn.pipeline.parse import parse_spec
from symattn.spec.files import read_spec_text

INJECTED = ("rounding", "renormalised", "rounded_intermediates", "no_scaling", "scaled_by_d_k", "transposed",
            "softmax_axis", "mask", "pe_index", "typo")
PLACES = 4


def half_up(values: np.ndarray, places: int) -> np.ndarray:
    scale = 10.0 ** places
    return np.floor(values * scale + 0.5 + 1e-9) / scale  # a float near a decimal tie rounds as the tie, up


def sinusoids(n: int, d: int, exponent_of) -> np.ndarray:
    pos, j = np.arange(n)[:, None], np.arange(d)[None, :]
    angle = pos / 10000.0 ** (exponent_of(j) / d)
    return np.where(j % 2 == 0, np.sin(angle), np.cos(angle))


def _matrix(rng: random.Random, rows: int, cols: int, top: int) -> list[list[str]]:
    return [[f"{rng.randint(-top, top) / 10:.1f}" for _ in range(cols)] for _ in range(rows)]


def spec_for(cause: str, rng: random.Random) -> dict:
    """A random spec that the cause can be made on: square W (transposed), d_k ≥ 2, a mask for mask's first form,
    sinusoidal positions for pe_index."""
    # (sinusoids' exact forms make a derivation's LaTeX slow: pe_index's specs are the smallest)
    n, d = (3, 2) if cause == "pe_index" else (rng.choice((3, 4)), rng.choice((2, 3)))
    tokens = [f"t{i}" for i in range(n)]
    section = {"kind": "self_attention", "tokens": tokens, "X": _matrix(rng, n, d, 20),
               "W_Q": _matrix(rng, d, d, 12), "W_K": _matrix(rng, d, d, 12), "W_V": _matrix(rng, d, d, 12),
               "focus": "all"}
    if cause == "pe_index":
        section["positional_encoding"] = "sinusoidal"
    if cause == "mask" and rng.random() < 0.5:
        section["mask"] = "causal"
    return {"sections": [section]}


def answers(section: dict, mistake: dict) -> dict[str, np.ndarray]:
    """The pipeline in numpy float64 with one structural mistake (or none): every stage, as a student computes it."""
    f = {k: np.array(section[k], dtype=float) for k in ("X", "W_Q", "W_K", "W_V")}
    n, d = f["X"].shape
    out: dict[str, np.ndarray] = {}
    X = f["X"]
    if "positional_encoding" in section:
        exponent = mistake.get("pe", lambda j: 2 * (j // 2))
        out["P"] = sinusoids(n, d, exponent)
        X = out["X_plus_P"] = X + out["P"]
    W = {k: (f[k].T if mistake.get("transposed") == k else f[k]) for k in ("W_Q", "W_K", "W_V")}
    stage = mistake.get("stage")

    def at(name, values):  # a stage's values, rounded to k decimals when the mistake rounds there
        return half_up(values, mistake["k"]) if stage == name else values

    Q, K, V = (at("projections", X @ W[k]) for k in ("W_Q", "W_K", "W_V"))
    out.update(Q=Q, K=K, V=V)
    out["scores"] = S = at("scores", Q @ K.T)
    divisor = {"none": 1.0, "d_k": float(d)}.get(mistake.get("divisor"), np.sqrt(d))
    A = at("scaled_scores", S / divisor)
    masked = section.get("mask") == "causal"
    if mistake.get("mask") == "flip":
        masked = not masked
    visible = np.tril(np.ones((n, n), dtype=bool)) if masked else np.ones((n, n), dtype=bool)
    out["scaled_scores"] = np.where(visible, A, np.nan)  # nan: not printed (−∞)
    E = np.where(visible, np.exp(A - A.max()), 0.0)
    axis = mistake.get("axis", 1)
    out["weights"] = weights = at("weights", E / E.sum(axis=axis, keepdims=True))
    out["output"] = weights @ V
    return out


def claims_data(section: dict, computed: dict[str, np.ndarray], mistake: dict) -> dict:
    """Solve's shape with every stage printed to 4 decimals (a stage rounded to k decimals printed with k)."""
    places = {mistake["stage"]: mistake["k"]} if "stage" in mistake else {}
    data = {k: _masked_texts(computed[k], places.get("projections", PLACES)) for k in ("Q", "K", "V")}
    for k in ("P", "X_plus_P"):
        if k in computed:
            data[k] = _masked_texts(computed[k], PLACES)
    queries = {}
    for i, token in enumerate(section["tokens"]):
        queries[token] = {k: _masked_texts(computed[k][i], places.get(k, PLACES))
                          for k in ("scores", "scaled_scores", "weights", "output")}
    data["queries"] = queries
    return {"sections": [data]}


def _masked_texts(values: np.ndarray, places: int) -> list:
    if values.ndim > 1:
        return [_masked_texts(row, places) for row in values]
    return [None if np.isnan(v) else f"{float(half_up(np.array(v), places)):.{places}f}" for v in values]


MISTAKES = {
    "no_scaling": lambda rng, s: {"divisor": "none"},
    "scaled_by_d_k": lambda rng, s: {"divisor": "d_k"},
    "transposed": lambda rng, s: {"transposed": rng.choice(("W_Q", "W_K", "W_V"))},
    "softmax_axis": lambda rng, s: {"axis": 0},
    "mask": lambda rng, s: {"mask": "flip"},
    "pe_index": lambda rng, s: {"pe": rng.choice((lambda j: 2 * j, lambda j: j))},
    "rounded_intermediates": lambda rng, s: {"stage": rng.choice(("projections", "scores", "scaled_scores",
                                                                    "weights")), "k": rng.choice((1, 2))},
}


def _edit(cause: str, data: dict, rng: random.Random) -> bool:
    """A local mistake in printed claims: rounding (last digit ±1), typo (one digit or two swapped), renormalised
    (a weight row nudged to sum to 1). False when this claims set offers no place for it."""
    queries = data["sections"][0]["queries"]
    if cause == "renormalised":
        rows = [q["weights"] for q in queries.values()
                if round(sum(float(w) for w in q["weights"]) * 10 ** PLACES) != 10 ** PLACES]
        if not rows:
            return False
        row = rng.choice(rows)
        residual = 10 ** PLACES - round(sum(float(w) for w in row) * 10 ** PLACES)
        j = max(range(len(row)), key=lambda i: float(row[i]))
        row[j] = f"{float(row[j]) + residual / 10 ** PLACES:.{PLACES}f}"
        return True
    token = rng.choice(list(queries))
    # a rounding slip needs a value to round: raw (and some scaled) scores of one-decimal inputs are exact
    key = rng.choice(("weights", "output") if cause == "rounding" else ("scores", "weights", "output",
                                                                          "scaled_scores"))
    row = queries[token][key]
    j = rng.choice([i for i, v in enumerate(row) if v is not None])
    text = row[j]
    if cause == "rounding":
        value = round(float(text) * 10 ** PLACES) + rng.choice((-1, 1))
        row[j] = f"{value / 10 ** PLACES:.{PLACES}f}"
        return True
    digits = [i for i, c in enumerate(text) if c.isdigit()]
    if rng.random() < 0.5:
        pairs = [(a, b) for a, b in zip(digits, digits[1:], strict=False) if b == a + 1 and text[a] != text[b]]
        if pairs:
            a, b = rng.choice(pairs)
            if abs(int(text[a]) - int(text[b])) > 1 or b != len(text) - 1:
                row[j] = text[:a] + text[b] + text[a] + text[b + 1:]
                return True
    i = rng.choice(digits)
    choices = [c for c in "0123456789" if c != text[i] and (i != len(text) - 1 or abs(int(c) - int(text[i])) > 1)]
    row[j] = text[:i] + rng.choice(choices) + text[i + 1:]
    return True


def case(cause: str, rng: random.Random):
    """(the spec, its claims) with one injected mistake of the cause; None when the draw shows no mistake."""
    data = spec_for(cause, rng)
    section = data["sections"][0]
    mistake = MISTAKES[cause](rng, section) if cause in MISTAKES else {}
    claims = claims_data(section, answers(section, mistake), mistake)
    if cause not in MISTAKES and not _edit(cause, claims, rng):
        return None
    spec = parse_spec(read_spec_text(json.dumps(data), "json", "random"), "random")
    return spec, claims_of(claims)


def diagnosed(cause: str, rng: random.Random) -> str | None:
    """The cause diagnosed for one random case ("none" when nothing was found wrong, "mixed" when the wrong
    numbers got different causes); None when the draw made no mistake visible."""
    drawn = case(cause, rng)
    if drawn is None:
        return None
    found = {f.cause for f in check(*drawn).wrong}
    if not found:
        return None if cause in MISTAKES else "none"
    return found.pop() if len(found) == 1 else "mixed"


def confusion(count: int, seed: int = 0, causes: tuple[str, ...] = INJECTED) -> dict[str, Counter]:
    """For each cause, the causes diagnosed over `count` cases with a visible mistake."""
    table = {}
    for cause in causes:
        rng, counts = random.Random(seed * 1000 + INJECTED.index(cause)), Counter()
        while sum(counts.values()) < count:
            got = diagnosed(cause, rng)
            if got is not None:
                counts[got] += 1
        table[cause] = counts
    return table


def markdown(table: dict[str, Counter]) -> str:
    columns = [*INJECTED, *sorted({c for counts in table.values() for c in counts} - set(INJECTED))]
    lines = ["| injected \\ diagnosed | " + " | ".join(columns) + " | right |",
             "|---|" + "---:|" * (len(columns) + 1)]
    for cause, counts in table.items():
        total = sum(counts.values())
        cells = [str(counts.get(c, 0) or "") for c in columns]
        lines.append(f"| {cause} | " + " | ".join(cells) + f" | {100 * counts[cause] / total:.1f} % |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.confusion", description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200, help="cases per cause (default: 200)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(markdown(confusion(args.count, args.seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
