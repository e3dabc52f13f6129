"""Markdown with $…$ / $$…$$ math (KaTeX/MathJax: GitHub, Jupyter, MkDocs, tech-blog platforms), tables as tables.

The math is DerivationRenderer's, as LaTeX renders it; only the text around it, tables, headings and figures are
Markdown's own.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from ..document.steps import Derivation, FlowFigure, Heading, Heatmap, Paragraph, References, TextTable
from ..infra import i18n
from ..numbers.decimals import to_decimal
from ..spec.model import Math, Written
from ..typeset.figures.boxes import Line
from ..typeset.figures.flow import caption, columns, layout
from ..typeset.layout import heat_cells
from .escape import escape_markdown, markdown_code, markdown_line_start, markdown_table_cell, mathjax_text
from .printers import DerivationRenderer
from .web import PAGELESS_SETTINGS, PagelessMixin

# Languages whose captions are not set in italics (Japanese has none; renderers would slant it).
UPRIGHT = {"ja"}
# A heatmap's shades (Markdown has no colours), from the smallest share of the largest weight to all of it: the
# darker the shade, the larger the weight, as the sentence before the heatmap says.
SHADES = "░▒▓█"
# User math in Markdown: the characters a Markdown renderer would read, as the commands KaTeX and MathJax know.
# A ] before ( or [ would close a link's or an image's text ($[click](http://…)$, $![a](…)$): an empty group
# between them keeps the math as it is set and makes no link.
_MARKDOWN_MATH_COMMANDS = {"<": r"\lt ", ">": r"\gt ", r"\|": r"\Vert ", "|": r"\vert ", "](": "]{}(", "][": "]{}["}
_MARKDOWN_MATH = re.compile(r"[<>|]|\\\||\][(\[]")


class MarkdownRenderer(PagelessMixin, DerivationRenderer):
    """The derivation's math, in Markdown."""

    format_name = "Markdown"
    default_settings: ClassVar[dict[str, Any]] = {**DerivationRenderer.default_settings, **PAGELESS_SETTINGS}

    def escape_text(self, text: str) -> str:
        return escape_markdown(text)

    def math_text(self, text: str) -> str:
        return mathjax_text(text)

    def token(self, name: str) -> str:
        return markdown_code(name)

    def inline(self, math: str) -> str:
        return f"${math}$"

    def display(self, math: str) -> str:
        return f"$$\n{math}\n$$"

    def align(self, lines) -> str:
        return "$$\n\\begin{aligned}\n" + " \\\\\n".join(lines) + "\n\\end{aligned}\n$$"

    def table(self, header: list[str], tokens: list[str], columns: list[list[str]]) -> str:
        rows = ["| " + " | ".join(map(markdown_table_cell, header)) + " |", "|" + "---|" * len(header)]
        for i, token in enumerate(tokens):
            rows.append("| " + " | ".join(map(markdown_table_cell, [token, *[column[i] for column in columns]])) + " |")
        return "\n".join(rows)

    def body(self, derivation: Derivation) -> str:
        return "\n\n".join(self.render(step) for step in derivation.steps)

    def document(self, derivation: Derivation) -> str:
        title, subtitle = self.titles(derivation)
        return f"# {title}\n\n*{subtitle}*\n\n{self.body(derivation)}\n"

    # ------------------------------------------------------------ steps with their own Markdown form

    def heading(self, level: int, text: str) -> str:
        return "#" * (level + 1) + " " + text

    def paragraph(self, text: str, note: bool = False) -> str:
        return f"> {text}" if note else text

    def written(self, text: Written) -> str:
        """As every format writes it, and never read as a list item or a rule where it starts a line."""
        return markdown_line_start(super().written(text))

    def user_math(self, math: Math) -> str:
        """As LaTeX writes it, without the characters Markdown would read outside the math: < and > (an HTML tag
        to a renderer that passes math through unparsed), | (the end of a table cell, even inside $…$) and a ] that
        would close a link's text."""
        return _MARKDOWN_MATH.sub(lambda m: _MARKDOWN_MATH_COMMANDS[m.group(0)], super().user_math(math))

    def _print_Heading(self, step: Heading) -> str:
        return self.heading(step.level, self.text(step.key, step.params))

    def _print_Paragraph(self, step: Paragraph) -> str:
        return self.paragraph(self.text(step.key, step.params), step.note)

    def _print_TextTable(self, step: TextTable) -> str:
        columns = [[self.written(row[c]) for row in step.rows] for c in range(len(step.header))]
        return self.table([self.written(cell) for cell in step.header], columns[0], columns[1:])

    def _print_References(self, step: References) -> str:
        """A numbered list."""
        return "\n".join(f"{i}. {self.written(item)}" for i, item in enumerate(step.items, 1))

    def _print_FlowFigure(self, step: FlowFigure) -> str:
        """The figure as a display every Markdown math renderer sets (GitHub, VS Code, Jupyter: no SVG or HTML,
        which GitHub strips): the figure's chain of math, each of its lines a line of the display (without one, its
        columns joined by arrows), then the caption."""
        figure = layout(self, step)

        def piece(line: Line) -> str:  # math as is; a language string escaped for math text, not for Markdown
            return line.content if line.kind == "math" else self.math_text(
                i18n.text(self.lang, line.content).format(**line.params))

        lines = figure.chain or (columns(figure),)
        chain = self.align([f"& {''.join(piece(p) for p in line)}" for line in lines])
        text = caption(self, step)
        return chain + "\n\n" + (text if self.lang in UPRIGHT else f"*{text}*")

    def _print_Heatmap(self, step: Heatmap) -> str:
        """The weights as a table, each beside a shade of its share of the largest weight, the largest of each row
        in bold, every weight cell of one width in the source; under it the scale of the shades from 0 to the
        largest weight."""
        cells = heat_cells(step, self.digits, len(SHADES))
        cols = len(step.keys)
        rows = []
        for r in range(len(step.queries)):
            row = range(r * cols, (r + 1) * cols)
            # compared as decimals, as the shades are: SymPy cannot always order two exact softmax weights
            sizes = [to_decimal(step.weights[r, c], 20, known=step.known) for c in range(cols)]
            rows.append([f"**{cells.texts[i]}**" if size == max(sizes) else cells.texts[i]
                         for i, size in zip(row, sizes, strict=True)])
            rows[-1] = [f"{text} {SHADES[cells.shades[i] - 1] if cells.shades[i] else ' '}"
                        for i, text in zip(row, rows[-1], strict=True)]
        width = max(len(text) for row in rows for text in row)
        columns = [[row[c].ljust(width) for row in rows] for c in range(cols)]
        header = ["", *(self.token(k) for k in step.keys)]
        table = self.table(header, [self.token(q) for q in step.queries], columns)
        return f"{table}\n\n0 {SHADES} {cells.largest}"


def render_markdown(derivation: Derivation, **settings: Any) -> str:
    """The derivation as one Markdown document."""
    settings.setdefault("lang", derivation.lang)
    settings.setdefault("digits", derivation.digits)
    return MarkdownRenderer(**settings).document(derivation)
