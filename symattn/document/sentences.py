"""Which sentences are true of a section: its facts, computed once from its spec and result, and the table from
each conditional sentence to the condition it needs (CONDITIONS). Kinds choose such sentences only through `say`
and `heading`, which refuse a sentence whose condition is false and record the facts on the step, so a test can
check every conditional sentence of a document against its facts."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import mpmath

from .. import engine
from ..engine import any_symbolic
from ..infra.memo import ByIdentity
from .steps import Facts, Heading, Paragraph, Phrase, Phrases, Token, Tokens

# Two weights are "nearly equal" when the smaller is at least this share of the larger (0.2453 and 0.2558: 96 %):
# the sentences then say the weights are nearly equal instead of naming the largest.
NEARLY_EQUAL = Decimal("0.95")


def groups(facts: Facts) -> tuple[tuple[str, ...], ...]:
    """The visible keys in groups of nearly equal weight, from the smallest weights to the largest: each group
    holds the keys within NEARLY_EQUAL of its largest weight."""
    return _GROUPED.get(facts, (), lambda: _groups(facts))


# groups() of the last facts: a query's sentences ask several times in a row (its facts are frozen: the same groups)
_GROUPED: ByIdentity[tuple[tuple[str, ...], ...]] = ByIdentity(1)


def _groups(facts: Facts) -> tuple[tuple[str, ...], ...]:
    if not facts.weights:
        return ()
    order = sorted(zip(facts.weights, facts.visible, strict=True), key=lambda pair: pair[0], reverse=True)
    share, whole = NEARLY_EQUAL.as_integer_ratio()  # whole numbers: the weights may be Decimals or mpmath numbers
    out: list[list[str]] = []
    top = None
    for weight, token in order:
        if top is None or weight * whole < top * share:
            out.append([])
            top = weight
        out[-1].append(token)
    return tuple(tuple(sorted(g, key=facts.visible.index)) for g in reversed(out))


def all_equal(facts: Facts) -> bool:
    """Whether every visible weight is the same (to the engine's working precision)."""
    return len(set(facts.weights)) == 1


def strongest(facts: Facts) -> str | None:
    """The key whose weight stands out as the largest: alone in the top group, with other groups below it."""
    g = groups(facts)
    return g[-1][0] if len(g) > 1 and len(g[-1]) == 1 else None


def sees_all(f: Facts) -> bool:
    """Whether the query may see every key (no mask hides one)."""
    return f.visible == f.keys


def several(f: Facts) -> bool:
    """Whether the query sees more than one key."""
    return len(f.visible) > 1


# Each conditional sentence (language key) and what must be true of its facts for it to be said: the attention
# sentences every kind shares here; a kind's or a feature's own are added by its folder (contribute).
CONDITIONS: dict[str, Callable[[Facts], bool]] = {
    "attend.pattern": lambda f: several(f) and len(groups(f)) > 1,
    "attend.strongest": lambda f: strongest(f) not in (None, f.token),
    "attend.strongest_itself": lambda f: strongest(f) is not None and strongest(f) == f.token,
    "attend.all_equal": lambda f: several(f) and bool(f.weights) and all_equal(f) and sees_all(f),
    "attend.nearly_equal": lambda f: several(f) and len(groups(f)) == 1 and not all_equal(f) and sees_all(f),
    # with masked keys only the visible weights are (nearly) equal: the masked ones are 0
    "attend.all_equal_visible": lambda f: several(f) and bool(f.weights) and all_equal(f) and not sees_all(f),
    "attend.nearly_equal_visible": lambda f: several(f) and len(groups(f)) == 1 and not all_equal(f)
    and not sees_all(f),
    "attend.single": lambda f: len(f.visible) == 1,
    "attend.no_scaling": lambda f: f.scaling == "none",
    "attend.scale_by_number": lambda f: f.scaling == "number",
    "attend.scale_by": lambda f: f.scaling == "sqrt_d_k",
    "attend.weighted_sum": lambda f: not f.symbolic,
    "attend.weighted_sum_symbolic": lambda f: f.symbolic,
    "attend.symbolic_result": lambda f: f.symbolic,
}


def contribute(conditions: dict[str, Callable[[Facts], bool]]) -> None:
    """Add a kind's or a feature's conditional sentences (its module does, when imported, before it says any);
    ValueError for a sentence that has a condition already."""
    taken = set(conditions) & set(CONDITIONS)
    if taken:
        raise ValueError(f"sentences with a condition already: {sorted(taken)}")
    CONDITIONS.update(conditions)


def say(key: str, facts: Facts, params: dict | None = None, note: bool = False) -> Paragraph:
    """A sentence with the facts it was chosen under; ValueError if it is conditional and its condition false."""
    _check(key, facts)
    return Paragraph(key, params or {}, note, facts)


def heading(level: int, key: str, facts: Facts, params: dict | None = None) -> Heading:
    """A heading, as `say`."""
    _check(key, facts)
    return Heading(level, key, params or {}, facts)


def first_true(facts: Facts, *keys: str) -> str:
    """The first of several sentences whose condition holds."""
    for key in keys:
        if CONDITIONS[key](facts):
            return key
    raise ValueError(f"none of {keys} is true of {facts}")


def _check(key: str, facts: Facts) -> None:
    if key in CONDITIONS and not CONDITIONS[key](facts):
        raise ValueError(f"sentence {key!r} is false of {facts}")


# ------------------------------------------------------------ facts


def section_facts(kind: str, masked: bool = False, positional: bool = False, scaling: str = "sqrt_d_k",
                  symbolic: bool = False, rope: bool = False) -> Facts:
    """The facts of a section as a whole (before any query)."""
    return Facts(kind, masked=masked, positional=positional, scaling=scaling, symbolic=symbolic, rope=rope)


def query_facts(section: Facts, token: str, keys: tuple[str, ...], query: engine.QueryAttention,
                first: bool) -> Facts:
    """The facts of one query: which keys it sees (a masked key's logit is −∞) and their weights, from the
    engine's numbers of the row (none for a symbolic row)."""
    masked = query.softmax.masked
    visible = tuple(k for k, hidden in zip(keys, masked, strict=True) if not hidden)
    numbers = query.softmax.numbers
    weights: tuple[mpmath.mpf, ...] = ()
    if numbers is not None:  # mpmath numbers: a weight may be far below a Decimal's least exponent
        weights = tuple(w for w, hidden in zip(numbers.weights, masked, strict=True) if not hidden)
    return Facts(section.kind, token, keys, visible, weights, section.masked, section.positional, section.scaling,
                 section.symbolic or any_symbolic(query.scaled if query.output is None else query.output), first,
                 section.rope)


def masked_keys(facts: Facts) -> tuple[str, ...]:
    return tuple(k for k in facts.keys if k not in facts.visible)


# ------------------------------------------------------------ the sentences after the softmax


def weight_sentences(facts: Facts, itself: bool, values: bool = True) -> list[Paragraph]:
    """What the weights say, as the article lists it after the softmax: how much the query attends to each key
    (from the least to the most, nearly equal weights together, masked keys not at all), then the key that
    stands out; or that the only visible key has weight 1, or that the weights are (nearly) equal. `itself`:
    the query is among the keys (self-attention), and is then written as "itself"; `values`: the weights go on
    to weight values (else the key that stands out is named without what its value does)."""
    if not facts.weights:
        return []
    me = facts.token if itself else None
    token = {"token": _token(facts.token)}
    if len(facts.visible) == 1:
        return [say("attend.single", facts, {**token, "key": Tokens(facts.visible, me)})]
    g = groups(facts)
    if len(g) == 1:
        key = first_true(facts, "attend.all_equal", "attend.nearly_equal", "attend.all_equal_visible",
                         "attend.nearly_equal_visible")
        masked = {"masked": Tokens(masked_keys(facts), me)} if key.endswith("_visible") else {}
        return [say(key, facts, {**token, "keys": Tokens(facts.visible, me), **masked})]
    phrases = [Phrase("attend.masked_part", (("tokens", Tokens(masked_keys(facts), me)),))] if masked_keys(
        facts) else []
    top_weight = max(facts.weights)
    for i, members in enumerate(g):
        # the smallest group gets "a little" when below half the largest weight (the article's 0.1688 of 0.3383)
        little = 2 * max(facts.weights[facts.visible.index(k)] for k in members) < top_weight
        place = "most" if i == len(g) - 1 else ("little" if little else "less") if i == 0 else "middle"
        shares = {facts.weights[facts.visible.index(k)] for k in members}
        suffix = "" if len(members) == 1 else "_tied" if len(shares) == 1 else "_together"  # tied: exactly equal
        phrases.append(Phrase(f"attend.{place}{suffix}", (("tokens", Tokens(members, me)),)))
    steps = [say("attend.pattern", facts, {**token, "parts": Phrases(tuple(phrases))})]
    top = strongest(facts)
    if top is not None:
        key = "attend.strongest_itself" if top == facts.token else "attend.strongest"
        key = key if values else key.replace("attend.", "given.")
        steps.append(say(key, facts, {**token, "strongest": _token(top)}))
    return steps


def _token(name: str | None) -> Token:
    return Token(name or "")
