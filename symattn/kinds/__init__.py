"""The kinds of section, by name: the one table that names them all. Adding a kind is a module that defines it,
its language strings and an example, and a line here; a kind defined elsewhere registers itself (register), with
its strings in Kind.strings."""

from __future__ import annotations

from typing import Any

from .. import i18n
from ..errors import SpecError
from ..spec.fields import suggest
from .base import Kind
from .cross_attention import CROSS_ATTENTION
from .feed_forward import FEED_FORWARD
from .grouped_query import GROUPED_QUERY
from .multi_head import MULTI_HEAD
from .next_token import NEXT_TOKEN
from .norm import ADD_NORM, NORM
from .self_attention import SELF_ATTENTION
from .text import TEXT

KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> Kind:
    """File a kind under its name, with its language strings (a kind defined elsewhere, such as in a test, may
    register itself too). ValueError for a name taken by another kind, or strings that are not for every language
    with the same keys, or that would change an existing string."""
    if not kind.name:
        raise ValueError(f"{type(kind).__name__} has no name")
    if KINDS.get(kind.name, kind) is not kind:
        raise ValueError(f"a kind named {kind.name!r} is registered already")
    if kind.strings:
        i18n.check_languages(kind.strings, f"kind {kind.name!r}")
        for lang, new in kind.strings.items():
            i18n.add(lang, new)
    KINDS[kind.name] = kind
    return kind


def unregister(name: str) -> Kind:
    """Remove a registered kind and the strings it brought (as a test's kind does when it is done); KeyError for
    an unknown name."""
    kind = KINDS.pop(name)
    for lang, new in kind.strings.items():
        i18n.remove(lang, new)
    return kind


def kind_of(name: Any, field: str = "kind") -> Kind:
    """The kind of that name; SpecError naming `field` for an unknown one."""
    if not isinstance(name, str):  # a list or a table (unhashable) is no name
        raise SpecError(field, f"expected the name of a section kind ({', '.join(KINDS)}), got {name!r}")
    kind = KINDS.get(name)
    if kind is None:
        raise SpecError(field, f"unknown section kind {name!r}{suggest(name, KINDS)}")
    return kind


def examinable() -> tuple[str, ...]:
    """The kinds an exam can draw, in the order `--kind mixed` takes them."""
    return tuple(name for name, kind in KINDS.items() if kind.examinable)


for _kind in (SELF_ATTENTION, CROSS_ATTENTION, MULTI_HEAD, TEXT, GROUPED_QUERY, NEXT_TOKEN, FEED_FORWARD, ADD_NORM,
              NORM):
    register(_kind)
