"""The math every format writes, as LaTeX: names, numbers, vectors, matrices and aligned derivation lines.

Markdown sets it with MathJax or KaTeX and HTML converts it to MathML; only how a piece of math is put on the page
(inline, display, align) and how user text inside \\text{} is escaped differ by format.
"""

from __future__ import annotations

import re
from functools import lru_cache
from string import Template
from typing import Any, ClassVar

from sympy import Expr, Integer

from ..document.steps import Display, Eq, Formula, Name, Num, Paragraph, Shown, SqrtDk, Step
from ..engine import Numbers
from ..errors import RenderError
from ..numbers.display import Number, format_number, format_numbers
from ..numbers.exact_latex import exact_latex
from ..spec.model import Scale, integer_sqrt
from .base import Renderer
from .layout import (EXACT_MARGIN, LINE_CHARACTERS, balanced_groups, column_groups, column_width, row_bands,
                     row_fits, visible_width, wrap)
from .lines import GUARD_CAP, Line, Operand

# LaTeX of each base symbol of the model's Names (a rule table, not code): the symbols the kinds share; a kind's
# or a feature's own come from its folder's printers.py (contribute).
# Matrices are capitals, their rows lower case: x_t of X; x̃_t of X̃ = X + P (with positional encodings); y_t of
# the decoder's Y and h_j of the encoder's outputs H (cross-attention); q_t, k_j, v_j of Q, K, V.
NOTATION = {
    "Q": "Q",
    "K": "K",
    "V": "V",
    "X": "X",
    "x": "x",
    "z": "z",
    "a": "a",
    "w": "w",
    "q": "q",
    "k": "k",
    "v": "v",
    "Xp": r"\tilde{X}",
    "xp": r"\tilde{x}",
    "Y": "Y",
    "y": "y",
    "h": "h",
    "W_Q": "W_Q",
    "W_K": "W_K",
    "W_V": "W_V",
    "W_O": "W_O",
    "d_k": "d_k",
    "memory": "H",
    "s": "s",
    "e^x": "e^{x}",
    "M": "M",
    "P": "P",
    "S": "S",
    "m": "m",
    "Z": "Z",
    "b": "b",
}
# Formulas inside sentences (document.phrases.Formula), as LaTeX; $name is filled with the Formula's names.
FORMULAS = {
    "t": "t",
    "j": "j",
    "w_j": "w_{j}",
    "v_j": "v_{j}",
    "pos": r"\mathit{pos}",
    "pe_dims": r"2i,\ 2i+1",
    "pe_even": r"\mathit{PE}(\mathit{pos},\, 2i) = \sin(\mathit{pos} / 10000^{2i/d})",
    "pe_odd": r"\mathit{PE}(\mathit{pos},\, 2i+1) = \cos(\mathit{pos} / 10000^{2i/d})",
    "exp_minus_inf": r"e^{-\infty} = 0",
    "x_plus_p": "$Xp = $X + $P",
    "score": r"$s = $q \cdot $k",
    "weighted_sum": r"$z = \sum_{j} w_{j}\, v_{j}",
    "term_norm": r"\lVert w_{j} v_{j} \rVert",
    "m": "m",
    "n": "n",
    "i": "i",
    "d": "d",
}


def contribute(notation: dict[str, str] | None = None, formulas: dict[str, str] | None = None) -> None:
    """Add a kind's or a feature's symbols to NOTATION and FORMULAS (its printers.py does, when imported); ValueError
    for a key that is there already with another LaTeX, which would change another kind's pages."""
    for table, new in ((NOTATION, notation or {}), (FORMULAS, formulas or {})):
        for key, latex in new.items():
            if table.get(key, latex) != latex:
                raise ValueError(f"the symbol {key!r} is {table[key]!r} already, not {latex!r}")
        table.update(new)


# Fixed (non-token) subscripts: the word written under the symbol.
LABELS = {"concat": "concat", "final": "final", "cache": "cache"}
# Index subscripts (k_j: the key of any token j), set in math italic.
INDICES = {"j", "t"}
# A subscript word that \mathrm sets as well as \text: ASCII letters and digits only (no spaces, no accents).
_PLAIN_WORD = re.compile(r"[A-Za-z0-9]+")
# A letter of the wide scripts (Japanese, Chinese, Korean), which a format may set larger in a subscript.
WIDE_LETTERS = range(0x2E80, 0x30000)  # (a test of ord, not a regex: compiling that class costs ~8 ms at start-up)


@lru_cache(maxsize=1 << 12)  # token names, in every step
def has_wide_letter(word: str) -> bool:
    return any(ord(c) in WIDE_LETTERS for c in word)


@lru_cache(maxsize=1 << 12)  # steps show the same vectors again, and an exam's paper and Moodle the same steps
def shown_numbers(shown: Shown, digits: int, exact_up_to: int, fractions: bool) -> tuple[Number, ...]:
    """A Shown's entries formatted (MathRenderer.numbers), the same for every format."""
    return tuple(format_numbers(shown.entries, digits, shown.decimals, uniform=shown.uniform, fractions=fractions,
                                written=shown.written, whole=shown.whole, known=shown.known,
                                exact_up_to=exact_up_to))



class MathRenderer(Renderer):
    """The pieces of math shared by every format. Settings: width (characters to a line), exact (exact forms
    before rounded values), mathrm_words (plain subscript words as \\mathrm, else \\text), cjk_subscript (the command
    that sets a subscript word with Japanese letters, else \\text) and matrix_rows (the most rows of one matrix block;
    None: no pages)."""

    default_settings: ClassVar[dict[str, Any]] = {**Renderer.default_settings, "width": LINE_CHARACTERS,
                                                  "exact": False, "mathrm_words": False, "matrix_rows": None,
                                                  "cjk_subscript": None}

    def __init__(self, **settings: Any) -> None:
        super().__init__(**settings)
        self.stage_digits: int | None = None  # the decimals of the step being rendered, when its stage sets them
        self.checked: list[Line] = []  # every checkable line written, in order (render.checked reads them)
        self.notes_said: set[str] = set()  # notes said once per document

    @property
    def digits(self) -> int:
        """The decimals rounded values get: the current step's stage's, else the document's."""
        return self.settings["digits"] if self.stage_digits is None else self.stage_digits

    @property
    def exact_digits(self) -> int:
        """The most decimals an exact value is written with rather than rounded: a stage with fewer decimals
        than the document's still shows an exact 0.8742 exactly."""
        return max(self.digits, self.settings["digits"])

    def render(self, step: Step) -> str:
        self.stage_digits = step.digits
        try:
            return super().render(step)
        finally:
            self.stage_digits = None

    @property
    def width(self) -> int:
        return self.settings["width"]

    @property
    def exact(self) -> bool:
        return self.settings["exact"]

    # ------------------------------------------------------------ what each format defines

    def math_text(self, text: str) -> str:
        """User text inside \\text{} in math."""
        raise NotImplementedError

    def inline(self, math: str) -> str:
        raise NotImplementedError

    def display(self, math: str) -> str:
        raise NotImplementedError

    def align(self, lines: list[str]) -> str:
        """A derivation's lines, aligned at their `&`."""
        raise NotImplementedError

    def table(self, header: list[str], tokens: list[str], columns: list[list[str]]) -> str:
        """One row per token under the header."""
        raise NotImplementedError

    def cell_lines(self, lines: list[str]) -> str:
        """Several lines inside one table cell."""
        raise NotImplementedError

    # ------------------------------------------------------------ sentences

    def param(self, value: Any) -> str:
        if isinstance(value, Name):
            return self.inline(self.name(value))
        if isinstance(value, Eq):  # d_k = 2; a value given as an Expr as shown: "=" when exact, else "≈"
            number = self.sentence_number(Integer(value.value) if isinstance(value.value, int) else value.value)
            return self.inline(self.name(value.name) + (" = " if number.exact else r" \approx ") + number.text)
        if isinstance(value, SqrtDk):
            return self.inline(self.scale_equation(value.d_k))
        if isinstance(value, Num):
            return self.inline(self.sentence_number(value.value).text)
        if isinstance(value, Formula):
            return self.inline(self.formula(value))
        return super().param(value)

    def formula(self, formula: Formula) -> str:
        """A formula of the FORMULAS table as LaTeX, its name slots filled."""
        return Template(FORMULAS[formula.key]).substitute({slot: self.name(n) for slot, n in formula.names})

    def _print_Display(self, step: Display) -> str:
        return self.display(self.formula(step.formula))

    # ------------------------------------------------------------ names and numbers

    def subscript_word(self, word: str, user_text: bool = True) -> str:
        """A token name (user text) or a fixed label as a subscript: \\mathrm{love} for plain ASCII (mathrm_words),
        else \\text{...}."""
        if self.settings["mathrm_words"] and _PLAIN_WORD.fullmatch(word):
            return rf"\mathrm{{{word}}}"
        command = self.settings["cjk_subscript"] if has_wide_letter(word) else None
        return rf"\{command or 'text'}{{{self.math_text(word) if user_text else word}}}"

    def name(self, name: Name) -> str:
        """Q_{\\mathrm{love}}, W_Q^{(2)}, z_{\\mathrm{concat}}, x_{\\text{私は}} ..."""
        base = NOTATION.get(name.base)
        if base is None:
            raise RenderError(f"no notation for {name.base!r}")
        if name.token is not None:  # with a label too: z_{love,concat} (grouped-query attention, one per token)
            sub = self.subscript_word(name.token)
            if name.label in LABELS:  # z_{concat, love}: one token's row of a multi-head section's matrix
                sub = f"{self.subscript_word(LABELS[name.label], user_text=False)},{sub}"
        elif name.label in INDICES:
            sub = name.label
        else:
            label = LABELS.get(name.label or "")
            sub = self.subscript_word(label, user_text=False) if label else ""
        sup = f"^{{({name.head})}}" if name.head is not None else ""
        sup = f"^{{[{name.group}]}}" if name.group is not None else sup  # a K/V head of grouped-query attention
        return f"{{{base}}}{sup}_{{{sub}}}" if sub else f"{base}{sup}"

    def positioned(self, positions: tuple[int, ...], header: list[str], tokens: list[str],
                   columns: list[list[str]]) -> str:
        """A token table (self.table), with each token's absolute position in a column after the tokens when
        `positions` are given (a KV cache's tables)."""
        if not positions:
            return self.table(header, tokens, columns)
        at = [self.inline(str(p)) for p in positions]
        return self.table([header[0], self.text("table.position"), *header[1:]], tokens, [at, *columns])

    def num(self, number: Number, factor: bool = False) -> str:
        """A formatted number; negative numbers and sums are parenthesised as factors of a product."""
        return f"({number.text})" if factor and number.needs_parentheses else number.text

    def value(self, value: Expr, decimals: int = 0, known: Numbers | None = None,
              digits: int | None = None) -> tuple[str, bool]:
        """(text, exact) of one value (`known`: the numbers of its result); in exact mode a rounded value is preceded
        by its exact form; `digits`: the decimals it is rounded to, if not the stage's."""
        number = format_number(value, self.digits if digits is None else digits, decimals, known=known,
                               exact_up_to=self.exact_digits)
        if self.exact and not number.exact:  # "= exact ≈ decimal": the first relation is then "="
            exact = exact_latex(value, decimals=False)
            if visible_width(exact) <= self.width - EXACT_MARGIN:
                return rf"{exact} \approx {number.text}", True
        return number.text, number.exact

    def sentence_number(self, value: Expr) -> Number:
        """A number inside a sentence: rounded as the page's lines round it, without an exact form before it."""
        return format_number(value, self.digits, exact_up_to=self.exact_digits)

    def divisor(self, scale: Scale, d_k: int, divisor: Expr) -> str:
        """What the scores are divided by, as written: √2, 2 (for √4) or the given number."""
        if scale.mode != "sqrt_d_k":  # the given c exactly (a fraction when its decimals do not end soon)
            return format_number(divisor, self.digits + GUARD_CAP, fraction=True).text
        return str(int(divisor)) if divisor.is_Integer else rf"\sqrt{{{d_k}}}"

    def numbers(self, shown: Shown) -> tuple[Number, ...]:
        """Entries as shown: inputs as typed; in exact mode, rationals that would be rounded as fractions."""
        return shown_numbers(shown, self.digits, self.exact_digits, self.exact)

    def result_operand(self, value: Expr, known: Numbers | None = None) -> Operand:
        """A line's result as shown (in exact mode: its exact form, then the decimal)."""
        text, exact = self.value(value, known=known)
        return Operand(Number(text, exact), value)

    def operation(self, line: Line) -> list[str]:
        """A line's operands as pieces that wrap: a · b, + c · d, ... or \\frac{a}{b}."""
        terms = [r" \cdot ".join(self.num(o.number, len(term) > 1) for o in term) for term in line.terms]
        if line.divisor is not None:
            return [rf"\frac{{{' + '.join(terms)}}}{{{line.divisor.text}}}"]
        # a lone negative term after the first (a bias) is subtracted: - 0.1, not + -0.1
        pieces = [terms[0], *[f"- {t[1:]}" if t.startswith("-") else f"+ {t}" for t in terms[1:]]] if terms else []
        # a product of long numbers (30 digits) wider than half a line may break after its dot
        return [part for piece in pieces for part in (
            [f"{p} \\cdot" for p in piece.split(r" \cdot ")[:-1]] + [piece.split(r" \cdot ")[-1]]
            if visible_width(piece) > self.width // 2 else [piece])]

    def checked_lines(self, lines: list[Line]) -> list[Line]:
        """Lines about to be written: recorded for render.checked."""
        self.checked.extend(lines)
        return lines

    def note_once(self, key: str) -> str:
        """A note sentence the first time it is asked for in the document, else nothing."""
        if key in self.notes_said:
            return ""
        self.notes_said.add(key)
        return "\n\n" + self.render(Paragraph(key, note=True))

    def guard_note(self, lines: list[Line]) -> str:
        """The note on guard decimals, once, after the first display whose operands are rounded."""
        if "numbers.guard" in self.notes_said:  # (said: nothing to look for)
            return ""
        return self.note_once("numbers.guard") if any(not o.exact for ln in lines for o in ln.operands) else ""

    def relation(self, exact: bool) -> str:
        return "=" if exact else r"\approx"

    def scale_equation(self, d_k: int) -> str:
        root = integer_sqrt(d_k)
        return rf"\sqrt{{d_k}} = \sqrt{{{d_k}}}" + (f" = {root}" if root is not None else "")

    # ------------------------------------------------------------ vectors and matrices

    def vector_pieces(self, numbers: list[Number]) -> list[str]:
        """[a, b, c] as one piece when it fits a line (never split mid-vector), else pieces wrapping after a comma."""
        texts = [n.text for n in numbers]
        if len(texts) == 1:
            return [f"[{texts[0]}]"]
        pieces = [f"[{texts[0]},\\ ", *[f"{t},\\ " for t in texts[1:-1]], f"{texts[-1]}]"]
        return [" ".join(pieces)] if row_fits(texts, self.width) else pieces

    def vector(self, numbers: list[Number]) -> str:
        return r",\ ".join(n.text for n in numbers).join("[]")

    def bmatrix(self, shown: Shown, entry=None) -> str:
        """A bmatrix of the entries as shown (or as `entry` writes each value)."""
        return self._bmatrix(self._entry_texts(shown, entry), shown.values.cols, range(shown.values.cols))

    def _entry_texts(self, shown: Shown, entry=None) -> list[str]:
        return [entry(v) for v in shown.entries] if entry else [n.text for n in self.numbers(shown)]

    def matrix_frame(self, cols: int) -> tuple[str, str]:
        """What opens and closes a bracketed matrix of `cols` right-aligned columns (the digits of a column line
        up): an array, as MathJax, KaTeX and MathML centre bmatrix's columns."""
        return rf"\left[\begin{{array}}{{{'r' * cols}}}", r"\end{array}\right]"

    def _bmatrix(self, texts: list[str], cols: int, columns: range, rows: range | None = None) -> str:
        rows = range(len(texts) // cols) if rows is None else rows
        lines = [" & ".join(texts[r * cols + c] for c in columns) for r in rows]
        opening, closing = self.matrix_frame(len(columns))
        return opening + "\n" + " \\\\\n".join(lines) + "\n" + closing

    def matrix_blocks(self, shown: Shown, room: int, entry=None) -> list[str]:
        """The matrix as one bmatrix if it fits `room` and the page, else split into labelled blocks: of whole
        columns that each fit `room` (a 16 × 16 score matrix), and of at most `matrix_rows` rows (64 tokens)."""
        texts, cols, rows = self._entry_texts(shown, entry), shown.values.cols, shown.values.rows
        widths = [column_width([texts[r * cols + c] for r in range(rows)]) - 4 for c in range(cols)]
        bands = row_bands(rows, self.settings["matrix_rows"])
        if len(bands) == 1 and len(column_groups(widths, room)) == 1:
            return [self._bmatrix(texts, cols, range(cols))]
        # the most digits a label has: of the last columns, and of the last rows if they are split
        widest = self.block_label(bands[-1] if len(bands) > 1 else None, range(cols - 1, cols))
        label_width = visible_width(widest) + 1.9  # \quad, then a letter of text about as wide as a character
        groups = [range(g[0], g[-1] + 1) for g in balanced_groups(widths, room - label_width)]
        blocks = []
        for columns in groups:
            for band in bands:
                label = self.block_label(band if len(bands) > 1 else None, columns if len(groups) > 1 else None)
                blocks.append(self._bmatrix(texts, cols, columns, band) + rf" \quad \text{{{label}}}")
        return blocks

    def block_label(self, rows: range | None, columns: range | None) -> str:
        """'(columns 1–8)', '(rows 1–32)' or '(rows 1–32, columns 1–8)' beside a block of a split matrix."""
        params: dict[str, int] = {}
        if columns is not None:
            params.update(first=columns[0] + 1, last=columns[-1] + 1)
        if rows is not None:
            params.update(first_row=rows[0] + 1, last_row=rows[-1] + 1)
        key = "matrix.columns" if rows is None else "matrix.rows" if columns is None else "matrix.block"
        return self.text(key, params)

    def matrix_relation(self, shown: Shown, factors: bool = True, lead: str = "") -> list[str]:
        """'&= [matrix]' or '&≈ [matrix]' (by whether every entry, and what it came from, is shown exactly), in
        column blocks on lines of their own when the matrix is wider than what `lead` (left of &) leaves."""
        exact = factors and all(n.exact for n in self.numbers(shown))
        relation = self.relation(exact)
        blocks = self.matrix_blocks(shown, self.width - 4 - visible_width(lead))
        return [f"&{relation} {blocks[0]}", *(rf"&\phantom{{{relation}}} {block}" for block in blocks[1:])]

    def small_enough(self, shown: Shown) -> bool:
        """Whether a matrix fits inline in an equation line."""
        return shown.values.rows <= 4 and shown.values.cols <= 4

    # ------------------------------------------------------------ derivation lines

    def continued(self, lead: str, pieces: list[str], first_room: int, own_line: bool = False) -> list[str]:
        """Lines of an align*: `lead` then pieces wrapped, continuation lines indented (never wider than the first
        line's room, which leaves out the aligned left column); `own_line`: the pieces start on the next line."""
        if own_line:
            return [lead, *self.continued(r"&\qquad ", pieces, self.width - 10)]
        wrapped = wrap(pieces, min(self.width, first_room) - 6, first_room)
        # A line's leading minus is a sign, not a subtraction: after the cell's {} and \qquad, TeX would space it
        # as a binary minus; {-} is set without spaces.
        return [lead + wrapped[0], *[r"&\qquad " + re.sub(r"^-", "{-}", line) for line in wrapped[1:]]]
