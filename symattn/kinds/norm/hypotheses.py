"""The mistakes people make normalising, recomputed in floats from a norm section's answers (check diagnoses a
wrong number by the one that reproduces it and more of the printed numbers than the correct derivation does):
the unbiased variance (÷(d−1), torch.var's and torch.std's default), ε left out, RMSNorm for LayerNorm or the
reverse, and σ (or the RMS) rounded to k decimals before dividing."""

from __future__ import annotations

import math
from typing import Any

PLACES = (1, 2, 3, 4)


def alternatives(data: dict[str, Any], spec: Any = None
                 ) -> list[tuple[str, str, str | None, int | None, dict[tuple, float]]]:
    """(cause, explanation, stage, places, predictions by path within the section) of each mistake, for a norm
    section's answers `data` (rows of sum, mean, variance, std, normalised, output; `spec`, its spec, is not
    needed); [] when it has no rows."""
    rows = data.get("rows")
    if not isinstance(rows, dict):
        return []
    layer = data.get("norm") != "rms"
    try:
        eps = float(data.get("eps") or 0)
        gamma = [float(g) for g in data.get("gamma") or ()]
        beta = [float(b) for b in data.get("beta") or ()]
        inputs = {token: _input(row) for token, row in rows.items()}
    except (KeyError, TypeError, ValueError):
        return []
    mistakes: list[tuple[str, str, str | None, int | None, dict]] = []

    def add(cause: str, why: str, rule, stage: str | None = None, places: int | None = None) -> None:
        predicted: dict[tuple, float] = {}
        for token, u in inputs.items():
            result = rule(u)
            if result is None:
                return
            mean, variance, std, centred = result
            normalised = [c / std for c in centred]
            output = [n * (gamma[j] if j < len(gamma) else 1) + (beta[j] if j < len(beta) else 0)
                      for j, n in enumerate(normalised)]
            at = ("rows", token)
            predicted.update({(*at, "sum", j): v for j, v in enumerate(u)})  # what the mistake leaves as it was
            for key, value in (("mean", mean), ("variance", variance), ("std", std)):
                if value is not None:
                    predicted[(*at, key)] = value
            for key, vector in (("centered", centred), ("normalised", normalised), ("output", output)):
                predicted.update({(*at, key, j): v for j, v in enumerate(vector)})
        mistakes.append((cause, why, stage, places, predicted))

    def layer_norm(u: list[float], unbiased: bool = False, with_eps: bool = True, places: int | None = None):
        d = len(u)
        if d < 2:
            return None
        mean = sum(u) / d
        variance = sum((x - mean) ** 2 for x in u) / (d - 1 if unbiased else d)
        std = math.sqrt(variance + (eps if with_eps else 0))
        std = round(std, places) if places is not None else std
        return (mean, variance, std, [x - mean for x in u]) if std else None

    def rms_norm(u: list[float], with_eps: bool = True, places: int | None = None):
        square = sum(x * x for x in u) / len(u)
        rms = math.sqrt(square + (eps if with_eps else 0))
        rms = round(rms, places) if places is not None else rms
        return (None, square, rms, list(u)) if rms else None

    own = layer_norm if layer else rms_norm
    if layer:
        add("unbiased_variance", "the variance was divided by d − 1 (unbiased, torch.var's default) instead of d: "
            "every normalised entry is √((d−1)/d) times too small", lambda u: layer_norm(u, unbiased=True))
        add("rms_for_layer", "RMSNorm was computed (u / √(mean(u²) + ε)) where the section is a LayerNorm "
            "((u − μ) / √(σ² + ε))", rms_norm)
    else:
        add("layer_for_rms", "LayerNorm was computed ((u − μ) / √(σ² + ε)) where the section is an RMSNorm "
            "(u / √(mean(u²) + ε))", layer_norm)
    if eps:
        add("no_eps", "ε was left out of the square root", lambda u: own(u, with_eps=False))
    for k in PLACES:
        add("rounded_intermediates", f"computed from {'σ' if layer else 'the RMS'} rounded to {k} decimals "
            f"(stage std, k = {k}) rather than from its exact value", lambda u, k=k: own(u, places=k), "std", k)
    return mistakes


def _input(row: dict[str, Any]) -> list[float]:
    """The row a norm normalises: x + y (sum) in an Add & Norm; in a norm, x as its answers give it back
    (normalised · σ + μ: the answers hold no copy of the input)."""
    if isinstance(row.get("sum"), list):
        return [float(v) for v in row["sum"]]
    std, mean = float(row["std"]), float(row.get("mean") or 0)
    return [float(n) * std + mean for n in row["normalised"]]
