"""The output formats of `symattn render`, by name: the one table that names them. A format is either text
rendered straight from a Derivation (its renderer, "module:function", imported only when the format is asked for,
so that `--help` stays fast) or a file compiled from another format's text (pdf: from tex's, with upLaTeX and
dvipdfmx). render/build.py writes them and the command line's help and --format read them from here; this module
imports nothing of symattn's but infra.places (what loads "module:function"), and no SymPy."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

from ..infra.places import attribute_at

# The compiler of symattn's PDFs, render/pdf.py's (text, jobname, on_page) -> bytes: build.py runs it through its
# LaTeX run started early by the command line, and skips or refuses its formats where TeX is not installed.
LATEX = "symattn.render.pdf:compile_pdf"


class Format(NamedTuple):  # not a dataclass: `dataclasses` would add a tenth to the time --help takes
    """One output format. `name` is what --format takes; `suffix` the file's (without the dot). A text format
    has `renderer`, "module:function" of a function (derivation, exact=...) -> str (`exact=False`: one that takes
    no `exact`, as the JSON answers); a compiled one has `compiled_from`, the format whose text it is made of, and
    `compiler`, "module:function" of (text, jobname) -> bytes (LATEX: TeX's, which build.py runs itself), raising
    a SymattnError when it cannot run. `paged`: its document has pages, so a spec too large to typeset is refused
    for it (build.check_size). `label` names its text in progress messages ("writing the LaTeX of mt.pdf...").
    `options`: the keywords beyond `exact` its renderer takes from the command line (the slides' handout, theme)."""

    name: str
    suffix: str
    renderer: str = ""
    exact: bool = True
    compiled_from: str = ""
    compiler: str = ""
    paged: bool = True
    label: str = ""
    options: tuple[str, ...] = ()

    def render_function(self) -> Callable[..., str]:
        """The function that renders a derivation as this format's text, called with the keyword `exact`."""
        function = attribute_at(self.renderer)
        return function if self.exact else (lambda derivation, exact: function(derivation))


# The package's formats, in the order the help and the errors list them.
BUILT_IN = (
    Format("tex", "tex", renderer="symattn.render.latex:render_latex", label="LaTeX"),
    Format("pdf", "pdf", compiled_from="tex", compiler=LATEX),
    Format("json", "json", renderer="symattn.render.answers:render_json", exact=False, paged=False, label="JSON"),
    Format("md", "md", renderer="symattn.render.markdown:render_markdown", label="Markdown"),
    Format("html", "html", renderer="symattn.render.html:render_html", label="HTML"),
    Format("slides-tex", "slides.tex", renderer="symattn.render.slides:render_slides", label="slides' LaTeX",
           options=("handout", "theme")),
    Format("slides", "slides.pdf", compiled_from="slides-tex", compiler=LATEX),
)
DEFAULT = ("tex", "pdf")  # what `render` writes without --format

FORMATS: dict[str, Format] = {fmt.name: fmt for fmt in BUILT_IN}


def names() -> tuple[str, ...]:
    """Every format's name, in registration order (the built-in ones first)."""
    return tuple(FORMATS)


def format_of(name: str) -> Format:
    """The format of that name (KeyError for an unknown one: --format has checked the names before)."""
    return FORMATS[name]


def uses_latex(requested: Iterable[str]) -> bool:
    """Whether any of the formats named (known or not) is compiled with LaTeX."""
    return any(name in FORMATS and FORMATS[name].compiler == LATEX for name in requested)


def register(fmt: Format) -> Format:
    """Add a format (after the built-in ones); ValueError for a name --format could not take or one taken, a
    suffix another format writes, or a format that is neither text nor compiled from a text format."""
    if not fmt.name or fmt.name != fmt.name.strip().lower() or "," in fmt.name or " " in fmt.name:
        raise ValueError(f"format name {fmt.name!r}: expected a lowercase word (--format lists names with commas)")
    if fmt.name in FORMATS:
        raise ValueError(f"a format named {fmt.name!r} is registered already")
    if not fmt.suffix or "/" in fmt.suffix or fmt.suffix.startswith("."):
        raise ValueError(f"format {fmt.name!r}: expected a file suffix without the dot, got {fmt.suffix!r}")
    taken = [other.name for other in FORMATS.values() if other.suffix == fmt.suffix]
    if taken:
        raise ValueError(f"format {fmt.name!r}: the suffix {fmt.suffix!r} is {taken[0]!r}'s (the files would collide)")
    if bool(fmt.renderer) == bool(fmt.compiled_from):
        raise ValueError(f"format {fmt.name!r}: expected either a renderer or the format it is compiled from")
    if fmt.compiled_from:
        source = FORMATS.get(fmt.compiled_from)
        if source is None or not source.renderer or not fmt.compiler:
            raise ValueError(f"format {fmt.name!r}: compiled from {fmt.compiled_from!r}, which must be a registered "
                             "text format, with a compiler")
    FORMATS[fmt.name] = fmt
    return fmt


def unregister(name: str) -> Format:
    """Remove a registered format (as a test's format does when it is done); KeyError for an unknown name,
    ValueError for one another format is compiled from."""
    users = [fmt.name for fmt in FORMATS.values() if fmt.compiled_from == name]
    if users:
        raise ValueError(f"format {users[0]!r} is compiled from {name!r}: unregister it first")
    return FORMATS.pop(name)


def compiler_function(fmt: Format) -> Callable[..., bytes]:
    """The function that compiles a compiled format's text to its bytes."""
    return attribute_at(fmt.compiler)
