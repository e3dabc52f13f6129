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
