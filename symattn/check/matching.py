"""A document's groups of numbers matched to what they print, with the coverage of the reading: each group is a
claim on a quantity of the derivation named by its label (the words and symbols beside it, check.labels) or, when
its label names none, found by value (check.document.match); a given input of the spec (X, W_Q, the memory); the
operands of arithmetic written out; or unmatched, listed with its place so that nothing is passed over silently."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

from .claims import Claim, number, path_text
from .compare import holds
from .document import _NUMBER, Group, Quantity, find_number, groups, match, printed_length, quantities, unbraced
from .candidates import Candidate, computed_of, inputs, matrix_forms, records
from .labels import GROUP, Label, label_of

# between a group's numbers: arithmetic or an equation written out (a = 1.1582 ≈ 0.8188), not a vector
# (HTML's MathML reads as "2.0924−0.683925", "max(0, −0.1630)" and a fraction as "\\frac": check.document.html_text)
_ARITHMETIC = re.compile(r"\\cdot|\\times|[⋅×*+·=≈√]|\\frac|\\approx|\\max|\\min|\\sin|\\cos|\\sqrt|\\exp"
                         r"|(?<=[\d)])\s+[-−]\s+|(?<=\d)[-−](?=\d)|(?<![A-Za-z])(?:max|min|exp|sin|cos)\(")
# a masked entry as solve and documents print it: -inf, −∞, -\infty
_MASKED = re.compile(r"[-−]\s*(?:\\infty|∞|inf\b)")
_ENTRY = re.compile(_MASKED.pattern + "|" + _NUMBER.pattern)


@dataclass(frozen=True)
class Read:
    """One group read: its place (line and column, from 1; the text of its line), its numbers, how it was taken
    ("label", "value", "given", "operands",
    "indices", "unmatched"), the quantity it was matched to and why not, if not."""

    line: int
    column: int
    around: str
    numbers: tuple[str, ...]
    how: str
    quantity: str | None = None
    reason: str | None = None
    places: tuple = ()  # ((path, as printed), line, column, its line's text) of each claim it made

    def as_json(self) -> dict[str, Any]:
        return {"line": self.line, "column": self.column, "text": self.around, "numbers": list(self.numbers),
                "how": self.how, "quantity": self.quantity, "reason": self.reason}


@dataclass(frozen=True)
class Coverage:
    """What a document's reading covered: every group read, in document order."""

    reads: tuple[Read, ...]

    def numbers(self, *hows: str) -> int:
        return sum(len(r.numbers) for r in self.reads if not hows or r.how in hows)

    def place(self, at: tuple, printed: str) -> tuple[int, int, str] | None:
        """(line, column, the text of its line) where the claim on `at` printed so was read (its first place, when
        the document prints it so more than once), or None."""
        return self._places.get((at, printed))

    @cached_property
    def _places(self) -> dict[tuple, tuple[int, int, str]]:
        out: dict[tuple, tuple[int, int, str]] = {}
        for r in self.reads:
            for path, line, column, around in r.places:
                out.setdefault(path, (line, column, around))
        return out

    @property
    def unmatched(self) -> tuple[Read, ...]:
        return tuple(r for r in self.reads if r.how == "unmatched")

    def as_json(self) -> dict[str, Any]:
        return {"read": self.numbers(), "groups": len(self.reads), "by_label": self.numbers("label"),
                "by_value": self.numbers("value"), "given": self.numbers("given"),
                "operands": self.numbers("operands"), "indices": self.numbers("indices"), "unmatched": [r.as_json() for r in self.unmatched]}



def read_document(text: str, answers: dict[str, Any], spec: Any = None) -> tuple[list[Claim], Coverage]:
    """The claims a document's text makes and the coverage of its reading (`spec`: for its given inputs)."""
    found = [_with_masked(text, g) for g in groups(text)]
    spans = [_span(text, g) for g in found]
    blank = list(text)
    for start, end in spans:
        blank[start:end] = [c if c == "\n" else GROUP for c in text[start:end]]
    blanked = "".join(blank)
    computed = [computed_of(q, answers) for q in quantities(answers) if q.paths[0][0] == "sections"]
    computed += matrix_forms(computed, answers)
    computed += [Candidate(q, "record", token, None, False, path_text(q.paths[0][:-1]) + "." + name)
                 for q, token, name in records(answers)]
    pool = computed + (inputs(spec, answers) if spec is not None else [])
    tokens = _tokens(answers)
    by_length: dict[int, list[int]] = {}
    for i, candidate in enumerate(pool):
        by_length.setdefault(len(candidate.quantity.values), []).append(i)
    cursor, claims, seen, reads = 0, [], set(), []
    line, counted = 1, 0  # the line of the last group, counted incrementally (groups are in document order)
    for group, (start, end) in zip(found, spans, strict=True):
        label = label_of(text, blanked, start, end, tokens)
        how, chosen, made, reason = _choose(group, label, pool, by_length, cursor,
                                            _ARITHMETIC.search(text[start:end]))
        if how == "unmatched" and _ranked(text, start, group):  # | 1 | token | 2.0253 | 0.4959 |: rank, values
            rest = Group(group.at, group.texts[1:])
            how, chosen, made, reason = _choose(rest, label, pool, by_length, cursor, None)
        if how == "unmatched" and _indices(text, start, end, group):
            how, reason = "indices", None
        if chosen is not None and not pool[chosen].given:
            cursor = chosen
        for claim in made:
            if (claim.at, claim.printed) not in seen:
                seen.add((claim.at, claim.printed))
                claims.append(claim)
        line, counted = line + text.count("\n", counted, start), start
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", start)
        around = text[line_start:len(text) if line_end < 0 else line_end].strip()
        reads.append(Read(line, start - line_start + 1, around if len(around) <= 80 else around[:77] + "...",
                          group.texts, how, None if chosen is None else pool[chosen].name, reason,
                          _places(text, start, line, made)))
    return claims, Coverage(tuple(reads))


def _places(text: str, start: int, line: int, made: list[Claim]) -> tuple[tuple[tuple, int, int, str], ...]:
    """(path, line, column, the text of its line) of each claim a group made, in order from the group's start."""
    out, at = [], start
    for claim in made:
        found = find_number(text, claim.printed, at)
        if found < 0:
            found = at
        line_start, line_end = text.rfind("\n", 0, found) + 1, text.find("\n", found)
        around = text[line_start:len(text) if line_end < 0 else line_end].strip()
        out.append(((claim.at, claim.printed), line + text.count("\n", start, found), found - line_start + 1,
                    around if len(around) <= 80 else around[:77] + "..."))
        at = found + printed_length(text, found, claim.printed)
    return tuple(out)


def claims_in(text: str, answers: dict[str, Any], spec: Any = None) -> list[Claim]:
    """The claims of read_document() alone."""
    return read_document(text, answers, spec)[0]


def _choose(group: Group, label: Label, pool: list[Candidate], by_length: dict[int, list[int]], cursor: int,
            arithmetic: Any) -> tuple[str, int | None, list[Claim], str | None]:
    """(how, the candidate chosen, the claims made, why unmatched) for one group (`by_length`: the pool's indices
    by number of entries)."""
    if arithmetic:
        return "operands", None, [], None
    fits = by_length.get(len(group.texts), [])
    named = [i for i in fits if not label.operand and label.family and _agrees(label, pool[i])]
    if named:  # the label names it: claimed whatever its values, so that a row wrong throughout is reported
        # the most entries holding, a quantity of the derivation before an input, the nearest of equals
        best = max(named, key=lambda i: (_holding(group, pool[i]), not pool[i].given, -abs(i - cursor)))
        candidate = pool[best]
        if not candidate.given:
            return "label", best, _claims(group, candidate.quantity), None
        if _all_hold(group, candidate):
            return "given", best, [], None
        return "unmatched", None, [], f"labelled {candidate.family} but differs from the spec's {candidate.name}"
    best_value = _by_value(group, pool, fits, cursor)
    given = [i for i in fits if pool[i].given and _all_hold(group, pool[i])]
    if given and (best_value is None or best_value[0][0] < len(group.texts) or label.operand):
        return "given", given[0], [], None
    if best_value is not None:
        return "value", best_value[1], best_value[2], None
    if label.family:
        return "unmatched", None, [], f"labelled {label.family}, but no such quantity has {len(group.texts)} entries"
    return "unmatched", None, [], "no quantity of the derivation or input of the spec has these values"


def _by_value(group: Group, pool: list[Candidate], fits: list[int], cursor: int) -> tuple | None:
    """((entries holding, after the cursor, nearness), index, claims) of the derivation's quantity the group's
    values print best (check.document.match), or None."""
    best = None
    for i in fits:
        candidate = pool[i]
        if candidate.given:
            continue
        found = match(group, candidate.quantity)
        if found is not None:
            rank = (found[0], i >= cursor, -abs(i - cursor))
            if best is None or rank > best[0]:
                best = (rank, i, found[1])
    return best


def _ranked(text: str, start: int, group: Group) -> bool:
    """Whether a table row's group starts with its rank, a whole number in the row's first cell."""
    line = text[text.rfind("\n", 0, start) + 1:text.find("\n", start) % (len(text) + 1)]
    first = re.split(r"\||&|\t", line.strip().strip("|"))[0].strip().strip("$")
    return len(group.texts) > 2 and first == group.texts[0] and first.isdigit()


def _indices(text: str, start: int, end: int, group: Group) -> bool:
    """Whether a group's numbers are all whole numbers written as indices: z^{(1)}, W_Q^{(2)}, x_3."""
    at = start
    for piece in group.texts:
        found = find_number(text, piece, at, end)
        if found < 1 or not piece.lstrip("-").isdigit() or text[found - 1] not in "([{^_":
            return False
        at = found + printed_length(text, found, piece)
    return True


def _holding(group: Group, candidate: Candidate) -> int:
    """How many of the group's entries hold for the candidate."""
    return sum(holds(claim, exact) for claim, exact in zip(_parsed(group.texts), candidate.quantity.values,
                                                             strict=True))


def _all_hold(group: Group, candidate: Candidate) -> bool:
    return all(holds(claim, exact) for claim, exact in zip(_parsed(group.texts), candidate.quantity.values,
                                                             strict=True))


@lru_cache(maxsize=4096)
def _parsed(texts: tuple[str, ...]) -> tuple[Claim, ...]:
    """A group's numbers read once (a document prints the same vectors again and again)."""
    return tuple(Claim((), *number(text, "document")) for text in texts)


def _claims(group: Group, quantity: Quantity) -> list[Claim]:
    out = []
    for text, path in zip(group.texts, quantity.paths, strict=True):
        printed, value, places = number(text, "document")
        out.append(Claim(path, printed, value, places))
    return out


def _agrees(label: Label, candidate: Candidate) -> bool:
    """Whether a candidate is what the label names: the same family, and the same token and head when both say."""
    family = candidate.family
    if label.family != family and not (label.family in ("output", "heads") and family in ("output", "heads")) \
            and not (label.family == "weights" and family == "probabilities") \
            and not (label.family == "scaled_scores" and family == "biased_scores"):  # ALiBi's a = s/√d + b
        return False
    if label.token is not None and candidate.token is not None and label.token != candidate.token:
        return False
    return label.head is None or candidate.head is None or label.head == candidate.head


def _with_masked(text: str, group: Group) -> Group:
    """A bracketed vector with its masked entries (−∞) among its numbers, which document.groups() leaves out."""
    if text[group.at:group.at + 1] == "[":
        close, body_start = text.find("]", group.at), group.at + 1
    elif text.startswith("\\begin{", group.at):  # a matrix body: up to its \end{
        close, body_start = text.find("\\end{", group.at), text.find("}", group.at) + 1
    else:
        return group
    body = text[body_start:close]
    if close < 0 or not _MASKED.search(body):
        return group
    return Group(group.at, tuple(m.group(0) for m in _ENTRY.finditer(unbraced(body))))


def _span(text: str, group: Group) -> tuple[int, int]:
    """Where a group is: from its start to the end of its last number."""
    at = group.at
    for piece in group.texts:
        found = find_number(text, piece, at)
        at = found + printed_length(text, found, piece) if found >= 0 else at
    return group.at, at


def _tokens(answers: dict[str, Any]) -> tuple[str, ...]:
    names: set[str] = set()
    for section in answers.get("sections", ()):
        for key in ("tokens", "memory_tokens"):
            names.update(t for t in section.get(key) or () if isinstance(t, str))
    return tuple(sorted(names, key=lambda t: (-len(t), t)))

