"""Fair versions: every version of an exam has the same shape (token count and d_k), set by --tokens / --d-k or
drawn once from the seed, so every version of a kind has the same workload."""

from __future__ import annotations

import random
from dataclasses import replace

from ..errors import SpecError
from ..exercises.levels import LEVELS, TOKEN_COUNTS, Level


def check_shape(difficulty: str, tokens: int | None, d_k: int | None) -> None:
    """--tokens and --d-k within what the difficulty allows, each named in its error."""
    if tokens is not None and tokens not in TOKEN_COUNTS:
        raise SpecError("--tokens", f"expected a whole number of tokens from {TOKEN_COUNTS[0]} to "
                                    f"{TOKEN_COUNTS[-1]}, got {tokens}")
    allowed = LEVELS[difficulty].d_k_allowed
    if d_k is not None and d_k not in allowed:
        why = ", whose scaled scores must stay on the e^x table" if LEVELS[difficulty].exp_step else ""
        raise SpecError("--d-k", f"expected one of {', '.join(map(str, allowed))} at {difficulty}{why}, got {d_k}")


def exam_level(seed: int, kind: str, difficulty: str, tokens: int | None = None, d_k: int | None = None) -> Level:
    """The difficulty's level narrowed to one token count and one d_k for the whole exam: the options', else
    drawn once from the seed (not from the language: ja and en give the same exam)."""
    level = LEVELS[difficulty]
    rng = random.Random(f"symattn-exam-shape:{seed}:{kind}:{difficulty}")
    drawn_tokens, drawn_d_k = rng.choice(level.tokens), rng.choice(level.d_k)  # both drawn: one option alone
    return replace(level, tokens=(drawn_tokens if tokens is None else tokens,),  # leaves the other as without it
                   d_k=(drawn_d_k if d_k is None else d_k,))
