"""What the key and the solutions sheet say about grading: each part's tolerance (exercise.tolerance, through the
Part) and its rounding convention, as LaTeX."""

from __future__ import annotations

from ... import i18n
from ...model import Name
from ...render.latex import LatexRenderer
from ..exercise import Part

LETTERS = "abcdefghijklmnopqrstuvwxyz"  # the exam class numbers parts (a), (b), ...


def rounding(renderer: LatexRenderer, part: Part) -> str:
    """The part's rounding convention (a part of a key without its own sentence: exact, rounded at the end)."""
    key = f"grading.{part.key}" if f"grading.{part.key}" in i18n.strings(renderer.lang) else "grading.exact"
    return renderer.text(key, {"digits": renderer.digits, "d_k": Name("d_k"), "exp": Name("e^x")})


def plus_minus(part: Part) -> str:
    return rf"$\pm {part.tolerance}$"


def grading_table(renderer: LatexRenderer, parts: tuple[Part, ...]) -> str:
    """A small table of every part: its letter, tolerance and rounding convention."""
    text = renderer.text
    rows = " \\\\\n".join(f"({LETTERS[i]}) & {plus_minus(part)} & {rounding(renderer, part)}"
                          for i, part in enumerate(parts))
    return (rf"\noindent\textbf{{{text('grading.title')}}}\par\smallskip" "\n"
            r"{\small\begin{tabular}{@{}lrp{0.68\linewidth}@{}}" "\n\\toprule\n"
            rf"{text('grading.part')} & {text('grading.tolerance')} & {text('grading.rounding')} \\" "\n\\midrule\n"
            + rows + " \\\\\n\\bottomrule\n\\end{tabular}\\par}")
