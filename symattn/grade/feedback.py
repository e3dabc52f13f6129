"""One student's feedback as Markdown and as LaTeX (for the PDF): their points per part, each mistake with its
likely cause and the worked line, and what was credited by error carried forward. The student's name and typed
answers are escaped for each format."""

from __future__ import annotations

import math
from fractions import Fraction

from ..infra.i18n import text
from ..render.escape import escape, escape_markdown, markdown_code
from ..render.templates import class_options, common_preamble, language_preamble
from .mark import Graded
from .worked import Lines, shown, where

# Signs of the worked lines and numbers, as math in the PDF (upLaTeX would set them as full-width Japanese letters).
_SIGNS = {"\u00b7": r"$\cdot$", "\u2212": r"$-$", "\u221a": r"$\surd$", "\u2248": r"$\approx$", "\u00b1": r"$\pm$"}


def signs(latex: str) -> str:
    """LaTeX text with its math signs set as math, and the escaped name d_k (d\\_k) as the math it stands for."""
    latex = latex.replace("\u221ad\\_k", r"$\sqrt{d_k}$").replace("d\\_k", "$d_k$")
    return "".join(_SIGNS.get(c, c) for c in latex)


def brief(typed: str, most: int = 60) -> str:
    """A typed answer as the feedback quotes it: whole up to `most` characters, else its ends around "…" and its
    length (0.000…0001, 10,002 characters), which a line of the PDF can hold."""
    if len(typed) <= most:
        return typed
    return f"{typed[:most // 2]}…{typed[-most // 4:]} ({len(typed):,} characters)"


def points_text(value: Fraction) -> str:
    """Points rounded half-up to two decimals at most (3.33, 0.13 for 1/8), whole points without decimals."""
    rounded = math.floor(abs(value) * 100 + Fraction(1, 2))
    whole, cents = divmod(rounded, 100)
    sign = "-" if value < 0 and rounded else ""
    return f"{sign}{whole}" if cents == 0 else f"{sign}{whole}.{cents:02d}".rstrip("0")


class Feedback:
    """The feedback documents of a graded exam's students, in the exam's language."""

    def __init__(self, lang: str, digits: int) -> None:
        self.lang, self.digits = lang, digits
        self.lines: dict[str, Lines] = {}

    def t(self, key: str, **params: str) -> str:
        return text(self.lang, f"grade.{key}").format(**params)

    def items(self, graded: Graded, code, plain) -> tuple[list[str], list[str]]:
        """The mistakes and the credited answers as sentences; `code` formats a typed answer, `plain` escapes
        text."""
        lines = self.lines.setdefault(graded.version.label, Lines(graded.version, self.digits))
        mistakes, credited = [], []
        for mark in graded.marks:
            if mark.verdict == "right":
                continue
            params = {"part": plain(mark.blank.part), "where": code(where(mark.blank)),
                      "typed": code(brief(mark.text or "")), "answer": self._number(mark.blank.answer),
                      "tolerance": plain(format(mark.tolerance.normalize(), "f"))}
            if mark.verdict == "carried":
                credited.append(self.t("carried", carried=self._number(mark.carried), **params))
                continue
            sentences = [self.t(mark.verdict, **params)]
            if mark.cause is not None:
                sentences.append(self.t("likely", cause=code(mark.cause.name),
                                        explanation=plain(text(self.lang, mark.cause.explanation))))
            if mark.refused is not None:
                sentences.append(self.t("not_carried", reason=plain(text(self.lang, mark.refused))))
            line = lines.line(mark.blank)
            if line is not None:
                sentences.append(self.t("worked", line=plain(line)))
            mistakes.append(sentences)
        return mistakes, credited

    def _number(self, value) -> str:
        number, exact = shown(value, self.digits)
        return number if exact else f"≈ {number}"

    def markdown(self, graded: Graded) -> str:
        """The Markdown feedback."""
        version = graded.version
        out = [f"# {escape_markdown(self.t('title', student=graded.response.student, label=version.label))}", "",
               self.t("total", total=points_text(graded.total), points=str(version.points)), "",
               f"| {self.t('part')} | {self.t('points')} | {self.t('of')} |", "|---|---:|---:|"]
        out += [f"| ({escape_markdown(p.letter)}) | {points_text(graded.points(p))} | {p.points} |"
                for p in version.parts]
        mistakes, credited = self.items(graded, markdown_code, escape_markdown)
        out += ["", f"## {self.t('mistakes')}", ""]
        out += [f"- {' '.join(m)}" for m in mistakes] or [self.t("none")]
        if credited:
            out += ["", f"## {self.t('credited')}", "", *(f"- {c}" for c in credited)]
        return "\n".join(out) + "\n"

    def latex(self, graded: Graded) -> str:
        """The LaTeX source of the PDF feedback (upLaTeX, the handouts' preambles)."""
        version = graded.version
        documentclass = "jsarticle" if self.lang == "ja" else "article"
        preamble = common_preamble("article").replace("@GEOMETRY@", "a4paper,margin=25mm")
        rows = " \\\\\n".join(f"({escape(p.letter)}) & {points_text(graded.points(p))} & {p.points}"
                            for p in version.parts)
        mistakes, credited = self.items(graded, lambda s: f"\\texttt{{{escape(s)}}}", escape)
        mistakes, credited = [[signs(s) for s in m] for m in mistakes], [signs(c) for c in credited]
        body = [f"\\section*{{{escape(self.t('title', student=graded.response.student, label=version.label))}}}",
                escape(self.t("total", total=points_text(graded.total), points=str(version.points))), "",
                "\\begin{tabular}{lrr}\\toprule", f"{escape(self.t('part'))} & {escape(self.t('points'))} & "
                f"{escape(self.t('of'))} \\\\\\midrule", rows + " \\\\\\bottomrule", "\\end{tabular}",
                f"\\subsection*{{{escape(self.t('mistakes'))}}}"]
        body += (["\\begin{itemize}", *(f"\\item {' '.join(m)}" for m in mistakes), "\\end{itemize}"] if mistakes
                 else [escape(self.t("none"))])
        if credited:
            body += [f"\\subsection*{{{escape(self.t('credited'))}}}", "\\begin{itemize}",
                     *(f"\\item {c}" for c in credited), "\\end{itemize}"]
        return (f"\\documentclass[{','.join(['a4paper', '11pt', *class_options(documentclass)])}]{{{documentclass}}}\n"
                f"{preamble}\n{language_preamble(self.lang)}\n\\begin{{document}}\n" + "\n".join(body)
                + "\n\\end{document}\n")

