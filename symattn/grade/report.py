"""The class report (report.md, report.pdf): the mean and spread of each part and of each version's total, the
most common diagnosed causes, the students below a threshold, and every student the grades need a look at (not
graded, not on the class list, on the class list without a response). Written in the exam's language."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal, localcontext
from fractions import Fraction

from ..infra.i18n import text
from ..render.escape import escape, escape_markdown, markdown_line_start
from ..render.templates import class_options, common_preamble, language_preamble
from .exam import Exam
from .exports import Row, possible
from .feedback import points_text, signs

TOP_CAUSES = 5  # the causes the report lists, most common first


def spread(values: list[Fraction]) -> str:
    """The population standard deviation, to two decimals (half-up, as the points are)."""
    if not values:
        return ""
    mean = sum(values, Fraction(0)) / len(values)
    variance = sum(((v - mean) ** 2 for v in values), Fraction(0)) / len(values)
    with localcontext(prec=40):
        root = (Decimal(variance.numerator) / Decimal(variance.denominator)).sqrt()
    return points_text(Fraction(root))


def _mean(values: list[Fraction]) -> str:
    return points_text(sum(values, Fraction(0)) / len(values)) if values else ""


class Report:
    """The class report of graded rows; `below` the total under which a student is listed."""

    def __init__(self, exam: Exam, rows: list[Row], below: Fraction, left_out: dict[str, list[Row]]) -> None:
        self.exam, self.rows, self.below, self.left_out = exam, rows, below, left_out

    def t(self, key: str, **params: str) -> str:
        return text(self.exam.lang, f"grade.report.{key}").format(**params)

    def blocks(self) -> list[tuple[str, list[str], list[list[str]], str]]:
        """(heading, table header, table rows, sentence when the table is empty) of each section, in order."""
        graded = [r.graded for r in self.rows if r.graded]
        letters = list(dict.fromkeys(p.letter for g in graded for p in g.version.parts))
        parts = []
        for letter in letters:
            marks = [(g.points(p), p.points) for g in graded for p in g.version.parts if p.letter == letter]
            values = [m for m, _ in marks]
            parts.append([f"({letter})", str(max(p for _, p in marks)), _mean(values), spread(values),
                          str(len(values))])
        totals = [g.total for g in graded]
        parts.append([self.t("total"), str(possible(self.rows)), _mean(totals), spread(totals), str(len(totals))])
        versions = []
        for label in dict.fromkeys(g.version.label for g in graded):
            values = [g.total for g in graded if g.version.label == label]
            versions.append([label, _mean(values), spread(values), str(len(values))])
        causes: Counter[str] = Counter()
        students: Counter[str] = Counter()
        for g in graded:
            found = [m.cause.name for m in g.marks if m.verdict == "wrong" and m.cause is not None]
            causes.update(found)
            students.update(set(found))
        common = [[f"`{name}`", str(count), str(students[name]), text(self.exam.lang, f"grade.cause.{name}")]
                  for name, count in sorted(causes.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_CAUSES]]
        low = [[r.student, r.entry[0] if r.entry else "", r.graded.version.label, points_text(r.graded.total)]
               for r in self.rows if r.graded and r.graded.total < self.below]
        look = [[r.student, str(r.row), "; ".join(r.notes)] for r in self.rows if r.notes]
        seen = {r.entry[0] for r in self.rows if r.entry}
        look += [[name, "", self.t("absent", version=version)] for number, name, version in self.exam.students
                 if number not in seen]
        for target, left in self.left_out.items():  # one line when no student has an id to be matched by
            look += [[r.student, str(r.row), self.t("left_out", file=target)] for r in left] \
                if len(left) < len(graded) else [[self.t("everyone"), "", self.t("left_out", file=target)]]
        below = points_text(self.below)
        return [
            (self.t("parts"), [self.t("part"), self.t("of"), self.t("mean"), self.t("spread"), self.t("count")],
             parts, ""),
            (self.t("versions"), [self.t("version"), self.t("mean"), self.t("spread"), self.t("count")], versions,
             ""),
            (self.t("causes"), [self.t("cause"), self.t("answers"), self.t("students"), self.t("meaning")], common,
             self.t("no_causes")),
            (self.t("below", below=below), [self.t("student"), "id", self.t("version"), self.t("total")], low,
             self.t("none_below", below=below)),
            (self.t("look"), [self.t("student"), self.t("row"), self.t("note")], look, self.t("none_to_look")),
        ]

    def title(self) -> str:
        graded = sum(1 for r in self.rows if r.graded)
        return self.t("title", graded=str(graded), rows=str(len(self.rows)))

    def markdown(self) -> str:
        out = [f"# {escape_markdown(self.title())}", ""]
        for heading, header, rows, empty in self.blocks():
            out += [f"## {escape_markdown(heading)}", ""]
            if not rows:
                out += [markdown_line_start(escape_markdown(empty)), ""]
                continue
            out += ["| " + " | ".join(map(escape_markdown, header)) + " |", "|" + "---|" * len(header)]
            out += ["| " + " | ".join(c if c.startswith("`") else escape_markdown(c) for c in row) + " |"
                    for row in rows]
            out.append("")
        return "\n".join(out)

    def latex(self) -> str:
        lang = self.exam.lang
        documentclass = "jsarticle" if lang == "ja" else "article"
        body = [f"\\section*{{{escape(self.title())}}}"]
        for heading, header, rows, empty in self.blocks():
            body.append(f"\\subsection*{{{escape(heading)}}}")
            if not rows:
                body.append(escape(empty))
                continue
            spec = "l" * len(header)
            body += [f"\\begin{{longtable}}{{{spec}}}\\toprule", " & ".join(map(escape, header)) + r" \\\midrule\relax"]
            body += [" & ".join(signs(escape(c.strip("`"))) for c in row) + r" \\" for row in rows]
            body += [r"\bottomrule", r"\end{longtable}"]
        preamble = common_preamble("article").replace("@GEOMETRY@", "a4paper,margin=20mm")
        return (f"\\documentclass[{','.join(['a4paper', '10pt', *class_options(documentclass)])}]{{{documentclass}}}\n"
                f"{preamble}\n{language_preamble(lang)}\n\\begin{{document}}\n" + "\n".join(body)
                + "\n\\end{document}\n")
