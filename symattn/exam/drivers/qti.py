"""Canvas QTI (--format qti: a quiz per version, canvas-qti-07.zip, and canvas-qti-07.txt, its text2qti source)
through text2qti: each version as text2qti's quiz text, then its own XML (text2qti.qti.QTI), zipped with fixed
dates (the manifest's too) so that the same options give the same bytes.

A version's quiz is a text region with its problem, then a numerical question per blank. text2qti sets whole or
half points and ranges to 4 decimals, so its XML gets each question's share of its part's points (in hundredths,
the part's total exact) and the range exact value ± tolerance, written in full; the quiz's points_possible is the
paper's total."""

from __future__ import annotations

import io
import re
import zipfile
from decimal import Decimal
from typing import Any

from ...document.steps import Name, SqrtDk, Token
from ...engine import entries as rows_of
from ...errors import SpecError
from ...exercises.exercise import AnswerTable, Exercise, GivenTable, GivenVector, Part, accepted, angle_rows, exp_rows
from ...numbers.decimals import decimal_places, to_decimal
from ...render.markdown import MarkdownRenderer
from ..options import ExamOptions
from .base import Share
from .grading import LETTERS
from .moodle import exam_name, typed

INDENT = " " * len("Text: ")  # a text region's continuation lines, as text2qti reads them
MAX_DIGITS = 4  # text2qti writes a numerical range to 4 decimals
SMALLEST = 0.0001  # text2qti refuses a range end nearer 0 than this
DATE = "1980-01-01"  # the manifest's date, as the zip members' (not today's: the same bytes on any day)
PLACES = 20  # the decimals of an exact value in a range's ends
# a question's points and exact range, for its XML: a text2qti comment line, so the .txt stays text2qti's input
_SCORE = re.compile(r"^% symattn: points (\S+), accepts \[(\S+), (\S+)\]$", re.M)


def text2qti() -> Any:
    """text2qti's modules, or a one-line error saying how to install them."""
    try:
        from text2qti import config, qti, quiz
    except ImportError as error:
        raise SpecError("--format", "qti needs the text2qti package: pip install 'symattn[qti]' "
                                    "(or pip install text2qti)") from error
    return config, quiz, qti


def quiz_package(source: str) -> bytes:
    """text2qti's QTI of a quiz text, zipped as text2qti's QTI.write lays it out, with fixed dates, each question's
    points and exact range (the `% symattn:` comments of the source) written into its XML, and the quiz's total."""
    config, quiz, qti = text2qti()
    from text2qti.xml_imsmanifest import imsmanifest

    scores = [match.groups() for match in _SCORE.finditer(source)]
    try:
        package = qti.QTI(quiz.Quiz(source, config=config.Config()))
    except quiz.Text2qtiError as error:
        raise SpecError("--format", f"qti: text2qti refused the quiz: {error}") from error
    total = sum((Decimal(points) for points, _, _ in scores), Decimal(0))
    meta = re.sub(r"<points_possible>[^<]*</points_possible>", f"<points_possible>{total:f}</points_possible>",
                  package.assessment_meta)
    manifest = imsmanifest(manifest_identifier=package.manifest_identifier,
                           assessment_identifier=package.assessment_identifier,
                           dependency_identifier=package.dependency_identifier, images=package.quiz.images, date=DATE)
    stream = io.BytesIO()
    with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        folder = package.assessment_identifier
        for name, data in (("imsmanifest.xml", manifest), ("non_cc_assessments/", ""),
                           (f"{folder}/assessment_meta.xml", meta),
                           (f"{folder}/{folder}.xml", scored(package.assessment, scores))):
            zf.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)
    return stream.getvalue()


def scored(assessment: str, scores: list[tuple[str, str, str]]) -> str:
    """text2qti's assessment XML with each numerical question's points and range [low, high] (in order)."""
    items = assessment.split("<item ")
    numbered = [i for i, item in enumerate(items) if "<fieldentry>numerical_question</fieldentry>" in item]
    if len(numbered) != len(scores):
        raise AssertionError(f"{len(numbered)} numerical questions for {len(scores)} scores")
    for i, (points, low, high) in zip(numbered, scores, strict=True):
        item = re.sub(r"(<fieldlabel>points_possible</fieldlabel>\s*<fieldentry>)[^<]*", rf"\g<1>{points}", items[i])
        item = re.sub(r'(<vargte respident="response1">)[^<]*', rf"\g<1>{low}", item)
        items[i] = re.sub(r'(<varlte respident="response1">)[^<]*', rf"\g<1>{high}", item)
    return "<item ".join(items)


def shares(points: int, count: int) -> list[Decimal]:
    """A part's points over its count questions in hundredths, as even as hundredths allow, adding up to points."""
    cents = 100 * points
    return [Decimal(cents * (i + 1) // count - cents * i // count).scaleb(-2) for i in range(count)]


def exact_range(value, tolerance: str, known=None) -> tuple[str, str]:
    """The answers within ± tolerance of the exact value: its ends exact where the value has at most PLACES
    decimals, else rounded outwards by 10^-PLACES. It holds the exact value and every rounding the tolerance
    allows."""
    places = decimal_places(value)
    exact, tol = to_decimal(value, PLACES, known=known), Decimal(tolerance)
    unit = Decimal(0) if places is not None and places <= PLACES else Decimal(1).scaleb(-PLACES)
    return format((exact - tol - unit).normalize(), "f"), format((exact + tol + unit).normalize(), "f")


def answer_range(low, high) -> str:
    """A numerical answer's [min, max] for text2qti: ends within ±SMALLEST of 0 are moved out to ±SMALLEST."""
    low = min(float(low), -SMALLEST) if abs(low) < SMALLEST else float(low)
    high = max(float(high), SMALLEST) if abs(high) < SMALLEST else float(high)
    return f"[{low!r}, {high!r}]"


class QtiDriver:
    """Writes a quiz per version: text2qti's quiz text is made per version (in the workers), parsed at the end."""

    name = "qti"

    def __init__(self, options: ExamOptions) -> None:
        if options.digits > MAX_DIGITS:
            raise SpecError("--digits", f"--format qti takes at most {MAX_DIGITS} decimals (text2qti writes "
                                        f"numerical answers to {MAX_DIGITS}), got {options.digits}")
        text2qti()
        self.options = options
        self.digits = options.digits
        self.markdown = MarkdownRenderer(lang=options.lang, digits=options.digits)

    def files(self, shares: list[Share]) -> dict[str, str | bytes]:
        """One quiz per version, canvas-qti-07.zip, with its text2qti source canvas-qti-07.txt (edit it and run
        text2qti on it to change the quiz): Canvas assigns a quiz to the students who sit that version."""
        out: dict[str, str | bytes] = {}
        for share in shares:
            label = self.markdown.text("exam.version", {"label": share.label})
            source = f"Quiz title: {exam_name(self.options)} — {label}\n\n{share.text}"
            out[f"canvas-qti-{share.label}.zip"], out[f"canvas-qti-{share.label}.txt"] = quiz_package(source), source
        return out

    def version(self, exercise: Exercise) -> str:
        """The version's text region and its numerical questions, in text2qti's syntax, each with a comment of its
        points and exact range for the XML."""
        text = self.markdown.text
        label = text("exam.version", {"label": exercise.label})
        focus = {"token": Token(exercise.focus), "d_k": SqrtDk(exercise.d_k)}
        problem = [text("exam.instructions", {"digits": self.digits, "points": exercise.points}),
                   text(*exercise.intro), *self.given(exercise),
                   text(*exercise.task) if exercise.task else text("exam.focus", focus),
                   *(self.softmax(exercise.exp_table, exercise.softmax) if exercise.softmax else []),
                   *(self.angles(exercise.angles) if exercise.angles else [])]
        lines = [f"Text title: {label}", "Text: " + f"\n\n{INDENT}".join(p.replace("\n", " ") for p in problem), ""]
        number = 0
        for i, part in enumerate(exercise.parts):
            question = text(part.question, part.params)
            blanks = self.blanks(part)
            for (prompt, value, known), points in zip(blanks, shares(part.points, len(blanks)), strict=True):
                number += 1
                low, high = accepted(value, part.tolerance, self.digits, known)
                exact_low, exact_high = exact_range(value, part.tolerance, known)
                lines += [f"Title: {label} ({LETTERS[i]}) {number}",
                          f"{number}.  {label} ({LETTERS[i]}) {question} {prompt}", f"=   {answer_range(low, high)}",
                          f"% symattn: points {points}, accepts [{exact_low}, {exact_high}]", ""]
        return "\n".join(lines)

    def given(self, exercise: Exercise) -> list[str]:
        """The inputs, a line each: tables by token, matrices as their rows."""
        lines = []
        for item in exercise.given:
            if isinstance(item, (GivenTable, GivenVector)):
                tokens = item.tokens if isinstance(item, GivenTable) else (item.token,)
                lines += [f"{self.markdown.token(t)}: {row}" for t, row in zip(tokens, self.rows(item.matrix),
                                                                               strict=True)]
            else:
                lines.append(f"{self.markdown.param(item.name)} = [{', '.join(self.rows(item.matrix))}]")
        return lines

    def rows(self, matrix) -> list[str]:
        return ["[" + ", ".join(row) + "]" for row in typed(matrix, self.digits)]

    def softmax(self, values: tuple | None, strings: str = "exam") -> list[str]:
        """The paper's e^x table as a line of x: e^x pairs, or the calculator's sentence (in the words of the
        language section `strings`, a kind's own)."""
        text = self.markdown.text
        if values is None:
            return [text(f"{strings}.softmax_calculator", {"digits": self.digits})]
        return [text(f"{strings}.softmax_table_boxes", {"digits": self.digits, "exp": Name("e^x")}),
                "; ".join(f"{x}: {e}" for x, e in exp_rows(values))]

    def angles(self, angles: tuple) -> list[str]:
        """RoPE's table of cos and sin as a line of φ: (cos φ, sin φ), as the paper rounds them."""
        params = {"digits": self.digits, "m": Name("m"), "d_k": Name("d_k")}
        rows = [f"{a}: ({c}, {s})" for a, c, s in angle_rows(angles, self.digits)]
        return [self.markdown.text("exam_kinds.angle_table", params), "; ".join(rows)]

    def blanks(self, part: Part) -> list[tuple[str, Any, Any]]:
        """(what the blank asks for, exact value, its numbers) of every answer entry of a part, in order."""
        out = []
        for answer in part.answers:
            if isinstance(answer, AnswerTable):
                for i, token in enumerate(answer.tokens):
                    for name, column in zip(answer.header[1:], answer.columns, strict=True):
                        out += [(f"{self.entry(name, j)}, {self.markdown.token(token)}", v, column.known)
                                for j, v in enumerate(rows_of(column.values)[i], start=1)]
            else:
                out += [(self.entry(answer.name, j), v, answer.values.known)
                        for j, v in enumerate(answer.entries, start=1)]
        return out

    def entry(self, name: Name, j: int) -> str:
        return f"{self.markdown.param(name)}[{j}]"
