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

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        try:
            return self.values[key]
        except KeyError:
            if len(self.values) >= self.most:
                self.values.clear()
            value = self.values[key] = compute()
            return value
