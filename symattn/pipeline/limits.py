"""The limits checked from the spec alone, before anything is computed: the work of deriving a spec (every command:
`solve`, `render`, `check`, …) and the size of the document `render` writes (document/size.py has the numbers and
how they were measured). Each refusal is one line naming the field."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..document.size import (
    GIVEN_PER_PAGE,
    MAX_BLOCKS,
    MAX_COLUMNS,
    MAX_DEPTH,
    MAX_KEYS,
    MAX_LINES,
    MAX_MATRIX,
    MAX_STEPS,
    MAX_TEXT,
    MAX_WORK,
    ONLINE_WORK,
    Size,
    entries,
)
from ..errors import SpecError
from ..kinds import kind_of

# The most pages a whole document may take: a few of the largest sections (64 tokens at d = 8 made 1,192 pages).
MAX_PAGES = 4000
ANSWERS = "use symattn solve or --format json for the answers"


def size_of(section: Any) -> Size:
    """The section's Size, with an online softmax's blocks and solve's work for them (a section's `online`: keys
    per block)."""
    size = kind_of(section.kind).size(section)
    block = getattr(section, "online", None)
    if block and size.keys:
        blocks = -(-size.keys // block)
        size = replace(size, blocks=size.stepwise * blocks, work=size.work * ONLINE_WORK)
    return size


def check_work(sections: Any, done: int = 0) -> int:
    """SpecError naming the section whose work, added to `done` (the sections before it), passes MAX_WORK: solve
    would run for minutes or exhaust memory. Else the work of them all, with `done`."""
    for i, section in sections:
        size = size_of(section)
        done += size.work
        if done > MAX_WORK:
            alone = size.work > MAX_WORK
            what = "the section computes" if alone else "the sections up to this one compute"
            online = f" (an online softmax's counting {ONLINE_WORK} each)" if getattr(section, "online", None) else ""
            instead = "fewer tokens" if alone else "fewer tokens, or several specs"
            raise SpecError(f"sections[{i}]" if alone else "sections",
                            f"{what} about {size.work if alone else done} query-key pairs or values{online}; at most "
                            f"{MAX_WORK} are computed, by every command, solve included (use {instead})")
    return done


def check_size(spec: Any) -> int:
    """SpecError naming a section's field when its document would pass a limit of document/size.py: TeX would run
    for minutes or stop. Only the spec is read; `solve` and JSON are not limited by it. Else the pages the
    document takes, about."""
    pages = 0
    answers = False
    for i, section in enumerate(spec.sections):
        size = size_of(section)
        pages += size.pages
        answers = answers or size.work > 0
        _check_section(size, section, f"sections[{i}]")
    if pages > MAX_PAGES:  # many sections each within bounds (a chain of 1,500 norms: 19,500 pages, minutes)
        instead = ANSWERS if answers else "split the spec into several documents"
        raise SpecError("sections", f"the {len(spec.sections)} sections make a document of about {pages} pages; at "
                                    f"most {MAX_PAGES} are written out ({instead})")
    return pages


def _check_section(size: Size, section: Any, at: str) -> None:
    field = f"{at}.{size.field}"
    if size.text or size.depth or size.columns:
        _check_text(size, field)
        return
    matrix_fits = size.field == "focus" and 0 < size.matrix <= MAX_MATRIX
    if size.steps > MAX_STEPS:
        default = "heads with their own weights" if size.field == "heads" else "tokens derived one by one"
        what = size.what or default
        instead = ('use focus = "matrix" for the matrix form alone, or symattn solve for the answers'
                   if matrix_fits else ANSWERS)
        over = size.over or f"over {size.keys} keys (d = {size.d})"
        raise SpecError(field, f"{size.stepwise} {what} {over} make a document of "
                               f"about {size.pages} pages; at most {MAX_STEPS // (size.keys * size.d)} are "
                               f"written out ({instead})")
    if size.keys > MAX_KEYS and size.field == "focus":
        raise SpecError(field, f"{size.keys} keys make derivations and a heatmap {size.keys} columns wide; at most "
                               f"{MAX_KEYS} keys are written out ({ANSWERS})")
    if size.lines > MAX_LINES:
        raise SpecError(field, f"{size.lines} entries make a derivation of {size.lines} lines; at most {MAX_LINES} are "
                               f"set ({ANSWERS})")
    if size.blocks > MAX_BLOCKS:
        raise SpecError(field, f"the online softmax derives {size.blocks} blocks one by one (queries derived × "
                               f"blocks of {section.online} keys), a document of about {size.pages} pages; at most "
                               f"{MAX_BLOCKS} are written out (use a larger block or fewer queries; or {ANSWERS})")
    given, largest = entries(section)
    if size.matrix + given > MAX_MATRIX:  # what the matrix form shows, and the given matrices (shown, multiplied)
        pages = f"a document of about {size.pages + given // GIVEN_PER_PAGE} pages"
        if size.matrix >= given:
            what = size.matrix_what or f"a matrix form of {size.matrix} entries"
            raise SpecError(field, f"{what} with given matrices of {given} make {pages}; at most {MAX_MATRIX} entries "
                                   f"are written out ({ANSWERS})")
        more = f" (the matrix form {size.matrix} more)" if size.matrix else ""
        raise SpecError(f"{at}.{largest}", f"the section's given matrices hold {given} entries{more}, {pages}; at "
                                           f"most {MAX_MATRIX} entries are written out ({ANSWERS})")


def _check_text(size: Size, field: str) -> None:
    if size.text > MAX_TEXT:
        raise SpecError(field, f"a text of {size.text} characters; at most {MAX_TEXT} are set as one paragraph "
                               "(split it into several)")
    if size.depth > MAX_DEPTH:
        raise SpecError(field, f"math nested {size.depth} braces deep; at most {MAX_DEPTH} are typeset")
    if size.columns > MAX_COLUMNS:
        raise SpecError(field, f"a table of {size.columns} columns; at most {MAX_COLUMNS} fit the page")
