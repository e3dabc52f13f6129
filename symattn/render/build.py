"""From a spec to files on disk: derive, render, compile, write atomically."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import TexNotFoundError
from ..infra.output import check_targets, write_set
from ..infra.progress import Counter
from ..pipeline.derive import derive_spec
from ..pipeline.limits import MAX_PAGES as MAX_PAGES
from ..pipeline.limits import check_size
from ..spec.model import Spec
from .formats import LATEX, Format, compiler_function, format_of
from .pdf import LatexRun, compile_pdf, sweep_stale_folders, tex_available, tex_missing

LONG_DOCUMENT = 40  # pages from which build says what it is doing (the mt handout has 8)


def text_renderer(fmt: str) -> Callable[..., str]:
    """The function that renders a derivation as `fmt` text (called with the keyword `exact`): the registry's
    (render/formats.py), imported only when its format is asked for."""
    return format_of(fmt).render_function()


def output_stem(name: str) -> str:
    """The file name (without suffix) the outputs get: the spec's name, unless that could leave the output
    folder or name nothing (empty, '.', '..', a path separator, a leading dot), then 'spec'."""
    separators = {os.sep, os.altsep or os.sep, "/", "\\"}
    if not name.strip() or name.startswith(".") or any(sep in name for sep in separators) or "\0" in name:
        return "spec"
    return name


@dataclass(frozen=True)
class BuildResult:
    """What a build wrote, and what it could not do (a one-line warning), if anything."""

    written: tuple[Path, ...]
    warning: str | None = None


def build(spec: Spec, out_dir: Path, formats: tuple[str, ...], lang: str | None = None,
          digits: int | None = None, exact: bool = False, pdf_required: bool = True,
          notify: Callable[[str], None] = lambda message: None, latex: LatexRun | None = None,
          keep: Iterable[Path] = (), prose: str | None = None, options: dict | None = None) -> BuildResult:
    """Write the requested formats of the spec's worked solution to out_dir: all of them or none.

    Everything is computed and compiled before anything is written, then the set is written at once
    (write_set); a file in `keep` (the input spec) is never overwritten, and the formats this spec's document was
    written in last time into out_dir that are not written now are removed, if still as written (document_set).
    The formats are render/formats.py's: the text ones first, in the order asked, then those compiled from a text
    (its source's text made if it was not asked for). Without TeX, a PDF that was not required is skipped with a
    warning; a required one raises TexNotFoundError and nothing is written. `latex` is a LaTeX run started earlier to compile the PDF (the command
    line starts one before importing SymPy). `options`: what formats take beyond `exact` (Format.options: the
    slides' handout and theme), each given to the formats that take it.
    """
    keep = tuple(keep)
    pages = 0
    if any(format_of(fmt).paged for fmt in formats):  # a document with pages: refused before any work when too large
        pages = check_size(spec)
    # A long document says what it is doing, phase by phase: its derivation and each text take seconds.
    tell = notify if pages >= LONG_DOCUMENT else (lambda message: None)
    sweep_stale_folders()  # build folders of earlier runs killed with SIGKILL
    stem = output_stem(spec.name)
    paths = {fmt: out_dir / f"{stem}.{format_of(fmt).suffix}" for fmt in formats}
    check_targets(list(paths.values()), keep, folder=out_dir)  # before the work: an --out that cannot be written fails
    warning = None
    if any(format_of(fmt).compiler == LATEX for fmt in formats) and not tex_available():
        if pdf_required:
            raise TexNotFoundError(_no_tex_message())
        warning, formats = _no_tex_message(), tuple(fmt for fmt in formats if format_of(fmt).compiler != LATEX)
    tell(f"deriving a document of about {pages} pages...")
    derivation = derive_spec(spec, lang=lang, digits=digits, prose=prose)
    outputs: dict[Path, str | bytes] = {}
    texts: dict[str, str] = {}
    for fmt in formats:
        if format_of(fmt).renderer:
            tell(f"writing {paths[fmt].name}...")
            outputs[paths[fmt]] = texts[fmt] = _text(fmt, derivation, exact, options or {})
    for fmt in formats:
        source = format_of(fmt).compiled_from
        if not source:
            continue
        if source not in texts:
            tell(f"writing the {format_of(source).label} of {paths[fmt].name}...")
            texts[source] = _text(source, derivation, exact, options or {})
        outputs[paths[fmt]] = _compiled(format_of(fmt), texts[source], stem, notify, latex)
        if format_of(fmt).compiler == LATEX:
            latex = None  # a LaTeX run started early compiles one document
    write_set(outputs, keep, folder=out_dir, name=document_set(stem))
    return BuildResult(tuple(outputs), warning)


def document_set(stem: str) -> str:
    """The set (infra/sets.py) a spec's document belongs to in its output folder: its formats written by one run
    (`render` or `check`'s report), so that the next run of that spec into the folder removes the formats it does
    not write again, and never another spec's document."""
    return f"document {stem}"


def _text(fmt: str, derivation, exact: bool, options: dict) -> str:
    """A format's text, with the options it takes."""
    taken = {key: options[key] for key in format_of(fmt).options if key in options}
    return text_renderer(fmt)(derivation, exact=exact, **taken)


def _compiled(fmt: Format, text: str, stem: str, notify: Callable[[str], None], latex: LatexRun | None) -> bytes:
    """A compiled format's bytes from its source's text: LaTeX's through the run started early, if any."""
    what = fmt.suffix.upper()
    if fmt.compiler != LATEX:
        notify(f"compiling the {what}...")
        return compiler_function(fmt)(text, stem)
    notify(f"compiling the {what} with upLaTeX...")
    with Counter(f"{what} pages written") as pages:
        return (latex.finish(text, on_page=pages.update)[0] if latex is not None
                else compile_pdf(text, stem, on_page=pages.update))


def _no_tex_message() -> str:
    return tex_missing(", so no PDF")
