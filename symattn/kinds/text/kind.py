"""Text blocks: a section of the author's own words around the derivations (a heading, paragraphs, asides, a table,
references), with inline math from a safe subset of LaTeX, in every language. Nothing is computed or answered."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...document.size import MAX_COLUMNS, MAX_DEPTH, MAX_TEXT, Size
from ...document.steps import References, Step, TextParagraph, TextTable, WrittenHeading
from ...errors import SpecError
from ...spec.fields import check_keys, require
from ...spec.model import Math, Section, Written
from ...spec.textmath import written_list
from ..base import Kind

# The parts a text section may have, in the order they are set; it needs one at least (a heading alone is fine).
PARTS = ("heading", "paragraphs", "notes", "table", "references")


@dataclass(frozen=True)
class TextSpec(Section):
    """A text block: its heading (Section.heading), paragraphs, asides, a table and references, each optional."""

    kind = "text"
    paragraphs: tuple[Written, ...] = ()
    notes: tuple[Written, ...] = ()
    header: tuple[Written, ...] = ()
    rows: tuple[tuple[Written, ...], ...] = ()
    references: tuple[Written, ...] = ()


class TextKind(Kind):
    name = TextSpec.kind
    keys = frozenset({"kind", *PARTS})

    def parse(self, data: dict[str, Any], field: str) -> TextSpec:
        if not any(part in data for part in PARTS):
            raise SpecError(field, f"a text section needs one of {', '.join(PARTS)} at least")
        header, rows = table(data["table"], f"{field}.table") if "table" in data else ((), ())
        return TextSpec(
            paragraphs=written_list(data["paragraphs"], f"{field}.paragraphs") if "paragraphs" in data else (),
            notes=written_list(data["notes"], f"{field}.notes") if "notes" in data else (),
            header=header, rows=rows,
            references=written_list(data["references"], f"{field}.references") if "references" in data else ())

    def compute(self, section: TextSpec) -> None:
        return None

    def symbolic(self, result: None) -> bool:
        return False

    def steps(self, section: TextSpec, result: None) -> list[Step]:
        return [
            *([] if section.heading is None else [WrittenHeading(1, "", text=section.heading)]),
            *(TextParagraph(paragraph) for paragraph in section.paragraphs),
            *(TextParagraph(note, note=True) for note in section.notes),
            *([TextTable(section.header, section.rows)] if section.header else []),
            *([References(section.references)] if section.references else []),
        ]

    def answers(self, section: TextSpec, result: None) -> None:
        """No answers: the JSON leaves the section out."""
        return None

    def size(self, section: TextSpec) -> Size:
        """Its characters (pages), and the string that passes a limit of document/size.py if one does (the longest
        otherwise): a 200,000-word paragraph, math nested 300 deep or 500 columns stop TeX."""
        strings = [("heading", section.heading), *((f"paragraphs[{i}]", w) for i, w in enumerate(section.paragraphs)),
                   *((f"notes[{i}]", w) for i, w in enumerate(section.notes)),
                   *((f"table.header[{j}]", w) for j, w in enumerate(section.header)),
                   *((f"table.rows[{i}][{j}]", w) for i, row in enumerate(section.rows) for j, w in enumerate(row)),
                   *((f"references[{i}]", w) for i, w in enumerate(section.references))]
        measured = [(field, *_measure(w)) for field, w in strings if isinstance(w, Written)]
        characters = sum(m[1] for m in measured)
        columns = len(section.header)
        if columns > MAX_COLUMNS:
            return Size("table", text=1, columns=columns, characters=characters)
        worst = next((m for m in measured if m[1] > MAX_TEXT or m[2] > MAX_DEPTH),
                     max(measured, key=lambda m: m[1], default=("heading", 1, 0)))
        return Size(worst[0], text=max(1, worst[1]), depth=worst[2], columns=columns, characters=characters)


def table(value: Any, field: str) -> tuple[tuple[Written, ...], tuple[tuple[Written, ...], ...]]:
    """table = { header = [...], rows = [[...], ...] }: every row as long as the header."""
    if not isinstance(value, dict):
        raise SpecError(field, "expected a table { header = [...], rows = [[...], ...] }")
    check_keys(value, {"header", "rows"}, field)
    header = written_list(require(value, "header", field), f"{field}.header")
    given = require(value, "rows", field)
    if not isinstance(given, list) or not given:
        raise SpecError(f"{field}.rows", "expected a non-empty list of rows (each a list of cells)")
    rows = []
    for i, row in enumerate(given):
        cells = written_list(row, f"{field}.rows[{i}]")
        if len(cells) != len(header):
            raise SpecError(f"{field}.rows[{i}]", f"{len(cells)} cells, but the header has {len(header)}")
        rows.append(cells)
    return header, tuple(rows)


TEXT = TextKind()


def _measure(written: Written) -> tuple[int, int]:
    """(characters, deepest nesting of braces in its math) of a string, in its longest language."""
    characters, depth = 0, 0
    for _, pieces in written.texts:
        characters = max(characters, sum(len(p) if isinstance(p, str) else sum(len(x if isinstance(x, str) else x.text) for x in p.parts)
                                         for p in pieces))
        for piece in pieces:
            if isinstance(piece, Math):
                level = 0
                for part in piece.parts:
                    for i, c in enumerate(part if isinstance(part, str) else ""):
                        if c in "{}" and not (i and part[i - 1] == "\\"):
                            level += 1 if c == "{" else -1
                            depth = max(depth, level)
    return characters, depth
