"""RoPE (rotary position embeddings) on an attention section: its parsing, its computation and its steps, for
self-attention and for the kinds that reuse them (heads, grouped-query attention).

The steps show which dimensions are paired, θ_i = base^(−2i/d) exactly, each token's angles m·θ_i with the cos
and sin of exact arguments, the rotated q and k entry by entry, and, after a query's dot products of the rotated
vectors, the same scores from the unrotated q and k in m − n alone (engine.rope.relative_score).
"""

from __future__ import annotations

from typing import Any

from sympy import ImmutableMatrix

from ... import engine
from ...document import sentences
from ...document.sentences import say
from ...document.steps import (
    Display,
    Eq,
    Facts,
    Formula,
    Heading,
    Name,
    Paragraph,
    Phrase,
    Phrases,
    Shown,
    Step,
    Token,
    TokenTable,
)
from ...errors import SpecError
from ...spec.model import GivenMatrix, Positions, Rope
from ..attention.answers import exact_texts, row_texts
from . import engine as rope_engine
from .spec import rope_of
from .steps import RelativeScores, RopeFigure, RopeFrequencies, RopeRotation

KEY = "rope"  # the section key that turns RoPE on (spec.rope_of parses it)

# The symbols RoPE's sentences name (render/math.py NOTATION and FORMULAS)
SYMBOLS = {"m": Formula("m"), "n": Formula("n"), "i": Formula("i"), "d": Formula("d"), "q": Name("q"), "k": Name("k")}
# The names of the rotated matrices and rows (render/math.py NOTATION): Q̂ with rows q̂_t, K̂ with rows k̂_j.
ROTATED = {"Q": "Qh", "K": "Kh", "q": "qh", "k": "kh"}

# the conditional sentences this folder says, and what must be true of their facts (document/sentences.py)
sentences.contribute({
    # RoPE (features/rope/feature.py): said only of a section that rotates q and k
    **{f"rope.{key}": (lambda f: f.rotated) for key in ("intro", "pairs_interleaved", "pairs_half", "frequencies",
                                                      "positions", "positions_given", "relative",
                                                      "relative_meaning", "later", "example")},
})


def parse(data: dict[str, Any], field: str, m: dict[str, GivenMatrix], n: int,
          positions: Positions | None, past: int = 0) -> Rope | None:
    """The section's `rope`, or None. RoPE gives the positions itself: with positional_encoding or P as well the
    section would add positions twice, which no RoPE model does, so the pair is refused; symbolic matrices are
    refused too (their rotations are not derived). After `past` cached tokens the new tokens' positions are
    past, past + 1, … (the cache's mask and its sentences use them), so other positions are refused."""
    rope = rope_of(data, m["W_Q"].shape[1], n, field)
    if rope is None:
        return None
    if positions is not None:
        other = "P" if "P" in data else "positional_encoding"
        raise SpecError(f"{field}.rope", f"RoPE gives the positions, so {other} may not be given as well "
                                         f"(RoPE models add no positional encoding to X)")
    symbolic = [key for key in ("X", "W_Q", "W_K") if m[key].symbolic]
    if symbolic:
        raise SpecError(f"{field}.rope", f"RoPE needs numeric matrices, but {symbolic[0]} is symbolic")
    if past and rope.positions is not None and rope.positions != tuple(range(past, past + n)):
        raise SpecError(f"{field}.rope.positions", f"with a KV cache of {past} tokens the new tokens are at the "
                                                   f"positions {past} … {past + n - 1}, after the cached ones "
                                                   "(give no positions)")
    return rope


def attention(X: ImmutableMatrix, W_Q: ImmutableMatrix, W_K: ImmutableMatrix, W_V: ImmutableMatrix, rope: Rope,
              divisor, focus: tuple[int, ...], mask: ImmutableMatrix | None = None) -> engine.Attention:
    """Self-attention with RoPE: Q = XW_Q and K = XW_K rotated for the tokens' positions, V = XW_V as it is; the
    result's Q and K are the rotated ones."""
    positions = rope.at(X.rows)
    stored = {"Q": engine.project(X, W_Q), "K": engine.project(X, W_K), "V": engine.project(X, W_V)}
    return rope_engine.rotary_attention(stored, positions, positions, rope, divisor, focus, mask)


def unrotated(X: ImmutableMatrix, W_Q: ImmutableMatrix, W_K: ImmutableMatrix,
              result: engine.Attention) -> engine.Attention:
    """The projections before the rotation (Q = XW_Q, K = XW_K, the result's V), with the result's numbers: what
    the table of projected vectors and the answers' Q and K show."""
    return engine.Attention({"Q": engine.project(X, W_Q), "K": engine.project(X, W_K), "V": result.V}, {},
                            result.known)


def thetas(rope: Rope, d: int) -> tuple:
    """θ_i for each pair i."""
    return tuple(rope_engine.theta(i, d, rope.base) for i in range(d // 2))


def pairs_text(d: int, pairing: str) -> str:
    """The pairs as the text says them, numbered from 0: (0, 1), (2, 3), … (at most four, then …)."""
    pairs = rope_engine.pairs(d, pairing)
    shown = [f"({a}, {b})" for a, b in pairs[:4]]
    return ", ".join(shown + (["…"] if len(pairs) > 4 else []))


def rope_steps(rope: Rope, tokens: tuple[str, ...], plain: dict[str, Shown], rotated: dict[str, Shown],
               queries: tuple[str, ...], facts: Facts, number: int, stepwise: bool = True,
               head: int | None = None, positions: tuple[int, ...] | None = None) -> list[Step]:
    """The RoPE step (Step `number`): the pairing, the frequencies, each token's rotation (its k, and its q when it
    is one of `queries`; none when not `stepwise`: the matrix form alone), and the rotated Q̂ and K̂ of all tokens.
    `plain` and `rotated` hold "Q" and "K" as shown, before and after the rotation (rows in `tokens`' order);
    `head`: a head's names; `positions`: the tokens' positions, if not rope.at(len(tokens)) (after a KV cache).
    `facts` must say rotated=True (sentences.section_facts(..., rotated=True)): the sentences are RoPE's."""
    d = plain["Q"].values.cols
    positions = rope.at(len(tokens)) if positions is None else positions
    theta = thetas(rope, d)
    pairs = rope_engine.pairs(d, rope.pairing)
    at = Phrases(tuple(Phrase("rope.at", (("token", Token(t)), ("m", Eq(Name("m"), m))))
                       for t, m in zip(tokens, positions, strict=True)))
    steps: list[Step] = [
        Heading(2, "rope.heading", {"n": number}),
        say("rope.intro", facts, {"rotation": Formula("rope_rotation"), "phi": Formula("rope_angle"), **SYMBOLS}),
        say(f"rope.pairs_{rope.pairing}", facts, {**SYMBOLS, "d": d, "pairs": pairs_text(d, rope.pairing),
                                                  "dims": Formula("pe_dims"), "half": Formula("rope_half_dims")}),
        say("rope.frequencies", facts, {"theta": Formula("rope_theta"), **SYMBOLS}),
        RopeFrequencies(rope.base, d, theta),
        say("rope.positions_given" if rope.positions is not None else "rope.positions", facts, {"at": at}),
    ]
    steps += figure_steps(rope, tokens, plain, rotated, queries, facts, head, positions)
    if stepwise:
        for t, (token, m) in enumerate(zip(tokens, positions, strict=True)):
            letters = ("q", "k") if token in queries else ("k",)
            vectors = tuple((Name(ROTATED[c], token, head=head), Name(c, token, head=head),
                             plain[c.upper()].row(t), rotated[c.upper()].row(t)) for c in letters)
            steps += [Paragraph("rope.token", {"token": Token(token), "m": Eq(Name("m"), m)}),
                      RopeRotation(token, m, pairs, theta, rope_engine.angles(m, d, rope), vectors,
                                   rotated["Q"].known)]
    steps += [Paragraph("rope.all_tokens", {"V": Name("V")}),
              TokenTable(("table.token", Name("Qh", head=head), Name("Kh", head=head)), tokens,
                         (rotated["Q"], rotated["K"]))]
    return steps


def figure_steps(rope: Rope, tokens: tuple[str, ...], plain: dict[str, Shown], rotated: dict[str, Shown],
                 queries: tuple[str, ...], facts: Facts, head: int | None = None,
                 positions: tuple[int, ...] | None = None) -> list[Step]:
    """One pair's rotation, as an example: pair 0 (the fastest, θ_0 = 1) of the first query (else key) at a
    position other than 0 whose pair is not zero; nothing when there is none (every position 0)."""
    d = plain["Q"].values.cols
    positions = rope.at(len(tokens)) if positions is None else positions
    a, b = rope_engine.pairs(d, rope.pairing)[0]
    candidates = [(t, c) for c in "qk" for t in (queries if c == "q" else tokens)]
    for token, c in candidates:
        t = tokens.index(token)
        before, after = plain[c.upper()].row(t).entries, rotated[c.upper()].row(t).entries
        if positions[t] == 0 or before[a] == before[b] == 0:
            continue
        name, turned = Name(c, token, head=head), Name(ROTATED[c], token, head=head)
        angle = rope_engine.angles(positions[t], d, rope)[0]
        return [say("rope.example", facts, {"x": name, "m": Eq(Name("m"), positions[t]), "ab": f"({a}, {b})",
                                            "phi": Eq(Name("phi0"), positions[t])}),
                RopeFigure(name, turned, positions[t], 0, (a, b), angle, (before[a], before[b]),
                           (after[a], after[b]), rotated["Q"].known)]
    return []


def relative_steps(rope: Rope, tokens: tuple[str, ...], query: str, plain: dict[str, Shown],
                   scores: tuple, facts: Facts, head: int | None = None,
                   positions: tuple[int, ...] | None = None) -> list[Step]:
    """After a query's dot products of the rotated vectors (`scores`, exact): the same scores from the unrotated q
    and k, which depend on the positions only through m − n (`positions` as in rope_steps)."""
    d = plain["Q"].values.cols
    positions = rope.at(len(tokens)) if positions is None else positions
    i = tokens.index(query)
    return [say("rope.relative", facts, {**SYMBOLS, "token": Token(query), "m": Eq(Name("m"), positions[i]),
                                         "theta": Formula("theta_i"), "ab": Formula("pair_ab"),
                                         "delta": Formula("m_minus_n")}),
            Display(Formula("rope_relative")),
            RelativeScores(Name(ROTATED["q"], query, head=head),
                           tuple(Name(ROTATED["k"], t, head=head) for t in tokens), positions[i], positions,
                           plain["Q"].row(i), plain["K"].rows, rope_engine.pairs(d, rope.pairing),
                           thetas(rope, d), scores, plain["Q"].known),
            say("rope.relative_meaning", facts, {"delta": Formula("m_minus_n")})]


def rope_answers(rope: Rope, plain: dict[str, Any], rotated: dict[str, Any], n: int, d: int,
                 past: int = 0) -> dict[str, Any]:
    """The answers' keys of RoPE: Q and K before the rotation (`plain`, attention_answers of the unrotated
    projections), Q_rotated and K_rotated after it (`rotated`, those of the result), and `rope`: base, pairing,
    the pairs (0-based), the positions (after `past` cached ones) and θ_i (decimals, and exact in "exact")."""
    theta = thetas(rope, d)
    return {"Q": plain["Q"], "K": plain["K"], "Q_rotated": rotated["Q"], "K_rotated": rotated["K"],
            "rope": {"base": row_texts((rope.base,))[0], "pairing": rope.pairing,
                     "pairs": [list(p) for p in rope_engine.pairs(d, rope.pairing)],
                     "positions": list(rope.at(n, past)), "theta": row_texts(theta),
                     "exact": {"base": exact_texts((rope.base,))[0], "theta": exact_texts(theta)}},
            "exact": {**rotated["exact"], "Q": plain["exact"]["Q"], "K": plain["exact"]["K"],
                      "Q_rotated": rotated["exact"]["Q"], "K_rotated": rotated["exact"]["K"]}}
