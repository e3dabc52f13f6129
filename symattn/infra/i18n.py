"""Language strings: one TOML file per language under locales/ for what every document says, and one per language
in each kind's or feature's folder (kinds/<name>/locale/<lang>.toml) for what it says, all with the same keys; a
kind defined outside the package brings its own strings (Kind.strings), which registering it adds here (add) and
unregistering removes (remove)."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources

from ..errors import RenderError
from .places import in_folders

_PACKAGE = resources.files("symattn")
_LOCALES = _PACKAGE / "locales"
_added: dict[str, dict[str, str]] = {}  # language -> strings added at run time, by key


@cache
def languages() -> tuple[str, ...]:
    """The languages there are strings for (one locales/<lang>.toml each)."""
    return tuple(sorted(entry.name.removesuffix(".toml") for entry in _LOCALES.iterdir()
                        if entry.name.endswith(".toml")))


def sources(lang: str) -> list:
    """The language's files: locales/<lang>.toml, then each folder's locale/<lang>.toml in the folders' order."""
    return [_LOCALES / f"{lang}.toml", *(path for _, path in in_folders(f"locale/{lang}.toml"))]


@cache
def _files(lang: str) -> dict[str, str]:
    merged: dict[str, str] = {}
    for source in sources(lang):
        for key, value in _flatten(tomllib.loads(source.read_text(encoding="utf-8"))):
            if key in merged:  # two folders saying the same key: one would silently win
                raise RenderError(f"the string {key!r} is in two locale files ({source})")
            merged[key] = value
    return merged


@cache
def strings(lang: str) -> dict[str, str]:
    """All strings of a language, as a flat dict of dotted keys (the locale file's and those added)."""
    return {**_files(lang), **_added.get(lang, {})}


def text(lang: str, key: str) -> str:
    """One string; an unknown key is a bug and says so."""
    try:
        return strings(lang)[key]
    except KeyError:
        raise RenderError(f"language {lang!r} has no string {key!r}") from None


def check(lang: str, new: dict[str, str]) -> None:
    """ValueError unless `new` can be added to the language: a known language, flat dotted keys with text, and
    no key that exists already with a different text."""
    if lang not in languages():
        raise ValueError(f"no language {lang!r} (there are {', '.join(languages())})")
    have = strings(lang)
    for key, value in new.items():
        if not isinstance(key, str) or not isinstance(value, str) or "." not in key:
            raise ValueError(f"{lang}: expected dotted keys with text, got {key!r}: {value!r}")
        if key in have and have[key] != value:
            raise ValueError(f"{lang}: the string {key!r} exists already, as {have[key]!r}")


def check_languages(by_lang: dict[str, dict[str, str]], owner: str) -> None:
    """ValueError unless strings for several languages cover every language with the same keys, and each can be
    added (check)."""
    if set(by_lang) != set(languages()):
        raise ValueError(f"{owner}: strings for {sorted(by_lang)}, but every language needs them: {list(languages())}")
    keys = {lang: set(new) for lang, new in by_lang.items()}
    first = languages()[0]
    for lang, have in keys.items():
        if have != keys[first]:
            raise ValueError(f"{owner}: {lang} and {first} have different keys: {sorted(have ^ keys[first])}")
    for lang, new in by_lang.items():
        check(lang, new)


def add(lang: str, new: dict[str, str]) -> None:
    """Add strings to a language (check first); a key already there with the same text is left as it is."""
    check(lang, new)
    _added.setdefault(lang, {}).update(new)
    strings.cache_clear()


def remove(lang: str, keys: object) -> None:
    """Remove strings that add added (the locale files' own keys stay)."""
    added = _added.get(lang, {})
    for key in keys:
        added.pop(key, None)
    strings.cache_clear()


def _flatten(table: dict, prefix: str = ""):
    for key, value in table.items():
        if isinstance(value, dict):
            yield from _flatten(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value
