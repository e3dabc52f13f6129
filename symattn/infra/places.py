"""Where the package keeps what its kinds and features bring: the folders kinds/<name>/ and features/<name>/ that
hold a given file or folder (printers.py, locale/ja.toml, examples/), and an object named "module:attribute"."""

from __future__ import annotations

from importlib import import_module, resources
from importlib.abc import Traversable
from typing import Any

FOLDERS = ("kinds", "features")  # the package's folders whose subfolders are a kind's or a feature's


def in_folders(relative: str) -> list[tuple[str, Traversable]]:
    """Each kind's and feature's (package name, path) of `relative` inside its folder, where it exists: kinds
    first, then features, each by name (the order printers, strings and examples are read in)."""
    found = []
    for folder in FOLDERS:
        # walked from the package's files, so that no subpackage is imported (`symattn examples` imports no SymPy)
        for entry in sorted((resources.files("symattn") / folder).iterdir(), key=lambda e: e.name):
            place = entry / relative
            if entry.is_dir() and (place.is_file() or place.is_dir()):
                found.append((f"symattn.{folder}.{entry.name}", place))
    return found


def attribute_at(where: str) -> Any:
    """The object named "module:attribute", its module imported if it is not yet."""
    module, _, attribute = where.partition(":")
    return getattr(import_module(module), attribute)
