"""Renderers: they walk a Derivation's steps and never compute attention themselves.

The package is also callable, for notebooks: `symattn.render(spec)` is the worked solution of a spec (an example's
name, a spec file, spec data as a dict, TOML text or a Spec), which Jupyter displays as its Markdown, LaTeX and
HTML (render/notebook.py)."""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any


class _CallablePackage(ModuleType):
    """symattn.render stays the package of renderers and, called, renders (no second name for one thing)."""

    def __call__(self, source: Any, lang: str | None = None, digits: int | None = None,
                 prose: str | None = None) -> Any:
        from .notebook import worked_solution
        return worked_solution(source, lang=lang, digits=digits, prose=prose)


sys.modules[__name__].__class__ = _CallablePackage
