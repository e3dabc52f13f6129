"""Find the LaTeX templates: shipped inside the wheel, or at the top of a source checkout."""

from __future__ import annotations

from pathlib import Path

from ..errors import RenderError

_PACKAGE = Path(__file__).resolve().parent.parent


def template_dir() -> Path:
    """symattn/templates in an installed wheel; ../templates next to the package in a checkout."""
    for candidate in (_PACKAGE / "templates", _PACKAGE.parent / "templates"):
        if (candidate / "preamble-common.tex").is_file():
            return candidate
    raise RenderError("LaTeX templates not found: reinstall symattn (the wheel ships them in symattn/templates)")


def read_template(name: str) -> str:
    """The text of one template file."""
    return (template_dir() / name).read_text(encoding="utf-8")


def language_preamble(lang: str) -> str:
    """preamble-<lang>.tex: what one language adds to preamble-common.tex."""
    return read_template(f"preamble-{lang}.tex")


def class_options(documentclass: str) -> list[str]:
    """Document class options beside paper and size: jsarticle sets Japanese for upLaTeX with `uplatex`, and
    without `nomag*` it would scale the page by \\mag (and geometry's margins with it); every class gets the
    DVI-to-PDF driver, which graphicx and xcolor read."""
    return ["uplatex", "nomag*", "dvipdfmx"] if documentclass == "jsarticle" else ["dvipdfmx"]
