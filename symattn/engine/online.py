"""FlashAttention's online softmax of one query, exactly: the keys in blocks, the running maximum m, the running sum
ℓ and the unnormalised partial output o, rescaled whenever the maximum grows, then z = o/ℓ (FlashAttention-2's
algorithm 1: o is divided by ℓ once, at the end).

With m⁽⁰⁾ = −∞, ℓ⁽⁰⁾ = 0 and o⁽⁰⁾ = 0, block b with keys J_b gives
    m⁽ᵇ⁾ = max(m⁽ᵇ⁻¹⁾, max_{j∈J_b} a_j)
    ℓ⁽ᵇ⁾ = e^{m⁽ᵇ⁻¹⁾ − m⁽ᵇ⁾} ℓ⁽ᵇ⁻¹⁾ + Σ_{j∈J_b} e^{a_j − m⁽ᵇ⁾}
    o⁽ᵇ⁾ = e^{m⁽ᵇ⁻¹⁾ − m⁽ᵇ⁾} o⁽ᵇ⁻¹⁾ + Σ_{j∈J_b} e^{a_j − m⁽ᵇ⁾} v_j.
Each value is kept in its closed form, ℓ⁽ᵇ⁾ = Σ_{j seen} e^{a_j − m⁽ᵇ⁾} (and o⁽ᵇ⁾ likewise), which the recurrence
gives because e^{m⁽ᵇ⁻¹⁾ − m⁽ᵇ⁾} e^{a_j − m⁽ᵇ⁻¹⁾} = e^{a_j − m⁽ᵇ⁾}. A masked key (a_j = −∞) adds e^{−∞} = 0; a block
whose keys are all masked leaves m, ℓ and o as they were.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import mpmath
from sympy import Add, Expr, Mul, S, expand

from .canonical import exponential
from .numbers import PRECISION, Numbers


@dataclass(frozen=True)
class Block:
    """One block of keys and the running values after it. `rescale` is e^{m⁽ᵇ⁻¹⁾ − m⁽ᵇ⁾} (exactly 1 when the
    block does not raise the maximum), None while nothing was seen before (ℓ⁽ᵇ⁻¹⁾ = 0: nothing to rescale)."""

    keys: tuple[int, ...]  # the keys' indices
    previous: Expr  # m⁽ᵇ⁻¹⁾ (−∞ before any visible key)
    maximum: Expr  # m⁽ᵇ⁾
    rescale: Expr | None
    exps: tuple[Expr, ...]  # e^{a_j − m⁽ᵇ⁾} of the block's keys (0 for a masked key)
    total: Expr  # ℓ⁽ᵇ⁾
    partial: tuple[Expr, ...]  # o⁽ᵇ⁾, one entry per value column

    @property
    def masked(self) -> bool:
        """Whether every key of the block is masked: it changes nothing."""
        return all(e is S.Zero for e in self.exps)

    @property
    def raises(self) -> bool:
        """Whether the block raises the running maximum (then ℓ and o are rescaled by a factor below 1)."""
        return self.rescale is not None and self.rescale is not S.One


@dataclass(frozen=True)
class OnlineSoftmax:
    """A query's online softmax: its blocks, in order, and z = o⁽ᴮ⁾/ℓ⁽ᴮ⁾."""

    logits: tuple[Expr, ...]
    blocks: tuple[Block, ...]
    output: tuple[Expr, ...]

    @property
    def last(self) -> Block:
        return self.blocks[-1]


def blocks(n: int, size: int) -> tuple[tuple[int, ...], ...]:
    """The key indices 0 … n−1 in blocks of `size` (the last one shorter when size does not divide n)."""
    return tuple(tuple(range(start, min(start + size, n))) for start in range(0, n, size))


def larger(a: Expr, b: Expr) -> Expr:
    """max(a, b) of exact real numbers (−∞ for a masked logit); SymPy decides the comparison exactly."""
    if a is S.NegativeInfinity:
        return b
    if b is S.NegativeInfinity or a == b:
        return a
    return a if bool(a > b) else b


def online_softmax(logits: Sequence[Expr], values: Sequence[Sequence[Expr]], size: int,
                   known: Numbers) -> OnlineSoftmax:
    """The online softmax of one query's logits over the value rows, in blocks of `size` keys, every value exact;
    the numbers of its irrational values are filed in `known` (the result's table)."""
    logits = tuple(logits)
    numbers = [None if a is S.NegativeInfinity else known.number(a) for a in logits]
    maximum: Expr = S.NegativeInfinity
    seen: list[int] = []
    out: list[Block] = []
    for keys in blocks(len(logits), size):
        previous = maximum
        for j in keys:
            maximum = larger(logits[j], maximum)
        seen += [j for j in keys if logits[j] is not S.NegativeInfinity]
        exps = {j: exponential(logits[j] - maximum) for j in seen}
        rescale = None if previous is S.NegativeInfinity else exponential(previous - maximum)
        total = Add(*exps.values())
        partial = tuple(Add(*(exps[j] * values[j][c] for j in seen)) for c in range(len(values[0])))
        out.append(Block(keys, previous, maximum, rescale, tuple(exps.get(j, S.Zero) for j in keys), total,
                         partial))
        _file(known, numbers, maximum, previous, rescale, exps, total, partial, values)
    last = out[-1]
    output = tuple(S.Zero if o is S.Zero else Mul(o, last.total ** -1) for o in last.partial)
    with mpmath.workprec(PRECISION):
        for o, z in zip(last.partial, output, strict=True):
            if z is not S.Zero:
                known.file(z, known.number(o) / known.number(last.total))
    return OnlineSoftmax(logits, tuple(out), output)


def _file(known: Numbers, numbers: list, maximum: Expr, previous: Expr, rescale: Expr | None, exps: dict,
          total: Expr, partial: tuple[Expr, ...], values: Sequence[Sequence[Expr]]) -> None:
    """File the numbers of a block's exponentials, ℓ and o (each e^{x} evaluated once, from the logits' numbers)."""
    if maximum is S.NegativeInfinity:  # no visible key yet: ℓ and o are exactly 0
        return
    with mpmath.workprec(PRECISION):
        top = known.number(maximum)
        terms = {j: mpmath.exp(numbers[j] - top) for j in exps}
        for j, e in exps.items():
            known.file(e, terms[j])
        if rescale is not None:
            known.file(rescale, mpmath.exp(known.number(previous) - top))
        known.file(total, mpmath.fsum(terms.values()))
        for c, o in enumerate(partial):
            known.file(o, mpmath.fsum(terms[j] * known.number(values[j][c]) for j in exps))


def matches_direct(online: OnlineSoftmax, values: Sequence[Sequence[Expr]]) -> bool:
    """Whether z = o⁽ᴮ⁾/ℓ⁽ᴮ⁾ is exactly the direct softmax's Σ_j e^{a_j} v_j / Z, proved in exact arithmetic:
    e^{m⁽ᴮ⁾}ℓ⁽ᴮ⁾ = Z and e^{m⁽ᴮ⁾}o⁽ᴮ⁾ = Σ_j e^{a_j} v_j (e^{m} e^{a_j − m} = e^{a_j}), so the factor e^{−m⁽ᴮ⁾} of
    both cancels."""
    last = online.last
    factor = exponential(last.maximum)
    exps = [exponential(a) for a in online.logits]
    if expand(factor * last.total) - Add(*exps) != 0:
        return False
    return all(expand(factor * o) - Add(*(e * row[c] for e, row in zip(exps, values, strict=True))) == 0
               for c, o in enumerate(last.partial))
