"""The paper's heading and page furniture: the title block of each version (title, version, name and id lines, the
time allowed) and the macros that templates/exam.tex puts in the head and foot of every page (course, date, title,
version, the student's name and id, "Page i of n" counted per version)."""

from __future__ import annotations

from ...render.escape import escape
from ...render.latex import LatexRenderer
from ..heading import minutes
from ..options import ExamOptions
from ..students import Student

# the lines to write a name and an id on, where no class list gives them
RULE, NAME_RULE, ID_RULE = r"\makebox[%s]{\hrulefill}", "7cm", "4cm"


def fill(renderer: LatexRenderer, key: str, latex: dict[str, str]) -> str:
    """A language string with its literal parts escaped and its {fields} replaced by the LaTeX given."""
    return "".join(literal + (latex[field] if field is not None else "") for literal, field in renderer.template(key))


class PaperHead:
    """The heading of an exam's papers, from its options."""

    def __init__(self, options: ExamOptions, renderer: LatexRenderer) -> None:
        self.options, self.renderer = options, renderer
        self.students = dict(enumerate(options.students, start=1))

    def title(self, key: bool) -> str:
        """The document's title: --title (escaped) or the language's, and for the key the same as a key's."""
        if self.options.title is None:
            return self.renderer.text("exam.key_title" if key else "exam.title")
        title = escape(self.options.title)
        return fill(self.renderer, "exam_paper.key_title", {"title": title}) if key else title

    def preamble(self, key: bool) -> list[str]:
        """The macros of the heads and feet that are the same on every page (templates/exam.tex uses them)."""
        text, options = self.renderer.text, self.options
        page_of = fill(self.renderer, "exam_paper.page_of", {"i": r"{\thepage}", "n": r"{\versionpages}"})
        return [
            rf"\newcommand{{\examtitle}}{{{self.title(key)}}}",
            rf"\newcommand{{\examcourse}}{{{escape(options.course or '')}}}",
            rf"\newcommand{{\examdate}}{{{escape(options.date or '')}}}",
            rf"\newcommand{{\pageof}}{{{page_of}}}",
            rf"\newcommand{{\namelabel}}{{{text('exam.name_line')}}}",
            rf"\newcommand{{\idlabel}}{{{text('exam_paper.id_line')}}}",
        ]

    def student(self, label: str) -> Student | None:
        """The student of a version (versions are labelled 01, 02, ... in the class list's order)."""
        return self.students.get(int(label))

    def opening(self, label: str) -> list[str]:
        """A version's first lines: its page furniture set, the title block, the name and id lines, the time."""
        text = self.renderer.text
        version = text("exam.version", {"label": label})
        student = self.student(label)
        name, number = (escape(student.name), escape(student.id)) if student else ("", "")
        lines = [
            rf"\symattnversion{{{label}}}{{{version}}}{{{name}}}{{{number}}}",
            rf"\begin{{center}}{{\Large\bfseries\examtitle}}\\[3pt]{{\large\bfseries {version}}}\end{{center}}",
            rf"\noindent\namelabel\ {name or RULE % NAME_RULE}\hfill\mbox{{\idlabel\ {number or RULE % ID_RULE}}}"
            r"\par\medskip",
        ]
        time = self.options.time_allowed
        if time is not None:
            count = minutes(time)
            shown = text("exam_paper.minutes", {"n": count}) if count is not None else escape(time.strip())
            lines.append(rf"\noindent\textbf{{{fill(self.renderer, 'exam_paper.time_allowed', {'time': shown})}}}"
                         r"\par")
        return lines
