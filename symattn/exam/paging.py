"""Each version's page count, for its "Page i of n": a paper's first LaTeX pass tells the count of every version
(templates/exam.tex's \\symattnendversion writes it to the log), and the second pass is given them.

The heads and feet do not change where pages break, so the second pass has the same pages; a one-version PDF
(--split) has the pages its version has in the whole paper, and takes its counts from the whole paper's pass.
"""

from __future__ import annotations

import re

from ..errors import RenderError

_MARK = re.compile(r"^symattn-pages:([^=\s]+)=(\d+)$", re.MULTILINE)
_DOCUMENT = "\\begin{document}"


def page_counts(log: str) -> dict[str, int]:
    """The page count of every version in a LaTeX log, by version label."""
    return {label: int(count) for label, count in _MARK.findall(log)}


def with_counts(source: str, counts: dict[str, int]) -> str:
    """A paper's source with its versions' page counts set before the document (as the .aux of a first run
    would set them)."""
    if not counts:
        return source
    lines = "".join(f"\\symattnpages{{{label}}}{{{count}}}\n" for label, count in counts.items())
    head, found, tail = source.partition(_DOCUMENT)
    if not found:
        raise RenderError("a paper without \\begin{document}: its page counts cannot be set")
    return head + lines + found + tail


def check_counts(name: str, log: str, counts: dict[str, int]) -> None:
    """A second pass must have the pages its counts say (else the papers would print a wrong "of n")."""
    for label, count in page_counts(log).items():
        if counts.get(label, count) != count:
            raise RenderError(f"{name}: version {label} has {count} pages, its first pass {counts[label]}")
