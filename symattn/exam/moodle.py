"""Moodle XML: one cloze question per version, a NUMERICAL blank per answer, tolerance matching the rounding."""

from __future__ import annotations

import html
import string
import xml.etree.ElementTree as ET
from decimal import Decimal
from math import lcm
from typing import Any

from sympy import Expr, ImmutableMatrix

from .. import i18n
from ..engine import entries as rows_of
from ..engine import flat_entries
from ..model import Derivation, Name, ScaleFactor, Token
from ..numfmt import format_numbers, to_decimal
from .paper import POINTS, part_key

ANSWER_DECIMALS = 12
_BLANK, _TOLERANCE = "@WEIGHT@", "@TOLERANCE@"


def tolerance(digits: int, part: str = "qkv") -> str:
    """How far an answer may be from the exact value.

    Exact values (Q, K, V, scores, scaled scores): half a unit in the last place asked for (±0.00005 at 4
    decimals). Weights: one unit, as they are divided out of rounded e^x. Outputs: ten units, as students sum
    rounded weights times the values.
    """
    units = {"weights": Decimal(10), "output": Decimal(100)}.get(part, Decimal(5))
    return format(units.scaleb(-(digits + 1)).normalize(), "f")


def weights_per_blank(counts: dict[str, int]) -> dict[str, int]:
    """Integer cloze weights so that each part's blanks add up in proportion to its points."""
    common = lcm(*counts.values())
    return {part: POINTS[part] * common // count for part, count in counts.items()}


class MoodleWriter:
    """Builds the quiz: question text in HTML (no math markup needed), answers as cloze NUMERICAL blanks."""

    def __init__(self, lang: str, digits: int) -> None:
        self.lang = lang
        self.digits = digits


    def quiz(self, questions: list[tuple[str, str]]) -> str:
        """The quiz of the versions' (label, question as question_html writes it)."""
        quiz = ET.Element("quiz")
        for label, html_ in questions:
            question = ET.SubElement(quiz, "question", type="cloze")
            ET.SubElement(ET.SubElement(question, "name"), "text").text = (
                f"symattn {self.text('exam.version', {'label': label})}")
            body = ET.SubElement(question, "questiontext", format="html")
            ET.SubElement(body, "text").text = html_
            ET.SubElement(question, "defaultgrade").text = str(sum(POINTS.values()))
            ET.SubElement(ET.SubElement(question, "generalfeedback", format="html"), "text").text = ""
            ET.SubElement(question, "penalty").text = "0.3333333"
            ET.SubElement(question, "hidden").text = "0"
        ET.indent(quiz)
        return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(quiz, encoding="unicode") + "\n"

    # ------------------------------------------------------------ text

    def text(self, key: str, params: dict[str, Any] | None = None) -> str:
        """A language string as HTML, its {params} filled in."""
        out = []
        for literal, field, _spec, _conv in string.Formatter().parse(i18n.text(self.lang, key)):
            out.append(safe(literal))
            if field is not None:
                out.append(self.param((params or {})[field]))
        return "".join(out)

    def param(self, value: Any) -> str:
        if isinstance(value, Token):
            return f"<code>{safe(value.name)}</code>"
        if isinstance(value, Name):
            return self.name(value)
        if isinstance(value, ScaleFactor):
            root = int(value.d_k**0.5 + 0.5)
            tail = f" = {root}" if root * root == value.d_k else ""
            return f"<i>√d<sub>k</sub></i> = √{value.d_k}{tail}"
        return safe(str(value))

    def name(self, name: Name) -> str:
        base, _, sub = name.base.partition("_")
        subscript = safe(name.token) if name.token is not None else (name.label or sub)
        head = f"<sup>({name.head})</sup>" if name.head is not None else ""
        return f"<i>{safe(base)}</i>{head}" + (f"<sub>{subscript}</sub>" if subscript else "")

    # ------------------------------------------------------------ question

    def question_html(self, derivation: Derivation) -> str:
        section = derivation.sections[0]
        spec, result, kind = section.spec, section.result, section.kind
        total = sum(POINTS.values())
        parts = [f"<p>{self.text('exam.instructions', {'digits': self.digits, 'points': total})}</p>"]
        if kind == "cross_attention":
            parts.append(f"<p>{self.text('exam.given_cross', {'token': Token(spec.tokens[0])})}</p>")
            parts.append(self.table(["x"], [spec.tokens[0]], [self.given(spec.X)]))
            parts.append(self.table([self.text("table.encoder_output")], spec.memory_tokens, [self.given(spec.memory)]))
        else:
            parts.append(f"<p>{self.text('exam.given_multi' if kind == 'multi_head' else 'exam.given_self')}</p>")
            parts.append(self.table([self.text("table.embedding")], spec.tokens, [self.given(spec.X)]))
        weights = ([(Name(f"W_{c}", head=h), getattr(head_spec, f"W_{c}")) for h, head_spec in
                    enumerate(spec.heads, start=1) for c in "QKV"] + [(Name("W_O"), spec.W_O)]
                   if kind == "multi_head" else [(Name(f"W_{c}"), getattr(spec, f"W_{c}")) for c in "QKV"])
        for name, matrix in weights:
            parts.append(f"<p>{self.name(name)} =</p>" + self.matrix(self.given(matrix)))
        focus = spec.focus if kind == "multi_head" else spec.focus[0]
        d_k = spec.heads[0].d_k if kind == "multi_head" else spec.d_k
        parts.append(f"<p>{self.text('exam.focus', {'token': Token(focus), 'd_k': ScaleFactor(d_k)})}</p>")
        parts.append(f"<p>{self.text('exam.softmax_calculator', {'digits': self.digits})}</p>")
        answers = list(self.answers(kind, spec, result, focus))
        weights = weights_per_blank({part: html_.count(_BLANK) for part, html_ in answers})
        parts.append("<ol type=\"a\">")
        for part, answer in answers:
            params = {"token": Token(focus), "W_O": Name("W_O")}
            blanks = answer.replace(_BLANK, str(weights[part])).replace(_TOLERANCE, tolerance(self.digits, part))
            parts.append(f"<li>{self.text(part_key(kind, part), params)} ({POINTS[part]})<br>{blanks}</li>")
        parts.append("</ol>")
        return "\n".join(parts)

    def answers(self, kind: str, spec, result, focus: str):
        """(part, HTML with blanks) in the order of the paper."""
        if kind == "multi_head":
            i = spec.tokens.index(focus)
            heads = list(enumerate(result.attentions, start=1))
            yield "qkv", "".join(self.blank_table(spec.tokens, a, h) for h, a in heads)
            for part, pick in (("scores", lambda q: q.scores), ("scaled", lambda q: q.scaled),
                               ("weights", lambda q: q.softmax.weights)):
                yield part, "".join(f"{self.text('exam.head', {'h': h})}: {self.blanks(pick(a.queries[i]))}<br>"
                                    for h, a in heads)
            rows = [f"{self.name(Name('z', focus, head=h))}: {self.blanks(head)}<br>"
                    for h, head in enumerate(result.heads, start=1)]
            rows.append(f"{self.name(Name('z', label='concat'))}: {self.blanks(result.concat)}<br>")
            rows.append(f"{self.name(Name('z', label='final'))}: {self.blanks(result.output)}")
            yield "output", "".join(rows)
            return
        query = result.queries[spec.tokens.index(focus)]
        if kind == "cross_attention":
            yield "qkv", (f"{self.name(Name('Q', focus))}: {self.blanks(result.Q)}<br>"
                          + self.blank_table(spec.memory_tokens, result, None, letters="KV"))
        else:
            yield "qkv", self.blank_table(spec.tokens, result, None)
        yield "scores", self.blanks(query.scores)
        yield "scaled", self.blanks(query.scaled)
        yield "weights", self.blanks(query.softmax.weights)
        yield "output", self.blanks(query.output)

    # ------------------------------------------------------------ pieces

    def blank(self, value: Expr) -> str:
        answer = format(to_decimal(value, ANSWER_DECIMALS).normalize(), "f")
        return f"{{{_BLANK}:NUMERICAL:={answer}:{_TOLERANCE}}}"  # weight and tolerance are filled in per part

    def blanks(self, values) -> str:
        return "[" + ", ".join(self.blank(v) for v in entries(values)) + "]"

    def blank_table(self, tokens, result, head: int | None, letters: str = "QKV") -> str:
        header = "".join(f"<th>{self.name(Name(c, head=head))}</th>" for c in letters)
        matrices = [rows_of(getattr(result, c)) for c in letters]
        rows = "".join(
            f"<tr><td><code>{safe(token)}</code></td>"
            + "".join(f"<td>{self.blanks(matrix[i])}</td>" for matrix in matrices) + "</tr>"
            for i, token in enumerate(tokens))
        return f"<table border=\"1\"><tr><th></th>{header}</tr>{rows}</table>"

    def table(self, header: list[str], tokens, matrices: list[list[list[str]]]) -> str:
        cells = "".join(f"<th>{h}</th>" for h in header)
        rows = []
        for i, token in enumerate(tokens):
            vectors = "".join(f"<td>[{', '.join(matrix[i])}]</td>" for matrix in matrices)
            rows.append(f"<tr><td><code>{safe(token)}</code></td>{vectors}</tr>")
        return f"<table border=\"1\"><tr><th></th>{cells}</tr>{''.join(rows)}</table>"

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


def entries(values) -> list[Expr]:
    """The values, a matrix's row by row."""
    return list(flat_entries(values)) if isinstance(values, ImmutableMatrix) else list(values)


def safe(text: str) -> str:
    """HTML-escaped, and cloze's own braces neutralised (a brace would start a blank)."""
    return html.escape(text).replace("{", "&#123;").replace("}", "&#125;")
