"""What check's hypotheses recompute a cross-attention section from (keys and values from the memory)."""

from __future__ import annotations

from typing import Any

from ...features.attention import hypotheses

# keys of a section's data the plain pipeline of the hypotheses does not model
BEYOND = ("past_K", "positional_encoding", "P", "scale", "softmax", "Q", "scores")


def inputs_of_spec(spec: Any) -> dict[str, Any] | None:
    return hypotheses.inputs_of_spec(spec, own=False)


def inputs_of_data(data: dict[str, Any]) -> dict[str, Any] | None:
    return hypotheses.inputs_of_data(data, own=False, beyond=BEYOND)
