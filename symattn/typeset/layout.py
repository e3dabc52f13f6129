"""The A4 page and the layout engine: how wide and tall a piece of math is on it, and where lines, tables and
matrices are split so that they fit."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..document.steps import Heatmap
from ..infra.memo import ByIdentity
from ..numbers.display import format_number, shades

# ------------------------------------------------------------ the page, defined once
# The preamble's \usepackage[...]{geometry} is written from these (see geometry_options); every width below is in
# characters of the line they leave, LINE_CHARACTERS to a line.

PAPER = "a4paper"
PAPERS = {"a4": PAPER, "letter": "letterpaper"}  # exam --paper: US Letter is wider than A4, so every width fits
FONT_SIZE = "11pt"  # the class option; the glyph widths below are measured at it
PAPER_WIDTH_MM = 210
MARGIN_MM = 22
TEXT_WIDTH_PT = (PAPER_WIDTH_MM - 2 * MARGIN_MM) / 25.4 * 72.27  # 472 pt
LINE_CHARACTERS = 80  # the renderers' default `width`
CHARACTER_PT = TEXT_WIDTH_PT / LINE_CHARACTERS  # 5.9 pt

# A matrix entry's glyphs in 11 pt Latin Modern, in characters: digit 5.5 pt, minus 8.5 pt, point 3 pt; and the gap
# to the next column (2 \arraycolsep: 10 pt, 10.95 pt in jsarticle), the brackets (9.5 pt) taking about one gap.
DIGIT_WIDTH = 0.93
MINUS_WIDTH = 1.45
POINT_WIDTH = 0.52
COLUMN_GAP = 1.86
# ",\ " between a row's entries: the comma (3 pt), math's thin space after it and a space (8 pt in all)
SEPARATOR_WIDTH = 1.4
# A vector up to the line's width less this (the aligned column's lead and the continuation's indent) is kept whole.
WHOLE_VECTOR_MARGIN = 16


def geometry_options(paper: str = PAPER) -> str:
    """The options of \\usepackage[...]{geometry} in preamble-common.tex (its @GEOMETRY@)."""
    return f"{paper},margin={MARGIN_MM}mm"


# ------------------------------------------------------------ limits of what one box may hold

# A derivation of up to this many rows (display_rows: a matrix counts its rows, a fraction two) is one `aligned`
# display, which stays on one page and is set once; a taller one is align*, which can break (\allowdisplaybreaks).
# A page holds about 45 such rows: 32 keeps the softmax of up to 9 tokens (3n + 5 rows) whole, and leaves at most
# two thirds of a page empty when the block moves to the next page.
UNBROKEN_ROWS = 32
# In exact mode a rounded value is shown after its exact form only if that form leaves this much of the line: one
# line cannot be broken.
EXACT_MARGIN = 10
# A table taller than this many lines of text is a longtable, which breaks across pages (a tabular is one box). Its
# header is not repeated: in the one LaTeX pass a repeated header would be set before the columns' widths are known.
TABLE_LINES = 30
# A matrix taller than this many rows is shown in bands of rows (one bmatrix is one box) on a page.
MATRIX_ROWS = 22

# ------------------------------------------------------------ measuring

_COMMAND = re.compile(r"\\[a-zA-Z]+")
# a matrix as LaTeX writes it (bmatrix) or as the other formats do (an array of right-aligned columns)
_MATRIX = re.compile(r"\\begin\{(?:bmatrix|array\}\{r+)\}(.*?)\\end\{(?:bmatrix|array)\}", re.S)
_PLAIN_NUMBER = re.compile(r"-?[0-9.]+")
_MARKUP = re.compile(r"[{}^_&]")  # what visible_width does not count
_BRACES = re.compile(r"[{}]")


@lru_cache(maxsize=1 << 14)  # the same vectors and names are measured in several steps
def visible_width(latex: str) -> int:
    """A rough count of the characters a piece of math occupies on the page (wide scripts count double)."""
    if "\\begin{" in latex:  # (a matrix begins so)
        latex = _MATRIX.sub(lambda m: max(m.group(1).split("\\\\"), key=len).replace("&", "  "), latex)
    plain = _MARKUP.sub("", _COMMAND.sub("x", latex.replace(r"\cdot", "*").replace(r"\,", "").replace(r"\ ", " ")))
    return len(plain) if plain.isascii() else sum(2 if ord(ch) > 0x2E7F else 1 for ch in plain)


def set_width(latex: str) -> int:
    """visible_width() of math as TeX sets it: a fraction as wide as its wider part, not both side by side."""
    start = latex.find(r"\frac{")
    if start < 0:
        return visible_width(latex)
    numerator, after = _group(latex, start + 5)
    denominator, end = _group(latex, after)
    return (visible_width(latex[:start]) + max(set_width(numerator), set_width(denominator))
            + set_width(latex[end:]))


def _group(latex: str, at: int) -> tuple[str, int]:
    """The contents of the brace group opening at `at`, and where it ends."""
    if at < len(latex) and latex[at] not in "{}":  # no group: nothing, up to the next character
        return "", at + 1
    depth = 0
    for brace in _BRACES.finditer(latex, at):
        depth += 1 if brace.group() == "{" else -1
        if depth == 0:
            return latex[at + 1:brace.start()], brace.end()
    return latex[at + 1:], len(latex)


def matrix_columns(latex: str) -> int:
    """The most columns of any matrix in `latex` (0 without one)."""
    return max((row.count("&") + 1 for m in _MATRIX.finditer(latex) for row in m.group(1).split("\\\\")), default=0)


def matrix_columns_setting(body: str) -> str:
    """The preamble line that lets amsmath set the body's widest matrix, if it is wider than amsmath's default 10
    columns; else nothing (every matrix costs in proportion to the setting)."""
    columns = matrix_columns(body)
    return rf"\setcounter{{MaxMatrixCols}}{{{columns}}}" if columns > 10 else ""


def display_rows(lines: list[str]) -> int:
    """A rough count of the rows a derivation occupies on the page: a line holding a matrix is as tall as it, one
    holding a fraction two rows."""
    return sum(max((m.group(1).count("\\\\") + 1 for m in _MATRIX.finditer(line)), default=2 if r"\frac" in line else 1)
               if "\\begin{" in line else 2 if r"\frac" in line else 1 for line in lines)


def entry_width(entry: str) -> float:
    """The width of a matrix entry in characters: a plain number by its glyphs, anything else by visible_width
    with half a character more for a leading minus."""
    if _PLAIN_NUMBER.fullmatch(entry):
        minus, points = entry.count("-"), entry.count(".")
        return MINUS_WIDTH * minus + POINT_WIDTH * points + DIGIT_WIDTH * (len(entry) - minus - points)
    return visible_width(entry) + (0.5 if entry.startswith("-") else 0)


def row_width(entries: list[str]) -> float:
    """The width of a row vector [a, b, c] in characters, from its entries' glyphs (a comma and a space between
    them, the brackets): what TeX sets, tighter than visible_width's count of characters."""
    widths = [entry_width(e) if _PLAIN_NUMBER.fullmatch(e) else set_width(e) for e in entries]  # a fraction: its wider part
    return 1.6 + sum(widths) + SEPARATOR_WIDTH * (len(entries) - 1)


def row_fits(entries: list[str], width: int) -> bool:
    """Whether a row vector fits a line of its own, beside the aligned column's lead and the indent."""
    return row_width(entries) <= width - WHOLE_VECTOR_MARGIN


def column_width(entries: list[str]) -> float:
    """The room a matrix column takes in characters: its widest entry and the gap to the next column."""
    return max(map(entry_width, entries), default=0) + COLUMN_GAP


# ------------------------------------------------------------ splitting

def wrap(pieces: list[str], width: int, first_width: int | None = None) -> list[str]:
    """Pack pieces into lines no wider than `width` (the first line may have less room)."""
    lines: list[list[str]] = [[]]
    room = first_width if first_width is not None else width
    used = 0
    for piece in pieces:
        size = visible_width(piece)
        if lines[-1] and used + size > room:
            lines.append([])
            room, used = width, 0
        lines[-1].append(piece)
        used += size + 1
    return [" ".join(line) for line in lines]


def column_groups(widths: list[float], room: float) -> list[list[int]]:
    """Columns packed into as few groups as fit `room` side by side (a too wide table is split)."""
    groups: list[list[int]] = [[]]
    used = 0
    for c, width in enumerate(widths):
        if groups[-1] and used + width + 4 > room:
            groups.append([])
            used = 0
        groups[-1].append(c)
        used += width + 4
    return groups


def balanced_groups(widths: list[float], room: float) -> list[list[int]]:
    """As few groups of consecutive columns as fit `room`, of nearly equal sizes (16 columns: 8 + 8, not
    13 + 3)."""
    for count in range(len(column_groups(widths, room)), len(widths) + 1):
        size, extra = divmod(len(widths), count)
        bounds = [c * size + min(c, extra) for c in range(count + 1)]
        groups = [list(range(bounds[c], bounds[c + 1])) for c in range(count)]
        if all(len(column_groups([widths[c] for c in group], room)) == 1 for group in groups):
            return groups
    return [[c] for c in range(len(widths))]


def row_bands(rows: int, most: int | None) -> list[range]:
    """Rows in as few bands of nearly equal size as keep each within `most` (None: one band)."""
    count = 1 if most is None else max(1, -(-rows // most))
    bounds = [b * rows // count for b in range(count + 1)]
    return [range(bounds[b], bounds[b + 1]) for b in range(count)]


# ------------------------------------------------------------ heatmaps

@dataclass(frozen=True)
class HeatCells:
    """A heatmap's cells, row by row, as every format shades them: each weight as shown, its shade (its share of the
    largest weight, from 0 to the scale) and the largest weight as shown, the top of the colour scale."""

    texts: list[str]
    shades: list[int]
    largest: str


# heat_cells() by the heatmap, decimals and scale: an exam's paper and its Moodle feedback shade the same cells
_HEAT_CELLS: ByIdentity[HeatCells] = ByIdentity(16)


def heat_cells(step: Heatmap, digits: int, scale: int) -> HeatCells:
    """The cells of a heatmap whose largest weight gets the shade `scale` (to be read, not changed)."""
    return _HEAT_CELLS.get(step, (digits, scale), lambda: _heat_cells(step, digits, scale))


def _heat_cells(step: Heatmap, digits: int, scale: int) -> HeatCells:
    weights = [w for row in step.weights.tolist() for w in row]
    texts = [format_number(w, digits, known=step.known).text for w in weights]
    levels = shades(weights, scale, step.known)
    return HeatCells(texts, levels, texts[levels.index(max(levels))])
