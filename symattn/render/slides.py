"""The worked solution as Beamer slides (`--format slides`): one frame per step, a step too tall for one frame
continued on the next under the same title, figures and heatmaps on frames of their own, and every line of a
derivation revealed on its own overlay (`--handout`: Beamer's handout mode, the same frames without overlays).

The math is LatexRenderer's at a slide's width; only how it is put on frames differs. A derivation's lines are
uncovered cell by cell (`\\uncover<n->{cell} & \\uncover<n->{cell}`): Beamer's \\pause does not work in an
alignment, which TeX sets twice, and `<+->` would count twice there too, so every overlay number is written out
here, frame by frame."""

from __future__ import annotations

import re
from typing import Any, ClassVar

from pylatex import Document, NoEscape

from ..document.steps import Derivation, FlowFigure, Heading, Heatmap, References
from ..errors import SpecError
from ..typeset.layout import display_rows, visible_width, wrap
from .latex import LatexRenderer, shared_preamble
from .templates import class_options

# A 16:9 frame at 11 pt: \textwidth is 398 pt, 67 characters of the article's 5.9 pt; a little is kept free.
SLIDE_CHARACTERS = 62
ASPECT_RATIO = "169"
FONT_SIZE = "11pt"
# What a frame holds, title included, in lines of 11 pt text (a fraction's row counts two, a matrix its rows), and
# the characters of a title's line (bold, larger).
FRAME_LINES = 16.3
TITLE_CHARACTERS = 50
# A display's rows and the space around it (\abovedisplayskip, \belowdisplayskip), in lines; a paragraph's space.
DISPLAY_ROW, DISPLAY_SPACE, PARAGRAPH_SPACE = 1.15, 1.7, 0.6
# The most rows (display_rows) one display on a frame holds: what a frame under a two-line title has room for.
DISPLAY_ROWS = 9
# A token table's rows on one frame, and a matrix's rows in one block.
TABLE_ROWS = 8
SLIDE_MATRIX_ROWS = 8
# Characters of running text to a line on a frame.
TEXT_CHARACTERS = {"ja": 34, "en": 68}
# The steps that get a frame of their own: what is looked at, not read line by line.
OWN_FRAME = (FlowFigure, Heatmap)
# Placeholders of the overlay numbers, filled in frame by frame (numbered): a line starts (the next overlay), a
# cell or a paragraph is shown from the current one. User text cannot hold them: escape() writes a backslash as
# \textbackslash{}.
_LINE, _AT = r"\symattnline", r"\symattnat"
_MARK = re.compile(r"\\symattn(line|at)(?![a-zA-Z])")
_DISPLAY = re.compile(r"(\\\[.*?\\\])", re.DOTALL)
THEME_NAME = re.compile(r"[A-Za-z]{1,40}")


def check_theme(theme: str, field: str = "--theme") -> str:
    """A Beamer theme's name (\\usetheme{...}): letters only, so that it can name nothing but a theme."""
    if not THEME_NAME.fullmatch(theme):
        raise SpecError(field, f"expected a Beamer theme's name (letters only, such as default or Madrid), "
                               f"got {theme!r}")
    return theme


def top_level_cells(line: str) -> list[str]:
    """A derivation line's cells: split at each & outside braces and environments (a matrix's & stay)."""
    cells, depth, start = [], 0, 0
    steps = {"{": 1, "}": -1, r"\begin{": 2, r"\end{": 0}  # \begin{name}: an environment and a brace opened
    for match in re.finditer(r"\\begin\{|\\end\{|\\[{}&]|[{}&]", line):
        token = match.group()
        if token == "&" and depth == 0:
            cells.append(line[start:match.start()])
            start = match.end()
        depth += steps.get(token, 0)  # (an escaped \{ \} \& counts nothing)
    return [*cells, line[start:]]


def revealed(line: str) -> str:
    """One line of an alignment, shown from its own overlay on: each cell uncovered (space kept, so nothing
    moves)."""
    return _LINE + " & ".join(rf"\uncover<{_AT}->{{{cell}}}" for cell in top_level_cells(line))


def numbered(frame: str) -> str:
    """A frame's placeholders as overlay numbers: each line the next overlay, the first one the frame's first."""
    current = 0

    def number(match: re.Match) -> str:
        nonlocal current
        if match.group(1) == "line":
            current += 1
            return ""
        return str(max(current, 1))

    return _MARK.sub(number, frame)


class SlidesRenderer(LatexRenderer):
    """A Derivation as a Beamer document. Settings beside LaTeX's: handout (no overlays) and theme."""

    format_name = "slides"
    default_settings: ClassVar[dict[str, Any]] = {**LatexRenderer.default_settings, "width": SLIDE_CHARACTERS,
                                                  "matrix_rows": SLIDE_MATRIX_ROWS, "handout": False,
                                                  "theme": "default"}

    # ------------------------------------------------------------ how math and text go on a frame

    def align(self, lines) -> str:
        """A derivation's lines, each revealed on its own overlay; as several displays where it is taller than a
        frame, so that the frames can be cut between them."""
        groups: list[list[str]] = [[]]
        for line in lines:
            if groups[-1] and display_rows([*groups[-1], line]) > DISPLAY_ROWS:
                # cut before the group's last line with a left side, so that "= ..." lines stay with their lead
                starts = [i for i, kept in enumerate(groups[-1]) if i and not kept.lstrip().startswith("&")]
                cut = starts[-1] if starts else len(groups[-1])
                groups[-1], moved = groups[-1][:cut], groups[-1][cut:]
                groups.append(moved)
            groups[-1].append(line)
        return "\n".join("\\[\\begin{aligned}\n" + " \\\\\n".join(map(revealed, group)) + "\n\\end{aligned}\\]"
                         for group in groups)

    def display(self, math: str) -> str:
        """One line of math, shown from its own overlay on."""
        return rf"\[ {_LINE}\uncover<{_AT}->{{{math}}} \]"

    def continued(self, lead: str, pieces: list[str], first_room: int) -> list[str]:
        """LaTeX's wrapped lines, except that a vector ([...] first among the pieces) that fits a line is never split:
        it goes after the lead, or on a line of its own, and what follows it (· W) on the lines after; a longer one
        fills whole lines below the lead."""
        lines = super().continued(lead, pieces, first_room)
        end = next((i for i, piece in enumerate(pieces) if "]" in piece), None)
        if len(lines) == 1 or end is None or not pieces[0].lstrip().startswith("["):
            return lines
        head, _, tail = pieces[end].partition("]")
        vector = " ".join([*pieces[:end], head + "]"])
        rest = [piece for piece in (tail.strip(), *pieces[end + 1:]) if piece]
        if not lead.split("&")[0].strip():  # no left side: nothing to leave on a line of its own
            return lines
        if visible_width(vector) > self.width - 10:  # longer than a line: on whole lines of its own after the lead
            wrapped = wrap(pieces, self.width - 10)
            return [lead.rstrip(), *(r"&\qquad " + re.sub(r"^-", "{-}", line) for line in wrapped)]
        out = [lead + vector] if visible_width(lead + vector) <= first_room else [lead.rstrip(), r"&\qquad " + vector]
        return out + [r"&\qquad " + line for line in wrap(rest, self.width - 10)] if rest else out

    def table(self, header: list[str], tokens: list[str], columns: list[list[str]]) -> str:
        """LaTeX's token table, in tables of at most TABLE_ROWS rows (a frame has no page to break across)."""
        return "\n".join(super(SlidesRenderer, self).table(header, tokens[at:at + TABLE_ROWS],
                                                           [column[at:at + TABLE_ROWS] for column in columns])
                         for at in range(0, len(tokens), TABLE_ROWS))

    def heading(self, level: int, text: str) -> str:
        return text  # a frame's title: body() puts it there

    def paragraph(self, text: str, note: bool = False) -> str:
        return rf"\aside{{{text}}}" if note else text  # (Beamer's own \note is a speaker's note)

    def _print_References(self, step: References) -> str:
        """[1], [2], ... (Beamer's lists have no \\labelenumi to set)."""
        return "\n\n".join(rf"[{i}]~{self.written(item)}" for i, item in enumerate(step.items, 1))

    # ------------------------------------------------------------ frames

    def frames(self, derivation: Derivation) -> list[tuple[str, str, list[str]]]:
        """The frames: (title, the part it belongs to, its pieces), in order."""
        self.notes_said.clear()
        frames: list[tuple[str, str, list[str]]] = []
        title, part = self.titles(derivation)[0], ""
        current: list[str] = []
        used = 0.0

        def close() -> None:
            nonlocal current, used
            if current:
                frames.append((title, part, current))
            current, used = [], 0.0

        for step in derivation.steps:
            latex = self.render(step)
            if isinstance(step, Heading):
                close()
                title = latex
                part = latex if step.level == 1 else part
                continue
            if isinstance(step, OWN_FRAME):
                lead_in = [current.pop()] if current and current[-1].rstrip().endswith((":", "：")) else []
                close()
                frames.append((title, part, [*lead_in, self.fitted_figure(latex)]))
                continue
            for piece in pieces(latex):
                height = self.height(piece)
                if current and used + height > self.room(title, part):
                    close()
                current.append(piece)
                used += height
        close()
        return frames

    def room(self, title: str, part: str) -> float:
        """The lines a frame of this title has below it (a long title takes two lines, a part's name one)."""
        title_lines = -(-visible_width(title) // TITLE_CHARACTERS)
        return FRAME_LINES - 1.3 * title_lines - (1 if part and part != title else 0)

    def height(self, piece: str) -> float:
        """About how many lines of text a piece takes on a frame."""
        if piece.startswith(r"\["):
            return DISPLAY_ROW * display_rows(piece.split("\\\\\n")) + DISPLAY_SPACE
        if r"\begin{tabular}" in piece:  # a row as tall as its text's lines (a p{} column wraps)
            rows = piece[piece.find(r"\toprule"):].split("\\\\")
            return 1.2 * sum(max(1, -(-visible_width(row) // TEXT_CHARACTERS[self.lang])) for row in rows) + 1.5
        size = 0.85 if piece.startswith(r"\aside") else 1  # (\small)
        return size * -(-visible_width(piece) // TEXT_CHARACTERS[self.lang]) + PARAGRAPH_SPACE

    def fitted_figure(self, latex: str) -> str:
        """A figure or heatmap scaled down to fit its frame if it is larger."""
        return "\n".join([r"\begin{adjustbox}{max width=\linewidth,max totalheight=0.72\textheight,center}",
                          r"\begin{minipage}{\linewidth}", latex, r"\end{minipage}", r"\end{adjustbox}"])

    def frame(self, title: str, part: str, content: list[str]) -> str:
        """One frame: its pieces, each text after a derivation's line shown from the overlay after it."""
        body, shown = [], False
        for piece in content:
            if piece.startswith(r"\["):
                shown = True
            elif shown:
                piece = _LINE + rf"\onslide<{_AT}->" + "\n" + piece
            body.append(piece)
        subtitle = f"{{{part}}}" if part and part != title else ""
        return numbered("\\begin{frame}[t]{" + title + "}" + subtitle + "\n" + "\n\n".join(body) + "\n\\end{frame}")

    def body(self, derivation: Derivation) -> str:
        return "\n\n".join(self.frame(*frame) for frame in self.frames(derivation))

    def document(self, derivation: Derivation) -> str:
        """A complete Beamer .tex file: class, preambles (the common one and the slides' part), title frame,
        frames."""
        title, subtitle = self.titles(derivation)
        body = self.body(derivation)
        options = [FONT_SIZE, f"aspectratio={ASPECT_RATIO}", *class_options("beamer")]
        doc = Document(documentclass="beamer", document_options=options + ["handout"] * self.settings["handout"],
                       fontenc=None, inputenc=None, lmodern=False, textcomp=False, page_numbers=False, indent=True)
        for part in shared_preamble(self.lang, body, page="slides"):
            doc.preamble.append(NoEscape(part))
        doc.preamble.append(NoEscape(rf"\usetheme{{{check_theme(self.settings['theme'])}}}"))
        doc.preamble.append(NoEscape(rf"\title{{{title}}}"))
        doc.preamble.append(NoEscape(r"\author{}"))
        doc.preamble.append(NoEscape(rf"\date{{{subtitle}}}"))
        doc.append(NoEscape("\\begin{frame}\n\\titlepage\n\\end{frame}\n\n" + body))
        return doc.dumps() + "\n"


def pieces(latex: str) -> list[str]:
    """A rendered step cut where a frame may end: before and after each display, between paragraphs and between
    the tables of a long token table."""
    out = []
    for part in _DISPLAY.split(latex):
        if part.startswith(r"\["):
            out.append(part)
            continue
        chunks = re.split(r"\n\s*\n|\n(?=\\begin\{center\})", part)
        out += [chunk.strip() for chunk in chunks if chunk.strip()]
    return out


def render_slides(derivation: Derivation, handout: bool = False, theme: str = "default", **settings: Any) -> str:
    """The complete Beamer .tex source of a derivation's slides."""
    settings.setdefault("lang", derivation.lang)
    settings.setdefault("digits", derivation.digits)
    return SlidesRenderer(handout=handout, theme=theme, **settings).document(derivation)

