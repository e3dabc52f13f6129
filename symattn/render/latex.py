"""The LaTeX renderer: one `_print_<Step>` method per step type, like SymPy's printers."""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from pylatex import Document, NoEscape
from pylatex.utils import escape_latex
from sympy import Expr, S

from .. import i18n
from ..engine import any_symbolic, is_symbolic
from ..errors import RenderError
from ..model import (
    Concat,
    DefinitionTable,
    Derivation,
    DotProducts,
    Eq,
    ExactMatrix,
    FlowFigure,
    Heading,
    HeadWeights,
    Heatmap,
    MatrixEquation,
    MatrixFormStep,
    Name,
    Num,
    Paragraph,
    RowTimesMatrix,
    ScaleFactor,
    Scaling,
    Shown,
    SoftmaxStep,
    Step,
    Token,
    TokenTable,
    VectorEquation,
    VectorList,
    WeightedSum,
)
from ..numfmt import DEFAULT_DIGITS, Number, exact_latex, format_number, format_numbers, shades
from .templates import class_options, language_preamble, read_template

# LaTeX of each base symbol of the model's Names (a rule table, not code).
NOTATION = {
    "Q": "Q", "K": "K", "V": "V", "X": "X", "x": "x", "z": "z", "a": "a", "w": "w",
    "W_Q": "W_Q", "W_K": "W_K", "W_V": "W_V", "W_O": "W_O", "d_k": "d_k",
    "memory": r"H_{\mathrm{enc}}", "s": "s", "e^x": "e^{x}", "M": "M", "P": "P",
}
# Fixed (non-token) subscripts: the word written under the symbol.
LABELS = {"concat": "concat", "final": "final"}
# A subscript word that \mathrm sets as well as \text: ASCII letters and digits only (no spaces, no accents).
_PLAIN_WORD = re.compile(r"[A-Za-z0-9]+")
DOCUMENT_CLASS = {"ja": "jsarticle", "en": "article"}
_COMMAND = re.compile(r"\\[a-zA-Z]+")
_MATRIX = re.compile(r"\\begin\{bmatrix\}(.*?)\\end\{bmatrix\}", re.S)
_DISPLAY_STARTS = ("\\begin{align*}", "\\[")
# A sentence ending in a colon introduces what follows; no page break between them (\par\nopagebreak: in vertical
# mode, after the paragraph; right after the sentence's text, \nopagebreak did not always hold).
_LEAD_IN = (":", "：")
# A derivation of up to this many rows (display_rows: a matrix counts its rows, a fraction two) is one `aligned`
# display, which LaTeX cannot break across pages; taller ones are align*, which can (\allowdisplaybreaks).
# A short derivation so stays on one page, and amsmath sets it once: an align* is typeset twice (once to measure
# its columns).
UNBROKEN_ROWS = 16
# In exact mode a rounded value is shown after its exact form only if that form leaves this much of the line: one
# line cannot be broken, and a product of sums of sines (the decoder's positional encodings) ran 250 pt off the page.
EXACT_MARGIN = 10


# Zero-width and other invisible format characters, which no font of the document has: left out of the LaTeX.
_INVISIBLE = re.compile("[\u200b-\u200f\u2060-\u2064\ufeff]")


@lru_cache(maxsize=1 << 12)  # language strings and token names, over and over
def escape(text: str) -> str:
    """User or language text made safe for LaTeX: every special character printed literally, accents composed
    (NFC: a decomposed é as macOS pastes it is é), Latin letters that LaTeX's tables lack as accent commands, and
    invisible format characters (zero-width space, byte order mark) left out."""
    text = _INVISIBLE.sub("", unicodedata.normalize("NFC", text))
    return accented(escape_latex(text))


# Combining accents and the LaTeX text accents that set them (Latin Modern has them all in T1).
_ACCENTS = {"\u0300": "`", "\u0301": "'", "\u0302": "^", "\u0303": "~", "\u0304": "=", "\u0306": "u",
            "\u0307": ".", "\u0308": '"', "\u030a": "r", "\u030b": "H", "\u030c": "v", "\u0323": "d",
            "\u0327": "c", "\u0328": "k", "\u0331": "b"}
_BELOW = {"\u0323", "\u0327", "\u0328", "\u0331"}
# A letter that LaTeX's tables may lack: an accented one beyond Latin Extended-A (Latin Extended-B: pinyin ǎ;
# Latin Extended Additional: Vietnamese ế), or a Latin letter with combining marks that have no precomposed form.
_ACCENTED = re.compile("[A-Za-z][\u0300-\u036f]+|[\u0180-\u024f\u1e00-\u1eff]")


def accented(text: str) -> str:
    """Latin letters with accents that LaTeX's tables lack written as accent commands (ế -> \\'{\\^{e}}); any
    other character is left to LaTeX, or to the Japanese font (see preamble-common.tex)."""
    return _ACCENTED.sub(_accent_commands, text)


def _accent_commands(match: re.Match) -> str:
    letters = unicodedata.normalize("NFD", match.group(0))
    base, marks = letters[0], letters[1:]
    if not (base.isascii() and base.isalpha() and marks and all(mark in _ACCENTS for mark in marks)):
        return match.group(0)
    latex = base
    if base in "ij" and not set(marks) <= _BELOW:  # an accent above i or j replaces its dot
        latex = "\\" + base
    # Accents above first: T1 has ê as a glyph, which takes another accent above (ế) or below (ệ); an accent above
    # a letter built with one below (ẹ) would land beside it.
    for mark in sorted(marks, key=lambda mark: mark in _BELOW):
        latex = f"\\{_ACCENTS[mark]}{{{latex}}}"
    return latex


@lru_cache(maxsize=1 << 14)  # the same vectors and names are measured in several steps
def visible_width(latex: str) -> int:
    """A rough count of the characters a piece of math occupies on the page (wide scripts count double)."""
    latex = _MATRIX.sub(lambda m: max(m.group(1).split("\\\\"), key=len).replace("&", "  "), latex)
    plain = _COMMAND.sub("x", latex.replace(r"\cdot", "*").replace(r"\,", "").replace(r"\ ", " "))
    plain = re.sub(r"[{}^_&]", "", plain)
    return sum(2 if ord(ch) > 0x2E7F else 1 for ch in plain)


def matrix_columns(latex: str) -> int:
    """The most columns of any bmatrix in `latex` (0 without one)."""
    return max((row.count("&") + 1 for m in _MATRIX.finditer(latex) for row in m.group(1).split("\\\\")), default=0)


def matrix_columns_setting(body: str) -> str:
    """The preamble line that lets amsmath set the body's widest matrix, if it is wider than amsmath's default 10
    columns; else nothing (every matrix costs in proportion to the setting)."""
    columns = matrix_columns(body)
    return rf"\setcounter{{MaxMatrixCols}}{{{columns}}}" if columns > 10 else ""


def shared_preamble(lang: str, body: str) -> list[str]:
    """The preamble parts of every document (handout, exam, key): preamble-common.tex, the language's, and the
    matrix columns the body needs."""
    columns = matrix_columns_setting(body)
    return [read_template("preamble-common.tex"), language_preamble(lang), *([columns] if columns else [])]


_PLAIN_NUMBER = re.compile(r"-?[0-9.]+")


def _entry_width(entry: str) -> float:
    """The width of a matrix entry in characters of the line (see LatexRenderer.column_width)."""
    if _PLAIN_NUMBER.fullmatch(entry):
        minus, points = entry.count("-"), entry.count(".")
        return 1.45 * minus + 0.52 * points + 0.93 * (len(entry) - minus - points)
    return visible_width(entry) + (0.5 if entry.startswith("-") else 0)


def display_rows(lines: list[str]) -> int:
    """A rough count of the rows a derivation occupies on the page: a line holding a matrix is as tall as it, one
    holding a fraction two rows."""
    return sum(max((m.group(1).count("\\\\") + 1 for m in _MATRIX.finditer(line)), default=2 if r"\frac" in line else 1)
               for line in lines)


# A table taller than this many lines of text is a longtable, which breaks across pages: a tabular is one box, and
# 16 tokens with 16-entry vectors would run past the page's foot. Its header is not repeated on the next page: in
# the one LaTeX pass a repeated header would be set before the columns' widths are known.
TABLE_LINES = 30


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


class LatexRenderer:
    """Walks a Derivation and returns LaTeX; settings are checked, unknown ones rejected."""

    default_settings: dict[str, Any] = {"lang": "ja", "digits": DEFAULT_DIGITS, "width": 80, "exact": False,
                                        "compact_headings": False, "unbroken_rows": UNBROKEN_ROWS}
    # Plain ASCII subscript words as \mathrm{love}: \text typesets its text in all four math styles (\mathchoice),
    # four boxes for one.
    mathrm_words = True
    # A matrix taller than this many rows is shown in bands of rows: one bmatrix is one box, and 64 rows run past
    # the page's foot. None: no pages (Markdown, HTML).
    matrix_rows: int | None = 22

    def __init__(self, **settings: Any) -> None:
        unknown = set(settings) - set(self.default_settings)
        if unknown:
            raise RenderError(f"unknown LaTeX renderer setting(s): {', '.join(sorted(unknown))}")
        self.settings = {**self.default_settings, **settings}
        self.lang: str = self.settings["lang"]
        self.digits: int = self.settings["digits"]
        self.width: int = self.settings["width"]
        self.exact: bool = self.settings["exact"]
        self._templates: dict[str, list[tuple[str, str | None]]] = {}
        self.numbers = lru_cache(maxsize=1 << 10)(self.numbers)  # steps show the same vectors again

    # ------------------------------------------------------------ dispatch

    def render(self, step: Step) -> str:
        """The LaTeX of one step, found by walking the step's class hierarchy."""
        for cls in type(step).__mro__:
            method = getattr(self, f"_print_{cls.__name__}", None)
            if method is not None:
                return method(step)
        raise RenderError(f"the LaTeX renderer has no method for step type {type(step).__name__}")

    def body(self, derivation: Derivation) -> str:
        """All steps, in order."""
        chunks: list[str] = []
        previous = None
        for step in derivation.steps:
            latex = self.render(step)
            if not latex.startswith(_DISPLAY_STARTS):  # a new paragraph, on the page of a sentence introducing it
                keep = chunks and chunks[-1].endswith(_LEAD_IN)
                chunks.append(("\\par\\nopagebreak\n\n" if keep else "\n\n") + latex)
            elif isinstance(previous, Heading):  # a display starts the paragraph: TeX sets an empty line above it
                chunks.append("\n\\vspace*{-\\baselineskip}\n" + latex)
            else:  # a display continues the paragraph that introduces it
                chunks.append("\n" + latex)
            previous = step
        return "".join(chunks).lstrip()

    def document(self, derivation: Derivation) -> str:
        """A complete .tex file: class, preambles from templates/, title, body."""
        title, subtitle = self.titles(derivation)
        body = self.body(derivation)
        doc = Document(
            documentclass=DOCUMENT_CLASS[self.lang],
            document_options=["a4paper", "11pt", *class_options(DOCUMENT_CLASS[self.lang])],
            fontenc=None, inputenc=None, lmodern=False, textcomp=False, page_numbers=False, indent=True,
        )
        for part in shared_preamble(self.lang, body):
            doc.preamble.append(NoEscape(part))
        doc.preamble.append(NoEscape(rf"\title{{{title}}}"))
        doc.preamble.append(NoEscape(r"\author{}"))
        doc.preamble.append(NoEscape(rf"\date{{{subtitle}}}"))
        doc.append(NoEscape(r"\pagestyle{plain}" "\n" r"\maketitle" "\n\n" + body))
        return doc.dumps() + "\n"

    def titles(self, derivation: Derivation) -> tuple[str, str]:
        """The document's title and the line under it (which says how numbers are shown)."""
        title = (self.text("doc.title", {"title": derivation.title}) if derivation.title
                 else self.text("doc.untitled"))
        subtitle = self.text("doc.subtitle_symbolic" if derivation.symbolic else "doc.subtitle",
                             {"digits": self.digits})
        return title, subtitle

    # ------------------------------------------------------------ pieces

    def text(self, key: str, params: dict[str, Any] | None = None) -> str:
        """A language string with its literal parts escaped and its {params} rendered."""
        out = []
        for literal, field in self.template(key):
            out.append(literal)
            if field is not None:
                if params is None or field not in params:
                    raise RenderError(f"string {key!r} needs parameter {field!r}")
                out.append(self.param(params[field]))
        return "".join(out)

    def template(self, key: str) -> list[tuple[str, str | None]]:
        """A language string as (escaped literal, parameter name or None) pieces, parsed once per renderer."""
        pieces = self._templates.get(key)
        if pieces is None:
            pieces = self._templates[key] = [(self.escape_text(literal), field) for literal, field, _spec, _conv
                                             in string.Formatter().parse(i18n.text(self.lang, key))]
        return pieces

    # Hooks that other formats (Markdown, HTML) override; the math itself is shared.

    def escape_text(self, text: str) -> str:
        """Literal text made safe for the output format."""
        return escape(text)

    def math_text(self, text: str) -> str:
        """User text inside \\text{} in math."""
        return escape(text)

    def subscript_word(self, word: str, user_text: bool = True) -> str:
        """A token name (user text) or a fixed label as a subscript: \\mathrm{love} for plain ASCII (mathrm_words),
        else \\text{...}."""
        if self.mathrm_words and _PLAIN_WORD.fullmatch(word):
            return rf"\mathrm{{{word}}}"
        return rf"\text{{{self.math_text(word) if user_text else word}}}"

    def token(self, name: str) -> str:
        """A token name in running text or a table cell."""
        return rf"\tok{{{escape(name)}}}"

    def inline(self, math: str) -> str:
        return f"${math}$"

    def display(self, math: str) -> str:
        return rf"\[ {math} \]"

    def param(self, value: Any) -> str:
        if isinstance(value, Token):
            return self.token(value.name)
        if isinstance(value, Name):
            return self.inline(self.name(value))
        if isinstance(value, Eq):
            return self.inline(f"{self.name(value.name)} = {value.value}")
        if isinstance(value, ScaleFactor):
            return self.inline(self.scale_equation(value.d_k))
        if isinstance(value, Num):
            return self.inline(self.value(value.value)[0])
        if isinstance(value, (int, str)):
            return self.escape_text(str(value))
        raise RenderError(f"cannot put a {type(value).__name__} into a sentence")

    def name(self, name: Name) -> str:
        """Q_{\\mathrm{love}}, W_Q^{(2)}, z_{\\mathrm{concat}}, x_{\\text{私は}} ..."""
        base = NOTATION.get(name.base)
        if base is None:
            raise RenderError(f"no notation for {name.base!r}")
        if name.token is not None:
            sub = self.subscript_word(name.token)
        else:
            label = LABELS.get(name.label or "")
            sub = self.subscript_word(label, user_text=False) if label else ""
        sup = f"^{{({name.head})}}" if name.head is not None else ""
        return f"{{{base}}}{sup}_{{{sub}}}" if sub else f"{base}{sup}"

    def num(self, number: Number, factor: bool = False) -> str:
        """A formatted number; negative numbers and sums are parenthesised as factors of a product."""
        return f"({number.text})" if factor and number.needs_parentheses else number.text

    def value(self, value: Expr, decimals: int = 0) -> tuple[str, bool]:
        """(text, exact) of one value; in exact mode a rounded value is preceded by its exact form."""
        number = format_number(value, self.digits, decimals)
        if self.exact and not number.exact:  # "= exact ≈ decimal": the first relation is then "="
            exact = exact_latex(value, decimals=False)
            if visible_width(exact) <= self.width - EXACT_MARGIN:
                return rf"{exact} \approx {number.text}", True
        return number.text, number.exact

    def denominator(self, d_k: int, by_sqrt_d_k: bool, scale: Expr) -> str:
        """What the scores are divided by, as written: √2, 2 (for √4) or the given number."""
        if not by_sqrt_d_k:
            return self.value(scale)[0]
        return str(int(scale)) if scale.is_Integer else rf"\sqrt{{{d_k}}}"

    def numbers(self, shown: Shown) -> tuple[Number, ...]:
        """Entries as shown: inputs as typed; in exact mode, rationals that would be rounded as fractions."""
        return tuple(format_numbers(shown.entries, self.digits, shown.decimals, uniform=shown.uniform,
                              fractions=self.exact, written=shown.written, whole=shown.whole))

    def relation(self, exact: bool) -> str:
        return "=" if exact else r"\approx"

    def vector_pieces(self, numbers: list[Number]) -> list[str]:
        """[a, b, c] as pieces that wrap after a comma."""
        texts = [n.text for n in numbers]
        if len(texts) == 1:
            return [f"[{texts[0]}]"]
        return [f"[{texts[0]},\\ ", *[f"{t},\\ " for t in texts[1:-1]], f"{texts[-1]}]"]

    def vector(self, numbers: list[Number]) -> str:
        return r",\ ".join(n.text for n in numbers).join("[]")

    def bmatrix(self, shown: Shown, entry=None) -> str:
        """A bmatrix of the entries as shown (or as `entry` writes each value)."""
        return self._bmatrix(self._entry_texts(shown, entry), shown.values.cols, range(shown.values.cols))

    def _entry_texts(self, shown: Shown, entry=None) -> list[str]:
        return [entry(v) for v in shown.entries] if entry else [n.text for n in self.numbers(shown)]

    @staticmethod
    def _bmatrix(texts: list[str], cols: int, columns: range, rows: range | None = None) -> str:
        rows = range(len(texts) // cols) if rows is None else rows
        lines = [" & ".join(texts[r * cols + c] for c in columns) for r in rows]
        return "\\begin{bmatrix}\n" + " \\\\\n".join(lines) + "\n\\end{bmatrix}"

    def matrix_blocks(self, shown: Shown, room: int, entry=None) -> list[str]:
        """The matrix as one bmatrix if it fits `room` and the page, else split into labelled blocks: of whole
        columns that each fit `room` (a 16 × 16 score matrix), and of at most `matrix_rows` rows (64 tokens)."""
        texts, cols, rows = self._entry_texts(shown, entry), shown.values.cols, shown.values.rows
        widths = [self.column_width([texts[r * cols + c] for r in range(rows)]) - 4 for c in range(cols)]
        bands = self.row_bands(rows)
        if len(bands) == 1 and len(self.column_groups(widths, room)) == 1:
            return [self._bmatrix(texts, cols, range(cols))]
        # the most digits a label has: of the last columns, and of the last rows if they are split
        widest = self.block_label(bands[-1] if len(bands) > 1 else None, range(cols - 1, cols))
        label_width = visible_width(widest) + 1.9  # \quad, then a letter of text about as wide as a character
        groups = [range(g[0], g[-1] + 1) for g in self.balanced_groups(widths, room - label_width)]
        blocks = []
        for columns in groups:
            for band in bands:
                label = self.block_label(band if len(bands) > 1 else None, columns if len(groups) > 1 else None)
                blocks.append(self._bmatrix(texts, cols, columns, band) + rf" \quad \text{{{label}}}")
        return blocks

    @staticmethod
    def column_width(entries: list[str]) -> float:
        """The room a matrix column takes, in characters of the line's width (80 in 470 pt, 5.9 pt each): its
        widest entry, a plain number measured by its glyphs (digit 5.5 pt, minus 8.5 pt, point 3 pt), anything else
        by visible_width with half a character more for a leading minus; and the gap to the next column
        (2 \\arraycolsep: 10 pt, 10.95 pt in jsarticle). The matrix's brackets (9.5 pt) take about one gap."""
        return max(map(_entry_width, entries), default=0) + 1.86

    def row_bands(self, rows: int) -> list[range]:
        """The matrix's rows in as few bands of nearly equal size as keep each within `matrix_rows`."""
        count = 1 if self.matrix_rows is None else max(1, -(-rows // self.matrix_rows))
        bounds = [b * rows // count for b in range(count + 1)]
        return [range(bounds[b], bounds[b + 1]) for b in range(count)]

    def block_label(self, rows: range | None, columns: range | None) -> str:
        """'(columns 1–8)', '(rows 1–32)' or '(rows 1–32, columns 1–8)' beside a block of a split matrix."""
        params: dict[str, int] = {}
        if columns is not None:
            params.update(first=columns[0] + 1, last=columns[-1] + 1)
        if rows is not None:
            params.update(first_row=rows[0] + 1, last_row=rows[-1] + 1)
        key = "matrix.columns" if rows is None else "matrix.rows" if columns is None else "matrix.block"
        return self.text(key, params)

    def align(self, lines: Iterable[str]) -> str:
        """A derivation's lines, aligned at their `&`: one unbreakable display when it is short (the setting
        unbroken_rows, UNBROKEN_ROWS unless set)."""
        lines = list(lines)
        body = " \\\\\n".join(lines)
        if display_rows(lines) <= self.settings["unbroken_rows"]:
            return "\\[\\begin{aligned}\n" + body + "\n\\end{aligned}\\]"
        return "\\begin{align*}\n" + body + "\n\\end{align*}"

    def continued(self, lead: str, pieces: list[str], first_room: int) -> list[str]:
        """Lines of an align*: `lead` then pieces wrapped, continuation lines indented (and never wider than the
        first line's room, which already leaves out the aligned left column)."""
        wrapped = wrap(pieces, min(self.width, first_room) - 6, first_room)
        # A line's leading minus is a sign, not a subtraction: after the cell's {} and \qquad, TeX would space it
        # as a binary minus; {-} is set without spaces.
        return [lead + wrapped[0], *[r"&\qquad " + re.sub(r"^-", "{-}", line) for line in wrapped[1:]]]

    def scale_equation(self, d_k: int) -> str:
        root = int(d_k**0.5 + 0.5)
        if root * root == d_k:
            return rf"\sqrt{{d_k}} = \sqrt{{{d_k}}} = {root}"
        return rf"\sqrt{{d_k}} = \sqrt{{{d_k}}}"

    def small_enough(self, shown: Shown) -> bool:
        """Whether a matrix fits inline in an equation line."""
        return shown.values.rows <= 4 and shown.values.cols <= 4

    # ------------------------------------------------------------ steps

    def _print_Heading(self, step: Heading) -> str:
        if self.settings["compact_headings"]:  # inside an exam's solution: bold run-in lines, no sections
            return rf"\par\medskip\noindent\textbf{{{self.text(step.key, step.params)}}}\par"
        command = {1: "section", 2: "subsection"}.get(step.level, "subsubsection")
        return rf"\{command}*{{{self.text(step.key, step.params)}}}"

    def _print_Paragraph(self, step: Paragraph) -> str:
        sentence = self.text(step.key, step.params)
        return rf"\note{{{sentence}}}" if step.note else sentence

    def _print_TokenTable(self, step: TokenTable) -> str:
        header = [self.text(h) if isinstance(h, str) else self.inline(self.name(h)) for h in step.header]
        # One count of decimals per column, as the article's tables have.
        token_width = max(visible_width(escape(t)) for t in [*step.tokens, self.text(step.header[0])])
        room = self.width - token_width - 4
        vectors = []  # the LaTeX of each cell: what the page width is measured in, whatever the output format
        cells = []
        for column in step.columns:
            shared = self.numbers(column)
            width = column.values.cols
            rows = [shared[i * width:(i + 1) * width] for i in range(len(step.tokens))]
            vectors.append([self.vector(row) for row in rows])
            if max(visible_width(vector) for vector in vectors[-1]) + 2 <= room:
                cells.append([self.inline(vector) for vector in vectors[-1]])
            else:  # a vector wider than the page (16 entries and more): on several lines within its cell
                lines = [wrap(self.vector_pieces(row), room - 2) for row in rows]
                cells.append([self.cell_lines([self.inline(line) for line in cell]) for cell in lines])
                vectors[-1] = [max(cell, key=visible_width) for cell in lines]
        tokens = [self.token(token) for token in step.tokens]
        widths = [max(visible_width(vector) + 2 for vector in column) for column in vectors]
        groups = self.column_groups(widths, self.width - token_width)
        return "\n".join(self.table([header[0], *[header[1 + c] for c in group]], tokens, [cells[c] for c in group])
                         for group in groups)

    def cell_lines(self, lines: list[str]) -> str:
        """Several lines inside one table cell."""
        return r"\begin{tabular}[t]{@{}l@{}}" + r" \\ ".join(lines) + r"\end{tabular}"

    def column_groups(self, widths: list[int], room: int) -> list[list[int]]:
        """Columns packed into as few tables as fit the page side by side (a too wide table is split)."""
        groups: list[list[int]] = [[]]
        used = 0
        for c, width in enumerate(widths):
            if groups[-1] and used + width + 4 > room:
                groups.append([])
                used = 0
            groups[-1].append(c)
            used += width + 4
        return groups

    def balanced_groups(self, widths: list[int], room: int) -> list[list[int]]:
        """As few groups of consecutive columns as fit `room`, of nearly equal sizes (16 columns: 8 + 8, not
        13 + 3)."""
        for count in range(len(self.column_groups(widths, room)), len(widths) + 1):
            size, extra = divmod(len(widths), count)
            bounds = [c * size + min(c, extra) for c in range(count + 1)]
            groups = [list(range(bounds[c], bounds[c + 1])) for c in range(count)]
            if all(len(self.column_groups([widths[c] for c in group], room)) == 1 for group in groups):
                return groups
        return [[c] for c in range(len(widths))]

    def table(self, header: list[str], tokens: list[str], columns: list[list[str]]) -> str:
        """One row per token under the header; a table taller than TABLE_LINES may break across pages."""
        rows = [" & ".join([token, *[column[i] for column in columns]]) + r" \\" for i, token in enumerate(tokens)]
        head = " & ".join(header) + r" \\"
        wrapped = [any("\\\\" in cell for cell in column) for column in columns]  # vectors on several lines
        spec = "l" + "".join("l" if left else "c" for left in wrapped)
        height = sum(1 + max((column[i].count("\\\\") for column in columns), default=0) for i in range(len(tokens)))
        if height <= TABLE_LINES:  # lines of text
            return "\n".join([r"\begin{center}", rf"\begin{{tabular}}{{{spec}}}", r"\toprule", head, r"\midrule", *rows,
                              r"\bottomrule", r"\end{tabular}", r"\end{center}"])
        return "\n".join([rf"\begin{{longtable}}{{{spec}}}", r"\toprule", head, r"\midrule", *rows, r"\bottomrule",
                          r"\end{longtable}"])

    def _print_DefinitionTable(self, step: DefinitionTable) -> str:
        rows = []
        for letter, word in (("Q", "query"), ("K", "key"), ("V", "value")):
            source = step.query_source if letter == "Q" else step.key_source
            formula = self.inline(f"{letter} = {self.name(source)} \\cdot W_{letter}")
            rows.append(f"{self.text('table.' + word)} & {formula} & {self.text('meaning.' + word)} \\\\")
        header = " & ".join(self.text(f"table.{k}") for k in ("component", "formula", "meaning"))
        return "\n".join([
            r"\begin{center}", r"\begin{tabular}{llp{0.5\textwidth}}", r"\toprule", header + r" \\",
            r"\midrule", *rows, r"\bottomrule", r"\end{tabular}", r"\end{center}",
        ])

    def _print_MatrixEquation(self, step: MatrixEquation) -> str:
        blocks = self.matrix_blocks(step.value, self.width - 8)
        if len(blocks) == 1:
            return self.display(f"{self.name(step.name)} = {blocks[0]}")
        return self.align([f"{self.name(step.name)} &= {blocks[0]}", *(f"&\\phantom{{=}} {b}" for b in blocks[1:])])

    def _print_ExactMatrix(self, step: ExactMatrix) -> str:
        exact = self.matrix_blocks(step.value, self.width - 8, lambda v: exact_latex(v, decimals=False))
        rounded = self.matrix_blocks(step.value, self.width - 8)
        relation = self.relation(all(n.exact for n in self.numbers(step.value)))
        if len(exact) == 1 and visible_width(exact[0] + rounded[0]) <= self.width - 8:
            return self.display(f"{self.name(step.name)} = {exact[0]} {relation} {rounded[0]}")
        lines = [f"{self.name(step.name)} &= {exact[0]}", *(f"&\\phantom{{=}} {b}" for b in exact[1:])]
        lines += [f"&{relation} {rounded[0]}", *(f"&\\phantom{{{relation}}} {b}" for b in rounded[1:])]
        return self.align(lines)

    def _print_VectorEquation(self, step: VectorEquation) -> str:
        numbers = self.numbers(step.value)
        lead = f"{self.name(step.name)} &{self.relation(all(n.exact for n in numbers))} " if step.name else "&"
        return self.align(self.continued(lead, self.vector_pieces(numbers), self.width - 12))

    def _print_VectorList(self, step: VectorList) -> str:
        lines = []
        for name, shown in zip(step.names, step.values, strict=True):
            numbers = self.numbers(shown)
            lines += self.continued(f"{self.name(name)} &{self.relation(all(n.exact for n in numbers))} ",
                                    self.vector_pieces(numbers), self.width - 12)
        return self.align(lines)

    def _print_RowTimesMatrix(self, step: RowTimesMatrix) -> str:
        row = self.numbers(step.row)
        matrix = self.numbers(step.matrix)
        result = self.numbers(step.value)
        cols = step.matrix.values.cols
        factors = all(n.exact for n in (*row, *matrix))  # are the factors shown exactly?
        lead = f"{self.name(step.result)} &= {self.name(step.row_name)} \\cdot {self.name(step.matrix_name)}"
        operand = self.bmatrix(step.matrix) if self.small_enough(step.matrix) else self.name(step.matrix_name)
        lines = self.continued(f"{lead} {self.relation(factors)} ", [*self.vector_pieces(row), r"\cdot " + operand],
                               self.width - visible_width(lead) - 8)
        entries: list[list[str]] = []
        for c in range(cols):
            terms = [f"{self.num(row[i], True)} \\cdot {self.num(matrix[i * cols + c], True)}" for i in range(len(row))]
            entry = [terms[0], *[f"+ {t}" for t in terms[1:]]]
            entry[0] = ("[" if c == 0 else "") + entry[0]
            entry[-1] += "]" if c == cols - 1 else r",\quad"
            entries.append(entry)
        pieces = [piece for entry in entries for piece in entry]
        first = f"&{self.relation(factors)} "
        if visible_width(" ".join(pieces)) <= self.width - 4:
            lines.append(first + " ".join(pieces))
        else:  # too wide for one line: one entry per line, each wrapped on its own
            for c, entry in enumerate(entries):
                lines += self.continued(first if c == 0 else r"&\phantom{{}={}[} ", entry, self.width - 8)
        exact = factors and all(n.exact for n in result)
        lines += self.continued(f"&{self.relation(exact)} ", self.vector_pieces(result), self.width - 4)
        return self.align(lines)

    def _print_DotProducts(self, step: DotProducts) -> str:
        q = self.numbers(step.query)
        lines = []
        left = max(visible_width(f"{self.name(step.query_name)} \\cdot {self.name(k)}") for k in step.key_names)
        for key_name, key, score in zip(step.key_names, step.keys, step.scores, strict=True):
            k = self.numbers(key)
            terms = [f"{self.num(a, True)} \\cdot {self.num(b, True)}" for a, b in zip(q, k, strict=True)]
            factors = all(n.exact for n in (*q, *k))
            text, exact = self.value(score)
            pieces = [terms[0], *[f"+ {t}" for t in terms[1:]], f"{self.relation(factors and exact)} {text}"]
            lead = f"{self.name(step.query_name)} \\cdot {self.name(key_name)} &{self.relation(factors)} "
            lines += self.continued(lead, pieces, self.width - left)
        return self.align(lines)

    def _print_Scaling(self, step: Scaling) -> str:
        denominator = self.denominator(step.d_k, step.by_sqrt_d_k, step.scale)
        if step.by_sqrt_d_k:
            lines = [rf"a_{{j}} &= \frac{{s_{{j}}}}{{\sqrt{{d_k}}}}, \qquad {self.scale_equation(step.d_k)}"]
        else:
            lines = [rf"a_{{j}} &= \frac{{s_{{j}}}}{{{denominator}}}"]
        for token, score, scaled in zip(step.tokens, step.scores, step.scaled, strict=True):
            if scaled == S.NegativeInfinity:  # masked: this key is not visible to the query
                lines.append(rf"{self.name(Name('a', token))} &= -\infty \qquad (M = 0)")
                continue
            numerator = format_number(score, self.digits, fraction=self.exact)
            line = (rf"{self.name(Name('a', token))} &{self.relation(numerator.exact)} "
                    rf"\frac{{{numerator.text}}}{{{denominator}}}")
            if not is_symbolic(scaled):
                text, exact = self.value(scaled)
                line += f" {self.relation(exact)} {text}"
            lines.append(line)
        if not any_symbolic(step.scaled):
            numbers = format_numbers(step.scaled, self.digits)
            lines += self.continued(f"&{self.relation(all(n.exact for n in numbers))} ", self.vector_pieces(numbers),
                                    self.width - 4)
        return self.align(lines)

    def _print_SoftmaxStep(self, step: SoftmaxStep) -> str:
        sm = step.softmax
        a = {token: self.name(Name("a", token)) for token in step.tokens}
        lines = [r"w_{j} &= \operatorname{softmax}(a)_{j} = \frac{e^{a_{j}}}{\sum_{k} e^{a_{k}}} = \frac{e^{a_{j}}}{Z}"]
        if any_symbolic(sm.exps):  # symbolic: the formulas are the answer
            lines += self.continued(r"Z &= ", [f"e^{{{a[t]}}}" if i == 0 else f"+ e^{{{a[t]}}}"
                                               for i, t in enumerate(step.tokens)], self.width - 8)
            lines += [rf"{self.name(Name('w', t))} &= \frac{{e^{{{a[t]}}}}}{{Z}}" for t in step.tokens]
            return self.align(lines)
        for token, e, logit in zip(step.tokens, sm.exps, sm.logits, strict=True):
            text, exact = self.value(e)
            masked = r" = e^{-\infty}" if logit == S.NegativeInfinity else ""
            lines.append(rf"e^{{{a[token]}}}{masked} &{self.relation(exact)} {text}")
        exps = format_numbers(sm.exps, self.digits)
        total = format_number(sm.total, self.digits)
        shown_exactly = all(n.exact for n in exps)
        pieces = [exps[0].text, *[f"+ {n.text}" for n in exps[1:]],
                  f"{self.relation(shown_exactly and total.exact)} {total.text}"]
        lines += self.continued(rf"Z = \sum_{{k}} e^{{a_{{k}}}} &{self.relation(shown_exactly)} ", pieces,
                                self.width - 20)
        for token, e, w in zip(step.tokens, exps, sm.weights, strict=True):
            number = format_number(w, self.digits)
            parts = e.exact and total.exact
            lines.append(rf"{self.name(Name('w', token))} &= \frac{{e^{{{a[token]}}}}}{{Z}} "
                         rf"{self.relation(parts)} \frac{{{e.text}}}{{{total.text}}} "
                         rf"{self.relation(parts and number.exact)} {number.text}")
        logits = format_numbers(sm.logits, self.digits)
        weights = format_numbers(sm.weights, self.digits)
        lines += self.continued(r"&\operatorname{softmax}\bigl(", [*self.vector_pieces(logits), r"\bigr)"],
                                self.width - 14)
        lines += self.continued(f"&{self.relation(all(n.exact for n in weights))} ", self.vector_pieces(weights),
                                self.width - 4)
        return self.align(lines)

    def _print_WeightedSum(self, step: WeightedSum) -> str:
        symbolic = any_symbolic(step.weights)
        weights = format_numbers(step.weights, self.digits)
        lines = []
        for j, (w, v) in enumerate(zip(weights, step.values, strict=True)):
            lead = "&" if j == 0 else "&+ "
            factor = self.name(Name("w", step.tokens[j])) if symbolic else w.text
            lines += self.continued(f"{lead}{factor} \\cdot ", self.vector_pieces(self.numbers(v)), self.width - 12)
        if not symbolic:
            result = format_numbers(list(step.output), self.digits, uniform=True)
            values = [n for v in step.values for n in self.numbers(v)]
            exact = all(n.exact for n in (*weights, *values, *result))
            lines += self.continued(f"&{self.relation(exact)} ", self.vector_pieces(result), self.width - 4)
        return self.align(lines)

    def _print_MatrixFormStep(self, step: MatrixFormStep) -> str:
        form = step.form
        transposed = Shown(step.K.values.T, step.K.decimals, step.K.uniform)
        parts = []
        if any_symbolic(form.scores):  # symbolic: entries are in the per-token steps; show the formulas
            lines = [r"S &= Q K^{\top}, \qquad S_{ij} = q_i \cdot k_j"]
        else:
            factors = all(n.exact for n in (*self.numbers(step.Q), *self.numbers(step.K)))
            product = self.bmatrix(step.Q) + self.bmatrix(transposed)
            lines = [r"S &= Q K^{\top}"
                     + (f" {self.relation(factors)} {product}" if visible_width(product) <= self.width - 12 else ""),
                     *self.matrix_relation(Shown(form.scores, uniform=False), factors)]
        parts.append(self.align(lines))
        if step.scaling != "none":
            denominator = (r"\sqrt{d_k}" if step.scaling == "sqrt_d_k" else self.value(step.scale)[0])
            lines = [rf"S' &= \frac{{S}}{{{denominator}}}"]
            if not any_symbolic(form.scaled):
                lines += self.matrix_relation(Shown(form.scaled))
            parts.append(self.align(lines))
        source = "S'" if step.scaling != "none" else "S"
        lines = [rf"A &= \operatorname{{softmax}}_{{{self.subscript_word('row', user_text=False)}}}({source}), \qquad "
                 rf"A_{{ij}} = \frac{{e^{{{source}_{{ij}}}}}}{{\sum_k e^{{{source}_{{ik}}}}}}"]
        if not any_symbolic(form.weights):
            lines += self.matrix_relation(Shown(form.weights))
        parts.append(self.align(lines))
        lead = r"\operatorname{Attention}(Q, K, V)"
        lines = [rf"{lead} &= A V"]
        if not any_symbolic(form.output):
            A, V = Shown(form.weights), step.V
            factors = all(n.exact for n in (*self.numbers(A), *self.numbers(V)))
            product = self.bmatrix(A) + self.bmatrix(V)
            if visible_width(product) <= self.width - 24:  # A and V side by side only when they fit
                lines[0] += f" {self.relation(factors)} " + product
            lines += self.matrix_relation(Shown(form.output), factors, lead)
        parts.append(self.align(lines))
        return "\n".join(parts)

    def matrix_relation(self, shown: Shown, factors: bool = True, lead: str = "") -> list[str]:
        """'&= [matrix]' or '&≈ [matrix]' (by whether every entry, and what it came from, is shown exactly), in
        column blocks on lines of their own when the matrix is wider than what `lead` (left of &) leaves."""
        exact = factors and all(n.exact for n in self.numbers(shown))
        relation = self.relation(exact)
        blocks = self.matrix_blocks(shown, self.width - 4 - visible_width(lead))
        return [f"&{relation} {blocks[0]}", *(rf"&\phantom{{{relation}}} {block}" for block in blocks[1:])]

    def _print_FlowFigure(self, step: FlowFigure) -> str:
        """Figure 1 by \\flowfigure of preamble-common.tex: the contents of its nine boxes."""
        t = self.text
        boxes = [rf"$X$\\{t('figure.embeddings')}", "$Q = X W_Q$", "$K = X W_K$", "$V = X W_V$",
                 rf"$Q K^{{\top}}$\\{t('figure.scores')}", rf"$\div \sqrt{{d_k}}$\\{t('figure.scaling')}",
                 rf"softmax\\{t('figure.weights')}", rf"$\sum_j w_j v_j$\\{t('figure.sum')}",
                 rf"$z$\\{t('figure.output')}"]
        return "\n".join([r"\begin{figure}[ht]", r"\centering", r"\flowfigure" + "\n  ".join(f"{{{b}}}" for b in boxes),
                          rf"\figurecaption{{{t('figure.caption')}}}", r"\end{figure}"])

    def _print_Heatmap(self, step: Heatmap) -> str:
        """A table of shaded cells: the darker, the larger the weight; each cell also shows its value. A table
        wider than the page (16 tokens and more) is scaled down to the page width."""
        cols = len(step.keys)
        header = " & ".join(rf"\tok{{{escape(k)}}}" for k in step.keys)
        rows = []
        weights = step.weights.tolist()
        shade = iter(shades([w for row in weights for w in row], 60))  # percent of the colour: 60 for the largest
        for query, row in zip(step.queries, weights, strict=True):
            cells = [rf"\cellcolor{{blue!{next(shade)}}}{format_number(w, self.digits).text}" for w in row]
            rows.append(rf"\tok{{{escape(query)}}} & " + " & ".join(cells) + r" \\")
        table = [r"\begin{tabular}{r|" + "c" * cols + "}", rf"\multicolumn{{1}}{{c}}{{}} & {header} \\", r"\hline",
                 *rows, r"\end{tabular}"]
        names = max(visible_width(escape(name)) for name in (*step.keys, *step.queries))
        if names + cols * (max(names, self.digits + 2) + 2) > self.width:
            table = [r"\resizebox{\linewidth}{!}{%", *table, "}"]
        return "\n".join([r"\begin{center}", r"\setlength{\tabcolsep}{4pt}", *table, r"\end{center}"])

    def _print_HeadWeights(self, step: HeadWeights) -> str:
        lines = [rf"&\bigl(W_Q^{{({h})}},\ W_K^{{({h})}},\ W_V^{{({h})}}\bigr)" for h in range(1, step.count + 1)]
        return self.align(lines)

    def _print_Concat(self, step: Concat) -> str:
        exact = all(n.exact for part in step.parts for n in self.numbers(part))
        lead = f"{self.name(step.name)} &{self.relation(exact)} "
        lines = []
        for p, part in enumerate(step.parts):
            prefix = lead if p == 0 else r"&\quad \Vert\ "
            lines += self.continued(prefix, self.vector_pieces(self.numbers(part)), self.width - 14)
        value = self.numbers(step.value)
        lines += self.continued(f"&{self.relation(exact and all(n.exact for n in value))} ",
                                self.vector_pieces(value), self.width - 4)
        return self.align(lines)


def render_latex(derivation: Derivation, **settings: Any) -> str:
    """The complete .tex source of a derivation."""
    settings.setdefault("lang", derivation.lang)
    settings.setdefault("digits", derivation.digits)
    return LatexRenderer(**settings).document(derivation)
