"""The pieces of a flow figure: boxes on a grid (each line math or a language string), the arrows between them, and
the gaps between columns (figures/flow.py lays the figures out, render/figures/blocks.py the chains' block figures)."""

from __future__ import annotations

from ...document.figures import Arrow, Box, Flow, Line, math, text

__all__ = ["GAP", "LABELLED_GAP", "LABEL_AT", "ROW_SPACE", "STUB", "Arrow", "Box", "Flow", "Line", "math", "text"]

# Millimetres: the usual gap between columns, the gap where branches carry labels, how far a branch leaves its
# box, where a branch's label sits from the branch, and the space between rows.
GAP, LABELLED_GAP, STUB, LABEL_AT, ROW_SPACE = 7, 14, 4, 5, 4
