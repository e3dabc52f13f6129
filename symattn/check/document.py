"""Claims read from a document (Markdown, LaTeX, HTML or plain text): the groups of numbers it prints (vectors in
brackets, matrix bodies, table rows, aligned lines of one number each), matched to the derivation's quantities by
value: match() says whether a group prints a quantity. check.matching reads the labels too and keeps the coverage."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from .claims import NOT_CLAIMS, Claim, Path_, number
from .compare import correct_text, holds
from .diagnose import typo

_NUMBER = re.compile(r"(?<![\w.!^_])(?<!\^\{)(?<!_\{)[-−]?[0-9]+(?:\.[0-9]+)?(?![\w.])")
_MATRIX = re.compile(r"\\begin\{([bpvBV]?matrix)\}(.*?)\\end\{\1\}", re.S)
_VECTOR = re.compile(r"(?<!\\)\[([^\[\]]*?)(?<!\\)\]", re.S)
_ALIGNED = re.compile(r"\\begin\{(aligned|align\*?|split|gathered)\}(.*?)\\end\{\1\}", re.S)
_LINE = re.compile(r"[^\n]+")
MAX_GROUPS = 20000  # a document's groups looked at (bounded work)


def html_text(text: str) -> str:
    """An HTML document's text with its table rows as lines of `|` cells and MathML's matrix rows as `&` cells
    (MathML's brackets and numbers are text already), for groups() to read."""
    text = re.sub(r"<(script|style)\b.*?</\1\s*>", " ", text, flags=re.S | re.I)
    text = re.sub(r"</t[dh]\s*>", " | ", text, flags=re.I)
    text = re.sub(r"</mtd\s*>", " & ", text, flags=re.I)
    text = re.sub(r"</tr\s*>|</mtr\s*>|<br\s*/?>|</p\s*>|</li\s*>", "\n", text, flags=re.I)
    return html.unescape(re.sub(r"<[^>]*>", "", text))


@dataclass(frozen=True)
class Group:
    """Numbers printed together, in document order."""

    at: int  # the offset of the group in the document
    texts: tuple[str, ...]


def _numbers(text: str) -> list[str]:
    return [m.group(0) for m in _NUMBER.finditer(text)]


def groups(text: str) -> list[Group]:
    """The groups of numbers a document prints, in order: matrix bodies, bracketed vectors, the lines of an aligned
    block that print one number each, and table rows (Markdown pipes, tabs, LaTeX &) of two numbers or more."""
    found: list[Group] = []
    masked = text

    def take(pattern: re.Pattern, body: int) -> None:
        nonlocal masked
        for match in pattern.finditer(masked):
            numbers = _numbers(match.group(body))
            if len(numbers) >= 2:
                found.append(Group(match.start(), tuple(numbers)))
        masked = pattern.sub(lambda m: " " * len(m.group(0)), masked)

    take(_MATRIX, 2)
    take(_VECTOR, 1)
    for match in _ALIGNED.finditer(masked):  # aligned lines of one number each: a vector written down a column
        lines = [_numbers(line) for line in match.group(2).split("\\\\")]
        lines = [line for line in lines if line]
        if len(lines) >= 2 and all(len(line) == 1 for line in lines):
            found.append(Group(match.start(), tuple(line[0] for line in lines)))
            masked = masked[:match.start()] + " " * len(match.group(0)) + masked[match.end():]
    for match in _LINE.finditer(masked):  # table rows
        line = match.group(0)
        if "|" in line or "\t" in line or "&" in line:
            numbers = _numbers(line)
            if len(numbers) >= 2:
                found.append(Group(match.start(), tuple(numbers)))
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
    if not isinstance(value, str) or value == "inf":
        return None
    try:
        return Decimal(value)
    except ArithmeticError:
        return None


def _near(claim: Claim, exact: Decimal) -> bool:
    """A wrong entry that still belongs to the vector: within 20 % of the value (or ten units), or a typo of it."""
    return abs(claim.value - exact) <= abs(exact) / 5 + 10 * claim.unit or typo(claim.printed,
                                                                             correct_text(claim, exact))


def match(group: Group, quantity: Quantity) -> tuple[int, list[Claim]] | None:
    """(entries holding, the group's claims on the quantity) when the group prints that quantity: as many entries,
    at least two holding and at most one in four not (of three or more printed to the same two decimals or more),
    each of those near."""
    if len(group.texts) != len(quantity.values):
        return None
    claims = []
    for text, path in zip(group.texts, quantity.paths, strict=True):
        printed, value, places = number(text, "document")
        claims.append(Claim(path, printed, value, places))
    good = [holds(c, v) for c, v in zip(claims, quantity.values, strict=True)]
    bad = len(good) - sum(good)
    # a wrong entry only among right ones printed alike, to two decimals or more (not 0 and 1 of a mask or index)
    uniform = len({c.places for c in claims}) == 1 and claims[0].places >= 2
    if sum(good) < 2 or bad > (max(1, len(good) // 4) if uniform else 0) or (bad and len(good) < 3):
        return None
    if not all(ok or _near(c, v) for ok, c, v in zip(good, claims, quantity.values, strict=True)):
        return None
    return sum(good), claims
