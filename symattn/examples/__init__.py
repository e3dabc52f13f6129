"""The built-in examples: spec files shipped with the package (read without importing SymPy)."""

from __future__ import annotations

from importlib import resources


def names() -> list[str]:
    """The built-in examples, by name."""
    return sorted(entry.name.removesuffix(".toml") for entry in resources.files(__name__).iterdir()
                  if entry.name.endswith(".toml"))


def source(name: str) -> str:
    """The TOML text of one example (the caller checks the name)."""
    return (resources.files(__name__) / f"{name}.toml").read_text(encoding="utf-8")


def describe(name: str) -> str:
    """The first comment line of an example: what it is."""
    for line in source(name).splitlines():
        if line.startswith("#"):
            return line.lstrip("# ").strip()
    return ""
