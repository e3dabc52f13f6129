"""Markdown with $…$ / $$…$$ math (KaTeX/MathJax: GitHub, Jupyter, MkDocs, tech-blog platforms), tables as tables.

The math is DerivationRenderer's, as LaTeX renders it; only the text around it, tables, headings and figures are
Markdown's own.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..decimals import to_decimal
from ..model import Derivation, FlowFigure, Heading, Heatmap, Paragraph
from .escape import escape_markdown, markdown_code, mathjax_text
from .layout import heat_cells
from .printers import DerivationRenderer
from .web import PAGELESS_SETTINGS, PagelessMixin

# A heatmap's shades (Markdown has no colours), from the smallest share of the largest weight to all of it: the
# darker the shade, the larger the weight, as the sentence before the heatmap says.
SHADES = "░▒▓█"


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
        rows = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for i, token in enumerate(tokens):
            rows.append("| " + " | ".join([token, *[column[i] for column in columns]]) + " |")
        return "\n".join(rows)

    def body(self, derivation: Derivation) -> str:
        return "\n\n".join(self.render(step) for step in derivation.steps)

    def document(self, derivation: Derivation) -> str:
        title, subtitle = self.titles(derivation)
        return f"# {title}\n\n*{subtitle}*\n\n{self.body(derivation)}\n"

    # ------------------------------------------------------------ steps with their own Markdown form

    def _print_Heading(self, step: Heading) -> str:
        return "#" * (step.level + 1) + " " + self.text(step.key, step.params)

    def _print_Paragraph(self, step: Paragraph) -> str:
        sentence = self.text(step.key, step.params)
        return f"> {sentence}" if step.note else sentence

    def _print_FlowFigure(self, step: FlowFigure) -> str:
        return self.display(self.flow_chain()) + "\n\n" + f"*{self.text('figure.caption')}*"

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
