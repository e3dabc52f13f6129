"""The printers a kind brings, composed into every format's renderer: each folder kinds/<name>/ and
features/<name>/ with a printers.py names its printer classes in `PRINTERS`, and a kind registered from outside
the package brings them as `Kind.printers`. A renderer class made by a format is composed with all of them when it
is instantiated, behind the format's own methods and before the generic math (render/math.py)."""

from __future__ import annotations

from functools import cache

from ..errors import RenderError
from ..infra.places import attribute_at, in_folders


@cache
def package_printers() -> tuple[type, ...]:
    """The PRINTERS of every printers.py in a kind's or a feature's folder of the package, in folder order."""
    return tuple(cls for package, _ in in_folders("printers.py")
                 for cls in attribute_at(f"{package}.printers:PRINTERS"))


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
