"""A small progress bar on stderr for long work (generating versions, compiling PDFs)."""

from __future__ import annotations

import sys
from typing import TextIO


def _output(stream: TextIO | None) -> tuple[TextIO, bool]:
    """Where a display writes (stderr unless told), and whether that is a terminal, where it redraws in place."""
    stream = stream if stream is not None else sys.stderr
    return stream, hasattr(stream, "isatty") and stream.isatty()


class Progress:
    """`label [######----] 12/30`, redrawn in place on a terminal; one closing line elsewhere (logs, CI)."""

    def __init__(self, label: str, total: int, stream: TextIO | None = None, width: int = 30) -> None:
        self.label, self.total, self.width = label, max(total, 1), width
        self.stream, self.live = _output(stream)
        self.done, self.detail = 0, ""
        if self.live:
            self._draw()

    def advance(self, steps: int = 1) -> None:
        self.done = min(self.total, self.done + steps)
        if self.live:
            self._draw()

    def describe(self, detail: str) -> None:
        """Text shown after the count on a terminal, such as the pages written so far."""
        if self.live and detail != self.detail:
            self.detail = detail
            self._draw()

    def close(self) -> None:
        if self.live:
            self.stream.write("\n")
        else:
            self.stream.write(f"{self.label}: {self.done}/{self.total}\n")
        self.stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _draw(self) -> None:
        filled = self.width * self.done // self.total
        bar = "#" * filled + "-" * (self.width - filled)
        detail = f", {self.detail}" if self.detail else ""
        self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total}{detail}")
        self.stream.flush()


class Counter:
    """`label: 57`, redrawn in place on a terminal, for work whose total is not known beforehand (the pages of a
    PDF being compiled); silent elsewhere, where a closing count would only lengthen logs."""

    def __init__(self, label: str, stream: TextIO | None = None) -> None:
        self.label, self.count = label, 0
        self.stream, self.live = _output(stream)

    def update(self, count: int) -> None:
        if self.live and count != self.count:
            self.stream.write(f"\r{self.label}: {count}")
            self.stream.flush()
        self.count = count

    def close(self) -> None:
        if self.live and self.count:
            self.stream.write("\n")
            self.stream.flush()

    def __enter__(self) -> Counter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
