"""The spec of a backward section: the gradients of a loss through the self-attention section it names.

Spec keys: kind = "backward", from = "NAME" (an earlier self-attention section with a name), and the upstream
gradient: `dO = [[...]]` (∂L/∂O, one row per token, as many columns as O), or `loss = "mse"` with a target
`T = [[...]]` (L = ½‖O − T‖², so ∂L/∂O = O − T), or `loss = "cross_entropy"` with `targets = [2, 1, ...]` (each
row of O the logits of d_v classes, L = −Σ_i log softmax(o_i)_{y_i}, so ∂L/∂O = softmax(O) − Y); `focus` (a token: the row written out term by term; default the
forward section's first focus token), `check = "finite_difference"` (with `h`, default 0.001: the page ends with
the central difference of L in the first entry of W_Q) and `heading`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sympy import Expr, Rational

from ...errors import SpecError
from ...spec import fields
from ...spec.model import GivenMatrix, Section
from ...spec.numbers import parse_number
from ..base import Referenced
from ..self_attention.kind import SelfAttentionSpec

KEYS = frozenset({"kind", "heading", "from", "dO", "loss", "T", "targets", "focus", "check", "h"})
CHECKS = ("none", "finite_difference")
DEFAULT_H = Rational(1, 1000)
LOSSES = ("mse", "cross_entropy")
FORWARD_KIND = SelfAttentionSpec.kind  # the kind of section a backward pass differentiates


@dataclass(frozen=True)
class BackwardSpec(Section):
    """A backward pass: `forward` the differentiated section (spec and exact result), the upstream gradient `dO`
    given, or the loss ("mse") with its target T, and the focus token whose row is written out."""

    kind = "backward"
    forward: Referenced
    focus: str
    loss: str | None = None  # None: dO given
    dO: GivenMatrix | None = None
    T: GivenMatrix | None = None
    h: Expr | None = None  # the step of the finite-difference check (None: no check)
    targets: tuple[int, ...] = ()  # cross_entropy: each token's target class, a column of O (0-based)

    @property
    def tokens(self) -> tuple[str, ...]:
        return self.forward.section.tokens


def parse(data: dict[str, Any], field: str) -> BackwardSpec:
    spec = _parse(data, field)
    check = data.get("check", "none")
    if check not in CHECKS:
        raise SpecError(f"{field}.check", f'expected "finite_difference" or "none", got {check!r}')
    if check == "none":
        if "h" in data:
            raise SpecError(f"{field}.h", 'the step of check = "finite_difference"; give that too, or leave h out')
        return spec
    h = DEFAULT_H
    if "h" in data:
        h, _ = parse_number(data["h"], f"{field}.h")
        if not 0 < h <= Rational(1, 10):
            raise SpecError(f"{field}.h", f"expected a small positive step such as 0.001 (at most 0.1), got {h}")
    return BackwardSpec(forward=spec.forward, focus=spec.focus, loss=spec.loss, dO=spec.dO, T=spec.T, h=h,
                        targets=spec.targets)


def _parse(data: dict[str, Any], field: str) -> BackwardSpec:
    forward = fields.require(data, "from", field)
    if not isinstance(forward, Referenced):  # (the chain resolves a name; anything else it refuses first)
        raise SpecError(f"{field}.from", f"expected the name of an earlier {FORWARD_KIND} section")
    source = forward.section
    if source.kind != FORWARD_KIND:
        raise SpecError(f"{field}.from", f"section {forward.name} is a {source.kind} section; a backward pass "
                                         f"differentiates a {FORWARD_KIND} section")
    _supported(source, f"{field}.from", forward.name)
    n, d_v = len(source.tokens), source.W_V.shape[1]
    focus = data.get("focus", source.focus.tokens[0])
    if not isinstance(focus, str) or focus not in source.tokens:
        raise SpecError(f"{field}.focus", f"expected one of section {forward.name}'s tokens "
                                          f"{list(source.tokens)}, got {focus!r}")
    if "loss" in data:
        loss = data["loss"]
        if loss not in LOSSES:
            raise SpecError(f"{field}.loss", f'expected "mse" (L = 1/2 |O - T|^2, with T) or "cross_entropy" (with '
                                             f"targets), or give dO instead, got {loss!r}")
        if "dO" in data:
            raise SpecError(f"{field}.dO", "give either dO or a loss, not both")
        wrong = "targets" if loss == "mse" else "T"
        if wrong in data:
            raise SpecError(f"{field}.{wrong}", f'goes with loss = "{"cross_entropy" if loss == "mse" else "mse"}"')
        if loss == "mse":
            return BackwardSpec(forward=forward, focus=focus, loss=loss, T=_rows(data, "T", field, n, d_v))
        if d_v < 2:  # a softmax over one class is 1 whatever O is: the loss is 0 and no gradient has anything to say
            raise SpecError(f"{field}.loss", f'"cross_entropy" reads each row of O as the logits of its classes, but '
                                             f"section {forward.name}'s O has one column (d_v = 1): give W_V two or "
                                             'more columns, or use loss = "mse" or dO')
        return BackwardSpec(forward=forward, focus=focus, loss=loss,
                            targets=_targets(fields.require(data, "targets", field), f"{field}.targets", n, d_v))
    if "targets" in data:
        raise SpecError(f"{field}.targets", 'targets go with loss = "cross_entropy"')
    if "T" in data:
        raise SpecError(f"{field}.T", 'a target goes with loss = "mse"')
    if "dO" not in data:
        raise SpecError(f"{field}.dO", 'missing: give the upstream gradient dO, or loss = "mse" with a target T')
    return BackwardSpec(forward=forward, focus=focus, dO=_rows(data, "dO", field, n, d_v))


def _targets(value: Any, field: str, n: int, d_v: int) -> tuple[int, ...]:
    """Each token's target class for the cross-entropy: a column of O, counted from 1 (the rows of O are the
    logits of d_v classes)."""
    if not isinstance(value, list) or len(value) != n:
        raise SpecError(field, f"expected a list of {n} class numbers (one per token, each 1 to {d_v}: a column of "
                               f"O), got {value!r}")
    for c in value:
        if isinstance(c, bool) or not isinstance(c, int) or not 1 <= c <= d_v:
            raise SpecError(field, f"expected class numbers from 1 to {d_v} (a column of O), got {c!r}")
    return tuple(c - 1 for c in value)


def _rows(data: dict[str, Any], key: str, field: str, n: int, d_v: int) -> GivenMatrix:
    """dO or T: numbers, one row per token, as many columns as the output O."""
    given = fields.matrix(fields.require(data, key, field), f"{field}.{key}")
    if given.symbolic:
        raise SpecError(f"{field}.{key}", "expected numbers: a backward section takes no symbols")
    fields.rows_match(given, n, f"{field}.{key}", "tokens")
    if given.shape[1] != d_v:
        raise SpecError(f"{field}.{key}", f"{given.shape[1]} columns, but the output O has {d_v} (as W_V)")
    return given


def _supported(source: SelfAttentionSpec, field: str, name: str) -> None:
    """What the backward pass does not differentiate yet: symbols, positional encodings, RoPE, a KV cache, given
    Q/K/V or scores."""
    if not isinstance(source, SelfAttentionSpec):
        raise SpecError(field, f"section {name} gives Q, K and V (or scores) instead of X and weights; a backward "
                               "pass needs X, W_Q, W_K and W_V")
    if any(getattr(source, m).symbolic for m in ("X", "W_Q", "W_K", "W_V")):
        raise SpecError(field, f"section {name} holds symbols; a backward pass takes numbers")
    for given, what in ((source.positions, "positional encodings"), (source.rope, "RoPE"),
                        (source.cache, "a KV cache")):
        if given is not None:
            raise SpecError(field, f"section {name} has {what}; a backward pass through it is not supported yet")
