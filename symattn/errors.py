"""The exception hierarchy: every error a user can cause is a SymattnError with a one-line message."""

from __future__ import annotations


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
