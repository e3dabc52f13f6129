"""Moodle XML: a category named after the exam, then one cloze question per version (HTML with MathJax math, a
NUMERICAL blank per answer with its part's tolerance, the worked solution as general feedback)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import replace
from math import gcd, lcm

from sympy import Expr

from ...document.steps import Name, SqrtDk, Token
from ...engine import Numbers
from ...engine import entries as rows_of
from ...exercises.exercise import (
    AnswerTable,
    AnswerVector,
    Exercise,
    GivenTable,
    GivenVector,
    Part,
    angle_rows,
    exp_rows,
)
from ...numbers.decimals import decimal_places, to_decimal
from ...numbers.display import format_numbers
from ...render.escape import escape_html, safe
from ..blanks import part_blanks
from ..options import ExamOptions
from .base import EXP_TABLE_COLUMNS, ByTable, Share, in_columns
from .mathjax import ClozeHtml, MathJaxHtml

ANSWER_DECIMALS = 12  # an answer that does not terminate is written to this many decimals
_BLANK, _TOLERANCE = "@WEIGHT@", "@TOLERANCE@"


def blank_weights(parts: list[tuple[int, int]]) -> tuple[int, list[int]]:
    """Moodle's cloze weights for parts of (points, blanks): whole numbers (its {N:NUMERICAL:...} takes digits
    only), every blank of a part weighing the same, each at least 1, each part's weights adding up to its points
    times one common factor F, the smallest that makes them whole: F = lcm of n / gcd(p, n). (F, the weight of a
    blank of each part.) The question imports worth F × the paper's total; set to the total in the quiz, every
    box then earns exactly what `symattn grade` gives it, p/n."""
    factor = lcm(*(count // gcd(points, count) for points, count in parts if count)) if parts else 1
    return factor, [points * factor // count if count else 0 for points, count in parts]


def exam_name(options: ExamOptions) -> str:
    """The exam's name in a question bank: its --course and --title if the options have them (else "symattn"),
    then what makes it (kind, difficulty, language, seed), so that two exams never share a name."""
    given = " ".join(str(v) for v in (getattr(options, "course", None), getattr(options, "title", None)) if v)
    return f"{given or 'symattn'} {options.kind} {options.difficulty} {options.lang} seed {options.seed}"


def category_path(options: ExamOptions) -> str:
    """The Moodle category of the exam's questions ($course$/symattn/<exam>; a / inside a name is written //)."""
    return "$course$/symattn/" + exam_name(options).replace("/", "//")


def answer_places(part: Part, digits: int) -> int:
    """The decimals every answer of a part is written with: enough for its longest exact answer (at least the
    decimals asked for), ANSWER_DECIMALS when one does not terminate. One count per part: Moodle sizes each box
    by its answer, so no box tells a short answer (=0) from a long one."""
    places = [decimal_places(v) for answer in part.answers for v in answer_values(answer)]
    return ANSWER_DECIMALS if None in places else min(ANSWER_DECIMALS, max([digits, *places]))


def answer_values(answer) -> tuple[Expr, ...]:
    """Every exact value of an answer (a vector's entries, a table's columns' entries)."""
    if isinstance(answer, AnswerTable):
        return tuple(v for column in answer.columns for v in column.entries)  # (iterating a Matrix converts each)
    return tuple(answer.entries)


def quiz_item(element: ET.Element) -> str:
    """An element of the quiz as XML, indented as ET.indent indents a child of <quiz> (made in the worker
    processes, so that the quiz is only joined, not parsed again)."""
    ET.indent(element, level=1)
    return ET.tostring(element, encoding="unicode")


def _leaf(tag: str, text: str) -> str:
    """An element of text alone, as ET.tostring writes it (its text escaped; empty: a short tag)."""
    return f"<{tag}>{escape_html(text)}</{tag}>" if text else f"<{tag} />"


class MoodleDriver:
    """Builds the question bank from every version's question (made in the worker processes)."""

    name = "moodle"

    def __init__(self, options: ExamOptions) -> None:
        self.options = options
        self.digits = options.digits
        self.html = ClozeHtml(lang=options.lang, digits=options.digits)
        self.feedback = MathJaxHtml(lang=options.lang, digits=options.digits)
        self.text, self.symbol = self.html.text, self.html.param
        self.instructions = ByTable(self.table_instruction)

    def files(self, shares: list[Share]) -> dict[str, str]:
        """moodle.xml: the exam's category, then every version's question."""
        category = ET.Element("question", type="category")
        ET.SubElement(ET.SubElement(category, "category"), "text").text = category_path(self.options)
        questions = [quiz_item(category), *(share.text for share in shares)]
        return {"moodle.xml": '<?xml version="1.0" encoding="UTF-8"?>\n<quiz>\n  ' + "\n  ".join(questions)
                + "\n</quiz>\n"}

    def version(self, exercise: Exercise) -> str:
        """One version's cloze question, as XML indented for its place in the quiz (as ET.indent and ET.tostring
        write it, written directly: ET's serializer cost ~0.2 ms a question): named after the exam and the
        version; its mark (Moodle's sum of the blank weights) is the paper's points."""
        version = self.text("exam.version", {"label": exercise.label})
        factor, _ = self.weights(exercise)
        text = self.question_text(exercise)
        worked = self.feedback.body(replace(exercise.derivation, opening=()))
        return "\n    ".join([
            '<question type="cloze">',
            "<name>\n      " + _leaf("text", f"{exam_name(self.options)} — {version}") + "\n    </name>",
            '<questiontext format="html">\n      ' + _leaf("text", text) + "\n    </questiontext>",
            '<generalfeedback format="html">\n      ' + _leaf("text", worked) + "\n    </generalfeedback>",
            _leaf("defaultgrade", str(factor * exercise.points)),  # what Moodle's import makes it: the weights' sum
            _leaf("penalty", "0"),  # no deduction per try: the paper's marks (adaptive or interactive behaviour)
            _leaf("hidden", "0"),
        ]) + "\n  </question>"

    def weights(self, exercise: Exercise) -> tuple[int, list[int]]:
        """The common factor of the version's blank weights and the weight of a blank of each part."""
        return blank_weights([(p.points, len(part_blanks(exercise.label, i, p))) for i, p in enumerate(exercise.parts)])

    # ------------------------------------------------------------ question text

    def question_text(self, exercise: Exercise) -> str:
        """The inputs, the e^x table where the paper has one, then a NUMERICAL blank for every answer."""
        params = {'digits': self.digits, 'points': exercise.points}
        parts = [f"<p>{self.text('exam.instructions', params)}</p>", f"<p>{self.text(*exercise.intro)}</p>"]
        for item in exercise.given:
            if isinstance(item, GivenVector):
                parts.append(self.table([self.symbol(item.name)], [item.token], [self.given(item.matrix)]))
            elif isinstance(item, GivenTable):
                parts.append(self.table([self.text(item.header_key)], item.tokens, [self.given(item.matrix)]))
            else:
                parts.append(f"<p>{self.symbol(item.name)} =</p>" + self.matrix(self.given(item.matrix)))
        focus = {'token': Token(exercise.focus), 'd_k': SqrtDk(exercise.d_k)}
        parts.append(f"<p>{self.text(*exercise.task) if exercise.task else self.text('exam.focus', focus)}</p>")
        if exercise.softmax:  # "": the kind asks no softmax
            parts.append(self.softmax_instruction(exercise.exp_table, exercise.softmax))
        if exercise.angles:  # RoPE: the cos and sin of every angle the rotations use, as on the paper
            angle_params = {"digits": self.digits, "m": Name("m"), "d_k": Name("d_k")}
            parts.append(f"<p>{self.text('exam_kinds.angle_table', angle_params)}</p>"
                         + self.angle_table(exercise.angles))
        parts.append("<ol type=\"a\">")
        _, weights = self.weights(exercise)
        for part, weight in zip(exercise.parts, weights, strict=True):
            blanks = self.answers(part).replace(_BLANK, str(weight)).replace(_TOLERANCE, part.tolerance)
            parts.append(f"<li>{self.text(part.question, part.params)} ({part.points})<br>{blanks}</li>")
        parts.append("</ol>")
        return "\n".join(parts)

    def softmax_instruction(self, values: tuple | None, strings: str = "exam") -> str:
        """The paper's e^x table (the Exercise's rows, as the paper prints them), or the calculator's sentence, in
        the words of the language section `strings` (a kind's own: next-token probabilities)."""
        return self.instructions(values, strings)

    def table_instruction(self, values: tuple | None, strings: str) -> str:
        """softmax_instruction(), written."""
        if values is None:
            return f"<p>{self.text(strings + '.softmax_calculator', {'digits': self.digits})}</p>"
        pair = "<td>{}</td><td>{}</td>"
        rows = "".join("<tr>" + "".join(pair.format(*(cell or ("", ""))) for cell in row) + "</tr>"
                       for row in in_columns(exp_rows(values)))
        sentence = self.text(strings + ".softmax_table_boxes", {"digits": self.digits, "exp": Name("e^x")})
        heads = f"<th>{self.html.inline('x')}</th><th>{self.html.inline('e^x')}</th>"
        head = "<tr>" + heads * EXP_TABLE_COLUMNS + "</tr>"
        return f"<p>{sentence}</p><table border=\"1\">{head}{rows}</table>"

    def answers(self, part: Part) -> str:
        """A part's blanks, in the order of exam/blanks.py: a table of token rows, or vectors (captioned when the
        part has several)."""
        pieces, places = [], answer_places(part, self.digits)
        for k, answer in enumerate(part.answers):
            if isinstance(answer, AnswerTable):
                pieces.append(self.blank_table(answer, places))
                continue
            blanks = self.blanks(answer.entries, places, answer.values.known)
            if len(part.answers) > 1:
                blanks = f"{self.caption(answer)}: {blanks}"
            pieces.append(blanks + ("<br>" if k < len(part.answers) - 1 else ""))
        return "".join(pieces)

    def caption(self, answer: AnswerVector) -> str:
        """A head's scores, scaled scores or weights are captioned by the head ("Head 2"), anything else by name."""
        name = answer.name
        if name.head is not None and name.base in ("s", "a", "w"):
            return self.text("exam.head", {"h": name.head})
        return self.symbol(name)

    # ------------------------------------------------------------ pieces

    def blank(self, value: Expr, places: int, known: Numbers | None = None) -> str:
        answer = format(to_decimal(value, places, known=known), "f")  # 0 as 0.0000: every box of a part alike
        return f"{{{_BLANK}:NUMERICAL:={answer}:{_TOLERANCE}}}"  # weight and tolerance are filled in per part

    def blanks(self, values, places: int, known: Numbers | None = None) -> str:
        return "[" + ", ".join(self.blank(v, places, known) for v in values) + "]"

    def blank_table(self, answer: AnswerTable, places: int) -> str:
        header = "".join(f"<th>{self.symbol(name) if isinstance(name, Name) else self.text(name)}</th>"
                         for name in answer.header[1:])  # a column named by a language key: its text
        matrices = [(rows_of(column.values), column.known) for column in answer.columns]
        rows = "".join(
            f"<tr><td><code>{safe(token)}</code></td>"
            + "".join(f"<td>{self.blanks(matrix[i], places, known)}</td>" for matrix, known in matrices)
            + "</tr>"
            for i, token in enumerate(answer.tokens))
        return f"<table border=\"1\"><tr><th></th>{header}</tr>{rows}</table>"

    def table(self, header: list[str], tokens, matrices: list[list[list[str]]]) -> str:
        cells = "".join(f"<th>{h}</th>" for h in header)
        rows = []
        for i, token in enumerate(tokens):
            vectors = "".join(f"<td>[{', '.join(matrix[i])}]</td>" for matrix in matrices)
            rows.append(f"<tr><td><code>{safe(token)}</code></td>{vectors}</tr>")
        return f"<table border=\"1\"><tr><th></th>{cells}</tr>{''.join(rows)}</table>"

    def angle_table(self, angles: tuple[Expr, ...]) -> str:
        """RoPE's table of φ, cos φ and sin φ (two more decimals than the answers)."""
        rows = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>"
                       for row in angle_rows(angles, self.digits))
        return f"<table border=\"1\"><tr><th><i>φ</i></th><th>cos <i>φ</i></th><th>sin <i>φ</i></th></tr>{rows}</table>"

    def matrix(self, matrix: list[list[str]]) -> str:
        rows = "".join("<tr>" + "".join(f"<td>{t}</td>" for t in row) + "</tr>" for row in matrix)
        return f"<table border=\"1\">{rows}</table>"

    def given(self, matrix) -> list[list[str]]:
        return typed(matrix, self.digits)


def typed(matrix, digits: int) -> list[list[str]]:
    """An input matrix's rows as typed (a fraction as p/q)."""
    cols = matrix.values.cols
    return [[f"{v.p}/{v.q}" if places is None and not v.is_Integer
             else format_numbers([v], digits, places or 0)[0].text
             for v, places in zip(row, matrix.written[i * cols:(i + 1) * cols], strict=True)]
            for i, row in enumerate(rows_of(matrix.values))]
