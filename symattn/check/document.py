"""Claims read from a document (Markdown, LaTeX, HTML or plain text): the groups of numbers it prints (vectors in
brackets, matrix bodies, table rows, aligned lines of one number each), matched to the derivation's quantities by
value: match() says whether a group prints a quantity. check.matching reads the labels too and keeps the coverage."""

from __future__ import annotations

import html
import re
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any

from .claims import NOT_CLAIMS, Claim, Path_, number
from .compare import correct_text, holds_number, rounded
from .diagnose import typo

_NUMBER = re.compile(r"(?<![\w.!^_])(?<!\^\{)(?<!_\{)[-−]?[0-9]+(?:\.[0-9]+)?(?![\w.])")
# The environments' opening and closing tags, paired by spans() (a pattern `\begin{E}(.*?)\end{E}` is quadratic:
# 20,000 unclosed \begin{bmatrix} took a minute)
_MATRIX = re.compile(r"\\(begin|end)\{([bpvBV]?matrix)\}")
_ALIGNED = re.compile(r"\\(begin|end)\{(aligned|align\*?|split|gathered)\}")
_SCRIPT = re.compile(r"<(/?)(script|style)\b", re.I)  # <script ...> up to the next </script\s*>
_SCRIPT_END = re.compile(r"\s*>")
_VECTOR = re.compile(r"(?<!\\)\[([^\[\]]*?)(?<!\\)\]", re.S)
_LINE = re.compile(r"[^\n]+")
MAX_GROUPS = 20000  # a document's groups looked at (bounded work)


def spans(text: str, tags: re.Pattern, closer: re.Pattern | None = None) -> Iterator[tuple[int, int, int, int]]:
    """(start, end, body start, body end) of each environment in text, as `open(.*?)close` with the same name
    finds them, left to right, in linear time: each opening tag is paired with the first closing tag of its name
    after it (found by bisection), and tags inside a found environment are skipped. `tags` matches both (group 1
    empty or "begin" for an opening tag, group 2 the name); a closing tag must be followed by `closer` if given."""
    opening, closing = [], {}
    name = (lambda m: m.group(2).lower()) if tags.flags & re.I else (lambda m: m.group(2))
    for m in tags.finditer(text):
        if m.group(1) in ("", "begin"):
            opening.append(m)
        elif closer is None or closer.match(text, m.end()):
            end = m.end() if closer is None else closer.match(text, m.end()).end()
            closing.setdefault(name(m), []).append((m.start(), end))
    after = 0
    for m in opening:
        if m.start() < after:
            continue
        ends = closing.get(name(m), [])
        i = bisect_left(ends, (m.end(), -1))
        if i < len(ends):
            after = ends[i][1]
            yield m.start(), after, m.end(), ends[i][0]


def html_text(text: str) -> str:
    """An HTML document's text with its table rows as lines of `|` cells and MathML's matrix rows as `&` cells
    (MathML's brackets and numbers are text already), for groups() to read."""
    kept, at = [], 0
    for start, end, _, _ in spans(text, _SCRIPT, _SCRIPT_END):
        kept += [text[at:start], " "]
        at = end
    text = "".join([*kept, text[at:]])
    text = re.sub(r"<mfrac\b", r" \\frac <mfrac", text, flags=re.I)  # a fraction is arithmetic, not digits run on
    text = re.sub(r"</t[dh]\s*>", " | ", text, flags=re.I)
    text = re.sub(r"</mtd\s*>", " & ", text, flags=re.I)
    text = re.sub(r"</tr\s*>|</mtr\s*>|<br\s*/?>|</p\s*>|</li\s*>", "\n", text, flags=re.I)
    # tags removed up to the last '>' only: from a '<' with no '>' after it, <[^>]*> would scan to the end, once
    # for every such '<' (quadratic)
    last = text.rfind(">") + 1
    # a printed ampersand (&amp;) kept as LaTeX's \&: only MathML's cells are & separated
    text = re.sub(r"&amp;|&#0*38;|&#x0*26;", r"\\&", text, flags=re.I)
    return html.unescape(re.sub(r"<[^>]*>", "", text[:last]) + text[last:])


@dataclass(frozen=True)
class Group:
    """Numbers printed together, in document order."""

    at: int  # the offset of the group in the document
    texts: tuple[str, ...]


def _numbers(text: str) -> list[str]:
    return _NUMBER.findall(text)  # (the pattern has no groups: the whole matches)


def unbraced(text: str) -> str:
    """text with LaTeX's braced signs {-}1.1369 (symattn's own wrapped lines start "&\\qquad {-}1.1369") as
    "  -1.1369": the same length, so that every offset still holds."""
    return text.replace("{-}", "  -").replace("{−}", "  −") if "{" in text else text


def find_number(text: str, piece: str, at: int, end: int | None = None) -> int:
    """Where a group's number (as _numbers gives it) is printed in text from `at`: as it is, or with its sign
    braced ({-}1.1369); -1 when it is not."""
    end = len(text) if end is None else end
    found = text.find(piece, at, end)
    if piece[:1] in "-−":
        braced = text.find("{" + piece[0] + "}" + piece[1:], at, end)
        if braced >= 0 and (found < 0 or braced < found):
            return braced
    return found


def printed_length(text: str, at: int, piece: str) -> int:
    """How long the number `piece` found at `at` is as printed (3 more with a braced sign)."""
    return len(piece) + 2 * (text.startswith("{", at))


def groups(text: str) -> list[Group]:
    """The groups of numbers a document prints, in order: matrix bodies, bracketed vectors, the lines of an aligned
    block that print one number each, and table rows (Markdown pipes, tabs, LaTeX &) of two numbers or more."""
    found: list[Group] = []
    text = unbraced(text)

    def masking(taken: list[tuple[int, int]], text: str) -> str:
        """text with the spans taken blanked out (as long as they were), in one pass."""
        pieces, at = [], 0
        for start, end in taken:
            pieces += [text[at:start], " " * (end - start)]
            at = end
        return "".join([*pieces, text[at:]])

    # Groups starting after `limit` are not among the first MAX_GROUPS: one pass (each finds its groups in order)
    # found as many before it. Their numbers are not read (a megabyte of vectors holds 77,000); masking is unchanged.
    limit, counted = len(text), [0]

    def keep(start: int, numbers: list[str]) -> None:
        nonlocal limit
        if len(numbers) >= 2 and start <= limit:
            found.append(Group(start, tuple(numbers)))
            counted[0] += 1
            if counted[0] == MAX_GROUPS:
                limit = start

    def next_pass() -> None:
        counted[0] = 0

    matrices = list(spans(text, _MATRIX))
    for start, _, body_start, body_end in matrices:
        if start <= limit:
            keep(start, _numbers(text[body_start:body_end]))
    masked = masking([(start, end) for start, end, _, _ in matrices], text)
    next_pass()
    vectors = list(_VECTOR.finditer(masked))
    for match in vectors:
        if match.start() <= limit:
            keep(match.start(), _numbers(match.group(1)))
    masked = masking([match.span() for match in vectors], masked)
    next_pass()
    aligned = []
    for start, end, body_start, body_end in spans(masked, _ALIGNED):  # lines of one number each: a column vector
        lines = [_numbers(line) for line in masked[body_start:body_end].split("\\\\")]
        lines = [line for line in lines if line]
        if len(lines) >= 2 and all(len(line) == 1 for line in lines):
            keep(start, [line[0] for line in lines])
            aligned.append((start, end))
    masked = masking(aligned, masked)
    next_pass()
    for match in _LINE.finditer(masked):  # table rows
        if match.start() > limit:
            break
        line = match.group(0)
        if "|" in line or "\t" in line or re.search(r"(?<!\\)&", line):  # (\& is a printed ampersand)
            keep(match.start(), _numbers(line))
    return sorted(found, key=lambda g: g.at)[:MAX_GROUPS]


@dataclass(frozen=True)
class Quantity:
    """A vector of the derivation (a query's weights, a row of Q, a whole matrix row by row): its entries' paths
    and exact values, in the order of solve's answers."""

    paths: tuple[Path_, ...]
    values: tuple[Decimal, ...]


def quantities(answers: dict[str, Any]) -> list[Quantity]:
    """Every vector of solve's answers and every matrix (its rows joined), in the answers' order."""
    out: list[Quantity] = []

    def walk(at: Path_, value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                if key not in NOT_CLAIMS:
                    walk((*at, key), inner)
        elif isinstance(value, list) and value and all(isinstance(v, list) for v in value):
            rows = [r for r in value if r and all(_decimal(x) is not None for x in r)]
            if len(rows) == len(value) and len(rows) > 1:
                out.append(Quantity(tuple((*at, i, j) for i, r in enumerate(rows) for j in range(len(r))),
                                    tuple(_decimal(x) for r in rows for x in r)))
            for i, inner in enumerate(value):
                walk((*at, i), inner)
        elif isinstance(value, list) and value and all(_decimal(v) is not None for v in value):
            out.append(Quantity(tuple((*at, j) for j in range(len(value))), tuple(_decimal(v) for v in value)))
        elif isinstance(value, list):
            for i, inner in enumerate(value):
                walk((*at, i), inner)

    walk((), answers)
    return out


def _decimal(value: Any) -> Decimal | None:
    if value == "-inf":  # a masked scaled score: a document prints it as −∞
        return Decimal("-Infinity")
    if isinstance(value, int) and not isinstance(value, bool):  # a 0/1 mask, positions
        return Decimal(value)
    if not isinstance(value, str) or value == "inf":
        return None
    try:
        return Decimal(value)
    except ArithmeticError:
        return None


def _near(claim: Claim, exact: Decimal) -> bool:
    """A wrong entry that still belongs to the vector: within 20 % of the value (or ten units), or a typo of it."""
    if exact.is_finite() and claim.value == -rounded(exact, claim.places) != 0:  # the sign lost or added
        return True
    return abs(claim.value - exact) <= abs(exact) / 5 + 10 * claim.unit or typo(claim.printed,
                                                                             correct_text(claim, exact))


def parsed(group: Group) -> tuple[tuple[str, Decimal, int], ...]:
    """The group's numbers as claims.number reads them: (as printed, value, places)."""
    return _reading(group.texts)[0]


@lru_cache(maxsize=4096)
def _reading(texts: tuple[str, ...]) -> tuple[tuple[tuple[str, Decimal, int], ...], int]:
    """(the numbers, how many may not hold) read once per group, not once for each quantity of its length it
    meets (20,000 vectors met 9 each: 4 s): a wrong entry is allowed only among right ones printed alike, to two
    decimals or more (not 0 and 1 of a mask or index), one in four of three or more."""
    numbers = tuple(number(text, "document") for text in texts)
    uniform = len({n[2] for n in numbers}) == 1 and numbers[0][2] >= 2
    return numbers, (max(1, len(numbers) // 4) if uniform else 0) if len(numbers) >= 3 else 0


def match(group: Group, quantity: Quantity) -> tuple[int, list[Claim]] | None:
    """(entries holding, the group's claims on the quantity) when the group prints that quantity: as many entries,
    at least two holding and at most one in four not (of three or more printed to the same two decimals or more),
    each of those near (the group's numbers are read once: a group meets many quantities)."""
    if len(group.texts) != len(quantity.values):
        return None
    numbers, allowed = _reading(group.texts)
    good, bad = [], 0
    for (_, value, places), exact in zip(numbers, quantity.values, strict=True):
        ok = holds_number(value, places, exact)
        bad += not ok
        if bad > allowed:  # decided at the first entries too many that do not hold (most groups meet most
            return None    # quantities: each is refused at once, before any claim is made)
        good.append(ok)
    if sum(good) < 2:
        return None
    claims = [Claim(path, *entry) for entry, path in zip(numbers, quantity.paths, strict=True)]
    if not all(ok or _near(c, v) for ok, c, v in zip(good, claims, quantity.values, strict=True)):
        return None
    return sum(good), claims
