"""One self-contained HTML file with MathML: no JavaScript, no network, readable in any current browser.

The math is DerivationRenderer's LaTeX, converted to MathML by latex2mathml; an aligned derivation becomes a
two-column table of MathML cells, so the = and ≈ line up as on paper.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from sympy import Rational

from ..model import Derivation, FlowFigure, Heading, Heatmap, Paragraph
from ..numfmt import format_number
from .escape import escape_attribute, escape_html
from .layout import heat_cells, visible_width
from .printers import DerivationRenderer
from .web import PAGELESS_SETTINGS, PagelessMixin

STYLE = """
body { font-family: "Noto Serif", "Noto Serif CJK JP", serif; max-width: 52em; margin: 2em auto; padding: 0 1em;
       line-height: 1.6; color: #1a1a1a; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; } h3 { margin-top: 1.6em; }
.subtitle, .caption { color: #555; font-style: italic; }
.note { color: #555; font-size: 0.9em; border-left: 3px solid #ccc; padding-left: 0.8em; }
table.data { border-collapse: collapse; margin: 1em auto; }
table.data th, table.data td { border-top: 1px solid #bbb; border-bottom: 1px solid #bbb; padding: 0.25em 0.7em; }
table.eq { margin: 0.8em auto; border-collapse: collapse; }
table.eq td { padding: 0.1em 0.2em; vertical-align: middle; }
table.eq td.left { text-align: right; } table.eq td.right { text-align: left; }
math[display="block"] { margin: 0.6em 0; }
code { font-family: "Noto Sans Mono", monospace; }
table.heatmap td { text-align: center; }
.heatscale { text-align: center; font-size: 0.9em; }
.heatbar { display: inline-block; width: 8em; height: 0.9em; vertical-align: middle; border: 1px solid #555;
           background: linear-gradient(to right, rgba(@HEAT@, 0), rgba(@HEAT@, @TOP@)); }
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

    def mathml(self, latex: str, display: str) -> str:
        from latex2mathml.converter import convert

        # in one pass: a user text that reads like a placeholder stays the text it is
        return _PLACEHOLDER.sub(lambda m: escape_attribute(self._texts[int(m.group(1))]),
                                convert(latex, display=display))

    def inline(self, math: str) -> str:
        return self.mathml(math, "inline")

    def display(self, math: str) -> str:
        return f"<div class=\"display\">{self.mathml(math, 'block')}</div>"

    def align(self, lines) -> str:
        rows = []
        for line in lines:
            left, right = split_alignment(line)
            rows.append(f"<tr><td class=\"left\">{self.mathml(left, 'inline') if left.strip() else ''}</td>"
                        f"<td class=\"right\">{self.mathml(right, 'inline')}</td></tr>")
        return "<table class=\"eq\">" + "".join(rows) + "</table>"

    def table(self, header: list[str], tokens: list[str], columns: list[list[str]]) -> str:
        head = "".join(f"<th>{h}</th>" for h in header)
        body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in [token, *[col[i] for col in columns]]) + "</tr>"
                       for i, token in enumerate(tokens))
        return f"<table class=\"data\"><tr>{head}</tr>{body}</table>"

    # ------------------------------------------------------------ document and steps

    def body(self, derivation: Derivation) -> str:
        return "\n".join(self.render(step) for step in derivation.steps)

    def document(self, derivation: Derivation) -> str:
        title, subtitle = self.titles(derivation)
        return ("<!DOCTYPE html>\n"
                f"<html lang=\"{self.lang}\">\n<head>\n<meta charset=\"utf-8\">\n"
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                f"<title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
                f"<h1>{title}</h1>\n<p class=\"subtitle\">{subtitle}</p>\n{self.body(derivation)}\n</body>\n</html>\n")

    def _print_Heading(self, step: Heading) -> str:
        level = min(step.level + 1, 6)
        return f"<h{level}>{self.text(step.key, step.params)}</h{level}>"

    def _print_Paragraph(self, step: Paragraph) -> str:
        return f"<p class=\"{'note' if step.note else 'text'}\">{self.text(step.key, step.params)}</p>"

    def _print_FlowFigure(self, step: FlowFigure) -> str:
        figure = self.display(self.flow_chain())
        return f"<figure>{figure}<figcaption class=\"caption\">{self.text('figure.caption')}</figcaption></figure>"

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
