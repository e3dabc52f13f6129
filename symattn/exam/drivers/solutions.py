"""solutions.tex (compiled to solutions.pdf): every version's answers per part with the answers accepted, in
compact tables, for grading by hand."""

from __future__ import annotations

from decimal import Decimal

from pylatex import Document, NoEscape
from sympy import Expr

from ...document.steps import Name
from ...engine import entries as rows_of
from ...exercises.exercise import AnswerTable, Exercise, Part, accepted
from ...numbers.decimals import decimal_places
from ...numbers.display import format_number
from ...render.escape import escape
from ...render.latex import DOCUMENT_CLASS, LatexRenderer, shared_preamble
from ...render.templates import class_options
from ...typeset.layout import PAPERS
from ..options import ExamOptions
from .base import Share
from .grading import LETTERS, plus_minus
from .moodle import exam_name


class SolutionsDriver:
    """Writes solutions.tex: one block per version (its label, then a row per part: answers and tolerance)."""

    name = "solutions"

    def __init__(self, options: ExamOptions) -> None:
        self.options = options
        self.digits = options.digits
        self.renderer = LatexRenderer(lang=options.lang, digits=options.digits)

    def files(self, shares: list[Share]) -> dict[str, str]:
        return {"solutions.tex": self.document("\n".join(share.text for share in shares))}

    def document(self, body: str) -> str:
        text = self.renderer.text
        documentclass = DOCUMENT_CLASS[self.options.lang]
        paper = PAPERS[self.options.paper]
        doc = Document(documentclass=documentclass, document_options=[paper, "10pt", *class_options(documentclass)],
                       fontenc=None, inputenc=None, lmodern=False, textcomp=False, page_numbers=True, indent=False)
        for part in shared_preamble(self.options.lang, body, paper=paper):
            doc.preamble.append(NoEscape(part))
        # narrow margins and small type: as many versions on a page as stay readable
        doc.append(NoEscape(r"\newgeometry{margin=12mm}\pagestyle{plain}\footnotesize" "\n"
                            rf"{{\large\bfseries {text('grading.solutions_title')}}}\hfill {self.title()}\par"
                            r"\smallskip" "\n" + text("grading.range", {"digits": self.digits}) + r"\par\medskip"
                            + "\n\n" + self.class_list() + body))
        return doc.dumps() + "\n"

    def class_list(self) -> str:
        """With a class list: every student (name and id) with their version, in the list's order, as one
        paragraph that flows over the lines (for handing back and for grading by hand); else nothing."""
        if not self.options.students:
            return ""
        width = max(2, len(str(self.options.count)))
        entries = [rf"\mbox{{{escape(s.name)} ({escape(s.id)}): \textbf{{{k:0{width}d}}}}}"
                   for k, s in enumerate(self.options.students, start=1)]
        return (rf"\noindent\textbf{{{self.renderer.text('grading.students')}}}\quad " + r"\quad ".join(entries)
                + r"\par\medskip" + "\n\n")

    def title(self) -> str:
        return escape(exam_name(self.options))

    def version(self, exercise: Exercise) -> str:
        """A version's block, kept on one page: its label, then a row per part."""
        label = self.renderer.text("exam.version", {"label": exercise.label})
        rows = " \\\\\n".join(f"({LETTERS[i]}) & {self.answers(part)} & {plus_minus(part)}"
                              for i, part in enumerate(exercise.parts))
        return (r"\noindent\begin{minipage}{\linewidth}" rf"\textbf{{{label}}}\par" "\n"
                r"\begin{tabular}{@{}l>{\raggedright\arraybackslash}p{0.85\linewidth}r@{}}" "\n\\toprule\n"
                + rows + " \\\\\n\\bottomrule\n\\end{tabular}\\end{minipage}\\par\\smallskip\n")

    def answers(self, part: Part) -> str:
        """A part's answers: each vector named, a table's rows by token."""
        pieces = []
        for answer in part.answers:
            if isinstance(answer, AnswerTable):
                columns = [(name, rows_of(column.values), column.known)
                           for name, column in zip(answer.header[1:], answer.columns, strict=True)]
                for i, token in enumerate(answer.tokens):
                    cells = "; ".join(f"{self.symbol(name)} {self.vector(rows[i], part, known)}"
                                      for name, rows, known in columns)
                    pieces.append(f"{self.renderer.token(token)}: {cells}")
            else:
                pieces.append(f"{self.symbol(answer.name)} {self.vector(answer.entries, part, answer.values.known)}")
        return r"\quad ".join(pieces)

    def symbol(self, name: Name | str) -> str:
        """A column's name: a symbol, or the text of a language key (next-token's "rank")."""
        return self.renderer.param(name) if isinstance(name, Name) else self.renderer.text(name)

    def vector(self, values, part: Part, known) -> str:
        return "(" + ", ".join(self.value(v, part, known) for v in values) + ")"

    def value(self, value: Expr, part: Part, known) -> str:
        """The value rounded as asked, and where more than one written answer is accepted, their range."""
        shown = f"${format_number(value, self.digits, known=known).text}$"
        places = decimal_places(value)
        low, high = accepted(value, part.tolerance, self.digits, known)
        if low == high and places is not None and places <= self.digits:
            return shown
        return shown + rf"\,{{\scriptsize[{_signed(low)}, {_signed(high)}]}}"


def _signed(number: Decimal) -> str:
    return f"${format(number, 'f')}$"
