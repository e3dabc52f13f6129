"""What a group of printed numbers says it is, from the words and symbols beside it: the quantity (Q, K, V, the
scores, the scaled scores, the weights, an output, an input such as X or W_Q), the token (`love`, K_I,
Q_{\\text{love}}) and the head ("head 2"). A group after "=" is named by its equation's left-hand side; a group in a
table cell by its column's header and its row's first cell; an operand of a product written out names nothing."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

# The families a label can name, first match at a place wins (so "encoder output" is the memory, not an output);
# a, w and z are lower case only (A is the weights matrix, W a weight matrix, Z the softmax sum or the output).
_HINTS = re.compile(
    r"(?P<memory>encoder outputs?|エンコーダ出力|エンコーダの出力|memory)"
    r"|(?<![A-Za-z])W_?\{?\^?\{?(?P<W>[QKVO])\b"
    r"|(?P<scaled_scores>scaled scores?|スケール後|スケーリング後|(?<![A-Za-z\\])\{?(?-i:a)\}?(?=_|\s*[=&]|\s*\\approx))"
    r"|(?P<scores>scores?|logits?|スコア|(?<![A-Za-z\\])\{?s\}?(?=_|\s*[=&]))"
    r"|(?P<weights>weights?|softmax|重み|\\alpha|α|(?<![A-Za-z\\])\{?(?-i:w)\}?(?=_|\s*[=&]))"
    r"|(?P<activated>(?<![A-Za-z])(?:GELU|ReLU|SiLU|activat(?:ed|ion)s?)(?![A-Za-z])|活性化|\\varphi|\\phi|φ)"
    r"|(?P<hidden>(?<![A-Za-z])hidden(?![A-Za-z])|隠れ)"
    r"|(?P<heads>heads?\s*_?\{?\d|ヘッド\s*\d)"
    r"|(?P<output>outputs?|出力|context|(?<![A-Za-z\\])\{?(?-i:z)\}?(?=_|\s*[=&]))"
    r"|(?P<X_plus_P>embeddings?\s*\\?\+\s*positions?|埋め込み\s*\\?[+＋]\s*位置|\\tilde\{[xX]\}|[xX]\s*\+\s*[pP]\b)"
    r"|(?P<P>positional encodings?|位置エンコーディング|(?<![A-Za-z\\])P(?=_|\s*[=&]))"
    r"|(?P<X>embeddings?|埋め込み|(?<![A-Za-z\\])\{?[xX]\}?(?=_|\s*[=&]))"
    r"|(?<![A-Za-z\\_])\{?(?P<QKV>[QKV]|[qkv](?=\}?_))\}?(?![A-Za-z])", re.I)  # (not d_k's k)
_HEAD = re.compile(r"head\s*_?\{?(\d+)|ヘッド\s*(\d+)|\^\{\((\d+)\)\}", re.I)
_SOFTMAX_OF = re.compile(r"softmax\}?\s*(?:\\bigl|\\left|\\Bigl)?\s*\($", re.I)
_OPERATOR = r"(?:\\cdot|\\times|[⋅×*+·])"
_BEFORE_OPERAND = re.compile(_OPERATOR + r"\s*(?:\\left|\\bigl)?\s*\(?\s*$")
# (a row kept whole on its lead's line has its operator on the next: "[g] \\\\ &\\qquad \\cdot W", HTML's "[g] | \n | ·W")
_NEXT_LINE = r"(?:\\\\\s*|\s*\|?\s*\n[\s|]*)&?\s*(?:\\qquad|\\quad)?\s*"
_AFTER_OPERAND = re.compile(r"^\s*(?:\\end\{[a-zA-Z]*\})?\s*(?:\\right)?\s*[\])]?\s*(?:\\bigr\)|\\right\))?\s*"
                            r"(?:" + _OPERATOR + r"|\\begin\{|\\left\[|\[|" + _NEXT_LINE + _OPERATOR + ")")
# a continued line that starts with an operator ("&\\qquad \\cdot W_O", HTML's " | ·WO | "): a factor, no name
_CONTINUED = re.compile(r"^[\s|&]*(?:\\qquad|\\quad)?\s*" + _OPERATOR + r".*$", re.M)
_BOUNDARY = re.compile(r"\n\s*\n|\\\\|\\begin\{[a-zA-Z*]+\}(?:\{[a-z]*\})?|。|\.\s")
GROUP = "\x00"  # what every group's span is blanked with in the text label_of reads


@dataclass(frozen=True)
class Label:
    """What the text beside a group names (None: nothing); operand: the group is a factor of a product written
    out, which names no quantity of its own."""

    family: str | None = None
    token: str | None = None
    head: int | None = None
    operand: bool = False


def _family(match: re.Match) -> str:
    kind = match.lastgroup
    if kind == "W":
        return f"W_{match.group('W')}"
    if kind == "QKV":
        return match.group("QKV").upper()
    return kind


def _hint(text: str, tokens: tuple[str, ...], first: bool) -> Label:
    """The family, token and head a piece of text names: the first of each (a left-hand side) or the last."""
    pick = (lambda found: found[0]) if first else (lambda found: found[-1])
    text = text.strip(GROUP + " \t")  # (a row's blanked numbers are no words: the patterns need not run over them)
    found = [_family(m) for m in _HINTS.finditer(text)]
    family = pick(found) if found else None
    places = []
    for token, pattern in _token_patterns(tokens):
        if token in text:  # (most labels name none of the tokens: no pattern run for them)
            places += [(m.start(), token) for m in pattern.finditer(text)]
    places.sort()
    token = pick(places)[1] if places else None
    heads = [int(next(g for g in m.groups() if g)) for m in _HEAD.finditer(text)]
    return Label(family, token, pick(heads) if heads else None)


@lru_cache(maxsize=16)
def _token_patterns(tokens: tuple[str, ...]) -> tuple[tuple[str, re.Pattern], ...]:
    """Each token with the pattern that finds it as a word (compiled once per document, not once per group)."""
    return tuple((token, re.compile(rf"(?<![A-Za-z0-9]){re.escape(token)}(?![A-Za-z0-9])" if token.isascii()
                                    else re.escape(token))) for token in tokens)


def label_of(original: str, text: str, start: int, end: int, tokens: tuple[str, ...]) -> Label:
    """The label of the group original[start:end] (`text`: the document with every group's span blanked, so that
    no other group's numbers or LaTeX are read as words; `tokens`: the section tokens a label may name)."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line = text[line_start:len(text) if line_end < 0 else line_end]
    if "\t" in line or "|" in line:
        label = _in_table(text, line_start, line, start - line_start, end - line_start, tokens)
        if label is not None:
            return label
    before = text[max(0, start - 400):start]
    if _BEFORE_OPERAND.search(original[max(0, start - 40):start]) or _AFTER_OPERAND.match(original[end:end + 40]):
        return Label(operand=True)
    statements = re.split(GROUP + "+", _BOUNDARY.split(before)[-1])
    own = statements[-1]
    if _SOFTMAX_OF.search(own):  # softmax( [group] ): the group is what the softmax is taken of
        return replace(_hint(own, tokens, False), family="scaled_scores")
    if "=" not in own and "\\approx" not in own and "≈" not in own:
        return _hint(own, tokens, False)
    for statement in reversed(statements):  # "A = [g] ⋅ [h] = [g']": what follows the operands is still A
        lhs = re.split(r"=|\\approx|≈", statement, maxsplit=1)[0]
        if re.match(r"\s*[\])]?\s*" + _OPERATOR, lhs):  # "[g] · W_O ≈ [h]": W_O is a factor, not h's name
            continue
        proper = re.split(r"[:：\n$]|\\\[|\\\(", lhs)[-1]  # the left-hand side, not the prose before it
        if re.search(r"[^\W\d_]", proper):  # (the "=" given back: a symbol is one when an equation names it)
            return _hint(proper + "=", tokens, True)
        lhs = _CONTINUED.sub("", lhs)
        if re.search(r"[^\W\d_]", lhs):
            return _hint(lhs + "=", tokens, True)
    return Label()


def _in_table(text: str, line_start: int, line: str, start: int, end: int, tokens: tuple[str, ...]
              ) -> Label | None:
    """A group in a table row: its column's header names the family when it sits in one cell, the row's first
    cell the token; None when the row is no table row of a header."""
    separator = "\t" if "\t" in line else "|"
    cells_before = line[:start].count(separator) - line[:start].lstrip().startswith("|")
    if line[start:end].count(separator):  # a whole row of numbers: its first cell names the token
        cells_before = -1
    header = _header(text, line_start, separator)
    first = line.strip().strip("|").split(separator)[0]
    token = _hint(first, tokens, True).token
    if header is None:
        return Label(token=token) if token else None
    family = None
    if cells_before >= 0 and cells_before < len(header):
        family = _hint(header[cells_before], (), True).family
    return Label(family, token)


def _header(text: str, line_start: int, separator: str) -> list[str] | None:
    """The header cells of the table a line is in: the line above the nearest Markdown rule (|---|) above it, or
    the first line of its block of table lines."""
    header = _Headers.of(text, separator).up_to(line_start)
    if header is None or separator not in header or re.search(r"\d\.\d", header) or GROUP in header:  # numbers
        return None
    return [c.strip() for c in header.strip().strip("|").split(separator)]


class _Headers:
    """Each line's header line (by the line's offset), found top down, as far as asked (a document's groups are
    read in order, and only up to check's bound): a line's is the one above a rule just above it, else the header
    of the table line above it, else (the line above is no table line) none. Read upwards from each line instead,
    a table of 40,000 rows without a rule took minutes."""

    def __init__(self, text: str, separator: str) -> None:
        self.text, self.separator = text, separator
        self.found: dict[int, str | None] = {}
        self.start = 0  # the next line to read
        self.above: str | None = None  # the line above it and the line above that
        self.above_two: str | None = None
        self.header: str | None = None  # the header of the line above, as its table goes on (itself first)

    @staticmethod
    @lru_cache(maxsize=2)
    def of(text: str, separator: str) -> _Headers:
        return _Headers(text, separator)

    def up_to(self, line_start: int) -> str | None:
        text, separator = self.text, self.separator
        while self.start <= line_start and self.start >= 0:
            end = text.find("\n", self.start)
            line = text[self.start:len(text) if end < 0 else end]
            above = self.above
            if above is None or separator not in above:
                self.found[self.start], self.header = None, line
            elif re.fullmatch(r"[\s|:\-]*", above) and "-" in above:
                self.found[self.start] = self.header = self.above_two
            else:
                self.found[self.start] = self.header
            self.above_two, self.above = above, line
            self.start = end + 1 if end >= 0 else -1
        return self.found.get(line_start)
