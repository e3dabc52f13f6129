"""Machine-readable answers: the answers of every section, by its kind, as JSON (the schema the README documents)."""

from __future__ import annotations

import json
from typing import Any

from .. import __version__
from ..document.steps import Derivation
from ..kinds import kind_of
from ..numbers.certify import EXTRA_FIGURES, certified_answers
from ..numbers.significant import FIGURES, more_figures

_ENCODER = json.JSONEncoder(ensure_ascii=False)
_CONTAINERS = {dict, list}  # the types of the answers' nested values (a list of anything else stays on one line)


def answers(derivation: Derivation) -> dict[str, Any]:
    """The answers of a derivation as plain data (the schema the README documents). A section a full carry
    reaches gives only the significant figures its bound certifies (symattn.numbers.certify)."""
    sections = []
    for section in derivation.sections:
        kind, bound = kind_of(section.kind), section.bound
        if bound is None:
            answer = kind.answers(section.spec, section.result)
        else:
            with more_figures(EXTRA_FIGURES):
                answer = kind.answers(section.spec, section.result)
            if answer is not None:
                answer = certified_answers(answer, bound)
        if answer is not None:  # None: a text block
            sections.append(_named(section.spec, answer))
    return {"symattn": __version__, "title": derivation.title, "significant_digits": FIGURES, "sections": sections}


def _named(spec: Any, answer: dict[str, Any]) -> dict[str, Any]:
    """A section's answers with its `name` after its kind, when it has one (chained sections: pipeline.chain)."""
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
