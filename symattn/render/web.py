"""What Markdown and HTML share and LaTeX does not: no pages (tall matrices stay whole), math set by MathJax,
KaTeX or MathML (\\text subscripts cost nothing there), and tables as tables."""

from __future__ import annotations

from typing import Any

from ..document.steps import DefinitionTable

# Their settings beside DerivationRenderer's defaults.
PAGELESS_SETTINGS: dict[str, Any] = {"mathrm_words": False, "matrix_rows": None}


class PagelessMixin:
    """Shared steps of MarkdownRenderer and HtmlRenderer, written through their table(), inline() and text()."""

    def cell_lines(self, lines: list[str]) -> str:
        return "<br>".join(lines)

    def _print_DefinitionTable(self, step: DefinitionTable) -> str:
        header = [self.text(f"table.{k}") for k in ("component", "formula", "meaning")]
        cells: list[list[str]] = [[], []]
        words = []
        for letter, word in (("Q", "query"), ("K", "key"), ("V", "value")):
            source = step.query_source if letter == "Q" else step.key_source
            words.append(self.text("table." + word))
            cells[0].append(self.inline(f"{letter} = {self.name(source)} \\cdot W_{letter}"))
            cells[1].append(self.text("meaning." + word))
        return self.table(header, words, cells)
