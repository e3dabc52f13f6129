"""From a spec to files on disk: derive, render, compile, write atomically."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .derivation import derive_spec
from .errors import TexNotFoundError
from .output import write_atomic
from .progress import Counter
from .render.pdf import LatexRun, compile_pdf, tex_available, tex_missing
from .spec.model import Spec

FORMATS = ("tex", "pdf", "json", "md", "html")
# Every format but pdf is text made straight from the derivation: (module, function) of each renderer, imported
# only when its format is asked for (a `render --format tex` need not load the HTML and MathML code).
TEXT_RENDERERS: dict[str, tuple[str, str]] = {
    "tex": ("symattn.render.latex", "render_latex"), "md": ("symattn.render.markdown", "render_markdown"),
    "html": ("symattn.render.html", "render_html"), "json": ("symattn.render.answers", "render_json"),
}


def text_renderer(fmt: str) -> Callable[..., str]:
    """The function that renders a derivation as `fmt` text (keyword `exact` for all but json)."""
    module, name = TEXT_RENDERERS[fmt]
    function = getattr(importlib.import_module(module), name)
    return (lambda derivation, exact: function(derivation)) if fmt == "json" else function


@dataclass(frozen=True)
class BuildResult:
    """What a build wrote, and what it could not do (a one-line warning), if anything."""

    written: tuple[Path, ...]
    warning: str | None = None


def build(spec: Spec, out_dir: Path, formats: tuple[str, ...], lang: str | None = None,
          digits: int | None = None, exact: bool = False, pdf_required: bool = True,
          notify: Callable[[str], None] = lambda message: None, latex: LatexRun | None = None) -> BuildResult:
    """Write the requested formats of the spec's worked solution to out_dir.

    Everything is computed before anything is written. Without TeX, a PDF that was not required is skipped with
    a warning; a required one raises TexNotFoundError (after the .tex, if asked for, has been written). `latex`
    is a LaTeX run started earlier to compile the PDF (the command line starts one before importing SymPy).
    """
    derivation = derive_spec(spec, lang=lang, digits=digits)
    texts = {fmt: text_renderer(fmt)(derivation, exact=exact) for fmt in formats if fmt in TEXT_RENDERERS}
    written: list[Path] = []
    stem = out_dir / derivation.name
    for fmt, text in texts.items():
        write_atomic(stem.with_suffix(f".{fmt}"), text)
        written.append(stem.with_suffix(f".{fmt}"))
    if "pdf" in formats:
        tex = texts.get("tex") or text_renderer("tex")(derivation, exact=exact)
        if not tex_available():
            if pdf_required:
                raise TexNotFoundError(_no_tex_message())
            return BuildResult(tuple(written), _no_tex_message())
        notify("compiling the PDF with upLaTeX...")
        with Counter("PDF pages written") as pages:
            pdf = (latex.finish(tex, on_page=pages.update)[0] if latex is not None
                   else compile_pdf(tex, derivation.name, on_page=pages.update))
        write_atomic(stem.with_suffix(".pdf"), pdf)
        written.append(stem.with_suffix(".pdf"))
    return BuildResult(tuple(written))


def _no_tex_message() -> str:
    return tex_missing(", so no PDF")
