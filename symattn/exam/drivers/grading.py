"""What the key and the solutions sheet say about grading: each part's tolerance (exercise.tolerance, through the
Part) and its rounding convention, as LaTeX."""

from __future__ import annotations

from ...document.steps import Name
from ...exercises.exercise import Exercise, Part
from ...render.latex import LatexRenderer
from ...spec.model import integer_sqrt

LETTERS = "abcdefghijklmnopqrstuvwxyz"  # the exam class numbers parts (a), (b), ...


def rounding(renderer: LatexRenderer, part: Part, exercise: Exercise) -> str:
    """The part's rounding convention, said only where true for this exercise: √2 only with an irrational √d_k,
    the e^x table only on a paper that has one, rounded weights only for attention's output; a newer kind's part
    by the class of its tolerance (exact, or through rounded values), its ranks as whole numbers."""
    irrational = integer_sqrt(exercise.d_k) is None
    if part.key == "ranking":
        key = "whole"
    elif part.accuracy and part.accuracy != "scaled":  # a newer kind's part (exercises/drawing.py): exact, or rounded
        key = "exact" if part.accuracy in ("qkv", "scores") else "rounded"
    elif "scaled" in (part.key, part.accuracy):
        key = "scaled" if irrational else "exact"
    elif part.key == "weights":
        key = "weights" if exercise.exp_table else "weights_calculator"
    else:
        key = part.key if part.key in ("qkv", "scores", "output") else "exact"
    return renderer.text(f"grading.{key}", {"digits": renderer.digits, "d_k": Name("d_k"), "exp": Name("e^x")})


def plus_minus(part: Part) -> str:
    return rf"$\pm {part.tolerance}$"


def grading_table(renderer: LatexRenderer, exercise: Exercise) -> str:
    """A small table of every part: its letter, tolerance and rounding convention."""
    text = renderer.text
    rows = " \\\\\n".join(f"({LETTERS[i]}) & {plus_minus(part)} & {rounding(renderer, part, exercise)}"
                          for i, part in enumerate(exercise.parts))
    return (rf"\noindent\textbf{{{text('grading.title')}}}\par\smallskip" "\n"
            r"{\small\begin{tabular}{@{}lrp{0.68\linewidth}@{}}" "\n\\toprule\n"
            rf"{text('grading.part')} & {text('grading.tolerance')} & {text('grading.rounding')} \\" "\n\\midrule\n"
            + rows + " \\\\\n\\bottomrule\n\\end{tabular}\\par}")
