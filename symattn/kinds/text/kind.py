"""Text blocks: a section of the author's own words around the derivations (a heading, paragraphs, asides, a table,
references), with inline math from a safe subset of LaTeX, in every language. Nothing is computed or answered."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...document.steps import References, Step, TextParagraph, TextTable, WrittenHeading
from ...errors import SpecError
from ...spec.fields import check_keys, require
from ...spec.model import Section, Written
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
