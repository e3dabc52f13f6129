"""The LaTeX document: the shell (class, preambles, title) and the steps LaTeX writes its own way (sections,
notes, booktabs tables, the picture-mode figure, the shaded heatmap); the math is DerivationRenderer's."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from pylatex import Document, NoEscape

from ..model import DefinitionTable, Derivation, FlowFigure, Heading, Heatmap, Paragraph
from ..numfmt import format_number, shades
from .escape import escape
from .layout import (
    FONT_SIZE,
    MATRIX_ROWS,
    PAPER,
    TABLE_LINES,
    UNBROKEN_ROWS,
    display_rows,
    geometry_options,
    matrix_columns_setting,
    visible_width,
)
from .printers import DerivationRenderer
from .templates import class_options, language_preamble, read_template

DOCUMENT_CLASS = {"ja": "jsarticle", "en": "article"}
_DISPLAY_STARTS = ("\\begin{align*}", "\\[")
# A sentence ending in a colon introduces what follows; no page break between them (\par\nopagebreak: in vertical
# mode, after the paragraph, where it holds).
_LEAD_IN = (":", "：")
# Where preamble-common.tex takes layout.py's page geometry.
GEOMETRY_SLOT = "@GEOMETRY@"


def shared_preamble(lang: str, body: str) -> list[str]:
    """The preamble parts of every document (handout, exam, key): preamble-common.tex with the page geometry of
    layout.py, the language's, and the matrix columns the body needs."""
    columns = matrix_columns_setting(body)
    common = read_template("preamble-common.tex").replace(GEOMETRY_SLOT, geometry_options())
    return [common, language_preamble(lang), *([columns] if columns else [])]


class LatexRenderer(DerivationRenderer):
    """Walks a Derivation and returns LaTeX. Settings beside the shared ones: compact_headings (an exam's
    solution: bold run-in lines, no sections) and unbroken_rows (the tallest derivation set as one display)."""

    format_name = "LaTeX"
    # Plain ASCII subscript words as \mathrm{love}: \text typesets its text in all four math styles (\mathchoice),
    # four boxes for one. Matrices taller than a page are split into bands of rows.
    default_settings: ClassVar[dict[str, Any]] = {**DerivationRenderer.default_settings, "mathrm_words": True,
                                                  "matrix_rows": MATRIX_ROWS, "compact_headings": False,
                                                  "unbroken_rows": UNBROKEN_ROWS}

    # ------------------------------------------------------------ the document

    def body(self, derivation: Derivation) -> str:
        """All steps, in order."""
        self.notes_said.clear()  # a note said once is said once per document (each version of an exam)
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
            document_options=[PAPER, FONT_SIZE, *class_options(DOCUMENT_CLASS[self.lang])],
            fontenc=None, inputenc=None, lmodern=False, textcomp=False, page_numbers=False, indent=True,
        )
        for part in shared_preamble(self.lang, body):
            doc.preamble.append(NoEscape(part))
        doc.preamble.append(NoEscape(rf"\title{{{title}}}"))
        doc.preamble.append(NoEscape(r"\author{}"))
        doc.preamble.append(NoEscape(rf"\date{{{subtitle}}}"))
        doc.append(NoEscape(r"\pagestyle{plain}" "\n" r"\maketitle" "\n\n" + body))
        return doc.dumps() + "\n"

    # ------------------------------------------------------------ text and math in LaTeX

    def escape_text(self, text: str) -> str:
        return escape(text)

    def math_text(self, text: str) -> str:
        return escape(text)

    def token(self, name: str) -> str:
        """A token name in running text or a table cell."""
        return rf"\tok{{{escape(name)}}}"

    def inline(self, math: str) -> str:
        return f"${math}$"

    def display(self, math: str) -> str:
        return rf"\[ {math} \]"

    def align(self, lines: Iterable[str]) -> str:
        """A derivation's lines, aligned at their `&`: one unbreakable display when it is short (the setting
        unbroken_rows, UNBROKEN_ROWS unless set)."""
        lines = list(lines)
        body = " \\\\\n".join(lines)
        if display_rows(lines) <= self.settings["unbroken_rows"]:
            return "\\[\\begin{aligned}\n" + body + "\n\\end{aligned}\\]"
        return "\\begin{align*}\n" + body + "\n\\end{align*}"

    def cell_lines(self, lines: list[str]) -> str:
        """Several lines inside one table cell."""
        return r"\begin{tabular}[t]{@{}l@{}}" + r" \\ ".join(lines) + r"\end{tabular}"

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

    # ------------------------------------------------------------ steps with a LaTeX form of their own

    def _print_Heading(self, step: Heading) -> str:
        if self.settings["compact_headings"]:  # inside an exam's solution: bold run-in lines, no sections
            return rf"\par\medskip\noindent\textbf{{{self.text(step.key, step.params)}}}\par"
        command = {1: "section", 2: "subsection"}.get(step.level, "subsubsection")
        return rf"\{command}*{{{self.text(step.key, step.params)}}}"

    def _print_Paragraph(self, step: Paragraph) -> str:
        sentence = self.text(step.key, step.params)
        return rf"\note{{{sentence}}}" if step.note else sentence

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
        # percent of the colour: 60 for the largest
        shade = iter(shades([w for row in weights for w in row], 60, step.known))
        for query, row in zip(step.queries, weights, strict=True):
            cells = [rf"\cellcolor{{blue!{next(shade)}}}{format_number(w, self.digits, known=step.known).text}"
                     for w in row]
            rows.append(rf"\tok{{{escape(query)}}} & " + " & ".join(cells) + r" \\")
        table = [r"\begin{tabular}{r|" + "c" * cols + "}", rf"\multicolumn{{1}}{{c}}{{}} & {header} \\", r"\hline",
                 *rows, r"\end{tabular}"]
        names = max(visible_width(escape(name)) for name in (*step.keys, *step.queries))
        if names + cols * (max(names, self.digits + 2) + 2) > self.width:
            table = [r"\resizebox{\linewidth}{!}{%", *table, "}"]
        return "\n".join([r"\begin{center}", r"\setlength{\tabcolsep}{4pt}", *table, r"\end{center}"])


def render_latex(derivation: Derivation, **settings: Any) -> str:
    """The complete .tex source of a derivation."""
    settings.setdefault("lang", derivation.lang)
    settings.setdefault("digits", derivation.digits)
    return LatexRenderer(**settings).document(derivation)
