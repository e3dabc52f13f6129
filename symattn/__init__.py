"""symattn: exact, step-by-step worked solutions of Transformer attention.

The public API is imported lazily, so that the command line starts without importing SymPy.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

# Each public name, and where it lives: "module" (same name there) or "module:name".
_EXPORTS = {
    # derivations
    "derive": "symattn.pipeline.derive",
    "derive_spec": "symattn.pipeline.derive",
    "Derivation": "symattn.document.steps",
    # specs
    "load_spec": "symattn.pipeline.parse",
    "load_example": "symattn.pipeline.parse",
    "parse_spec": "symattn.pipeline.parse",
    "read_spec_text": "symattn.spec.files",
    "Spec": "symattn.spec.model",
    # outputs ("render" is the renderers' package, callable in a notebook: symattn.render(spec))
    "render": "symattn.render:",
    "render_latex": "symattn.render.latex",
    "render_markdown": "symattn.render.markdown",
    "render_html": "symattn.render.html",
    "render_json": "symattn.render.answers",
    "answers": "symattn.render.answers",
    "compile_pdf": "symattn.render.pdf",
    # kinds of section
    "Kind": "symattn.kinds.base",
    "register_kind": "symattn.kinds:register",
    "unregister_kind": "symattn.kinds:unregister",
    "kind_of": "symattn.kinds",
    # exams
    "ExamOptions": "symattn.exam.options",
    "build_exam": "symattn.exam.build",
    "generate": "symattn.exam.generate",
    # errors
    "SymattnError": "symattn.errors",
    "SpecError": "symattn.errors",
    "RenderError": "symattn.errors",
    "LatexError": "symattn.errors",
}

__all__ = sorted(_EXPORTS)


# Exports that make or are Derivations: Jupyter's display methods are attached to Derivation when they are first
# asked for (document/steps.py imports no renderer).
_DISPLAYED = {"derive", "derive_spec", "Derivation"}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        module, colon, attribute = _EXPORTS[name].partition(":")
        value = import_module(module) if colon and not attribute else getattr(import_module(module), attribute or name)
        if name in _DISPLAYED:
            import_module("symattn.render.notebook").register()
        return value
    raise AttributeError(f"module 'symattn' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
