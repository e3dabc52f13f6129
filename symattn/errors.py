"""The exception hierarchy: every error a user can cause is a SymattnError with a one-line message."""

from __future__ import annotations

import re

# What a terminal would act on rather than show: C0 and C1 controls (ESC starts a colour or cursor sequence, a
# newline would make two lines) and the bidirectional overrides and isolates (which reorder the text around them).
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """A message as a terminal shows it literally, on one line: each control character as its escape (\\x1b)."""
    return _UNPRINTABLE.sub(lambda m: repr(m.group(0))[1:-1] if ord(m.group(0)) < 0x100
                            else f"\\u{ord(m.group(0)):04x}", text)


class SymattnError(Exception):
    """Base class: the CLI prints the message on one line and exits with status 2."""

    exit_status = 2


class SpecError(SymattnError):
    """An input (spec file, example, option) is malformed; the message names the field."""

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}" if field else problem)

    def __reduce__(self):  # picklable (from a worker process) with both arguments, not only the message
        return type(self), (self.field, self.problem)


class RenderError(SymattnError):
    """A renderer met something it cannot print (a bug, not a user error)."""


class TexNotFoundError(SymattnError):
    """No TeX engine on the PATH."""


class LatexError(SymattnError):
    """LaTeX ran and failed; the message carries the relevant lines of the log."""
