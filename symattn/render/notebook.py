"""Jupyter's display of a Derivation: the worked solution as HTML or Markdown, and the outputs as LaTeX.

document.steps knows nothing about rendering, so the display methods are attached to Derivation from here by register(),
which symattn's lazy exports call when a derivation can first be made (symattn.derive, symattn.Derivation ...).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..document.steps import Derivation, Result
from ..errors import SpecError
from ..examples import names
from ..pipeline.derive import derive, derive_spec
from ..pipeline.parse import parse_spec
from ..spec.files import read_spec_text
from ..spec.model import Spec
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


def repr_mimebundle(derivation: Derivation, include=None, exclude=None) -> dict[str, str]:
    """All three forms at once: the notebook shows the richest it can (HTML), a converter picks its own."""
    return {"text/html": repr_html(derivation), "text/markdown": repr_markdown(derivation),
            "text/latex": repr_latex(derivation)}


def worked_solution(source: Any, lang: str | None = None, digits: int | None = None,
                    prose: str | None = None) -> Derivation:
    """`symattn.render(source)`: the Derivation of an example's name, a spec file's path, spec data (a dict), TOML
    text or a Spec, with its display methods registered."""
    register()
    if isinstance(source, Spec) or isinstance(source, Path) or (isinstance(source, str) and (
            source in names() or ("\n" not in source and "=" not in source))):
        return derive(source, lang=lang, digits=digits, prose=prose)
    if isinstance(source, str):
        source = read_spec_text(source, "toml", "spec")
    if not isinstance(source, dict):
        raise SpecError("symattn.render", "expected an example's name, a spec file, spec data (a dict), TOML text "
                        f"or a Spec, not {type(source).__name__}")
    return derive_spec(parse_spec(source, "spec"), lang=lang, digits=digits, prose=prose)


def register() -> None:
    """Give Derivation its Jupyter display methods (idempotent)."""
    Derivation._repr_mimebundle_ = repr_mimebundle
    Derivation._repr_html_ = repr_html
    Derivation._repr_markdown_ = repr_markdown
    Derivation._repr_latex_ = repr_latex
