"""What this folder brings to every format's renderer: no printers of its own (its steps are printed by
the attention steps' printers), only the symbols its steps and sentences name."""

from __future__ import annotations

from ...typeset.math import contribute

# the symbols this folder's steps and sentences name, added to render/math.py's tables
contribute(notation={
    "p": "p",
}, formulas={
    "cache_position": "p + t",
    "cache_seen": r"0, \ldots, p + t",
})

# the printers this folder brings to every format's renderer (render/composed.py)
PRINTERS: tuple[type, ...] = ()
