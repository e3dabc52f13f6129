"""Jupyter's display of a Derivation: the worked solution as HTML or Markdown, and the outputs as LaTeX.

document.steps knows nothing about rendering, so the display methods are attached to Derivation from here by register(),
which symattn's lazy exports call when a derivation can first be made (symattn.derive, symattn.Derivation ...).
"""

from __future__ import annotations

from ..document.steps import Derivation, Result
from .html import HtmlRenderer
from .markdown import MarkdownRenderer, render_markdown


def results(derivation: Derivation) -> list[Result]:
    """Each section's outputs: its Result steps."""
    return [step for step in derivation.steps if isinstance(step, Result)]


def repr_html(derivation: Derivation) -> str:
    """The whole derivation as an HTML fragment (the notebook is the page)."""
    renderer = HtmlRenderer(lang=derivation.lang, digits=derivation.digits)
    return f"<div class=\"symattn\">{renderer.body(derivation)}</div>"


def repr_markdown(derivation: Derivation) -> str:
    return render_markdown(derivation)


def repr_latex(derivation: Derivation) -> str:
    """The outputs of every section as display math (the whole derivation is in the HTML and Markdown)."""
    renderer = MarkdownRenderer(lang=derivation.lang, digits=derivation.digits)
    return "\n".join(renderer.render(step) for step in results(derivation))


def register() -> None:
    """Give Derivation its Jupyter display methods (idempotent)."""
    Derivation._repr_html_ = repr_html
    Derivation._repr_markdown_ = repr_markdown
    Derivation._repr_latex_ = repr_latex
