"""A flow figure as inline SVG (no script, no fonts of its own): figures/flow.py's layout, with boxes sized from an
estimate of their text's width, generous so that any common serif font fits (the HTML tests measure it in Chromium).

Math in a box is a small subset of LaTeX, the one figures/flow.py writes: letters (italic), \\mathrm{}, _ and ^ with
a group, \\sqrt{}, and the symbols of _SYMBOLS; it becomes <tspan>s.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from .flow import Drawing, Flow, geometry

FONT = 14  # px, the text of a box
SCRIPT = 10  # px, sub- and superscripts and arrow labels' scripts
LABEL = 12  # px, an arrow's label
LINE = 20  # px from one line of a box to the next
PAD_X, PAD_Y = 9, 5  # px inside a box's frame
MM = 3.78  # px to a millimetre of typeset/figures/flow.py's gaps
MARGIN = 4  # px around the drawing

_SYMBOLS = {r"\top": "⊤", r"\div": "÷", r"\cdot": "·", r"\|": "‖", r"\cdots": "⋯", r"\vdots": "⋮", r"\sum": "Σ",
            r"\,": "\u2009", r"\ ": " ", r"\infty": "∞"}
_SPACED = {"=": " = ", "+": " + ", ",": ", "}
_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|[_^{}]|\s+|.")
_FILLS = {"step": ("#333", "#eef0fb"), "output": ("#333", "#fdf0e0"), "none": ("none", "none")}


@dataclass(frozen=True)
class Run:
    text: str
    italic: bool = False
    level: int = 0  # -1 subscript, 1 superscript


def runs(latex: str) -> list[Run]:
    """The math of a box as runs of text."""
    tokens = [t for t in _TOKEN.findall(latex) if not t.isspace()]
    out, _ = _group(tokens, 0, 0)
    return out


def _group(tokens: list[str], i: int, level: int) -> tuple[list[Run], int]:
    out: list[Run] = []
    while i < len(tokens) and tokens[i] != "}":
        token = tokens[i]
        i += 1
        if token == "{":
            inner, i = _group(tokens, i, level)
            out += inner
            i += 1
        elif token in ("_", "^"):
            inner, i = _atom(tokens, i, level + (-1 if token == "_" else 1))
            out += inner
        elif token in (r"\mathrm", r"\text"):
            inner, i = _atom(tokens, i, level)
            out += [Run(r.text, False, r.level) for r in inner]
        elif token == r"\hat":  # a combining circumflex over the letter: Q̂
            inner, i = _atom(tokens, i, level)
            out += [Run(r.text + "\u0302", r.italic, r.level) for r in inner]
        elif token == r"\sqrt":  # √ and its argument (no vinculum: SVG text cannot join one to the sign)
            inner, i = _atom(tokens, i, level)
            out += [Run("√", False, level), *inner]
        elif token in _SYMBOLS:
            out.append(Run(_SYMBOLS[token], False, level))
        else:
            spaced = _SPACED.get(token, token) if level == 0 and out else token
            out.append(Run(spaced, token.isalpha() and len(token) == 1 and token.isascii(), level))
    return out, i


def _atom(tokens: list[str], i: int, level: int) -> tuple[list[Run], int]:
    """One token or one {group} (a script's or a command's argument)."""
    if tokens[i] == "{":
        inner, i = _group(tokens, i + 1, level)
        return inner, i + 1
    inner, _ = _group(tokens[i:i + 1], 0, level)
    return inner, i + 1


def text_width(text: str, size: float) -> float:
    """A generous estimate of a text's width in px (wide serif fonts: DejaVu Serif's letters)."""
    width = 0.0
    for c in text:
        if ord(c) >= 0x2E80:
            width += 1.02
        elif c.isupper():
            width += 0.82
        elif c.isalpha() or c.isdigit():
            width += 0.68
        elif c in " \u2009":
            width += 0.36
        else:
            width += 0.85
    return width * size


def runs_width(parts: list[Run]) -> float:
    return sum(text_width(r.text, FONT if r.level == 0 else SCRIPT) for r in parts)


def tspans(parts: list[Run]) -> str:
    """Runs as <tspan>s; a script is shifted by dy and the next run shifted back."""
    out, shift = [], 0
    for r in parts:
        target = {0: 0, -1: 3, 1: -6}[max(-1, min(1, r.level))]
        attributes = []
        if target != shift:
            attributes.append(f'dy="{target - shift}"')
            shift = target
        if r.level:
            attributes.append(f'font-size="{SCRIPT}"')
        if r.italic:
            attributes.append('font-style="italic"')
        out.append(f"<tspan {' '.join(attributes)}>{html.escape(r.text)}</tspan>" if attributes
                   else html.escape(r.text))
    return "".join(out)


class SvgDims:
    """typeset/figures/flow.py's geometry in px, from the estimated widths."""

    def __init__(self, widths: dict[str, float], height: float) -> None:
        self.widths, self.height = widths, height

    def mm(self, value: float) -> float:
        return value * MM

    def width(self, box) -> float:
        return self.widths[box.name]

    def widest(self, name: str, values: list[float]) -> float:
        return max(values)

    def fix(self, name: str, value: float) -> float:
        return value


def flow_svg(figure: Flow, lines: dict[str, list[tuple[str, str]]], ident: str) -> str:
    """The figure as one <svg>. `lines`: each box's lines as ("math", LaTeX) or ("text", escaped HTML); `ident`:
    unique in the page, the id of the caption that names the figure (the arrowheads' marker is ident-arrow)."""
    contents = {name: [(kind, runs(value) if kind == "math" else value) for kind, value in box_lines]
                for name, box_lines in lines.items()}
    widths = {name: 2 * PAD_X + max(runs_width(v) if kind == "math" else text_width(html.unescape(v), FONT)
                                    for kind, v in box) for name, box in contents.items()}
    height = 2 * PAD_Y + LINE * max(len(box) for box in contents.values())
    drawing = geometry(figure, SvgDims(widths, height))
    return _svg(drawing, contents, ident)


def _svg(drawing: Drawing, contents: dict, ident: str) -> str:
    width, total = drawing.width + 2 * MARGIN, drawing.height + 2 * MARGIN
    half = drawing.box_height / 2

    def Y(y: float) -> float:  # y runs up in the geometry, from -half; down in SVG
        return round(MARGIN + drawing.height - half - y, 2)

    def X(x: float) -> float:
        return round(MARGIN + x, 2)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="flow" width="{round(width)}" height="{round(total)}" '
           f'viewBox="0 0 {round(width, 2)} {round(total, 2)}" role="img" aria-labelledby="{ident}">',
           f'<defs><marker id="{ident}-arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M0,0 L8,4 L0,8 z" fill="#333"/></marker></defs>']
    for placed in drawing.boxes:
        stroke, fill = _FILLS[placed.box.tint]
        out.append(f'<g class="box" data-name="{placed.box.name}"><rect x="{X(placed.x - placed.width / 2)}" '
                   f'y="{Y(placed.y + half)}" width="{round(placed.width, 2)}" height="{round(2 * half, 2)}" '
                   f'fill="{fill}" stroke="{stroke}"/>')
        box = contents[placed.box.name]
        first = Y(placed.y) - LINE * (len(box) - 1) / 2 + FONT * 0.35  # the first baseline: the lines centred
        for k, (kind, value) in enumerate(box):
            body = tspans(value) if kind == "math" else value
            out.append(f'<text x="{X(placed.x)}" y="{round(first + k * LINE, 2)}" text-anchor="middle">{body}</text>')
        out.append("</g>")
    for s in drawing.segments:
        marker = f' marker-end="url(#{ident}-arrow)"' if s.arrow else ""
        out.append(f'<line x1="{X(s.x)}" y1="{Y(s.y)}" x2="{X(s.x + s.dx * s.length)}" '
                   f'y2="{Y(s.y + s.dy * s.length)}" stroke="#333"{marker}/>')
    for label in drawing.labels:
        out.append(f'<text class="label" x="{X(label.x)}" y="{Y(label.y) - 3}" text-anchor="middle" '
                   f'font-size="{LABEL}">{tspans(runs(label.math))}</text>')
    out.append("</svg>")
    return "".join(out)
