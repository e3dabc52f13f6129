"""What this folder brings to every format's renderer: no printers of its own (its steps are printed by
the attention steps' printers), only the symbols its steps and sentences name."""

from __future__ import annotations

from ...typeset.math import contribute

# the symbols this folder's steps and sentences name, added to render/math.py's tables
contribute(formulas={
    "gqa_mapping": r"g = \lceil h / r \rceil",
    "gqa_mapping_zero": r"\lfloor h / r \rfloor",
    "gqa_theta": r"\theta_i = b^{-2i/d}",
    "gqa_angle": r"m\,\theta_i",
    "gqa_projection": "$P = $X $W",
})

# the printers this folder brings to every format's renderer (render/composed.py)
PRINTERS: tuple[type, ...] = ()
