"""What check's hypotheses recompute a self-attention section from (keys and values from X itself)."""

from __future__ import annotations

from typing import Any

from ...features.attention import hypotheses

# keys of a section's data the plain pipeline of the hypotheses does not model
BEYOND = ("rope", "past_K", "positional_encoding", "P", "scale", "softmax", "Q", "scores")


def inputs_of_spec(spec: Any) -> dict[str, Any] | None:
    """None for a section with RoPE: the hypotheses do not rotate."""
    return None if getattr(spec, "rope", None) is not None else hypotheses.inputs_of_spec(spec, own=True)


def inputs_of_data(data: dict[str, Any]) -> dict[str, Any] | None:
    return hypotheses.inputs_of_data(data, own=True, beyond=BEYOND)
