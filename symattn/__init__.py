"""symattn: exact, step-by-step worked solutions of Transformer attention.

The public API is imported lazily, so that the command line starts without importing SymPy.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "derive": "symattn.derivation",
    "derive_spec": "symattn.derivation",
    "load_spec": "symattn.spec.files",
    "load_example": "symattn.spec.files",
    "parse_spec": "symattn.spec.files",
    "Spec": "symattn.spec.model",
    "Derivation": "symattn.model",
    "render_latex": "symattn.render.latex",
    "compile_pdf": "symattn.render.pdf",
    "SymattnError": "symattn.errors",
    "SpecError": "symattn.errors",
    "LatexError": "symattn.errors",
}

__all__ = sorted(_EXPORTS)


# Exports that make or are Derivations: Jupyter's display methods are attached to Derivation when they are first
# asked for (model.py imports no renderer).
_DISPLAYED = {"derive", "derive_spec", "Derivation"}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(import_module(_EXPORTS[name]), name)
        if name in _DISPLAYED:
            import_module("symattn.render.notebook").register()
        return value
    raise AttributeError(f"module 'symattn' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
