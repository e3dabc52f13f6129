"""Machine-readable answers: the answers of every section, by its kind, as JSON (the schema the README documents)."""

from __future__ import annotations

import json
import re
from typing import Any

from .. import __version__
from ..figures import FIGURES, cut
from ..kinds import kind_of
from ..model import Derivation

_ENCODER = json.JSONEncoder(ensure_ascii=False)
_CONTAINERS = {dict, list}  # the types of the answers' nested values (a list of anything else stays on one line)


def answers(derivation: Derivation) -> dict[str, Any]:
    """The answers of a derivation as plain data (the schema the README documents)."""
    sections = []
    approximated: set[str] = set()  # the names of sections computed from approximations (_approximated)
    for section in derivation.sections:
        spec, answer = section.spec, kind_of(section.kind).answers(section.spec, section.result)
        cut_to_figures = _approximated(spec, approximated)
        if cut_to_figures and spec.name is not None:
            approximated.add(spec.name)
        if answer is not None:  # None: a text block
            sections.append(_named(spec, _cut(answer) if cut_to_figures else answer))
    return {"symattn": __version__, "title": derivation.title, "significant_digits": FIGURES, "sections": sections}


def _approximated(spec: Any, approximated: set[str]) -> bool:
    """Whether a section computes from approximations: a full carry of irrational values (90-digit numbers made
    exact, whose exact results' later digits are not the chain's), or the rows of an earlier such section."""
    return any((carry.mode == "full" and not carry.exact) or carry.source in approximated for carry in spec.carried)


# Answer keys whose strings are names or LaTeX, which may look like decimals (a token "2024"), not decimals.
_NOT_DECIMALS = {"name", "tokens", "memory_tokens", "past_tokens", "vocabulary", "ranking", "predicted", "ties",
                 "focus", "exact"}


def _cut(value: Any, key: str | None = None) -> Any:
    """Every decimal of a section's answers to FIGURES significant digits (figures.cut)."""
    if key in _NOT_DECIMALS:
        return value
    if isinstance(value, dict):
        return {k: _cut(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut(v, key) for v in value]
    if isinstance(value, str) and _DECIMAL.fullmatch(value):
        return cut(value, FIGURES)
    return value


_DECIMAL = re.compile(r"-?[0-9]+(\.[0-9]+)?(E[+-][0-9]+)?")


def _named(spec: Any, answer: dict[str, Any]) -> dict[str, Any]:
    """A section's answers with its `name` after its kind, when it has one (chained sections: symattn.chain)."""
    if spec.name is None:
        return answer
    items = list(answer.items())
    at = 1 if items and items[0][0] == "kind" else 0
    return dict([*items[:at], ("name", spec.name), *items[at:]])


def render_json(derivation: Derivation) -> str:
    """The answers as indented JSON text (UTF-8, token names as they are), one vector per line."""
    return _dumps(answers(derivation)) + "\n"


def _dumps(value: Any) -> str:
    """JSON indented by two spaces, except that a list of scalars stays on one line."""
    parts: list[str] = []
    _write(value, 0, parts)
    return "".join(parts)


def _write(value: Any, depth: int, parts: list[str]) -> None:
    """Append the JSON text of a value to parts (joined once at the end, not once per nesting level)."""
    if isinstance(value, dict) and value:
        items, brackets = [(f"{_ENCODER.encode(key)}: ", item) for key, item in value.items()], "{}"
    elif isinstance(value, list) and not _CONTAINERS.isdisjoint(map(type, value)):
        items, brackets = [("", item) for item in value], "[]"
    else:
        parts.append(_ENCODER.encode(value))
        return
    pad = "\n" + "  " * (depth + 1)
    for i, (label, item) in enumerate(items):
        parts += (brackets[0] if i == 0 else ",", pad, label)
        _write(item, depth + 1, parts)
    parts.append("\n" + "  " * depth + brackets[1])
