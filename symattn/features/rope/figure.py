"""RoPE's figure of one pair turned by its angle (model_rope.RopeFigure), drawn in the plane of its two dimensions:
the axes x_a and x_b, the pair before the rotation, the pair after it, and the arc of the angle between them. One
geometry (millimetres, y up) for LaTeX's picture mode (straight lines and arcs as \\qbezier curves: no package
beyond the kernel) and for HTML's inline SVG. The numbers on the page are the exact ones; the drawing's
coordinates are floats, for the picture only."""

from __future__ import annotations

import html
import itertools
import math
from dataclasses import dataclass

from sympy import N

from .steps import RopeFigure

SIZE = 50.0  # mm, the square the figure is drawn in
REACH = 19.0  # mm, the length of the longer of the two vectors
ARC = 7.0  # mm, the radius of the angle's arc
HEAD = 2.2  # mm, an arrowhead's sides
PX = 3.78  # px to a millimetre (SVG)
CLEAR = 6.0  # mm, the room an axis label needs from a vector's tip and label before it moves to the other side


@dataclass(frozen=True)
class Geometry:
    before: tuple[float, float]  # the pair's tip, from the centre
    after: tuple[float, float]
    arc: tuple[tuple[float, float], ...]  # points along the angle's arc, from the pair to the rotated pair
    label: tuple[float, float]  # where the angle's label goes
    turns: bool  # the angle is 2π or more: the arc shows it modulo 2π


def geometry(step: RopeFigure) -> Geometry:
    xa, xb = (float(N(v, 20)) for v in step.before)
    ya, yb = (float(N(v, 20)) for v in step.after)
    scale = REACH / max(math.hypot(xa, xb), 1e-12)
    start = math.atan2(xb, xa)
    phi = float(N(step.angle, 20))
    sweep = phi % (2 * math.pi)
    count = max(2, int(sweep / (math.pi / 12)) + 1)
    arc = tuple((ARC * math.cos(start + sweep * k / count), ARC * math.sin(start + sweep * k / count))
                for k in range(count + 1))
    middle = start + sweep / 2
    return Geometry((xa * scale, xb * scale), (ya * scale, yb * scale), arc,
                    ((ARC + 4) * math.cos(middle), (ARC + 4) * math.sin(middle)), phi >= 2 * math.pi)


def label_spot(tip: tuple[float, float], reach: float = 1.18) -> tuple[float, float]:
    """Where a vector's label goes: beyond its tip, moved off an axis the vector lies along (a pair (0, b) points
    straight up the x_b axis, where the axis's own label is)."""
    x, y = tip[0] * reach, tip[1] * reach
    return (x + 5 if abs(x) < 4 else x), (y + 3.5 if abs(y) < 3 else y)


def axis_sides(g: Geometry) -> tuple[bool, bool]:
    """Where the axes' labels go: x_a above its axis (else below), x_b right of its axis (else left), each on the
    side farther from the vectors' tips and labels, so that a near-vertical rotated pair's label does not run into
    x_b (nor a near-horizontal one into x_a)."""
    c = SIZE / 2
    points = [p for tip in (g.before, g.after) for p in (tip, label_spot(tip))]

    def room(spot: tuple[float, float]) -> float:
        return min(math.hypot(spot[0] - x, spot[1] - y) for x, y in points)

    def keep(usual: tuple[float, float], other: tuple[float, float]) -> bool:  # the usual side unless crowded
        return room(usual) >= CLEAR or room(usual) >= room(other)

    return keep((c - 4, 2.5), (c - 4, -2.5)), keep((3.5, c - 4), (-3.5, c - 4))


def _head(tip: tuple[float, float]) -> tuple[tuple[float, float], tuple[float, float]]:
    """The two back corners of an arrowhead at `tip` (an arrow from the centre)."""
    angle = math.atan2(tip[1], tip[0])
    return tuple((tip[0] - HEAD * math.cos(angle + s), tip[1] - HEAD * math.sin(angle + s)) for s in (0.4, -0.4))


def latex_picture(step: RopeFigure, labels: dict[str, str], caption: str) -> str:
    """The figure in picture mode, centred, with its caption, in one unbreakable box. `labels`: the LaTeX of the
    axes ("a", "b"), of the two vectors ("before", "after") and of the angle ("angle")."""
    g = geometry(step)
    c = SIZE / 2
    above, right = axis_sides(g)

    def at(p: tuple[float, float]) -> str:
        return f"({c + p[0]:.2f},{c + p[1]:.2f})"

    def segment(p: tuple[float, float], q: tuple[float, float]) -> str:
        middle = ((p[0] + q[0]) / 2, (p[1] + q[1]) / 2)
        return rf"\qbezier{at(p)}{at(middle)}{at(q)}"

    def arrow(tip: tuple[float, float], colour: str) -> list[str]:
        return [rf"{{\color{{{colour}}}\linethickness{{0.8pt}}" + segment((0, 0), tip)
                + "".join(segment(corner, tip) for corner in _head(tip)) + "}"]

    def put(p: tuple[float, float], text: str, where: str = "") -> str:
        return rf"\put{at(p)}{{\makebox(0,0){where}{{${text}$}}}}"

    out = [r"\setlength\unitlength{1mm}", rf"\begin{{picture}}({SIZE:.0f},{SIZE:.0f})",
           rf"{{\color{{black!45}}\put(0,{c:.2f}){{\vector(1,0){{{SIZE:.0f}}}}}\put({c:.2f},0){{\vector(0,1){{{SIZE:.0f}}}}}}}",
           put((c - 2, 1.5 if above else -2.5), labels["a"], "[r]"),
           put((1.5, c - 2), labels["b"], "[t]") if right else put((-1.5, c - 2), labels["b"], "[tr]")]
    out += arrow(g.before, "black!70") + arrow(g.after, "blue!80!black")
    out += ["{\\color{orange!80!black}" + "".join(segment(p, q) for p, q in zip(g.arc, g.arc[1:], strict=False))
            + "}", put(g.label, labels["angle"])]
    for tip, name in ((g.before, "before"), (g.after, "after")):
        out.append(put(label_spot(tip), labels[name]))
    out.append(r"\end{picture}")
    return "\n".join([r"\par\noindent\begin{minipage}{\linewidth}\centering", *out,
                      rf"\figurecaption{{{caption}}}", r"\end{minipage}\par\medskip"])


def svg_picture(step: RopeFigure, labels: dict[str, str], caption: str, ident: str) -> str:
    """The figure as inline SVG in a <figure> with its caption; `labels` as in latex_picture, as HTML text."""
    g = geometry(step)
    c = SIZE / 2
    above, right = axis_sides(g)

    def X(x: float) -> float:
        return round((c + x) * PX, 2)

    def Y(y: float) -> float:
        return round((c - y) * PX, 2)

    def line(p, q, colour: str, width: float = 1.5) -> str:
        return (f'<line x1="{X(p[0])}" y1="{Y(p[1])}" x2="{X(q[0])}" y2="{Y(q[1])}" stroke="{colour}" '
                f'stroke-width="{width}"/>')

    def text(p, body: str, anchor: str = "middle") -> str:
        return f'<text x="{X(p[0])}" y="{round(Y(p[1]) + 5, 2)}" text-anchor="{anchor}">{body}</text>'

    size = round(SIZE * PX)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="rope" width="{size}" height="{size}" '
           f'viewBox="0 0 {size} {size}" role="img" aria-labelledby="{ident}">',
           line((-c, 0), (c, 0), "#999", 1), line((0, -c), (0, c), "#999", 1),
           text((c - 2, 3 if above else -4), labels["a"], "end"),
           text((2, c - 3), labels["b"], "start") if right else text((-2, c - 3), labels["b"], "end")]
    for tip, colour in ((g.before, "#444"), (g.after, "#1f3fa0")):
        out += [line((0, 0), tip, colour), *(line(corner, tip, colour) for corner in _head(tip))]
    points = " ".join(f"{X(x)},{Y(y)}" for x, y in g.arc)
    out.append(f'<polyline points="{points}" fill="none" stroke="#c06000" stroke-width="1.2"/>')
    out.append(text(g.label, labels["angle"]))
    for tip, name in ((g.before, "before"), (g.after, "after")):
        out.append(text(label_spot(tip, 1.2), labels[name]))
    out.append("</svg>")
    return f'<figure>{"".join(out)}<figcaption class="caption" id="{ident}">{caption}</figcaption></figure>'


def svg_name(letter: str, sub: str = "", hat: bool = False) -> str:
    """A name as SVG text: the letter in italic (with a circumflex over it: q̂), its subscript smaller and lower;
    `sub` is escaped here (a token is user text)."""
    hat_mark = "\u0302" if hat else ""
    body = f'<tspan font-style="italic">{letter}{hat_mark}</tspan>'
    return body + (f'<tspan baseline-shift="sub" font-size="10">{html.escape(sub)}</tspan>' if sub else "")


def latex_figure(renderer, step: RopeFigure) -> str:
    """The LaTeX renderer's RopeFigure: the rotation matrix times the pair, then the drawing with its caption."""
    a, b = step.pair
    labels = {"a": f"x_{{{a}}}", "b": f"x_{{{b}}}", "before": renderer.name(step.name),
              "after": renderer.name(step.rotated), "angle": rf"\varphi_{{{step.index}}}"}
    return renderer.rope_matrix(step) + "\n" + latex_picture(step, labels, renderer.rope_caption(step))


def html_figure(renderer, step: RopeFigure) -> str:
    """The HTML renderer's RopeFigure: the rotation matrix times the pair, then the drawing as inline SVG (its
    caption's id unique in the page: the figures are counted on the renderer)."""
    a, b = step.pair
    letter = step.name.base
    labels = {"a": svg_name("x", str(a)), "b": svg_name("x", str(b)), "before": svg_name(letter, step.name.token or ""),
              "after": svg_name(letter, step.rotated.token or "", hat=True), "angle": svg_name("φ", str(step.index))}
    count = renderer.__dict__.setdefault("rope_figures", itertools.count(1))
    ident = f"symattn-rope-{next(count)}"
    return renderer.rope_matrix(step) + svg_picture(step, labels, renderer.rope_caption(step), ident)
