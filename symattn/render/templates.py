"""Find the LaTeX templates: shipped inside the wheel, or at the top of a source checkout."""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import RenderError

_PACKAGE = Path(__file__).resolve().parent.parent
# A character from U+0370 on, outside U+2000–U+22FF; a regex scans a 300-version exam (2 MB) in milliseconds,
# a loop over its characters took a quarter of a second.
_BEYOND_LATIN = re.compile(r"[^\u0000-\u036f\u2000-\u22ff]")


def template_dir() -> Path:
    """symattn/templates in an installed wheel; ../templates next to the package in a checkout."""
    for candidate in (_PACKAGE / "templates", _PACKAGE.parent / "templates"):
        if (candidate / "preamble-common.tex").is_file():
            return candidate
    raise RenderError("LaTeX templates not found: reinstall symattn (the wheel ships them in symattn/templates)")


def read_template(name: str) -> str:
    """The text of one template file."""
    return (template_dir() / name).read_text(encoding="utf-8")


def language_preamble(lang: str, text: str) -> str:
    """preamble-<lang>.tex; for English, with luatexja (preamble-cjk.tex) only when `text`, the document's own
    text, holds characters that Latin Modern lacks. luatexja costs about 1.5 s of LuaLaTeX time on a
    12-page document even when the document has no Japanese in it."""
    preamble = read_template(f"preamble-{lang}.tex")
    if lang != "ja" and needs_cjk_fonts(text):
        preamble += read_template("preamble-cjk.tex")
    return preamble


def class_options(lang: str) -> list[str]:
    """Document class options of a language. Japanese: `disablejfam` for luatexja, given to the class so that it
    reaches luatexja however it is loaded (ltjsarticle loads it itself); preamble-cjk.tex passes it directly.
    symattn's math has Japanese only inside \\text{}, and without the option luatexja loads a Japanese math font
    at every math size (about 0.3 s of the mt PDF)."""
    return ["disablejfam"] if lang == "ja" else []


def needs_cjk_fonts(text: str) -> bool:
    """Whether text has letters beyond Latin (Greek, Cyrillic, CJK, ...); punctuation and math signs do not
    count (General Punctuation to Mathematical Operators, U+2000–U+22FF: Latin Modern sets them)."""
    return _BEYOND_LATIN.search(text) is not None
