"""Find the LaTeX templates (shipped inside the wheel, or at the top of a source checkout) and assemble the
preamble: preamble-common.tex is what every document class takes (math, fonts, colours, the flow figures' and
heatmaps' macros); preamble-<class>.tex adds what one kind of class needs, each of its blocks at the line of the
common preamble that names it. preamble-article.tex is the article classes' (article, jsarticle, exam): the page
geometry, page breaks around headings, the asides (\\note) and the page style; a class with its own page (Beamer)
takes the common preamble alone."""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import RenderError

_PACKAGE = Path(__file__).resolve().parent.parent
# A line "@NAME@" alone: in preamble-common.tex where a class's block goes, in preamble-<class>.tex where one starts.
_SLOT = re.compile(r"^@([A-Z]+)@\n", re.MULTILINE)


def template_dir() -> Path:
    """symattn/templates in an installed wheel; ../templates next to the package in a checkout."""
    for candidate in (_PACKAGE / "templates", _PACKAGE.parent / "templates"):
        if (candidate / "preamble-common.tex").is_file():
            return candidate
    raise RenderError("LaTeX templates not found: reinstall symattn (the wheel ships them in symattn/templates)")


def read_template(name: str) -> str:
    """The text of one template file."""
    return (template_dir() / name).read_text(encoding="utf-8")


def common_preamble(page: str | None = "article") -> str:
    """preamble-common.tex with the blocks of preamble-<page>.tex at its @NAME@ lines (an article's: @GEOMETRY@
    still to fill); with page None the common part alone, for a class that sets its own page (Beamer). RenderError
    for a block the common preamble has no line for."""
    blocks = class_blocks(page) if page is not None else {}
    common = read_template("preamble-common.tex")
    unknown = sorted(set(blocks) - set(_SLOT.findall(common)))
    if unknown:
        raise RenderError(f"preamble-{page}.tex: preamble-common.tex has no line @{unknown[0]}@ for its block")
    return _SLOT.sub(lambda slot: blocks.get(slot.group(1), ""), common)


def class_blocks(page: str) -> dict[str, str]:
    """The blocks of preamble-<page>.tex by name: each the lines after its @NAME@ line, up to the next one (the
    file's text above the first is its own comment, not copied)."""
    parts = _SLOT.split(read_template(f"preamble-{page}.tex"))
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def language_preamble(lang: str) -> str:
    """preamble-<lang>.tex: what one language adds to preamble-common.tex."""
    return read_template(f"preamble-{lang}.tex")


def class_options(documentclass: str) -> list[str]:
    """Document class options beside paper and size: jsarticle sets Japanese for upLaTeX with `uplatex`, and
    without `nomag*` it would scale the page by \\mag (and geometry's margins with it); beamer loads xcolor itself,
    so it is given the `table` option the common preamble asks for (\\cellcolor) through the class (loaded again
    with another option, xcolor would clash); every class gets the DVI-to-PDF driver, which graphicx and xcolor
    read."""
    if documentclass == "jsarticle":
        return ["uplatex", "nomag*", "dvipdfmx"]
    return ["dvipdfmx", "xcolor=table"] if documentclass == "beamer" else ["dvipdfmx"]
