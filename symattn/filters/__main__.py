"""Print the path of the pandoc Lua filter (symattn/filters/symattn.lua)."""

from . import LUA

print(LUA)
