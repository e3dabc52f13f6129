"""The built-in examples: spec files shipped with the package (read without importing SymPy): the documents here,
and each kind's or feature's own in its folder (kinds/<name>/examples/*.toml)."""

from __future__ import annotations

from functools import cache
from importlib import resources

from ..infra.places import in_folders


@cache
def _files() -> dict:
    """Each example's file, by name: this folder's first, then the kinds' and the features' folders in order."""
    places = [resources.files(__name__), *(path for _, path in in_folders("examples"))]
    found: dict = {}
    for place in places:
        for entry in place.iterdir():
            if entry.name.endswith(".toml"):
                name = entry.name.removesuffix(".toml")
                if name in found:  # two folders with the same example: one would silently win
                    raise RuntimeError(f"two built-in examples are named {name!r}")
                found[name] = entry
    return found


def names() -> list[str]:
    """The built-in examples, by name."""
    return sorted(_files())


def source(name: str) -> str:
    """The TOML text of one example (the caller checks the name)."""
    return _files()[name].read_text(encoding="utf-8")


def describe(name: str) -> str:
    """The first comment line of an example: what it is."""
    for line in source(name).splitlines():
        if line.startswith("#"):
            return line.lstrip("# ").strip()
    return ""
