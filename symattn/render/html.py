"""One self-contained HTML file with MathML: no JavaScript, no network, readable in any current browser.

The math is DerivationRenderer's LaTeX, converted to MathML by latex2mathml; an aligned derivation becomes a
two-column table of MathML cells, so the = and ≈ line up as on paper.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from sympy import Rational

from ..document.steps import Derivation, FlowFigure, Heading, Heatmap, Paragraph, References, TextTable
from ..features.rope.figure import html_figure
from ..features.rope.steps import RopeFigure
from ..numbers.display import format_number
from ..typeset.figures.flow import caption, layout
from ..typeset.figures.svg import flow_svg
from ..typeset.layout import heat_cells, visible_width
from .escape import escape_attribute, escape_html
from .printers import DerivationRenderer
from .web import PAGELESS_SETTINGS, PagelessMixin

# Fonts that exist on common systems, Japanese ones by their names on Linux, macOS and Windows, then the generic
# family: a machine without the first still shows Japanese (one with only "Noto Sans CJK JP" showed boxes).
SERIF = ('"Noto Serif", "Noto Serif CJK JP", "Noto Serif JP", "Source Han Serif JP", "Source Han Serif", '
         '"Hiragino Mincho ProN", "Hiragino Mincho Pro", "Yu Mincho", "YuMincho", "Harano Aji Mincho", '
         '"IPAexMincho", "IPAMincho", "Noto Sans CJK JP", "Noto Sans JP", "Source Han Sans JP", '
         '"Hiragino Kaku Gothic ProN", "Hiragino Sans", "Yu Gothic", "YuGothic", "Harano Aji Gothic", '
         '"Meiryo", serif')
STYLE = f"""
body {{ font-family: {SERIF}; max-width: 52em; margin: 2em auto; padding: 0 1em; line-height: 1.6;
       color: #1a1a1a; }}
h1 {{ font-size: 1.6em; }} h2 {{ margin-top: 2em; border-bottom: 1px solid #ccc; }} h3 {{ margin-top: 1.6em; }}
.subtitle, .caption {{ color: #555; font-style: italic; }}
:lang(ja) .subtitle, :lang(ja) .caption {{ font-style: normal; }}
.note {{ color: #555; font-size: 0.9em; border-left: 3px solid #ccc; padding-left: 0.8em; }}
table.data {{ border-collapse: collapse; margin: 1em auto; }}
table.data th, table.data td {{ border-top: 1px solid #bbb; border-bottom: 1px solid #bbb; padding: 0.25em 0.7em; }}
table.eq {{ margin: 0.8em auto; border-collapse: collapse; }}
table.eq td {{ padding: 0.15em 0.2em; vertical-align: baseline; }}
table.eq td.left {{ text-align: right; }} table.eq td.right {{ text-align: left; }}
math[display="block"] {{ margin: 0.6em 0; }}
figure {{ margin: 1.5em 0; text-align: center; }}
figure svg.flow {{ max-width: 100%; height: auto; font-family: {SERIF}; }}
figcaption {{ text-align: left; margin-top: 0.6em; }}
code {{ font-family: "Noto Sans Mono", "DejaVu Sans Mono", Menlo, Consolas, monospace; }}
table.heatmap td {{ text-align: center; }}
.heatscale {{ text-align: center; font-size: 0.9em; }}
.heatbar {{ display: inline-block; width: 8em; height: 0.9em; vertical-align: middle; border: 1px solid #555;
           background: linear-gradient(to right, rgba(@HEAT@, 0), rgba(@HEAT@, @TOP@)); }}
"""


# The heatmaps' blue, and how opaque it is for the largest weight (percent)
HEAT_RGB = "40, 90, 200"
HEAT_PERCENT = 60
STYLE = STYLE.replace("@HEAT@", HEAT_RGB).replace("@TOP@", str(HEAT_PERCENT / 100))

_PLACEHOLDER = re.compile(r"SYMATTNTEXT(\d+)Z")


class HtmlRenderer(PagelessMixin, DerivationRenderer):
    """The derivation's math as MathML, in an HTML page."""

    format_name = "HTML"
    default_settings: ClassVar[dict[str, Any]] = {**DerivationRenderer.default_settings, **PAGELESS_SETTINGS}
    pure_text = False  # math_text's placeholders

    def __init__(self, **settings: Any) -> None:
        super().__init__(**settings)
        self._texts: list[str] = []  # user text met inside math, restored after the MathML conversion

    # ------------------------------------------------------------ text and math

    def escape_text(self, text: str) -> str:
        return escape_html(text)

    def math_text(self, text: str) -> str:
        """A placeholder for user text inside \\text{}: MathML gets the text itself, HTML-escaped, not LaTeX."""
        self._texts.append(text)
        return f"SYMATTNTEXT{len(self._texts) - 1}Z"

    def token(self, name: str) -> str:
        return f"<code>{escape_attribute(name)}</code>"

    def mathml(self, latex: str, display: str, displaystyle: bool = False) -> str:
        """MathML of the LaTeX; displaystyle: full-size fractions and sums in an inline <math> (aligned lines)."""
        from latex2mathml.converter import convert

        converted = tidy_mathml(convert(latex, display=display))
        if displaystyle:
            converted = converted.replace(' display="inline">', ' display="inline" displaystyle="true">', 1)
        # in one pass: a user text that reads like a placeholder stays the text it is
        return _PLACEHOLDER.sub(lambda m: escape_attribute(self._texts[int(m.group(1))]), converted)

    def inline(self, math: str) -> str:
        return self.mathml(math, "inline")

    def display(self, math: str) -> str:
        return f"<div class=\"display\">{self.mathml(math, 'block')}</div>"

    def align(self, lines) -> str:
        rows = []
        for line in lines:
            left, right = split_alignment(line)
            rows.append(f"<tr><td class=\"left\">{self.mathml(left, 'inline', True) if left.strip() else ''}</td>"
                        f"<td class=\"right\">{self.mathml(right, 'inline', True)}</td></tr>")
        return "<table class=\"eq\">" + "".join(rows) + "</table>"

    def table(self, header: list[str], tokens: list[str], columns: list[list[str]]) -> str:
        head = "".join(f"<th>{h}</th>" for h in header)
        body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in [token, *[col[i] for col in columns]]) + "</tr>"
                       for i, token in enumerate(tokens))
        return f"<table class=\"data\"><tr>{head}</tr>{body}</table>"

    # ------------------------------------------------------------ document and steps

    def body(self, derivation: Derivation) -> str:
        self.__dict__.pop("rope_figures", None)  # each document counts its RoPE figures from 1 (rope_figure.py)
        return "\n".join(self.render(step) for step in derivation.steps)

    def document(self, derivation: Derivation) -> str:
        title, subtitle = self.titles(derivation)
        return ("<!DOCTYPE html>\n"
                f"<html lang=\"{self.lang}\">\n<head>\n<meta charset=\"utf-8\">\n"
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                f"<title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
                f"<h1>{title}</h1>\n<p class=\"subtitle\">{subtitle}</p>\n{self.body(derivation)}\n</body>\n</html>\n")

    def heading(self, level: int, text: str) -> str:
        level = min(level + 1, 6)
        return f"<h{level}>{text}</h{level}>"

    def paragraph(self, text: str, note: bool = False) -> str:
        return f"<p class=\"{'note' if note else 'text'}\">{text}</p>"

    def _print_Heading(self, step: Heading) -> str:
        return self.heading(step.level, self.text(step.key, step.params))

    def _print_Paragraph(self, step: Paragraph) -> str:
        return self.paragraph(self.text(step.key, step.params), step.note)

    def _print_TextTable(self, step: TextTable) -> str:
        columns = [[self.written(row[c]) for row in step.rows] for c in range(len(step.header))]
        return self.table([self.written(cell) for cell in step.header], columns[0], columns[1:])

    def _print_References(self, step: References) -> str:
        items = "".join(f"<li>{self.written(item)}</li>" for item in step.items)
        return f"<ol class=\"references\">{items}</ol>"

    def _print_FlowFigure(self, step: FlowFigure) -> str:
        """The figure as inline SVG, named by its caption."""
        figure = layout(self, step)
        lines = {box.name: [(line.kind, line.content if line.kind == "math" else self.text(line.content, line.params))
                            for line in box.lines] for box in figure.boxes}
        ident = f"symattn-figure-{step.number}"
        svg = flow_svg(figure, lines, ident)
        return (f"<figure>{svg}<figcaption class=\"caption\" id=\"{ident}\">{caption(self, step)}</figcaption>"
                "</figure>")

    def _print_RopeFigure(self, step: RopeFigure) -> str:
        return html_figure(self, step)  # RoPE's rotation of one pair: the matrix product, then the drawing

    def _print_Heatmap(self, step: Heatmap) -> str:
        """Shaded cells, every weight column of one width (the widest name or value): the darker the blue, the larger
        the weight; every cell shows its value; under the table the colour scale from 0 to the largest weight."""
        cells = heat_cells(step, self.digits, HEAT_PERCENT)
        cols = len(step.keys)
        width = max(visible_width(text) for text in (*step.keys, *cells.texts)) + 2  # characters, with the padding
        columns = "<col>" + f"<col style=\"width: {width}ch\">" * cols
        head = "<th></th>" + "".join(f"<th>{self.token(k)}</th>" for k in step.keys)
        rows = []
        for r, query in enumerate(step.queries):
            shaded = []
            for i in range(r * cols, (r + 1) * cols):
                alpha = format_number(Rational(cells.shades[i], 100), 2).text
                shaded.append(f"<td style=\"background: rgba({HEAT_RGB}, {alpha})\">{cells.texts[i]}</td>")
            rows.append(f"<tr><th>{self.token(query)}</th>{''.join(shaded)}</tr>")
        scale = (f"<p class=\"heatscale\">0 <span class=\"heatbar\"></span> {cells.largest}</p>")
        return (f"<table class=\"data heatmap\"><colgroup>{columns}</colgroup><tr>{head}</tr>{''.join(rows)}</table>"
                + scale)


# latex2mathml's stretchy brackets (\\left( … \\right), \\bigl( … \\bigr)): Chromium sets them apart from their
# contents ("sin ( 1 )"); around contents no taller than a line they need not stretch.
_FENCE = re.compile(r'<mo stretchy="true" fence="true"[^>]*>([^<]*)</mo>')
_OPENING = {"(", "[", "{", "&#x00028;", "&#x0005B;", "&#x0007B;", "&#x027E8;"}
_TALL = ("<mfrac", "<mtable", "<msqrt", "<munder", "<mover")
# A minus sign that starts a number after an operator or an opening bracket, or at the start of a row: a sign, not
# a subtraction (MathML would space it as one: "( − 0.3)").
_SIGN = re.compile(r'((?:<mo[^>]*>(?!&#x00029;|&#x0005D;|&#x0007C;)[^<]*</mo>|<mrow>|<mtd>|<math[^>]*>))'
                   r'<mo>&#x02212;</mo><mn>([^<]*)</mn>')
# An operator name (\\operatorname{softmax}) is an identifier, as sin is: no operator spacing around it.
_NAME = re.compile(r"<mo>([A-Za-z]{2,})</mo>")


def tidy_mathml(mathml: str) -> str:
    """latex2mathml's MathML as TeX spaces it: brackets around short contents do not stretch (sin(1)), a leading
    minus is a sign (−0.3), and an operator name reads as a function's name (softmax(a))."""
    pieces: list[str] = []  # the text between fences, and each fence as its match
    stack: list[int] = []
    fixed: dict[int, bool] = {}  # the index of a fence in pieces: whether it stays stretchy
    last = 0
    for match in _FENCE.finditer(mathml):
        pieces.append(mathml[last:match.start()])
        pieces.append(match.group(0))
        at = len(pieces) - 1
        if match.group(1) in _OPENING:
            stack.append(at)
        elif stack:
            opening = stack.pop()
            inside = "".join(pieces[opening + 1:at])
            fixed[opening] = fixed[at] = any(tag in inside for tag in _TALL)
        last = match.end()
    pieces.append(mathml[last:])
    for at, tall in fixed.items():
        if not tall:
            pieces[at] = f'<mo stretchy="false">{_FENCE.match(pieces[at]).group(1)}</mo>'
    return _NAME.sub(r"<mi>\1</mi>", _SIGN.sub(r"\1<mn>&#x02212;\2</mn>", "".join(pieces)))


def split_alignment(line: str) -> tuple[str, str]:
    """'lhs &= rhs' → ('lhs', '= rhs'), at the first & outside braces and environments (bmatrix has its own)."""
    depth = 0
    i = 0
    while i < len(line):
        if line.startswith("\\begin{", i):
            depth += 1
        elif line.startswith("\\end{", i):
            depth -= 1
        elif line[i] == "\\":
            i += 2
            continue
        elif line[i] == "{":
            depth += 1
        elif line[i] == "}":
            depth -= 1
        elif line[i] == "&" and depth == 0:
            return line[:i], line[i + 1:]
        i += 1
    return "", line


def render_html(derivation: Derivation, **settings: Any) -> str:
    """The derivation as one self-contained HTML page."""
    settings.setdefault("lang", derivation.lang)
    settings.setdefault("digits", derivation.digits)
    return HtmlRenderer(**settings).document(derivation)
