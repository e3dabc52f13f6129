"""The formulas the sliding window's sentences name (render/math.py FORMULAS); it prints no step of its own."""

from __future__ import annotations

from ...typeset.math import contribute

contribute(formulas={
    "sliding_window_rule": r"i - w < j \le i",
    "sliding_window_low": r"i - w + 1",
})

PRINTERS: tuple[type, ...] = ()
