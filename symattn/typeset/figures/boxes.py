"""The pieces of a flow figure: boxes on a grid (each line math or a language string), the arrows between them, and
the gaps between columns (figures/flow.py lays the figures out, render/figures/blocks.py the chains' block figures)."""

from __future__ import annotations

from ...document.figures import GAP, LABELLED_GAP, Arrow, Box, Flow, Line, math, text

__all__ = ["GAP", "LABELLED_GAP", "LABEL_AT", "ROW_SPACE", "STUB", "Arrow", "Box", "Flow", "Line", "math", "text"]

# Millimetres (beside document.figures' GAP and LABELLED_GAP between columns): how far a branch leaves its box,
# where a branch's label sits from the branch, and the space between rows.
STUB, LABEL_AT, ROW_SPACE = 4, 5, 4
