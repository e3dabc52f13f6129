"""Next-token prediction, exactly: the logits of one decoder state over a vocabulary (x·W_vocab + b, or x·Eᵀ + b
with tied embeddings), divided by a temperature, their softmax, the ranking and the greedy pick; with top-k, the
k largest kept and their softmax renormalised over them alone."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cmp_to_key

from sympy import Expr, ImmutableMatrix, Rational, S

from ...engine.numbers import WORKING_DIGITS, Numbers
from ...engine.softmax import Softmax, row_numbers

# Two logits whose numbers agree to this many digits are compared exactly (a chain's irrational rows).
_CLOSE = S(10) ** -(WORKING_DIGITS - 10)


@dataclass(frozen=True)
class Prediction:
    """One state's next-token distribution, in vocabulary order unless said: the logits ℓ_j, the softmax's
    inputs a_j = ℓ_j / T (the logits themselves when T = 1), the softmax over the vocabulary; `ranking` the
    vocabulary indices from the largest logit down, equal logits in vocabulary order (so the first is
    torch.argmax's pick, the first maximal index); `ties` the ranking cut into groups of equal logits; with top-k,
    `kept` the first k of the ranking and `renormalised` their softmax (in ranking order) over them alone."""

    logits: tuple[Expr, ...]
    scaled: tuple[Expr, ...]
    softmax: Softmax
    ranking: tuple[int, ...]
    ties: tuple[tuple[int, ...], ...]
    kept: tuple[int, ...] | None
    renormalised: Softmax | None
    known: Numbers

    @property
    def predicted(self) -> int:
        """The greedy pick: the first entry of the ranking (among the kept ones, the same)."""
        return self.ranking[0]


def logits(x: ImmutableMatrix, W: ImmutableMatrix, bias: ImmutableMatrix | None) -> tuple[Expr, ...]:
    """x·W (+ b): one logit per column of W (tied embeddings: W = Eᵀ)."""
    row = x * W
    return tuple(row[0, j] + (bias[0, j] if bias is not None else 0) for j in range(W.cols))


def compare(a: Expr, b: Expr, known: Numbers) -> int:
    """-1, 0 or 1 as a < b, a = b, a > b, exactly (rationals directly; others by their numbers, and exactly when
    these agree to the working precision)."""
    if a.is_Rational and b.is_Rational:
        return int(bool(a > b)) - int(bool(a < b))
    difference = known.number(a) - known.number(b)
    if abs(difference) > _CLOSE * (1 + abs(known.number(a))):
        return 1 if difference > 0 else -1
    exact = (a - b).simplify()
    return 0 if exact == 0 else (1 if exact.evalf(2 * WORKING_DIGITS) > 0 else -1)


def predict(x: ImmutableMatrix, W: ImmutableMatrix, bias: ImmutableMatrix | None, temperature: Rational,
            top_k: int | None) -> Prediction:
    """The whole prediction of the state x (one row)."""
    known = Numbers()
    raw = logits(x, W, bias)
    scaled = raw if temperature == 1 else tuple(logit / temperature for logit in raw)
    softmax = Softmax(known, scaled, row_numbers(scaled, None, known))
    order = sorted(range(len(raw)), key=cmp_to_key(lambda i, j: compare(raw[j], raw[i], known) or i - j))
    ties: list[list[int]] = []
    for index in order:
        if ties and compare(raw[ties[-1][0]], raw[index], known) == 0:
            ties[-1].append(index)
        else:
            ties.append([index])
    kept = renormalised = None
    if top_k is not None:
        kept = tuple(order[:top_k])
        chosen = tuple(scaled[j] for j in kept)
        renormalised = Softmax(known, chosen, row_numbers(chosen, None, known))
    return Prediction(raw, scaled, softmax, tuple(order), tuple(map(tuple, ties)), kept, renormalised, known)
