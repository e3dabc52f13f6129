"""The pandoc filter that turns a ```symattn block of an author's document into its worked solution (symattn.lua,
a Lua filter; also the Quarto extension _extensions/symattn/ of a checkout). `python3 -m symattn.filters` prints
its path, for `pandoc --lua-filter "$(python3 -m symattn.filters)"`."""

from __future__ import annotations

from pathlib import Path

LUA = Path(__file__).resolve().parent / "symattn.lua"
