"""The findings as a document (--format md,pdf): a text block with the summary and the table of wrong numbers,
then the correct worked derivation of every section that has one, written by symattn's own renderers (the PDF by
the LaTeX path). The explanations are in English, so the report is too."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import SpecError
from . import Checked
from .claims import path_text
from .diagnose import answered as answered_sections
from .report import HEADER, summary

REPORT_FORMATS = ("md", "pdf", "tex", "html")


def report_spec(spec: Any, checked: Checked) -> Any:
    """A spec of the report: the findings' block, then the sections with a wrong number (with chained sections,
    every section up to the last of them, so that the chain still holds), the author's own blocks left out."""
    from ..kinds.text.kind import TextSpec
    from ..pipeline.parse import parse_section

    answered = answered_sections(spec)
    wrong = sorted({f.claim.at[1] for f in checked.wrong if len(f.claim.at) > 1 and isinstance(f.claim.at[1], int)})
    if spec.source is not None and wrong:  # chained: later sections may read earlier ones
        kept = tuple(answered[:wrong[-1] + 1])
    else:
        kept = tuple(answered[i] for i in wrong if i < len(answered))
    paragraphs = [summary(checked) + "."]
    if checked.wrong:
        paragraphs.append("Each wrong number is listed with its correct value at the same precision, its likely "
                          "cause and why; the correct worked derivation of its section follows.")
    preface: dict[str, Any] = {"kind": TextSpec.kind, "heading": "Check report", "paragraphs": paragraphs}
    if checked.wrong:  # the path split in two columns, so that a narrow PDF column can wrap it
        preface["table"] = {"header": ["section", "quantity", *HEADER[1:]],
                            "rows": [[_section_of(f.claim.at, answered), _quantity(f.claim.at), f.claim.printed,
                                      f.correct, f.cause, f.explanation] for f in checked.wrong]}
    title = f"Check of {spec.title}" if spec.title else "Check report"
    return replace(spec, sections=(parse_section(preface, "report"), *kept), title=title,
                   name=f"{spec.name}-check")


def _quantity(at: tuple) -> str:
    """The quantity within its section, short: `love: weights[3]` for a query's, `Q[0][1]` for the others."""
    if len(at) > 4 and at[2] == "queries":
        return f"{at[3]}: {path_text(at[4:])}"
    return path_text(at[2:])


def _section_of(at: tuple, answered: list) -> str:
    """The section a claim is on, with its kind: sections[0] (its kind's name)."""
    index = at[1] if len(at) > 1 and isinstance(at[1], int) else None
    if index is None or index >= len(answered):
        return path_text(at[:2])
    return f"sections[{index}] ({answered[index].kind})"


def write(spec: Any, checked: Checked, formats: tuple[str, ...], out: Path, keep: tuple[Path, ...] = ()
          ) -> list[Path]:
    """Write the report in the formats asked (of REPORT_FORMATS); the paths written. A file in `keep` (the spec,
    the claims, the --from document) is never overwritten: a one-line error naming --out."""
    from ..render.build import build

    try:
        result = build(report_spec(spec, checked), out, formats, lang="en", keep=keep)
    except SpecError as error:
        if error.field == "--out":
            raise
        raise SpecError("--format", f"the report could not be written: {error}") from None
    return list(result.written)
