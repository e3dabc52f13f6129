"""The plugin API: what a kind of section needs, whether it lives in the package (kinds/<name>/) or outside it
(registered with register_kind). Every name here is public and kept stable; tests/test_plugin.py defines a whole
kind, with its own step, printer, strings and figure, from these names alone.

A kind is a Kind subclass (parse, compute, steps, symbolic, answers; optionally figure, size, outputs and the exam
hooks). Its steps are Step dataclasses holding values; a step type of its own needs a printer, a class with a
`_print_<StepClass>(self, step) -> str` method, named in Kind.printers (in the package: PRINTERS in the folder's
printers.py), where `self` is the format's renderer, a MathRenderer: `self.numbers(shown)`, `self.name(Name(...))`,
`self.align(lines)`, `self.relation(exact)`, `self.checked_lines(lines)` and `Line`/`operand` make lines every
format sets and a student can check. Strings go in Kind.strings (in the package: locale/<lang>.toml)."""

from __future__ import annotations

from .document.figures import GAP, LABELLED_GAP, Arrow, Box, Flow, Line, math, words
from .document.phrases import Facts, Formula, Name, Num, Token, Tokens
from .document.sentences import say
from .document.steps import (
    Derivation,
    DotProducts,
    FlowFigure,
    Heading,
    MatrixEquation,
    Paragraph,
    Scaling,
    Shown,
    SoftmaxStep,
    Step,
    TokenTable,
    VectorEquation,
    WeightedSum,
)
from .errors import RenderError, SpecError
from .kinds import register as register_kind
from .kinds import unregister as unregister_kind
from .kinds.base import Carried, Kind, Size
from .spec.fields import check_keys, focus, matrix, require, tokens
from .spec.model import GivenMatrix, Section
from .spec.numbers import parse_number
from .typeset.lines import Line as CheckedLine
from .typeset.lines import Operand, guarded, operand
from .typeset.math import MathRenderer

__all__ = [
    "GAP", "LABELLED_GAP", "Arrow", "Box", "Carried", "CheckedLine", "Derivation", "DotProducts", "Facts", "Flow",
    "FlowFigure", "Formula", "GivenMatrix", "Heading", "Kind", "Line", "MathRenderer", "MatrixEquation", "Name",
    "Num", "Operand", "Paragraph", "RenderError", "Scaling", "Section", "Shown", "Size", "SoftmaxStep", "SpecError",
    "Step", "Token", "TokenTable", "Tokens", "VectorEquation", "WeightedSum", "check_keys", "focus", "guarded",
    "math", "matrix", "operand", "parse_number", "register_kind", "require", "say", "tokens", "unregister_kind",
    "words",
]
