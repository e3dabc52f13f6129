"""The activations people confuse, recomputed in floats from a feed-forward section's answers (its hidden rows
x·W_1 + b_1) and its spec (W_2, b_2): GELU's tanh approximation for the exact erf form or the reverse, SiLU for
GELU or the reverse. check diagnoses a wrong number by the one that reproduces it and more of the printed
numbers than the correct derivation does."""

from __future__ import annotations

import math
from typing import Any


def _gelu(x: float) -> float:
    return x / 2 * (1 + math.erf(x / math.sqrt(2)))


def _gelu_tanh(x: float) -> float:  # PyTorch's approximate="tanh"
    return x / 2 * (1 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def _silu(x: float) -> float:
    return x / (1 + math.exp(-x)) if x > -700 else 0.0


FUNCTIONS = {"gelu": _gelu, "gelu_tanh": _gelu_tanh, "silu": _silu}
# (the activation used, the section's) -> (cause, explanation)
MISTAKES = {
    ("gelu_tanh", "gelu"): ("gelu_tanh", "GELU's tanh approximation x/2·(1 + tanh(√(2/π)(x + 0.044715x³))) was used "
                                         "for the exact GELU x/2·(1 + erf(x/√2))"),
    ("gelu", "gelu_tanh"): ("gelu_erf", "the exact GELU x/2·(1 + erf(x/√2)) was used where the section asks for "
                                        "the tanh approximation"),
    ("silu", "gelu"): ("silu_for_gelu", "SiLU x·σ(x) was used where the section's activation is GELU"),
    ("silu", "gelu_tanh"): ("silu_for_gelu", "SiLU x·σ(x) was used where the section's activation is GELU"),
    ("gelu", "silu"): ("gelu_for_silu", "GELU was used where the section's activation is SiLU x·σ(x)"),
}


def alternatives(data: dict[str, Any], spec: Any = None) -> list[tuple[str, str, str | None, int | None, dict]]:
    """(cause, explanation, stage, places, predictions by path within the section) of each activation mistake
    that applies; the outputs are predicted only when the spec (W_2, b_2) is at hand."""
    rows, own = data.get("rows"), data.get("activation")
    if not isinstance(rows, dict) or own not in FUNCTIONS:
        return []
    second = _floats(getattr(spec, "W_2", None))
    bias = _floats(getattr(spec, "b_2", None))
    out = []
    for (used, section), (cause, why) in MISTAKES.items():
        if section != own:
            continue
        predicted: dict[tuple, float] = {}
        try:
            for token, row in rows.items():
                activated = [FUNCTIONS[used](float(h)) for h in row["hidden"]]
                predicted.update({("rows", token, "hidden", j): float(h) for j, h in enumerate(row["hidden"])})
                predicted.update({("rows", token, "activated", j): a for j, a in enumerate(activated)})
                if second is not None and len(second) == len(activated):
                    for k in range(len(second[0])):
                        value = math.fsum(a * second[j][k] for j, a in enumerate(activated))
                        predicted[("rows", token, "output", k)] = value + (bias[0][k] if bias else 0.0)
        except (KeyError, TypeError, ValueError):
            return []
        out.append((cause, why, None, None, predicted))
    return out


def _floats(given: Any) -> list[list[float]] | None:
    values = getattr(given, "values", None)
    if values is None:
        return None
    try:
        return [[float(v) for v in row] for row in values.tolist()]
    except (TypeError, ValueError):  # symbols
        return None
