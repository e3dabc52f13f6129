"""One self-contained HTML file with MathML: no JavaScript, no network, readable in any current browser.

The math is DerivationRenderer's LaTeX, converted to MathML by latex2mathml; an aligned derivation becomes a
two-column table of MathML cells, so the = and ≈ line up as on paper.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from sympy import Rational

from ..model import Derivation, FlowFigure, Heading, Heatmap, Paragraph, References, TextTable
from ..numfmt import format_number, shades
from .escape import escape_attribute, escape_html
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
"""


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
        figure = self.display(self.flow_chain())
        return f"<figure>{figure}<figcaption class=\"caption\">{self.text('figure.caption')}</figcaption></figure>"

    def _print_Heatmap(self, step: Heatmap) -> str:
        """Shaded cells: the darker the blue, the larger the weight; every cell shows its value."""
        head = "<th></th>" + "".join(f"<th>{self.token(k)}</th>" for k in step.keys)
        rows = []
        weights = step.weights.tolist()
        shade = iter(shades([w for row in weights for w in row], 60, step.known))  # 60 % blue for the largest
        for query, row in zip(step.queries, weights, strict=True):
            cells = []
            for w in row:
                alpha = format_number(Rational(next(shade), 100), 2).text
                cells.append(f"<td style=\"background: rgba(40, 90, 200, {alpha})\">"
                             f"{format_number(w, self.digits, known=step.known).text}</td>")
            rows.append(f"<tr><th>{self.token(query)}</th>{''.join(cells)}</tr>")
        return f"<table class=\"data heatmap\"><tr>{head}</tr>{''.join(rows)}</table>"


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
