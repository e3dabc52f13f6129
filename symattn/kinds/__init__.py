"""The kinds of section, by name: the one table that names them all. A kind of the package is a folder
kinds/<name>/ and a line in BUILT_IN, loaded when first asked for; a kind defined elsewhere registers itself
(register), with its strings in Kind.strings."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from importlib import import_module
from typing import Any

from ..errors import SpecError
from ..infra import i18n
from ..infra.places import attribute_at
from ..spec.fields import suggest
from .base import Kind

# The package's kinds, in the order `--kind mixed` takes the examinable ones: name -> "module:attribute" of the
# instance, imported only when a spec, an exam or a listing asks for that kind.
BUILT_IN = {
    "self_attention": "symattn.kinds.self_attention.kind:SELF_ATTENTION",
    "cross_attention": "symattn.kinds.cross_attention.kind:CROSS_ATTENTION",
    "multi_head": "symattn.kinds.multi_head.kind:MULTI_HEAD",
    "text": "symattn.kinds.text.kind:TEXT",
    "grouped_query": "symattn.kinds.grouped_query.kind:GROUPED_QUERY",
    "next_token": "symattn.kinds.next_token.kind:NEXT_TOKEN",
    "feed_forward": "symattn.kinds.feed_forward.kind:FEED_FORWARD",
    "add_norm": "symattn.kinds.norm.kind:ADD_NORM",
    "norm": "symattn.kinds.norm.kind:NORM",
    "alibi": "symattn.kinds.alibi.kind:ALIBI",
    "sliding_window": "symattn.kinds.sliding_window.kind:SLIDING_WINDOW",
    "backward": "symattn.kinds.backward.kind:BACKWARD",
}

# The kind an exam draws when none is asked for (`symattn exam` without --kind).
EXAM_DEFAULT = "self_attention"

# The exam kinds that draw a variant of a kind of section (`--kind rope`: self-attention with RoPE): name ->
# "module:attribute" of an object with the exam hooks and claims(section_data), imported when an exam asks.
EXAM_VARIANTS = {
    "rope": "symattn.kinds.self_attention.rope_exam:ROPE_EXAM",
}


class Registry(Mapping[str, Kind]):
    """The kinds by name, in registration order; a built-in kind's module is imported when the kind is first
    looked up (its name is known before)."""

    def __init__(self, where: dict[str, str]) -> None:
        self._where = dict(where)  # name -> "module:attribute", until loaded
        self._kinds: dict[str, Kind | None] = dict.fromkeys(where)

    def __getitem__(self, name: str) -> Kind:
        kind = self._kinds[name]
        if kind is None:
            kind = self._kinds[name] = attribute_at(self._where.pop(name))
        return kind

    def __iter__(self) -> Iterator[str]:
        return iter(self._kinds)

    def __len__(self) -> int:
        return len(self._kinds)

    def __contains__(self, name: object) -> bool:
        return name in self._kinds

    def loaded(self) -> tuple[Kind, ...]:
        """The kinds imported or registered so far, without importing the others."""
        return tuple(kind for kind in self._kinds.values() if kind is not None)

    def add(self, kind: Kind) -> None:
        self._kinds[kind.name] = kind

    def pop(self, name: str) -> Kind:
        kind = self[name]
        del self._kinds[name]
        return kind


KINDS = Registry(BUILT_IN)


def register(kind: Kind) -> Kind:
    """File a kind under its name, with its language strings (a kind defined elsewhere, such as in a test, may
    register itself too). ValueError for a name taken by another kind, or strings that are not for every language
    with the same keys, or that would change an existing string."""
    if not kind.name:
        raise ValueError(f"{type(kind).__name__} has no name")
    if kind.name in KINDS and KINDS[kind.name] is not kind:
        raise ValueError(f"a kind named {kind.name!r} is registered already")
    if kind.strings:
        i18n.check_languages(kind.strings, f"kind {kind.name!r}")
        for lang, new in kind.strings.items():
            i18n.add(lang, new)
    KINDS.add(kind)
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
    if name not in KINDS:
        raise SpecError(field, f"unknown section kind {name!r}{suggest(name, KINDS)}")
    return KINDS[name]


def folder_module(name: str, module: str) -> Any | None:
    """kinds/<folder>/<module>.py of the built-in kind of that name (its check hypotheses, say), imported without
    the kind itself; None for a kind registered from elsewhere or a folder without that module."""
    where = BUILT_IN.get(name)
    if where is None:
        return None
    package = where.partition(":")[0].rpartition(".")[0]
    try:
        return import_module(f"{package}.{module}")
    except ModuleNotFoundError as error:
        if error.name != f"{package}.{module}":
            raise
        return None


def exam_variants() -> dict[str, Any]:
    """The exam kinds that are variants of a kind of section, by name (EXAM_VARIANTS, imported)."""
    return {name: attribute_at(where) for name, where in EXAM_VARIANTS.items()}


def examinable() -> tuple[str, ...]:
    """The kinds an exam can draw, in the order `--kind mixed` takes them."""
    return tuple(name for name, kind in KINDS.items() if kind.examinable)
