"""The exam paper and its key (exam.tex, key.tex) as LaTeX, in the conventions of the `exam` document class.

One source serves both: each part's answer and the full worked solution sit in `solution` environments, which
leave writing space on the paper and are printed in the key (`\\printanswers`).
"""

from __future__ import annotations

from dataclasses import replace

from pylatex import Document, NoEscape

from ...document.steps import MatrixEquation, Name, Shown, SqrtDk, Step, Token, TokenTable, VectorEquation
from ...exercises.exercise import (
    Answer,
    AnswerTable,
    Exercise,
    Given,
    GivenTable,
    GivenVector,
    Part,
    angle_rows,
    exp_rows,
)
from ...render.latex import LatexRenderer, shared_preamble
from ...render.templates import class_options, read_template
from ...typeset.layout import FONT_SIZE, PAPERS
from ..options import ExamOptions
from .base import EXP_TABLE_COLUMNS, ByTable, Share, in_columns
from .grading import grading_table
from .paper_head import PaperHead

BODY_SLOT = "%@symattn-versions@"  # where documents() puts the versions into the frame


class PaperDriver:
    """Writes the exam (answers hidden) and the key (answers printed) of a list of exercises."""

    name = "tex"

    def __init__(self, options: ExamOptions) -> None:
        self.lang = lang = options.lang
        self.paper = PAPERS[options.paper]
        self.digits = digits = options.digits
        # The worked solution flows in the page as a handout does (templates/exam.tex): a short derivation is one
        # display, kept on one page; a taller one may break between its lines.
        self.renderer = LatexRenderer(lang=lang, digits=digits, compact_headings=True)
        self.head = PaperHead(options, self.renderer)
        self.instructions = ByTable(self.table_instruction)

    def files(self, shares: list[Share]) -> dict[str, str]:
        """exam.tex and key.tex around every version."""
        exam, key = self.documents([share.text for share in shares])
        return {"exam.tex": exam, "key.tex": key}

    def documents(self, versions: list[str]) -> tuple[str, str]:
        """The exam and its key around the versions' LaTeX (as version() writes it): one body, typeset once; the
        key adds only \\printanswers."""
        body = "\n\n".join(versions)
        preamble = shared_preamble(self.lang, body, paper=self.paper)
        # PyLaTeX writes the frame around a placeholder: copying hundreds of versions through it costs ~0.1 s
        exam, key = (self.document(BODY_SLOT, key, preamble).split(BODY_SLOT) for key in (False, True))
        return exam[0] + body + exam[1], key[0] + body + key[1]

    def document(self, body: str, key: bool, preamble: list[str] | None = None) -> str:
        """A complete exam-class document around the versions' LaTeX (`preamble`: shared_preamble's, of the
        body)."""
        doc = Document(
            documentclass="exam", document_options=[self.paper, FONT_SIZE, "addpoints", *class_options("exam")],
            fontenc=None, inputenc=None, lmodern=False, textcomp=False, page_numbers=True, indent=True,
        )  # page_numbers=True keeps PyLaTeX from forcing \pagestyle{empty}: the exam class sets the page style
        for part in shared_preamble(self.lang, body, paper=self.paper) if preamble is None else preamble:
            doc.preamble.append(NoEscape(part))
        doc.preamble.append(NoEscape(read_template("exam.tex")))
        if key:
            doc.preamble.append(NoEscape(r"\printanswers"))
        text = self.renderer.text
        for line in self.head.preamble(key):
            doc.preamble.append(NoEscape(line))
        doc.preamble.append(NoEscape(rf"\pointpoints{{{text('exam.point')}}}{{{text('exam.points')}}}"))
        doc.preamble.append(NoEscape(r"\renewcommand{\solutiontitle}{}"))  # each part's answers title their box
        doc.append(NoEscape(body))
        return doc.dumps() + "\n"

    # ------------------------------------------------------------ one version

    def version(self, exercise: Exercise) -> str:
        """One version's pages: the problem, its parts with their answers, and the worked solution."""
        text = self.renderer.text
        lines = [
            *self.head.opening(exercise.label),
            text("exam.instructions", {"digits": self.digits, "points": exercise.points}),
            r"\setcounter{question}{0}",
            r"\begin{questions}",
            r"\question " + self.given(exercise),
            r"\begin{parts}",
        ]
        for part in exercise.parts:
            # on the paper, a part starts on the next page unless its prompt and its least space fit on this one
            lines.append(rf"\ifprintanswers\else\headingroom{{\dimexpr {part.space}+2\baselineskip\relax}}\fi")
            lines.append(rf"\part[{part.points}] {text(part.question, part.params)}")
            # the part's space, and a share of what its page leaves free in proportion to it (no half-empty page);
            # the key's "Answers:" and the answers in one box, so the heading never stays alone at a page's foot
            stretch = f"{float(part.space.removesuffix('mm')) / 100:g}fill"
            lines.append(rf"\begin{{solution}}[{part.space} plus {stretch}]" + "\n"
                         + r"\noindent\begin{minipage}{\linewidth}" + rf"\textbf{{{text('exam.answers')}:}}\enspace "
                         + self.answer(part) + "\n"
                         + r"\end{minipage}" + "\n" + r"\end{solution}")
        lines += [
            r"\end{parts}",
            # the key's tolerances and rounding conventions: unframed (a solution's frame cannot break the table)
            r"\ifprintanswers\par\medskip" + "\n" + grading_table(self.renderer, exercise) + "\n" + r"\par\fi",
            # the worked solution, under its own title instead of the parts' "Answers:", never left at a page's
            # foot: the title goes in its first heading's room (body's title), no break between them
            r"{\renewcommand{\solutiontitle}{}\begin{solution}" + "\n"
            + self.renderer.body(replace(exercise.derivation, opening=()),
                                 title=rf"\noindent\textbf{{{text('exam.worked_title')}}}\par\nopagebreak")
            + "\n" + r"\end{solution}}",
            r"\end{questions}",
            r"\symattnendversion",
        ]
        return "\n".join(lines)

    def given(self, exercise: Exercise) -> str:
        """The problem statement: the inputs, typeset as in the handouts, and what to answer for."""
        text = self.renderer.text
        body = [text(*exercise.intro), *(self.renderer.render(given_step(item)) for item in exercise.given)]
        body.append(text(*exercise.task) if exercise.task else
                    text("exam.focus", {"token": Token(exercise.focus), "d_k": SqrtDk(exercise.d_k)}))
        if exercise.softmax:
            body.append(self.softmax_instruction(exercise.exp_table, exercise.softmax))
        if exercise.angles:  # RoPE: the cos and sin of every angle the rotations use
            body.append(self.angle_table(exercise.angles))
        return "\n".join(body)

    def angle_table(self, angles: tuple) -> str:
        """The paper's table of cos and sin (RoPE's angles), with two more decimals than the answers."""
        rows = " \\\\\n".join(f"${a}$ & ${c}$ & ${s}$" for a, c, s in angle_rows(angles, self.digits))
        return (self.renderer.text("exam_kinds.angle_table", {"digits": self.digits, "m": Name("m"),
                                                                   "d_k": Name("d_k")})
                + "\n\\begin{center}\n\\begin{tabular}{rrr}\n\\toprule\n"
                "$\\varphi$ & $\\cos\\varphi$ & $\\sin\\varphi$ \\\\\n\\midrule\n" + rows
                + " \\\\\n\\bottomrule\n\\end{tabular}\n\\end{center}")

    def softmax_instruction(self, values: tuple | None, strings: str = "exam") -> str:
        """The paper's fixed e^x table (exam/exptable.py) in EXP_TABLE_COLUMNS pairs of columns, or the calculator's
        sentence, in the words of the language section `strings` (a kind's own: next-token probabilities)."""
        return self.instructions(values, strings)

    def table_instruction(self, values: tuple | None, strings: str) -> str:
        """softmax_instruction(), written."""
        text = self.renderer.text
        if values is None:
            return text(f"{strings}.softmax_calculator", {"digits": self.digits})
        cells = [f"${x}$ & ${e}$" for x, e in exp_rows(values)]
        rows = " \\\\\n".join(" & ".join("&" if cell is None else cell for cell in row) for row in in_columns(cells))
        head = " & ".join(["$x$ & $e^{x}$"] * EXP_TABLE_COLUMNS)
        spec = "@{\\qquad}".join(["rr"] * EXP_TABLE_COLUMNS)
        table = ("\\begin{center}\\small\n\\begin{tabular}{" + spec + "}\n\\toprule\n"
                 + head + " \\\\\n\\midrule\n" + rows + " \\\\\n\\bottomrule\n\\end{tabular}\n\\end{center}")
        # the sentence and its table in one box: never the sentence at a page's foot with the table overleaf
        return (r"\par\noindent\begin{minipage}{\linewidth}\setlength{\parindent}{1em}\indent "
                + text(f"{strings}.softmax_table", {"digits": self.digits, "exp": Name("e^x")}) + "\n" + table
                + r"\end{minipage}\par")

    def answer(self, part: Part) -> str:
        """The LaTeX of a part's answers: vectors as equations, tables as token tables."""
        return "\n".join(self.renderer.render(answer_step(answer)) for answer in part.answers)


def given_step(item: Given) -> Step:
    """An input as the handouts show it."""
    if isinstance(item, GivenTable):
        return TokenTable((item.token_key, item.header_key), item.tokens, (Shown.input(item.matrix),))
    if isinstance(item, GivenVector):
        return VectorEquation(item.name, Shown.input(item.matrix))
    return MatrixEquation(item.name, Shown.input(item.matrix))


def answer_step(answer: Answer) -> Step:
    """An answer as a step: a named vector, or a table of token rows."""
    if isinstance(answer, AnswerTable):
        return TokenTable(answer.header, answer.tokens, answer.columns)
    return VectorEquation(answer.name, answer.values)
