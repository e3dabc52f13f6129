"""The section key `rope` parsed: true, false, or a table of base, pairing and positions (the attention kinds
that rotate q and k read it through RoPE's feature)."""

from __future__ import annotations

from typing import Any

from ...errors import SpecError
from ...spec.fields import check_keys, shown, suggest, whole
from ...spec.model import Rope
from ...spec.numbers import parse_number

ROPE_KEYS = frozenset({"base", "pairing", "positions"})
PAIRINGS = ("interleaved", "half")


def rope_of(data: dict[str, Any], d: int, n: int, field: str) -> Rope | None:
    """rope = true (base 10000, interleaved pairs, positions from 0), false, or a table of base, pairing and
    positions (n whole numbers from 0); d, the width of q and k, must be even: RoPE rotates pairs of dimensions."""
    value = data.get("rope", False)
    if value is False:
        return None
    where = f"{field}.rope"
    if value is not True and not isinstance(value, dict):
        raise SpecError(where, f"expected true, false or a table of base, pairing and positions, got {value!r}")
    if d % 2:
        raise SpecError(where, f"RoPE rotates pairs of dimensions, but q and k have {d} (an odd number)")
    if value is True:
        return Rope()
    check_keys(value, set(ROPE_KEYS), where)
    base = Rope.base
    if "base" in value:
        base, _ = parse_number(value["base"], f"{where}.base")
        if base <= 1:
            raise SpecError(f"{where}.base", f"expected a number greater than 1, got {shown(value['base'])}")
    pairing = value.get("pairing", "interleaved")
    if pairing not in PAIRINGS:
        raise SpecError(f"{where}.pairing", f"expected \"interleaved\" or \"half\", got {pairing!r}"
                                           f"{suggest(str(pairing), PAIRINGS)}")
    at = None
    if "positions" in value:
        at = value["positions"]
        if not isinstance(at, list) or len(at) != n:
            raise SpecError(f"{where}.positions", f"expected a list of {n} positions, one per token, got {at!r}")
        at = tuple(whole(p, f"{where}.positions[{i}]") for i, p in enumerate(at))
    return Rope(base, pairing, at)
