"""Which parts an exam asks (--parts) and what each is worth: points in proportion to the work of its blanks, the
work of an unasked part going to the next asked part that needs it."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from functools import lru_cache
from math import floor

from ..errors import SpecError
from ..exercises.exercise import NO_WORK, Part, writing_space

PART_LETTERS = "abcde"  # (a) Q, K, V (b) raw scores (c) scaled scores (d) weights (e) output
TOTAL_POINTS = 20  # every version's total, whichever parts are asked
EXP_PARTS = frozenset({"weights", "probabilities"})  # the parts whose work reads e^x: their paper has the e^x table


def parse_parts(text: str | None) -> tuple[str, ...] | None:
    """--parts as letters in paper order (None: all parts), or a SpecError naming the option."""
    if text is None:
        return None
    letters = [item.strip().lower() for item in text.split(",")]
    for letter in letters:
        if len(letter) != 1 or letter not in PART_LETTERS:
            raise SpecError("--parts", f"expected parts among {', '.join(PART_LETTERS)} separated by commas, "
                                       f"got {letter!r}")
    if len(set(letters)) != len(letters):
        raise SpecError("--parts", f"expected each part once, got {text!r}")
    return tuple(sorted(letters))


Points = tuple[tuple[str, int], ...]  # --points: (letter, whole points) per part, in paper order
MAX_PART_POINTS = 100


def parse_points(text: str | None) -> Points | None:
    """--points as (letter, points) pairs in paper order (None: shared by work), or a SpecError naming the part."""
    if text is None:
        return None
    given: dict[str, int] = {}
    for item in text.split(","):
        letter, equals, value = (x.strip() for x in item.partition("="))
        letter = letter.lower()
        if len(letter) != 1 or letter not in PART_LETTERS or not equals:
            raise SpecError("--points", f"expected part=points for parts among {', '.join(PART_LETTERS)} separated "
                                        f"by commas (a=4,b=2), got {item.strip()!r}")
        if letter in given:
            raise SpecError("--points", f"part {letter} is given twice")
        if not value.isdigit() or not 1 <= int(value) <= MAX_PART_POINTS:
            raise SpecError("--points", f"part {letter}: expected a whole number of points from 1 to "
                                        f"{MAX_PART_POINTS}, got {value!r}")
        given[letter] = int(value)
    return tuple(sorted(given.items()))


def check_points(points: Points | None, letters: tuple[str, ...] | None) -> None:
    """--points names only asked parts (--parts, default all)."""
    for letter, _ in points or ():
        if letters is not None and letter not in letters:
            raise SpecError("--points", f"part {letter} is not asked (--parts {','.join(letters)})")


def asked_parts(parts: tuple[Part, ...], letters: tuple[str, ...] | None,
                points: Points | None = None) -> tuple[Part, ...]:
    """The asked parts (all when letters is None), each with its work plus that of the unasked parts before it
    (their values are needed for it), and their points: the examiner's (--points: every asked part needs its own;
    letters past a kind's parts are another kind's, in a mixed exam), else TOTAL_POINTS shared in proportion to
    the work."""
    asked = _indices(parts, letters)
    chosen, carry = [], NO_WORK
    for i, part in enumerate(parts):
        carry += part.work
        if i in asked:
            chosen.append((part, carry))
            carry = NO_WORK
    if points is None:
        shares = _allocated(TOTAL_POINTS, tuple(work.operations for _, work in chosen))
    else:
        given = dict(points)
        missing = [letter for letter in (PART_LETTERS[parts.index(p)] for p, _ in chosen) if letter not in given]
        if missing:
            raise SpecError("--points", f"part {missing[0]} has no points: give every asked part its own "
                                        f"({','.join(PART_LETTERS[parts.index(p)] + '=…' for p, _ in chosen)})")
        shares = tuple(given[PART_LETTERS[parts.index(p)]] for p, _ in chosen)
    parts = (replace(part, work=work, points=n) for (part, work), n in zip(chosen, shares, strict=True))
    return tuple(replace(part, space=writing_space(part)) for part in parts)


def needed(parts: tuple[Part, ...], letters: tuple[str, ...] | None) -> tuple[Part, ...]:
    """The parts a student works through: every part up to the last asked one."""
    return parts[:max(_indices(parts, letters)) + 1]


def _indices(parts: tuple[Part, ...], letters: tuple[str, ...] | None) -> list[int]:
    """The places of the asked parts among a kind's parts (a kind with fewer parts ignores the letters past
    them); a SpecError naming --parts when none of them is one of its parts."""
    if letters is None:
        return list(range(len(parts)))
    places = [PART_LETTERS.index(x) for x in letters if PART_LETTERS.index(x) < len(parts)]
    if not places:
        raise SpecError("--parts", f"this exam's problems have the parts a–{PART_LETTERS[len(parts) - 1]} "
                                   f"({', '.join(p.key for p in parts)}): none of {','.join(letters)} is one")
    return places


@lru_cache(maxsize=256)  # an exam's versions share a few shapes, so a few works
def _allocated(total: int, weights: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(allocate(total, list(weights)))


def allocate(total: int, weights: list[int]) -> list[int]:
    """`total` whole points in proportion to the weights, at least one each: a part whose share is under one
    point gets one and the rest is shared again; largest remainders, ties to the earlier part."""
    ones: set[int] = set()
    while True:
        rest = [i for i in range(len(weights)) if i not in ones]
        whole, left = sum(weights[i] for i in rest), total - len(ones)
        shares = {i: Fraction(left * weights[i], whole) if whole else Fraction(left, len(rest)) for i in rest}
        small = {i for i, share in shares.items() if share < 1}
        if not small:
            break
        ones |= small
    points = {i: 1 for i in ones} | {i: floor(share) for i, share in shares.items()}
    for i in sorted(shares, key=lambda i: (floor(shares[i]) - shares[i], i))[:total - sum(points.values())]:
        points[i] += 1
    return [points[i] for i in range(len(weights))]
