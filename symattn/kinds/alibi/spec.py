"""The spec of an ALiBi section (Press et al., 2021, arXiv:2108.12409): causal self-attention whose scaled scores get
the bias −m·(i − j), with one given slope m or the paper's geometric slopes m_h = 2^(−8h/H).

Spec keys: kind = "alibi", tokens, X, focus (a token, a list, "all" or "matrix"), scale, d_k, heading, and either

* one head: W_Q, W_K, W_V with `slope = 0.5` (or "1/3"), or with `heads = H` and `head = h`, the slope of head h of
  an H-head model, 2^(−8h/H) (the paper's, exact: irrational when H does not divide 8h);
* several heads: `heads = [{W_Q = ..., W_K = ..., W_V = ...}, ...]` (each head may set its own `d_k`), with
  `slopes = [...]` (one per head) or else the paper's geometric slopes for H = len(heads), and `W_O`, optional
  (without it the section ends at the concatenation of the heads' outputs)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sympy import Expr, ImmutableMatrix, Integer, Rational, S

from ...errors import SpecError
from ...spec import fields
from ...spec.model import Focus, GivenMatrix, Scale, Section
from ...spec.numbers import parse_number

HEAD_KEYS = frozenset({"W_Q", "W_K", "W_V", "d_k"})
KEYS = frozenset({"kind", "heading", "tokens", "X", "focus", "scale", "d_k", "W_Q", "W_K", "W_V", "slope", "slopes",
                  "heads", "head", "W_O"})
# The most heads a section takes (the paper's models have 8 or 16; the slopes stay exact powers of two).
MAX_HEADS = 64


def geometric_slope(h: int, H: int) -> Expr:
    """The paper's slope of head h of H (1-based): 2^(−8h/H), exact (1/2, 1/4, … for H = 8; 2^(−8/3) for H = 3)."""
    return Integer(2) ** Rational(-8 * h, H)


@dataclass(frozen=True)
class AlibiHead:
    """One head: its weights, its d_k and its slope m; `number` is h of the paper's 2^(−8h/H) when the slope is
    geometric (None for a given slope)."""

    W_Q: GivenMatrix
    W_K: GivenMatrix
    W_V: GivenMatrix
    d_k: int
    slope: Expr
    number: int | None = None


@dataclass(frozen=True)
class AlibiSpec(Section):
    """An ALiBi section: causal attention over `tokens` with a linear bias per head. `of` is H of the geometric
    slopes (0: the slopes were given); `several` whether the spec gave a list of heads (then their outputs are
    concatenated, and projected by W_O if given)."""

    kind = "alibi"
    tokens: tuple[str, ...]
    X: GivenMatrix
    heads: tuple[AlibiHead, ...]
    focus: Focus
    scale: Scale = Scale()
    of: int = 0
    several: bool = False
    W_O: GivenMatrix | None = None

    @property
    def geometric(self) -> bool:
        return self.of > 0


def parse(data: dict[str, Any], field: str) -> AlibiSpec:
    if isinstance(data.get("X"), GivenMatrix):  # rows an earlier section passed on (pipeline.chain)
        raise SpecError(f"{field}.X", "an alibi section takes its embeddings as numbers; \"from:\" and \"input:\" "
                                      "references are not supported yet")
    tokens = fields.tokens(fields.require(data, "tokens", field), f"{field}.tokens")
    X = _numeric(fields.matrix(fields.require(data, "X", field), f"{field}.X"), f"{field}.X")
    fields.rows_match(X, len(tokens), f"{field}.X", "tokens")
    scale = fields.scale(data, field)
    focus = fields.focus(data.get("focus", "all"), tokens, f"{field}.focus")
    heads_data = data.get("heads")
    common = {"tokens": tokens, "X": X, "focus": focus, "scale": scale}
    if isinstance(heads_data, list):
        return _several(data, field, heads_data, common)
    for key in ("slopes", "W_O"):
        if key in data:
            raise SpecError(f"{field}.{key}", "applies to a list of heads (heads = [{W_Q = ..., W_K = ..., "
                                              "W_V = ...}, ...])")
    weights = _weights(data, field, X)
    if "slope" in data:
        for key in ("heads", "head"):
            if key in data:
                raise SpecError(f"{field}.{key}", "give either slope or heads = H with head = h (the slope "
                                                  "2^(-8h/H)), not both")
        head = AlibiHead(*weights, slope=_slope(data["slope"], f"{field}.slope"))
        return AlibiSpec(**common, heads=(head,))
    if heads_data is None:
        if "head" in data:
            raise SpecError(f"{field}.heads", "missing: head = h needs heads = H, the model's count of heads")
        raise SpecError(f"{field}.slope", "missing: give slope = m, or heads = H with head = h for the paper's "
                                          "slope 2^(-8h/H)")
    H = fields.positive_int(heads_data, f"{field}.heads", MAX_HEADS)
    h = fields.positive_int(fields.require(data, "head", field), f"{field}.head", H)
    return AlibiSpec(**common, heads=(AlibiHead(*weights, slope=geometric_slope(h, H), number=h),), of=H)


def _several(data: dict[str, Any], field: str, heads_data: list, common: dict[str, Any]) -> AlibiSpec:
    """A list of heads, with their slopes (given or geometric) and W_O (optional)."""
    for key in ("W_Q", "W_K", "W_V", "slope", "head", "d_k"):
        if key in data:
            raise SpecError(f"{field}.{key}", "a list of heads sets it in each head (heads[h]." + key + ")"
                            if key in HEAD_KEYS else "applies to one head; with a list of heads give slopes = "
                                                     "[...], one per head")
    if not heads_data:
        raise SpecError(f"{field}.heads", "expected a non-empty list of heads")
    if len(heads_data) > MAX_HEADS:
        raise SpecError(f"{field}.heads", f"expected at most {MAX_HEADS} heads, got {len(heads_data)}")
    H = len(heads_data)
    slopes: list[Expr | None] = [None] * H
    if "slopes" in data:
        given = data["slopes"]
        if not isinstance(given, list):
            raise SpecError(f"{field}.slopes", f"expected a list of {H} positive numbers (one per head), got "
                                               f"{_written(given)}")
        if len(given) != H:
            raise SpecError(f"{field}.slopes", f"{len(given)} slopes, but there are {H} heads (one slope each)")
        slopes = [_slope(m, f"{field}.slopes[{h}]") for h, m in enumerate(given)]
    heads = []
    for h, head in enumerate(heads_data):
        at = f"{field}.heads[{h}]"
        if not isinstance(head, dict):
            raise SpecError(at, "expected a table of W_Q, W_K and W_V")
        fields.check_keys(head, set(HEAD_KEYS), at)
        W = _weights(head, at, common["X"])
        m = slopes[h]
        heads.append(AlibiHead(*W, slope=geometric_slope(h + 1, H) if m is None else m,
                               number=h + 1 if m is None else None))
    W_O = None
    if "W_O" in data:
        W_O = _numeric(fields.matrix(data["W_O"], f"{field}.W_O"), f"{field}.W_O")
        width = sum(head.W_V.shape[1] for head in heads)
        fields.rows_match(W_O, width, f"{field}.W_O", "entries in the concatenated heads' outputs")
    return AlibiSpec(**common, heads=tuple(heads), of=0 if "slopes" in data else H, several=True, W_O=W_O)


def _weights(data: dict[str, Any], field: str, X: GivenMatrix) -> tuple[GivenMatrix, GivenMatrix, GivenMatrix, int]:
    """W_Q, W_K, W_V of a head (numbers only), checked against X, and its d_k."""
    m = {key: _numeric(fields.matrix(fields.require(data, key, field), f"{field}.{key}"), f"{field}.{key}")
         for key in ("W_Q", "W_K", "W_V")}
    fields.check_projections(m, field, X.shape[1], X.shape[1], "X")
    return m["W_Q"], m["W_K"], m["W_V"], fields.d_k(data, m["W_K"], field)


def _slope(value: Any, field: str) -> Expr:
    """A given slope: an exact number above 0 (0 would be attention without ALiBi; a negative slope would favour
    distant keys)."""
    if isinstance(value, str) and not _NUMBER.fullmatch(value):  # (a negative one is told "above 0" below)
        raise SpecError(field, f"expected a positive number such as 0.5, 2 or 1/3, got {value!r}")
    # a number the spec reader kept as a Decimal is parsed (and any error shown) as the spec wrote it: 1e400, not 1E+400
    number, _ = parse_number(_written(value) if isinstance(value, Decimal) else value, field)
    if number <= 0:
        raise SpecError(field, f"expected a slope above 0 (ALiBi's m > 0), got {_written(value)}")
    return number


# what parse_number takes for a number (a decimal or a fraction, signed), spaces around it allowed
_NUMBER = re.compile(r"\s*[+-]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?|[0-9]+\s*/\s*[+-]?[0-9]+)\s*")


def _written(value: Any) -> str:
    """A slope's value as a spec writes it: a number read from TOML or JSON (a Decimal) as 1e400, -0.5 (not
    1E+400 or Decimal('-0.5')), in a list too; a text as itself, quoted."""
    if isinstance(value, Decimal):
        return str(value).replace("E+", "e").replace("E", "e")
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return "[" + ", ".join(map(_written, value)) + "]"
    return repr(value)


def _numeric(given: GivenMatrix, field: str) -> GivenMatrix:
    if given.symbolic:
        raise SpecError(field, "expected numbers: an ALiBi section takes no symbols")
    return given


def bias_matrix(slope: Expr, n: int, masked: Expr = S.Zero) -> ImmutableMatrix:
    """B_ij = −m·(i − j) for j ≤ i; `masked` (0 for the engine, whose mask gives −∞, or −∞ to show) for j > i."""
    return ImmutableMatrix(n, n, lambda i, j: -slope * (i - j) if j <= i else masked)
