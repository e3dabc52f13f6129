"""Which sentences are true of a section: its facts, computed once from its spec and result, and the table from
each conditional sentence to the condition it needs (CONDITIONS). Kinds choose such sentences only through `say`
and `heading`, which refuse a sentence whose condition is false and record the facts on the step, so a test can
check every conditional sentence of a document against its facts."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import mpmath
from sympy import Expr, S, sqrt

from .. import engine
from ..engine import any_symbolic
from ..infra.memo import ByIdentity
from .steps import (
    Facts,
    Formula,
    Heading,
    Num,
    Nums,
    Paragraph,
    Phrase,
    Phrases,
    References,
    Step,
    TextParagraph,
    Token,
    Tokens,
)

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


def longest(f: Facts) -> str | None:
    """The key whose term w_j v_j of the weighted sum is longest (‖w_j v_j‖), alone; None without values."""
    if not f.norms:
        return None
    top = max(f.norms)
    return f.visible[f.norms.index(top)] if list(f.norms).count(top) == 1 else None


# Each conditional sentence (language key) and what must be true of its facts for it to be said: the attention
# sentences every kind shares here; a kind's or a feature's own are added by its folder (contribute). A key
# "contributes most strongly" only when its weight stands out and its term w_j v_j is also the longest.
CONDITIONS: dict[str, Callable[[Facts], bool]] = {
    "attend.pattern": lambda f: several(f) and len(groups(f)) > 1 and sees_all(f),
    "attend.pattern_masked": lambda f: several(f) and len(groups(f)) > 1 and not sees_all(f),
    "attend.strongest": lambda f: strongest(f) not in (None, f.token) and longest(f) == strongest(f),
    "attend.strongest_itself": lambda f: strongest(f) is not None and strongest(f) == f.token == longest(f),
    "attend.strongest_not_longest": lambda f: strongest(f) is not None and longest(f) not in (None, strongest(f)),
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


# The sentences that interpret the numbers rather than define or compute (what the weights say, what a result
# means): `prose = "plain"` leaves them out. A kind's own result_meaning… sentences count too (interpretive()).
INTERPRETATIONS = frozenset({
    "attend.pattern", "attend.pattern_masked", "attend.strongest", "attend.strongest_itself",
    "attend.strongest_not_longest", "attend.all_equal", "attend.nearly_equal", "attend.all_equal_visible",
    "attend.nearly_equal_visible", "given.strongest", "given.strongest_itself",
})


def interpretive(key: str) -> bool:
    """Whether a sentence interprets the numbers (INTERPRETATIONS, or a kind's result_meaning… / …_meaning)."""
    last = key.rsplit(".", 1)[-1]
    return key in INTERPRETATIONS or last.startswith("result_meaning") or last.endswith("_meaning")


def kept(step: Step, prose: str) -> bool:
    """Whether a step stays at `prose` (spec.model.PROSE): "full" keeps all; "plain" drops the interpretations;
    "none" keeps only headings, math, tables and figures (no sentence, nor a spec's own paragraphs)."""
    if prose == "full":
        return True
    if isinstance(step, Paragraph):
        return prose == "plain" and not interpretive(step.key)
    return prose == "plain" or not isinstance(step, (TextParagraph, References))


def contribute(conditions: dict[str, Callable[[Facts], bool]]) -> None:
    """Add a kind's or a feature's conditional sentences (its module does, when imported, before it says any);
    ValueError for a sentence that has a condition already."""
    taken = set(conditions) & set(CONDITIONS)
    if taken:
        raise ValueError(f"sentences with a condition already: {sorted(taken)}")
    CONDITIONS.update(conditions)


def say(key: str, facts: Facts, params: dict | None = None, note: bool = False,
        stage: str | None = None) -> Paragraph:
    """A sentence with the facts it was chosen under; ValueError if it is conditional and its condition false.
    `stage`: the stage whose decimals the numbers it prints take (Paragraph.stage)."""
    _check(key, facts)
    return Paragraph(key, params or {}, note, facts, stage=stage)


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
                  symbolic: bool = False, rotated: bool = False) -> Facts:
    """The facts of a section as a whole (before any query)."""
    return Facts(kind, masked=masked, positional=positional, scaling=scaling, symbolic=symbolic, rotated=rotated)


def query_facts(section: Facts, token: str, keys: tuple[str, ...], query: engine.QueryAttention,
                first: bool) -> Facts:
    """The facts of one query: which keys it sees (a masked key's logit is −∞) and their weights, from the
    engine's numbers of the row (none for a symbolic row)."""
    masked = query.softmax.masked
    visible = tuple(k for k, hidden in zip(keys, masked, strict=True) if not hidden)
    numbers = query.softmax.numbers
    weights: tuple[mpmath.mpf, ...] = ()
    shown: tuple[Expr, ...] = ()
    norms: tuple[mpmath.mpf, ...] = ()
    norm_values: tuple[Expr, ...] = ()
    if numbers is not None:  # mpmath numbers: a weight may be far below a Decimal's least exponent
        seen = [i for i, hidden in enumerate(masked) if not hidden]
        weights = tuple(numbers.weights[i] for i in seen)
        shown = tuple(query.softmax.weights[i] for i in seen)
        if query.values is not None:
            V = query.values.matrix()
            lengths = [sum((v ** 2 for v in V.row(i)), S.Zero) for i in seen]  # ‖v_j‖², exact
            norm_values = tuple(w * sqrt(q) for w, q in zip(shown, lengths, strict=True))
            norms = tuple(w * mpmath.sqrt(_number(q)) for w, q in zip(weights, lengths, strict=True))
    return Facts(section.kind, token, keys, visible, weights, section.masked, section.positional, section.scaling,
                 section.symbolic or any_symbolic(query.scaled if query.output is None else query.output), first,
                 section.rotated, shown, norms, norm_values)


def _number(value: Expr) -> mpmath.mpf:
    """An exact non-negative number as an mpmath number (a rational exactly rounded, else evaluated)."""
    if value.is_Rational:
        return mpmath.mpf(int(value.p)) / int(value.q)
    return mpmath.mpf(str(value.evalf(mpmath.mp.dps + 10)))


def masked_keys(facts: Facts) -> tuple[str, ...]:
    return tuple(k for k in facts.keys if k not in facts.visible)


# ------------------------------------------------------------ the sentences after the softmax


def weight_sentences(facts: Facts, itself: bool, values: bool = True) -> list[Paragraph]:
    """What the weights say after the softmax, as a lecturer says it: from the most attended key to the least,
    each group with its weights ("most to I (0.41), then about equally to machine and itself (0.25 and 0.24),
    and least to learning (0.09)"), masked keys not at all; or that the only visible key has weight 1, or that
    the weights are (nearly) equal. Then, when one key's weight stands out and values follow, whether its term
    w_j v_j of the weighted sum is also the longest, with every term's length shown: only then is it said to
    contribute most. `itself`: the query is among the keys (self-attention), and is then written as "itself";
    `values`: the weights go on to weight values (given scores alone: the key that stands out is named)."""
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
    top, *middle, bottom = [_group(facts, members, me) for members in reversed(g)]  # the largest weights first
    phrases = [Phrase(f"attend.most{top[0]}", top[1])]
    if len(middle) == 1:
        phrases.append(Phrase(f"attend.then{middle[0][0]}", middle[0][1]))
    elif middle:  # "then to machine (0.26) and itself (0.22)": one "then" for all the middle groups
        phrases.append(Phrase("attend.then_groups", (("groups", Phrases(tuple(
            Phrase(f"attend.group{suffix}", params) for suffix, params in middle), "list.and_clauses")),)))
    phrases.append(Phrase(f"attend.{'less' if len(g) == 2 else 'least'}{bottom[0]}", bottom[1]))
    parts = Phrases(tuple(phrases), "list.and_clauses" if len(phrases) == 2 else "list.and_then")
    if masked_keys(facts):
        steps = [say("attend.pattern_masked", facts, {**token, "parts": parts,
                                                      "masked": Tokens(masked_keys(facts), me)}, stage="weights")]
    else:
        steps = [say("attend.pattern", facts, {**token, "parts": parts}, stage="weights")]
    top = strongest(facts)
    if top is None:
        return steps
    if not values:
        key = "given.strongest_itself" if top == facts.token else "given.strongest"
        return [*steps, say(key, facts, {**token, "strongest": _token(top)})]
    if longest(facts) is None:
        return steps
    norms = Phrases(tuple(Phrase("attend.norm", (("token", Tokens((k,), me)), ("n", Num(n))))
                          for k, n in zip(facts.visible, facts.norm_values, strict=True)), "list.and_clauses")
    key = first_true(facts, "attend.strongest", "attend.strongest_itself", "attend.strongest_not_longest")
    return [*steps, say(key, facts, {**token, "strongest": Tokens((top,), me), "norms": norms,
                                     "longest": Tokens((longest(facts),), me),
                                     "term": Formula("term_norm")}, stage="weights")]


def _group(facts: Facts, members: tuple[str, ...], me: str | None) -> tuple[str, tuple]:
    """A group of keys of (nearly) equal weight in a sentence: the suffix of its phrase ("" for one key, _tied for
    exactly equal weights, printed once, _together for nearly equal ones, each printed) and its parameters."""
    shown = [facts.shown[facts.visible.index(k)] for k in members] if facts.shown else []
    numbers = {facts.weights[facts.visible.index(k)] for k in members}
    suffix = "" if len(members) == 1 else "_tied" if len(numbers) == 1 else "_together"
    return suffix, (("tokens", Tokens(members, me)), ("w", Nums(tuple(shown[:1] if suffix == "_tied" else shown))))


def _token(name: str | None) -> Token:
    return Token(name or "")
