"""The LaTeX document: the shell (class, preambles, title) and the steps LaTeX writes its own way (sections,
notes, booktabs tables, the picture-mode figure, the shaded heatmap); the math is DerivationRenderer's."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from typing import Any, ClassVar

from pylatex import Document, NoEscape
from sympy import Rational

from ..document.steps import DefinitionTable, Derivation, FlowFigure, Heading, Heatmap, Paragraph, References, TextTable
from ..features.rope.figure import latex_figure
from ..features.rope.steps import RopeFigure
from ..numbers.display import format_number
from ..typeset.figures.flow import caption, geometry, layout
from ..typeset.figures.tex_lengths import TexDims
from ..typeset.layout import (
    FONT_SIZE,
    MATRIX_ROWS,
    PAPER,
    TABLE_LINES,
    UNBROKEN_ROWS,
    display_rows,
    geometry_options,
    heat_cells,
    matrix_columns_setting,
    visible_width,
)
from .escape import escape
from .printers import DerivationRenderer
from .templates import class_options, common_preamble, language_preamble, read_template

DOCUMENT_CLASS = {"ja": "jsarticle", "en": "article"}
_DISPLAY_STARTS = ("\\begin{align*}", "\\[")
# A sentence ending in a colon introduces what follows, as the sentence before a heatmap introduces it; no page
# break between them (\keepwithnext of the preamble: after the paragraph, where it holds).
_LEAD_IN = (":", "：")
# A step's note before its display (the note on left-out zero terms): no page break between them.
_NOTE_THEN_DISPLAY = re.compile(r"\A(\\note\{.*?\})\n\n(\\begin\{align\*\}|\\\[)", re.S)
# The room (in lines of text) a heading needs below its own line to stay on a page: its space above and below and
# about three lines of what it introduces.
# A document of at least this many sections opens with their linked list.
CONTENTS_SECTIONS = 4
HEADING_ROOM = {"section": 8, "subsection": 7, "subsubsection": 6}
_SECTIONING = defaultdict(lambda: "subsubsection", {1: "section", 2: "subsection"})  # the command of a level
# A run of katakana (ー included, ・ not: a line may break after it), which Japanese setting would break anywhere.
_KATAKANA_RUN = re.compile("[\u30a1-\u30fa\u30fc-\u30ff]{2,}")
# The heatmaps' colour for the largest weight, in percent of blue (of \\cellcolor and \\heatscale).
HEAT_PERCENT = 60
# Where preamble-article.tex takes layout.py's page geometry.
GEOMETRY_SLOT = "@GEOMETRY@"


def unbroken_words(latex: str) -> str:
    """A heading's text with each katakana word in an \\mbox (a Latin word is kept whole by \\headingwords)."""
    return _KATAKANA_RUN.sub(lambda m: rf"\mbox{{{m.group()}}}", latex)


def shared_preamble(lang: str, body: str, page: str | None = "article", paper: str = PAPER) -> list[str]:
    """The preamble parts of every document (handout, exam, key): preamble-common.tex with the blocks of
    preamble-<page>.tex (the article's with the page geometry of layout.py; None: the common part alone, for a
    class that sets its own page such as beamer; `paper`: geometry's paper, a4paper unless an exam asks), the
    language's, and the matrix columns the body needs."""
    columns = matrix_columns_setting(body)
    common = common_preamble(page).replace(GEOMETRY_SLOT, geometry_options(paper))
    return [common, language_preamble(lang), *([columns] if columns else [])]


class LatexRenderer(DerivationRenderer):
    """Walks a Derivation and returns LaTeX. Settings beside the shared ones: compact_headings (an exam's
    solution: bold run-in lines, no sections) and unbroken_rows (the tallest derivation set as one display)."""

    format_name = "LaTeX"
    # Plain ASCII subscript words as \mathrm{love}: \text typesets its text in all four math styles (\mathchoice),
    # four boxes for one. Matrices taller than a page are split into bands of rows.
    default_settings: ClassVar[dict[str, Any]] = {**DerivationRenderer.default_settings, "mathrm_words": True,
                                                  "matrix_rows": MATRIX_ROWS, "compact_headings": False,
                                                  "unbroken_rows": UNBROKEN_ROWS,
                                                  "cjk_subscript": "cjksub"}

    # ------------------------------------------------------------ the document

    def body(self, derivation: Derivation, title: str = "") -> str:
        """All steps, in order; `title` (LaTeX, one line: an exam key's worked-solution title) before the first,
        inside its first heading's room, so that no break (\\headingroom's) falls between the two."""
        self.notes_said.clear()  # a note said once is said once per document (each version of an exam)
        self.marks: list[tuple[str, int, str]] = []  # each heading's (id, level, title), for the contents
        chunks: list[str] = []
        previous = before = None
        steps = derivation.steps
        rendered = [self.render(step) for step in steps]
        for i, step in enumerate(steps):
            latex = rendered[i]
            if isinstance(step, Heading):  # never at a page's foot: room for a few lines, or its whole short section
                room = max(self.heading_room(step.level), _short_section_lines(rendered[i + 1:], steps[i + 1:],
                                                                               self.lang))
                latex = rf"\headingroom{{{room + 2 * bool(title and i == 0)}\baselineskip}}" + (
                    title if i == 0 else "") + latex
            elif title and i == 0:
                latex = rf"\headingroom{{{self.heading_room(1) + 2}\baselineskip}}" + title + latex
            if not latex.startswith(_DISPLAY_STARTS):  # a new paragraph, on the page of a sentence introducing it
                # (a sentence ending in a colon, the sentence before a heatmap, or a heading's one sentence before
                # a table: the heading would be left at the foot with it)
                opens = isinstance(before, Heading) and isinstance(previous, Paragraph) and not isinstance(
                    step, (Paragraph, Heading))
                # a label ("Query of love") stays with the math it names
                label = isinstance(previous, Paragraph) and not previous.note and not isinstance(
                    step, (Paragraph, Heading))
                keep = chunks and (chunks[-1].endswith(_LEAD_IN) or isinstance(step, Heatmap) or opens or label)
                latex = _NOTE_THEN_DISPLAY.sub(r"\1\\nopagebreak\n\2", latex, count=1)  # a note stays with its display
                chunks.append(("\\keepwithnext\n\n" if keep else "\n\n") + latex)
            elif isinstance(previous, Heading):  # a display starts the paragraph: TeX sets an empty line above it
                chunks.append("\n\\vspace*{-\\baselineskip}\n" + latex)
            else:  # a display continues the paragraph that introduces it
                chunks.append("\n" + latex)
            previous, before = step, previous
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
        for part in [*shared_preamble(self.lang, body), read_template("preamble-links.tex")]:
            doc.preamble.append(NoEscape(part))
        doc.preamble.append(NoEscape(rf"\title{{{title}}}"))
        doc.preamble.append(NoEscape(r"\author{}"))
        doc.preamble.append(NoEscape(rf"\date{{{subtitle}}}"))
        doc.append(NoEscape(r"\pagestyle{plain}" "\n" r"\maketitle" "\n\n" + self.contents() + body))
        return doc.dumps() + "\n"

    def contents(self) -> str:
        """A document of more than a few sections opens with their list, each linked to its section (one TeX
        pass: no page numbers; the PDF's bookmarks hold the steps too)."""
        sections = [(mark, title) for mark, level, title in self.marks if level == 1]
        if len(sections) < CONTENTS_SECTIONS:
            return ""
        items = "\n".join(rf"\item \hyperlink{{{mark}}}{{{title}}}" for mark, title in sections)
        return (rf"{{\small\noindent\textbf{{{self.text('doc.contents')}}}" "\n"
                rf"\begin{{itemize}}\setlength\itemsep{{0pt}}" f"\n{items}\n" r"\end{itemize}}" "\n\n")

    # ------------------------------------------------------------ text and math in LaTeX

    def escape_text(self, text: str) -> str:
        return escape(text)

    def math_text(self, text: str) -> str:
        return escape(text)

    def token(self, name: str) -> str:
        """A token name (in running text quoted as the language quotes it: sentence_token)."""
        return rf"\tok{{{escape(name)}}}"

    def matrix_frame(self, cols: int) -> tuple[str, str]:
        """bmatrix, whose columns the preamble right-aligns."""
        return "\\begin{bmatrix}", "\\end{bmatrix}"

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

    def heading(self, level: int, text: str) -> str:
        """A section, or in an exam's solution a bold run-in line; never broken inside a word (\\headingwords,
        unbroken_words). body() puts the room it needs before it (\\headingroom)."""
        title = unbroken_words(text)
        if self.settings["compact_headings"]:  # inside an exam's solution: bold run-in lines, no sections
            return rf"\medskip{{\headingwords\noindent\textbf{{{title}}}\par}}\nopagebreak"
        self.marks = getattr(self, "marks", [])
        self.marks.append((f"s{len(self.marks) + 1}", level, title))
        # the mark sets the title (inside the heading's line: after it, its target would be a page break)
        return rf"\{_SECTIONING[level]}*{{\headingwords \marksection{{s{len(self.marks)}}}{{{level}}}{{{title}}}}}"

    def heading_room(self, level: int) -> int:
        """The lines a heading of this level keeps below it, else it starts a new page."""
        return 4 if self.settings["compact_headings"] else HEADING_ROOM[_SECTIONING[level]]

    def paragraph(self, text: str, note: bool = False) -> str:
        return rf"\note{{{text}}}" if note else text

    def _print_Heading(self, step: Heading) -> str:
        return self.heading(step.level, self.text(step.key, step.params))

    def _print_Paragraph(self, step: Paragraph) -> str:
        return self.paragraph(self.text(step.key, step.params), step.note)

    def _print_TextTable(self, step: TextTable) -> str:
        """A booktabs table of the spec's cells: as wide as its text when that fits the line, else each column
        as wide as its text or an equal share of what the narrower columns leave, its text wrapped ragged-right.
        A table taller than TABLE_LINES may break across pages."""
        rows = [[self.written(cell) for cell in row] for row in (step.header, *step.rows)]
        widths = [max(visible_width(cell) for cell in column) for column in zip(*rows, strict=True)]
        room = self.width - 2 * len(widths)  # characters, less the space around each column (2 × \tabcolsep)
        if sum(widths) <= room:
            spec, lines = "l" * len(widths), len(rows)
        else:
            shares = column_shares(widths, room)
            spec = "".join(rf">{{\raggedright\arraybackslash}}p{{{format_number(Rational(share, self.width), 3).text}"
                           r"\linewidth}" for share in shares)
            lines = sum(max(-(-visible_width(cell) // share) for cell, share in zip(row, shares, strict=True))
                        for row in rows)
        body = [" & ".join(row) + r" \\" for row in rows]
        table = [r"\toprule", body[0], r"\midrule", *body[1:], r"\bottomrule"]
        if lines <= TABLE_LINES:  # centred without a center environment, whose list penalty would let the page
            # break between the table and a sentence introducing it
            return "\n".join([r"{\centering\medskip", rf"\begin{{tabular}}{{{spec}}}", *table, r"\end{tabular}\par",
                              r"\medskip}"])
        return "\n".join([rf"\begin{{longtable}}{{{spec}}}", *table, r"\end{longtable}"])

    def _print_References(self, step: References) -> str:
        """A numbered list, [1], [2], ..."""
        items = [rf"\item {self.written(item)}" for item in step.items]
        return "\n".join([r"\begin{enumerate}", r"\renewcommand{\labelenumi}{[\theenumi]}", *items, r"\end{enumerate}"])

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
        """A flow figure in picture mode, as typeset/figures/flow.py lays it out, measured by TeX (the macros of
        preamble-common.tex), with its caption."""
        figure = layout(self, step)
        dims = TexDims()
        drawing = geometry(figure, dims)
        lines = [r"\setlength\FlowH{7mm}%"]
        for box in figure.boxes:
            content = r"\\".join(self.inline(line.content) if line.kind == "math"
                                   else self.text(line.content, line.params) for line in box.lines)
            lines.append(rf"\flowcontent{{{box.name}}}{{{content}}}%")
        for box in figure.boxes:
            rule, fill = _FRAMES[box.tint]
            lines.append(rf"\flowframe{{{rule}}}{{{fill}}}{{{box.name}}}%")
        first = figure.boxes[0].name
        lines.append(rf"\setlength\FlowH{{\dimexpr\ht\flowbox{{{first}}}+\dp\flowbox{{{first}}}}}%")
        at = dims.register  # picture commands read (x,y) up to the first ")": only named lengths go there
        picture = [rf"\flowat{{{at(p.x)}}}{{{at(p.y)}}}{{{p.box.name}}}" for p in drawing.boxes]
        picture += [rf"\flowline{{{at(g.x)}}}{{{at(g.y)}}}{{{g.dx}}}{{{g.dy}}}{{{at(g.length)}}}{{{_LINES[g.arrow]}}}"
                    for g in drawing.segments]
        picture += [rf"\flowlabel{{{at(label.x)}}}{{{at(label.y)}}}{{{label.math}}}" for label in drawing.labels]
        size = rf"(\dimexpr{at(drawing.width)}\relax,\dimexpr{at(drawing.height)}\relax)(0,\dimexpr-\FlowH/2\relax)"
        # A \flowset assignment (glue) looks for "plus" after its value and so expands a following \ifdim before it
        # is made: a column's widest box is then found from stale widths. \relax ends each statement where the figure
        # asks (Flow.tex_relax: grouped-query's); the older figures keep their bytes (their columns' boxes are about
        # equally wide).
        end = r"\relax%" if figure.tex_relax else "%"
        lines += [f"{statement}{end}" for statement in dims.statements]
        lines += [r"\setlength\unitlength{1pt}%", rf"\sbox\FlowAll{{\begin{{picture}}{size}", *picture]
        lines.append(r"\end{picture}}\flowfit")
        picture = "{" + "\n".join(lines) + "}"
        under = rf"\figurecaption{{{caption(self, step)}}}"
        # One unbreakable box with its caption, in place: under its section's heading (which TeX keeps with it; an
        # exam's run-in heading says \nopagebreak); a float would drift to the next page's top.
        return "\n".join([r"\par" + (r"\medskip" if self.settings["compact_headings"] else "")
                          + r"\noindent\begin{minipage}{\linewidth}\centering", picture, under,
                          r"\end{minipage}\par\medskip"])

    def _print_RopeFigure(self, step: RopeFigure) -> str:
        return latex_figure(self, step)  # RoPE's rotation of one pair: the matrix product, then the drawing

    def _print_Heatmap(self, step: Heatmap) -> str:
        """A table of shaded cells, all of one width (\\heatcells: the widest name or value), the darker the larger
        the weight, each showing its value; under it the colour scale from 0 to the largest weight (\\heatscale). A
        table wider than the page (16 tokens and more) is scaled down to the page width."""
        cells = heat_cells(step, self.digits, HEAT_PERCENT)
        keys = [self.token(k) for k in step.keys]
        cols = len(keys)
        rows = []
        for r, query in enumerate(step.queries):
            shaded = [rf"\cellcolor{{blue!{cells.shades[i]}}}{cells.texts[i]}" for i in range(r * cols, (r + 1) * cols)]
            rows.append(rf"{self.token(query)} & " + " & ".join(shaded) + r" \\")
        widest = max(cells.texts, key=len)
        table = [rf"\heatcells{{{' '.join(f'{{{t}}}' for t in (*keys, widest))}}}%",
                 r"\begin{tabular}{r|*{" + str(cols) + r"}{w{c}{\heatcell}}}",
                 rf"\multicolumn{{1}}{{c}}{{}} & {' & '.join(keys)} \\", r"\hline", *rows, r"\end{tabular}"]
        names = max(visible_width(escape(name)) for name in (*step.keys, *step.queries))
        if names + cols * (max(names, self.digits + 2) + 2) > self.width:
            table = [r"\resizebox{\linewidth}{!}{%", *table, "}"]
        return "\n".join([r"\begin{center}", r"\setlength{\tabcolsep}{4pt}", *table, "",
                          rf"\heatscale{{{HEAT_PERCENT}}}{{{cells.largest}}}", r"\end{center}"])


# The frame and the fill of a flow figure's box, by its tint.
_LINES = {True: r"\vector", False: r"\line"}
_FRAMES = {"step": ("black!80", "blue!6"), "output": ("black!80", "orange!12"), "none": ("white", "white")}


# A section at most this many lines long (a result: a sentence, x, a sentence, z, a sentence) moves to the next
# page whole rather than leave its heading and first lines at a page's foot.
SHORT_SECTION = 14


def _short_section_lines(after: list[str], steps: tuple, lang: str) -> int:
    """The lines of the section that follows a heading, and two for the heading, when it is short
    (SHORT_SECTION lines at most); else 0."""
    lines = 0.0
    for latex, step in zip(after, steps, strict=False):
        if isinstance(step, Heading):
            break
        lines += _lines_of(latex, lang)
        if lines > SHORT_SECTION:
            return 0
    return round(lines + 2)


def _lines_of(latex: str, lang: str) -> float:
    """About how many lines of text a rendered step takes: a display by its rows, a table by its rows, a sentence
    by its length (80 characters to an English line, 40 to a Japanese one)."""
    if latex.startswith(_DISPLAY_STARTS):
        return display_rows(latex.split("\\\\\n")) + 1
    if "\\begin{tabular}" in latex or "\\begin{longtable}" in latex:
        return latex.count("\\\\") + 3
    return len(latex) / (40 if lang == "ja" else 80) + 0.5


def render_latex(derivation: Derivation, **settings: Any) -> str:
    """The complete .tex source of a derivation."""
    settings.setdefault("lang", derivation.lang)
    settings.setdefault("digits", derivation.digits)
    return LatexRenderer(**settings).document(derivation)


def column_shares(widths: list[int], room: int) -> list[int]:
    """Each column's width, in characters, within `room`: a column narrower than an equal share of what is left
    keeps its width, and the others share the rest equally."""
    shares: dict[int, int] = {}
    while True:
        wide = [i for i in range(len(widths)) if i not in shares]
        share = (room - sum(shares.values())) // max(len(wide), 1)
        narrow = [i for i in wide if widths[i] <= share]
        if not narrow:
            break
        shares.update((i, widths[i]) for i in narrow)
    return [shares.get(i, max(share, 1)) for i in range(len(widths))]
