"""What check's hypotheses recompute an attention section from, in floats: the fields of check.hypotheses.Section
as a dict, read from a parsed section or from a section's plain data (an exam version in exam.json). Only the
plain pipeline qualifies (computed or given Q, K, V, numeric, no cache): the hypotheses model no more."""

from __future__ import annotations

import math
from typing import Any

Matrix = list[list[float]]


def floats(matrix: Any) -> Matrix:
    return [[float(v) for v in row] for row in matrix.tolist()]


def inputs_of_spec(spec: Any, own: bool) -> dict[str, Any] | None:
    """The float inputs of a parsed section; `own`: keys and values come from X itself (self-attention). None for
    a cached or symbolic section (a kind that rotates q and k leaves rotated sections out itself)."""
    if getattr(spec, "cache", None) is not None:
        return None
    try:
        divisor = float(spec.scale.divisor(spec.d_k)) if spec.d_k is not None or spec.scale.mode != "sqrt_d_k" \
            else 1.0
        mask = getattr(spec, "mask", None)
        mask = None if mask is None else floats(mask.values)
        common = {"d_k": spec.d_k, "divisor": divisor, "mask": mask, "own_keys": own, "tokens": spec.tokens}
        if hasattr(spec, "scores"):  # a given form
            given = {k: floats(getattr(spec, k).values) for k in ("Q", "K", "V", "scores")
                     if getattr(spec, k) is not None}
            return {"X": None, "M": None, "W": {}, "given": given, "sinusoidal": False, "P": None, **common}
        X = floats(spec.X.values)
        positions = getattr(spec, "positions", None)
        sinusoidal = positions is not None and positions.mode == "sinusoidal"
        return {"X": X, "M": X if own else floats(spec.memory.values),
                "W": {k: floats(getattr(spec, k).values) for k in ("W_Q", "W_K", "W_V")}, "given": {},
                "sinusoidal": sinusoidal, "P": None if positions is None or sinusoidal else floats(positions.P.values),
                **common}
    except TypeError:  # symbols
        return None


def inputs_of_data(data: dict[str, Any], own: bool, beyond: tuple[str, ...]) -> dict[str, Any] | None:
    """inputs_of_spec() of a section's plain data with exact decimal strings: computed Q, K, V, √d_k scaling, no
    mask or a causal one; None when it holds any key of `beyond` (what the plain pipeline does not model)."""
    if any(key in data for key in beyond) or data.get("mask") not in (None, "causal"):
        return None
    try:
        X = [[float(v) for v in row] for row in data["X"]]
        M = X if own else [[float(v) for v in row] for row in data["memory"]]
        W = {k: [[float(v) for v in row] for row in data[k]] for k in ("W_Q", "W_K", "W_V")}
        d_k = len(W["W_K"][0])
        tokens = tuple(data["tokens"])
    except (KeyError, TypeError, ValueError, IndexError):
        return None
    mask = [[1.0 if j <= i else 0.0 for j in range(len(X))] for i in range(len(X))] if data.get("mask") else None
    return {"X": X, "M": M, "W": W, "given": {}, "d_k": d_k, "divisor": math.sqrt(d_k), "mask": mask,
            "sinusoidal": False, "P": None, "own_keys": own, "tokens": tokens}
