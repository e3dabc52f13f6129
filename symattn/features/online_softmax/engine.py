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
from dataclasses import dataclass, field
from functools import cached_property

import mpmath
from sympy import Add, Expr, Mul, S, expand_mul, powsimp

from ...engine.canonical import exponential
from ...engine.numbers import PRECISION, WORKING_DIGITS, Numbers


@dataclass(frozen=True)
class Block:
    """One block of keys and the running values after it. `rescale` is e^{m⁽ᵇ⁻¹⁾ − m⁽ᵇ⁾} (exactly 1 when the
    block does not raise the maximum), None while nothing was seen before (ℓ⁽ᵇ⁻¹⁾ = 0: nothing to rescale).
    ℓ⁽ᵇ⁾ and o⁽ᵇ⁾ are built when first read (an answer key reads only their numbers, which the recurrence gives),
    their numbers filed then."""

    keys: tuple[int, ...]  # the keys' indices
    previous: Expr  # m⁽ᵇ⁻¹⁾ (−∞ before any visible key)
    maximum: Expr  # m⁽ᵇ⁾
    rescale: Expr | None
    exps: tuple[Expr, ...]  # e^{a_j − m⁽ᵇ⁾} of the block's keys (0 for a masked key)
    seen: tuple[int, ...]  # the visible keys so far
    logits: tuple[Expr, ...] = field(repr=False)  # the query's a_j
    values: Sequence[Sequence[Expr]] = field(repr=False)
    total_number: mpmath.mpf = field(repr=False)  # ℓ⁽ᵇ⁾'s number
    partial_numbers: tuple[mpmath.mpf, ...] = field(repr=False)
    known: Numbers = field(repr=False, compare=False)

    @cached_property
    def terms(self) -> dict[int, Expr]:
        """e^{a_j − m⁽ᵇ⁾} of every visible key seen so far, by index (their numbers filed)."""
        terms = {j: exponential(self.logits[j] - self.maximum) for j in self.seen}
        if not terms:  # no visible key yet
            return terms
        with mpmath.workprec(PRECISION):
            top = self.known.number(self.maximum)
            for j, e in terms.items():
                if not e.is_Rational:
                    self.known.file(e, mpmath.exp(self.known.number(self.logits[j]) - top))
        return terms

    @property
    def tied(self) -> bool:
        """Whether every key seen so far has the maximum's score: each term is e^0 = 1, ℓ and o are rational."""
        return all(self.logits[j] == self.maximum for j in self.seen)

    @cached_property
    def total(self) -> Expr:
        """ℓ⁽ᵇ⁾ = Σ_{j seen} e^{a_j − m⁽ᵇ⁾}."""
        total = Add(*self.terms.values())
        self.known.file(total, self.total_number)
        return total

    @cached_property
    def partial(self) -> tuple[Expr, ...]:
        """o⁽ᵇ⁾ = Σ_{j seen} e^{a_j − m⁽ᵇ⁾} v_j, one entry per value column."""
        partial = tuple(Add(*(e * self.values[j][c] for j, e in self.terms.items()))
                        for c in range(len(self.values[0])))
        for o, number in zip(partial, self.partial_numbers, strict=True):
            self.known.file(o, number)
        return partial

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
    """A query's online softmax: its blocks, in order; z = o⁽ᴮ⁾/ℓ⁽ᴮ⁾ built when first read."""

    logits: tuple[Expr, ...]
    blocks: tuple[Block, ...]

    @property
    def last(self) -> Block:
        return self.blocks[-1]

    @cached_property
    def output(self) -> tuple[Expr, ...]:
        """z = o⁽ᴮ⁾/ℓ⁽ᴮ⁾, entry by entry."""
        last = self.last
        output = tuple(S.Zero if o is S.Zero else Mul(o, last.total ** -1) for o in last.partial)
        with mpmath.workprec(PRECISION):
            for z, number in zip(output, last.partial_numbers, strict=True):
                if z is not S.Zero:
                    last.known.file(z, number / last.total_number)
        return output


def blocks(n: int, size: int) -> tuple[tuple[int, ...], ...]:
    """The key indices 0 … n−1 in blocks of `size` (the last one shorter when size does not divide n)."""
    return tuple(tuple(range(start, min(start + size, n))) for start in range(0, n, size))


# Two numbers (WORKING_DIGITS correct digits) that differ by more than this share decide a comparison; closer ones
# are compared by SymPy exactly.
_DECISIVE = mpmath.mpf(10) ** -(WORKING_DIGITS // 2)


def larger(a: Expr, b: Expr, known: Numbers) -> Expr:
    """max(a, b) of exact real numbers (−∞ for a masked logit), decided exactly: by their numbers when those
    differ far beyond their error, else by SymPy."""
    if a is S.NegativeInfinity:
        return b
    if b is S.NegativeInfinity or a == b:
        return a
    x, y = known.number(a), known.number(b)
    if abs(x - y) > _DECISIVE * max(1, abs(x), abs(y)):
        return a if x > y else b
    return a if bool(a > b) else b


def online_softmax(logits: Sequence[Expr], values: Sequence[Sequence[Expr]], size: int,
                   known: Numbers) -> OnlineSoftmax:
    """The online softmax of one query's logits over the value rows, in blocks of `size` keys, every value exact.
    The numbers follow the recurrence itself, as FlashAttention computes (each block's keys once, at the working
    precision); those of the exponentials shown are filed in `known` (the result's table)."""
    logits = tuple(logits)
    numbers = [None if a is S.NegativeInfinity else known.number(a) for a in logits]
    value_numbers = [[known.number(v) for v in row] for row in values]
    width = len(values[0])
    maximum: Expr = S.NegativeInfinity
    seen: list[int] = []
    out: list[Block] = []
    zero = mpmath.mpf(0)
    total, partial = zero, [zero] * width
    for keys in blocks(len(logits), size):
        previous = maximum
        for j in keys:
            maximum = larger(logits[j], maximum, known)
        visible = [j for j in keys if logits[j] is not S.NegativeInfinity]
        seen += visible
        rescale = None if previous is S.NegativeInfinity else exponential(previous - maximum)
        exps = tuple(exponential(logits[j] - maximum) for j in keys)
        if seen:  # else no visible key yet: ℓ and o stay exactly 0
            with mpmath.workprec(PRECISION):
                top = known.number(maximum)
                powers = {j: mpmath.exp(numbers[j] - top) for j in visible}
                for j, e in zip(keys, exps, strict=True):
                    if j in powers and not e.is_Rational:
                        known.file(e, powers[j])
                factor = zero
                if rescale is not None:
                    factor = mpmath.exp(known.number(previous) - top)
                    if not rescale.is_Rational:
                        known.file(rescale, factor)
                total = factor * total + mpmath.fsum(powers.values())
                partial = [factor * partial[c] + mpmath.fsum(powers[j] * value_numbers[j][c] for j in visible)
                           for c in range(width)]
        out.append(Block(keys, previous, maximum, rescale, exps, tuple(seen), logits, values, total, tuple(partial),
                         known))
    return OnlineSoftmax(logits, tuple(out))


def matches_direct(online: OnlineSoftmax, values: Sequence[Sequence[Expr]]) -> bool:
    """Whether z = o⁽ᴮ⁾/ℓ⁽ᴮ⁾ is exactly the direct softmax's Σ_j e^{a_j} v_j / Z, proved in exact arithmetic:
    e^{m⁽ᴮ⁾}ℓ⁽ᴮ⁾ = Z and e^{m⁽ᴮ⁾}o⁽ᴮ⁾ = Σ_j e^{a_j} v_j (e^{m} e^{a_j − m} = e^{a_j}), so the factor e^{−m⁽ᴮ⁾} of
    both cancels."""
    last = online.last
    factor = exponential(last.maximum)
    exps = [exponential(a) for a in online.logits]
    if _normal(factor * last.total - Add(*exps)) != 0:
        return False
    return all(_normal(factor * o - Add(*(e * row[c] for e, row in zip(exps, values, strict=True)))) == 0
               for c, o in enumerate(last.partial))


def _normal(value: Expr) -> Expr:
    """A sum of products of exponentials in a normal form: products multiplied out, e^{x} e^{y} made e^{x + y}
    (SymPy does that by itself only for rational x, y) and every exponent multiplied out, so that equal terms
    cancel."""
    return expand_mul(powsimp(expand_mul(value), combine="exp"))
