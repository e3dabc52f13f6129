"""The exam paper and its key as LaTeX, in the conventions of the `exam` document class.

One source serves both: each part's answer and the full worked solution sit in `solution` environments, which
leave writing space on the paper and are printed in the key (`\\printanswers`).
"""

from __future__ import annotations

from dataclasses import replace

from pylatex import Document, NoEscape
from sympy import ImmutableMatrix, exp

from ..derivation import given_weights, shown, weight_equations
from ..engine import Attention, MultiHead
from ..model import Derivation, MatrixEquation, Name, ScaleFactor, Shown, Step, Token, TokenTable, VectorEquation
from ..numfmt import format_number
from ..render.latex import LatexRenderer, shared_preamble
from ..render.templates import class_options, read_template
from .generate import Version

POINTS = {"qkv": 4, "scores": 2, "scaled": 2, "weights": 3, "output": 3}
SPACE = {"qkv": "5cm", "scores": "2.5cm", "scaled": "2.5cm", "weights": "3.5cm", "output": "3cm"}


class ExamWriter:
    """Writes the exam (answers hidden) or the key (answers printed) for a list of versions."""

    def __init__(self, lang: str, digits: int) -> None:
        self.lang = lang
        self.digits = digits
        # Every derivation align*, which may break across pages: the exam class's solution environment (framed)
        # cuts its contents at a page break, and an unbreakable display would run past the page's foot.
        self.renderer = LatexRenderer(lang=lang, digits=digits, compact_headings=True, unbroken_rows=0)

    def documents(self, versions: list[str]) -> tuple[str, str]:
        """The exam and its key around the versions' LaTeX (as version() writes it): one body, typeset once; the
        key adds only \\printanswers."""
        body = "\n\n".join(versions)
        return self.document(body, key=False), self.document(body, key=True)

    def document(self, body: str, key: bool) -> str:
        """A complete exam-class document around the versions' LaTeX."""
        doc = Document(
            documentclass="exam", document_options=["a4paper", "11pt", "addpoints", *class_options("exam")],
            fontenc=None, inputenc=None, lmodern=False, textcomp=False, page_numbers=True, indent=True,
        )  # page_numbers=True keeps PyLaTeX from forcing \pagestyle{empty}: the exam class sets the page style
        for part in shared_preamble(self.lang, body):
            doc.preamble.append(NoEscape(part))
        doc.preamble.append(NoEscape(read_template("exam.tex")))
        if key:
            doc.preamble.append(NoEscape(r"\printanswers"))
        text = self.renderer.text
        title = text("exam.key_title" if key else "exam.title")
        doc.preamble.append(NoEscape(rf"\newcommand{{\examtitle}}{{{title}}}"))
        doc.preamble.append(NoEscape(rf"\pointpoints{{{text('exam.point')}}}{{{text('exam.points')}}}"))
        doc.preamble.append(NoEscape(rf"\renewcommand{{\solutiontitle}}{{\noindent\textbf{{{text('exam.answers')}:}}"
                                     r"\enspace}"))
        doc.append(NoEscape(body))
        return doc.dumps() + "\n"

    # ------------------------------------------------------------ one version

    def version(self, version: Version, derivation: Derivation) -> str:
        text = self.renderer.text
        section = derivation.sections[0]
        spec = section.spec
        label = text("exam.version", {"label": version.label})
        lines = [
            rf"\begin{{center}}{{\large\examtitle}}\\[2pt]{{\Large\bfseries {label}}}\end{{center}}",
            rf"\noindent {text('exam.name_line')} \makebox[7cm]{{\hrulefill}}\par\medskip",
            text("exam.instructions", {"digits": self.digits, "points": sum(POINTS.values())}),
            r"\setcounter{question}{0}",
            r"\begin{questions}",
            r"\question " + self.given(section),
            r"\begin{parts}",
        ]
        for part, answer in self.parts(section.kind, spec, section.result):
            key, params = part
            lines.append(rf"\part[{POINTS[key]}] {text(part_key(section.kind, key), params)}")
            lines.append(rf"\begin{{solution}}[{SPACE[key]}]" + "\n" + answer + "\n" + r"\end{solution}")
        lines += [
            r"\end{parts}",
            # the worked solution, under its own title instead of the parts' "Answers:"
            rf"{{\renewcommand{{\solutiontitle}}{{\noindent\textbf{{{text('exam.worked_title')}}}\par}}"
            r"\begin{solution}" + "\n" + self.renderer.body(replace(derivation, opening=())) + "\n"
            + r"\end{solution}}",
            r"\end{questions}",
            r"\clearpage",
        ]
        return "\n".join(lines)

    def given(self, section) -> str:
        """The problem statement: the inputs, typeset as in the handouts, and what to answer for."""
        kind, spec = section.kind, section.spec
        text = self.renderer.text
        render = self.renderer.render
        steps: list[Step] = []
        if kind == "cross_attention":
            intro = text("exam.given_cross", {"token": Token(spec.tokens[0])})
            steps += [VectorEquation(Name("x", spec.tokens[0]), shown(spec.X)),
                      TokenTable(("table.encoder_token", "table.encoder_output"), spec.memory_tokens,
                                 (shown(spec.memory),))]
        else:
            intro = text("exam.given_multi" if kind == "multi_head" else "exam.given_self")
            steps.append(TokenTable(("table.token", "table.embedding"), spec.tokens, (shown(spec.X),)))
        if kind == "multi_head":
            for h, head in enumerate(spec.heads, start=1):
                steps += weight_equations(given_weights(head), head=h)
            steps.append(MatrixEquation(Name("W_O"), shown(spec.W_O)))
            focus, d_k = spec.focus, spec.heads[0].d_k
        else:
            steps += weight_equations(given_weights(spec))
            focus, d_k = spec.focus[0], spec.d_k
        body = [intro, *(render(step) for step in steps)]
        body.append(text("exam.focus", {"token": Token(focus), "d_k": ScaleFactor(d_k)}))
        body.append(self.softmax_instruction(d_k, section))
        return "\n".join(body)

    def softmax_instruction(self, d_k: int, section) -> str:
        """With an integer √d_k the scaled scores are short decimals: the paper gives e^x for them."""
        text = self.renderer.text
        root = int(d_k**0.5 + 0.5)
        if root * root != d_k:
            return text("exam.softmax_calculator", {"digits": self.digits})
        values = sorted({a for scores in scaled_scores(section) for a in scores}, key=float)
        rows = " \\\\\n".join(f"${format_number(a, 10).text}$ & ${format_number(exp(a), self.digits + 2).text}$"
                             for a in values)
        table = ("\\begin{center}\n\\begin{tabular}{rr}\n\\toprule\n$x$ & $e^{x}$ \\\\\n\\midrule\n" + rows
                 + " \\\\\n\\bottomrule\n\\end{tabular}\n\\end{center}")
        return text("exam.softmax_table", {"digits": self.digits, "exp": Name("e^x")}) + "\n" + table

    # ------------------------------------------------------------ parts and their answers

    def parts(self, kind: str, spec, result: Attention | MultiHead):
        """(language key, params) of each part with the LaTeX of its answer."""
        render = self.renderer.render
        if kind == "multi_head":
            focus = spec.focus
            heads = [(h, a) for h, a in enumerate(result.attentions, start=1)]
            i = spec.tokens.index(focus)
            yield ("qkv", {}), "\n".join(
                render(TokenTable(("table.token", Name("Q", head=h), Name("K", head=h), Name("V", head=h)),
                                  spec.tokens, (Shown(a.Q), Shown(a.K), Shown(a.V)))) for h, a in heads)
            for key, pick in (("scores", _scores), ("scaled", _scaled), ("weights", _weights)):
                yield (key, {"token": Token(focus)}), "\n".join(
                    render(VectorEquation(Name({"scores": "s", "scaled": "a", "weights": "w"}[key], head=h),
                                          pick(a.queries[i])))
                    for h, a in heads)
            outputs = [render(VectorEquation(Name("z", focus, head=h), Shown(head))) for h, head in
                       enumerate(result.heads, start=1)]
            outputs.append(render(VectorEquation(Name("z", label="concat"), Shown(result.concat))))
            outputs.append(render(VectorEquation(Name("z", label="final"), Shown(result.output))))
            yield ("output", {"token": Token(focus), "W_O": Name("W_O")}), "\n".join(outputs)
            return
        focus = spec.focus[0]
        query = result.queries[spec.tokens.index(focus)]
        yield ("qkv", {}), self.qkv_table(kind, spec, result)
        yield ("scores", {"token": Token(focus)}), render(VectorEquation(Name("s"), _scores(query)))
        yield ("scaled", {}), render(VectorEquation(Name("a"), _scaled(query)))
        yield ("weights", {}), render(VectorEquation(Name("w"), _weights(query)))
        yield ("output", {"token": Token(focus)}), render(VectorEquation(Name("z", focus), Shown(query.output)))

    def qkv_table(self, kind: str, spec, result: Attention) -> str:
        render = self.renderer.render
        if kind == "cross_attention":
            query = VectorEquation(Name("Q", spec.tokens[0]), Shown(result.Q))
            table = TokenTable(("table.encoder_token", Name("K"), Name("V")), spec.memory_tokens,
                               (Shown(result.K), Shown(result.V)))
            return render(query) + "\n" + render(table)
        return render(TokenTable(("table.token", Name("Q"), Name("K"), Name("V")), spec.tokens,
                                 (Shown(result.Q), Shown(result.K), Shown(result.V))))


def part_key(kind: str, part: str) -> str:
    """The language key of a part's question: multi-head parts speak of heads, cross-attention's (a) of both sides."""
    if kind == "multi_head":
        return f"exam.part_{part}_heads"
    if kind == "cross_attention" and part == "qkv":
        return "exam.part_qkv_cross"
    return f"exam.part_{part}"


def _row(values) -> ImmutableMatrix:
    return ImmutableMatrix([list(values)])


def _scores(query) -> Shown:
    return Shown(_row(query.scores), uniform=False)


def _scaled(query) -> Shown:
    return Shown(_row(query.scaled), uniform=False)


def _weights(query) -> Shown:
    return Shown(_row(query.softmax.weights))


def scaled_scores(section) -> list[tuple]:
    """The scaled scores a student meets in one version (every head's), for the e^x table."""
    result = section.result
    if section.kind == "multi_head":
        i = section.spec.tokens.index(section.spec.focus)
        return [a.queries[i].scaled for a in result.attentions]
    return [query.scaled for query in result.queries.values()]
