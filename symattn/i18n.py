"""Language strings: one TOML file per language under locales/, all with the same keys."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources

from .errors import RenderError


@cache
def strings(lang: str) -> dict[str, str]:
    """All strings of a language, as a flat dict of dotted keys."""
    source = resources.files("symattn") / "locales" / f"{lang}.toml"
    return dict(_flatten(tomllib.loads(source.read_text(encoding="utf-8"))))


def text(lang: str, key: str) -> str:
    """One string; an unknown key is a bug and says so."""
    try:
        return strings(lang)[key]
    except KeyError:
        raise RenderError(f"language {lang!r} has no string {key!r}") from None


def _flatten(table: dict, prefix: str = ""):
    for key, value in table.items():
        if isinstance(value, dict):
            yield from _flatten(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value
