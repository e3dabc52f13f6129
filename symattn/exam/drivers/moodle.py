"""Moodle XML: one cloze question per version, a NUMERICAL blank per answer, tolerance matching the rounding."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from math import lcm
from typing import Any

from sympy import Expr, cos, sin

from ...decimals import to_decimal
from ...engine import Numbers
from ...engine import entries as rows_of
from ...model import Name, SqrtDk, Token
from ...numfmt import format_numbers
from ...render.base import Renderer
from ...render.escape import safe
from ...spec.model import integer_sqrt
from ..exercise import AnswerTable, AnswerVector, Exercise, GivenTable, GivenVector, Part
from ..options import ExamOptions
from .base import Share

ANSWER_DECIMALS = 12
# Names the newer kinds' exams use, as plain Unicode (the question text has no math markup)
LETTERS = {"mu": "μ", "var_layer": "σ²", "uh": "û", "gamma": "γ", "beta": "β", "eps": "ε", "l": "ℓ", "qh": "q̂",
           "Kh": "K̂"}
_BLANK, _TOLERANCE = "@WEIGHT@", "@TOLERANCE@"


def weights_per_blank(parts: list[tuple[Part, int]]) -> list[int]:
    """Integer cloze weights, one per part of (part, its number of blanks), so that each part's blanks add up
    in proportion to its points."""
    common = lcm(*(count for _, count in parts))
    return [part.points * common // count for part, count in parts]


class ClozeText(Renderer):
    """The language strings as the HTML of a cloze question's text: symbols in italics with HTML sub- and
    superscripts (no math markup), everything escaped so that no brace can open a blank."""

    format_name = "Moodle"

    def escape_text(self, text: str) -> str:
        return safe(text)

    def token(self, name: str) -> str:
        return f"<code>{safe(name)}</code>"

    def param(self, value: Any) -> str:
        if isinstance(value, Name):
            return self.symbol(value)
        if isinstance(value, SqrtDk):
            root = integer_sqrt(value.d_k)
            tail = f" = {root}" if root is not None else ""
            return f"<i>√d<sub>k</sub></i> = √{value.d_k}{tail}"
        return super().param(value)

    def symbol(self, name: Name) -> str:
        if name.base in LETTERS:  # the newer kinds' Greek and accented names (render/math.py NOTATION's)
            base, sub = LETTERS[name.base], ""
        else:
            base, _, sub = name.base.partition("_")
        subscript = safe(name.token) if name.token is not None else (name.label or sub)
        head = f"<sup>({name.head})</sup>" if name.head is not None else ""
        return f"<i>{safe(base)}</i>{head}" + (f"<sub>{subscript}</sub>" if subscript else "")


class MoodleDriver:
    """Builds the quiz: question text in HTML (no math markup needed), answers as cloze NUMERICAL blanks."""

    name = "moodle"

    def __init__(self, options: ExamOptions) -> None:
        self.digits = options.digits
        self.html = ClozeText(lang=options.lang, digits=options.digits)
        self.text, self.symbol = self.html.text, self.html.symbol

    def files(self, shares: list[Share]) -> dict[str, str]:
        """moodle.xml: the question bank of every version."""
        return {"moodle.xml": self.quiz([(share.label, share.text, share.points) for share in shares])}

    def quiz(self, questions: list[tuple[str, str, int]]) -> str:
        """The quiz of the versions' (label, question as version() writes it, points)."""
        quiz = ET.Element("quiz")
        for label, html_, points in questions:
            question = ET.SubElement(quiz, "question", type="cloze")
            ET.SubElement(ET.SubElement(question, "name"), "text").text = (
                f"symattn {self.text('exam.version', {'label': label})}")
            body = ET.SubElement(question, "questiontext", format="html")
            ET.SubElement(body, "text").text = html_
            ET.SubElement(question, "defaultgrade").text = str(points)
            ET.SubElement(ET.SubElement(question, "generalfeedback", format="html"), "text").text = ""
            ET.SubElement(question, "penalty").text = "0.3333333"
            ET.SubElement(question, "hidden").text = "0"
        ET.indent(quiz)
        return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(quiz, encoding="unicode") + "\n"

    # ------------------------------------------------------------ question

    def version(self, exercise: Exercise) -> str:
        """One version's question text: the inputs, then a NUMERICAL blank for every answer of every part."""
        params = {'digits': self.digits, 'points': exercise.points}
        parts = [f"<p>{self.text('exam.instructions', params)}</p>", f"<p>{self.text(*exercise.intro)}</p>"]
        for item in exercise.given:
            if isinstance(item, GivenVector):
                parts.append(self.table([safe(item.name.base)], [item.token], [self.given(item.matrix)]))
            elif isinstance(item, GivenTable):
                parts.append(self.table([self.text(item.header_key)], item.tokens, [self.given(item.matrix)]))
            else:
                parts.append(f"<p>{self.symbol(item.name)} =</p>" + self.matrix(self.given(item.matrix)))
        focus = {'token': Token(exercise.focus), 'd_k': SqrtDk(exercise.d_k)}
        parts.append(f"<p>{self.text(*exercise.task) if exercise.task else self.text('exam.focus', focus)}</p>")
        if exercise.softmax:
            parts.append(f"<p>{self.text(exercise.softmax + '.softmax_calculator', {'digits': self.digits})}</p>")
        if exercise.angles:  # RoPE: the cos and sin of every angle the rotations use, as on the paper
            angle_params = {"digits": self.digits, "m": Name("m"), "d_k": Name("d_k")}
            parts.append(f"<p>{self.text('exam_kinds.angle_table', angle_params)}</p>"
                         + self.angle_table(exercise.angles))
        answers = [(part, self.answers(part)) for part in exercise.parts]
        weights = weights_per_blank([(part, html_.count(_BLANK)) for part, html_ in answers])
        parts.append("<ol type=\"a\">")
        for (part, answer), weight in zip(answers, weights, strict=True):
            blanks = answer.replace(_BLANK, str(weight)).replace(_TOLERANCE, part.tolerance)
            parts.append(f"<li>{self.text(part.question, part.params)} ({part.points})<br>{blanks}</li>")
        parts.append("</ol>")
        return "\n".join(parts)

    def answers(self, part: Part) -> str:
        """A part's blanks: a table of token rows, or vectors (captioned when the part has several)."""
        pieces = []
        for k, answer in enumerate(part.answers):
            if isinstance(answer, AnswerTable):
                pieces.append(self.blank_table(answer))
                continue
            blanks = self.blanks(answer.entries, answer.values.known)
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

    def blank(self, value: Expr, known: Numbers | None = None) -> str:
        answer = format(to_decimal(value, ANSWER_DECIMALS, known=known).normalize(), "f")
        return f"{{{_BLANK}:NUMERICAL:={answer}:{_TOLERANCE}}}"  # weight and tolerance are filled in per part

    def blanks(self, values, known: Numbers | None = None) -> str:
        return "[" + ", ".join(self.blank(v, known) for v in values) + "]"

    def blank_table(self, answer: AnswerTable) -> str:
        header = "".join(f"<th>{self.symbol(name) if isinstance(name, Name) else self.text(name)}</th>"
                         for name in answer.header[1:])  # a column named by a language key: its text
        matrices = [(rows_of(column.values), column.known) for column in answer.columns]
        rows = "".join(
            f"<tr><td><code>{safe(token)}</code></td>"
            + "".join(f"<td>{self.blanks(matrix[i], known)}</td>" for matrix, known in matrices) + "</tr>"
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
        rows = "".join("<tr>" + "".join(f"<td>{format_numbers([value], places)[0].text}</td>" for value, places in
                                        ((a, 10), (cos(a), self.digits + 2), (sin(a), self.digits + 2))) + "</tr>"
                       for a in angles)
        return f"<table border=\"1\"><tr><th><i>φ</i></th><th>cos <i>φ</i></th><th>sin <i>φ</i></th></tr>{rows}</table>"

    def matrix(self, matrix: list[list[str]]) -> str:
        rows = "".join("<tr>" + "".join(f"<td>{t}</td>" for t in row) + "</tr>" for row in matrix)
        return f"<table border=\"1\">{rows}</table>"

    def given(self, matrix) -> list[list[str]]:
        """An input matrix's rows as typed (a fraction as p/q)."""
        cols = matrix.values.cols
        return [[f"{v.p}/{v.q}" if places is None and not v.is_Integer
                 else format_numbers([v], self.digits, places or 0)[0].text
                 for v, places in zip(row, matrix.written[i * cols:(i + 1) * cols], strict=True)]
                for i, row in enumerate(rows_of(matrix.values))]
