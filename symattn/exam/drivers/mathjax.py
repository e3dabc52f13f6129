"""HTML with TeX math for MathJax (Moodle's MathJax filter, Canvas's equation rendering): the HTML renderer's
steps, with every formula as \\( … \\) or \\[ … \\] instead of MathML, and a cloze-safe variant for question text."""

from __future__ import annotations

from ...render.escape import escape_html, mathjax_text, safe
from ...render.html import HtmlRenderer


class MathJaxHtml(HtmlRenderer):
    """The derivation as HTML whose math MathJax typesets (an LMS's worked-solution feedback)."""

    format_name = "MathJax HTML"
    pure_text = True  # (math_text below)

    def body(self, derivation) -> str:
        self.notes_said.clear()  # a note said once is said once per version's feedback
        return super().body(derivation)

    def math_text(self, text: str) -> str:
        return mathjax_text(text)

    def inline(self, math: str) -> str:
        return r"\(" + escape_html(math) + r"\)"

    def display(self, math: str) -> str:
        return r"<p>\[" + escape_html(math) + r"\]</p>"

    def align(self, lines) -> str:
        return self.display("\\begin{aligned}" + " \\\\ ".join(lines) + "\\end{aligned}")


class ClozeHtml(MathJaxHtml):
    """Question text of a Moodle cloze question: as MathJaxHtml, with every brace of text and math written as an
    entity, so that nothing but the blanks themselves can open a blank (MathJax reads the decoded text)."""

    format_name = "Moodle"

    def escape_text(self, text: str) -> str:
        return safe(text)

    def token(self, name: str) -> str:
        return f"<code>{safe(name)}</code>"

    def inline(self, math: str) -> str:
        return r"\(" + safe(math) + r"\)"

    def display(self, math: str) -> str:
        return r"<p>\[" + safe(math) + r"\]</p>"
