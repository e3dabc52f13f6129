"""A bounded per-process memo of values that depend only on a key: a document (or an exam's paper and its Moodle
feedback) shows the same numbers and lines in several steps and formats."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class Memo(Generic[T]):
    """key -> value, computed once; emptied when it holds `most` keys (the work it saves is within a document)."""

    def __init__(self, most: int) -> None:
        self.most = most
        self.values: dict[Hashable, T] = {}

    def find(self, key: Hashable) -> T | None:
        """The value kept for the key, or None (for values that are never None)."""
        return self.values.get(key)

    def keep(self, key: Hashable, value: T) -> T:
        """Keep the value for the key (get() without a function to call: no closure to make on every look-up)."""
        if len(self.values) >= self.most:
            self.values.clear()
        self.values[key] = value
        return value

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The value kept for the key, else compute()'s, kept (None too)."""
        try:
            return self.values[key]
        except KeyError:
            return self.keep(key, compute())


class ByIdentity(Generic[T]):
    """(owner, key) -> value, computed once, the owner found by identity: for owners whose equality is slow to decide
    (a matrix's entries, a derivation step) or that are made anew for each use. Each owner is kept with its value, so
    that its id is not taken by another object while the entry lasts; emptied when it holds `most` keys."""

    def __init__(self, most: int) -> None:
        self.memo: Memo[tuple[object, T]] = Memo(most)

    def find(self, owner: object, key: Hashable = ()) -> T | None:
        """The value kept for the owner and key, or None (for values that are never None)."""
        found = self.memo.find((id(owner), key))
        return None if found is None else found[1]

    def keep(self, owner: object, key: Hashable, value: T) -> T:
        self.memo.keep((id(owner), key), (owner, value))
        return value

    def get(self, owner: object, key: Hashable, compute: Callable[[], T]) -> T:
        """The value kept for the owner and key, else compute()'s, kept."""
        found = self.memo.find((id(owner), key))
        return found[1] if found is not None else self.keep(owner, key, compute())
