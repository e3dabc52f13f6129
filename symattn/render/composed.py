"""The printers a kind brings, composed into every format's renderer: each folder kinds/<name>/ and
features/<name>/ with a printers.py names its printer classes in `PRINTERS`, and a kind registered from outside
the package brings them as `Kind.printers`. A renderer class made by a format is composed with all of them when it
is instantiated, behind the format's own methods and before the generic math (render/math.py)."""

from __future__ import annotations

from functools import cache
from importlib import import_module, resources

from ..errors import RenderError

FOLDERS = ("kinds", "features")  # the package's folders whose subfolders may hold a printers.py


@cache
def package_printers() -> tuple[type, ...]:
    """The PRINTERS of every printers.py in a kind's or a feature's folder of the package, in folder order."""
    found: list[type] = []
    for folder in FOLDERS:
        for entry in sorted(resources.files(f"symattn.{folder}").iterdir(), key=lambda e: e.name):
            if entry.is_dir() and (entry / "printers.py").is_file():
                found += import_module(f"symattn.{folder}.{entry.name}.printers").PRINTERS
    return tuple(found)


def registered_printers() -> tuple[type, ...]:
    """The printers of the kinds registered from outside the package (Kind.printers), in registration order."""
    from ..kinds import KINDS

    return tuple(cls for kind in KINDS.loaded() for cls in kind.printers)


def compose(renderer: type) -> type:
    """The renderer class with every kind's printers mixed in after it (one class per renderer and set of
    printers). RenderError when two printer classes define the same method, which would make one of them depend on
    the order the folders are read in."""
    printers = tuple(cls for cls in (*package_printers(), *registered_printers()) if not issubclass(renderer, cls))
    return _composed(renderer, printers) if printers else renderer


@cache
def _composed(renderer: type, printers: tuple[type, ...]) -> type:
    owners: dict[str, type] = {}
    for cls in printers:
        for name in vars(cls):
            if name.startswith("__"):
                continue
            if name in owners and owners[name] is not cls:
                raise RenderError(f"{cls.__qualname__} and {owners[name].__qualname__} both define {name}")
            owners[name] = cls
    return type(renderer.__name__, (renderer, *printers), {"__module__": renderer.__module__,
                                                            "__qualname__": renderer.__qualname__})
