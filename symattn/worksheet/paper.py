"""The worksheet and its key as LaTeX: the handout's document with the worksheet's title and instructions (and its
version, for a drill of several), compiled as any handout is."""

from __future__ import annotations

from typing import Any, ClassVar

from ..document.steps import Derivation
from ..render.latex import LatexRenderer


# A blank (features/worksheet/printers.py): a box as wide as the number it will hold and taller than a line, room to
# write it by hand; in the key the same box holds the number, in blue. Defined where the body begins (the handouts'
# preamble is the same for every document).
BLANK_MACROS = r"""\newcommand{\wsblank}[1]{\boxed{\rule[-0.4em]{0pt}{1.5em}\;\hphantom{#1}\;}}
\newcommand{\wsfilled}[1]{\boxed{\rule[-0.4em]{0pt}{1.5em}\;\textcolor{blue}{#1}\;}}
"""


class WorksheetTitles:
    """A worksheet's title and instructions (settings `key`: the key's; `version`: its number in a drill), in
    place of a handout's."""

    def titles(self, derivation: Derivation) -> tuple[str, str]:
        key = "key_" if self.settings["key"] else ""
        title = (self.text(f"worksheet.{key}title", {"title": derivation.title}) if derivation.title
                 else self.text(f"worksheet.{key}untitled"))
        if self.settings["version"] is not None:
            title += " — " + self.text("worksheet.version", {"n": self.settings["version"]})
        return title, self.text(f"worksheet.{key}subtitle", {"digits": self.digits})


class WorksheetLatex(WorksheetTitles, LatexRenderer):
    """LaTeX of a worksheet or of its key."""

    default_settings: ClassVar[dict[str, Any]] = {**LatexRenderer.default_settings, "key": False, "version": None}

    def body(self, derivation: Derivation) -> str:
        return BLANK_MACROS + super().body(derivation)


def worksheet_latex(derivation: Derivation, key: bool = False, version: int | None = None) -> str:
    """The complete .tex of a worksheet (or of its key) made by sheet.worksheet."""
    return WorksheetLatex(lang=derivation.lang, digits=derivation.digits, key=key, version=version).document(derivation)
