"""Reading spec files and built-in examples so that every number keeps its exact value: their text to a parsed
document (read_spec_text), checked for depth and text (check_document); pipeline/parse.py makes it a Spec."""

from __future__ import annotations

import json
import re
import tomllib
from decimal import Decimal
from typing import Any

from .. import examples
from ..errors import SpecError
from .fields import key_field, suggest

SPEC_SUFFIXES = (".toml", ".json")
# No spec nests deeper than 7 (sections[0].heads[0].W_Q[0][0]); a deeper document is refused before anything
# recurses through it (comparisons, repr in messages).
MAX_DEPTH = 16
# The longest integer a spec may write, in digits (Python's default int_max_str_digits).
MAX_INT_DIGITS = 4300
_SURROGATE = re.compile("[\ud800-\udfff]")


def check_document(data: Any) -> None:
    """Every value of a parsed document, walked without recursion: SpecError naming the field for nesting deeper
    than MAX_DEPTH and for text with lone surrogates (JSON's "\\ud800": not a character, and not writable)."""
    if _sound(data):
        return
    pending: list[tuple[str, Any, int]] = [("", data, 0)]
    while pending:
        field, value, depth = pending.pop()
        if depth > MAX_DEPTH:
            raise SpecError(field, f"nested more than {MAX_DEPTH} levels deep (no spec field nests so deep)")
        if isinstance(value, dict):
            for key, item in value.items():
                _check_text(key, key_field(field, key))
                pending.append((key_field(field, key), item, depth + 1))
        elif isinstance(value, list):
            pending.extend((f"{field}[{i}]", item, depth + 1) for i, item in enumerate(value))
        elif isinstance(value, _LongInteger):
            raise SpecError(field, f"an integer of {value.digits} digits is too long (at most {MAX_INT_DIGITS} digits)")
        else:
            _check_text(value, field)


def _sound(data: Any) -> bool:
    """check_document's walk without naming fields (most of its time): whether it would find nothing; when it
    would, the named walk runs to say where. Lone surrogates stay lone in a join: one search for all the text."""
    texts: list[str] = []
    pending: list[tuple[Any, int]] = [([data], -1)]  # (a container, its depth)
    while pending:
        value, depth = pending.pop()
        if isinstance(value, dict):
            texts.extend(key for key in value if isinstance(key, str))
            items = value.values()
        else:
            items = value
        if items and depth >= MAX_DEPTH:
            return False  # its items are nested deeper than MAX_DEPTH
        for item in items:
            if isinstance(item, str):
                texts.append(item)
            elif isinstance(item, _LongInteger):
                return False
            elif isinstance(item, dict | list):
                pending.append((item, depth + 1))
    return not _SURROGATE.search("".join(texts))


def _check_text(value: Any, field: str) -> None:
    if isinstance(value, str) and _SURROGATE.search(value):
        raise SpecError(field or "key", f"expected text without lone surrogates, got {value!r}")


def read_spec_text(text: str, fmt: str, source: str) -> dict[str, Any]:
    """Parse TOML or JSON text; floats become Decimal (their text, not a binary float). A JSON key given twice
    is refused, as TOML refuses it."""
    try:
        if fmt == "toml":
            data = tomllib.loads(text, parse_float=Decimal)
        else:
            data = json.loads(text, parse_float=Decimal, parse_int=_parse_int, parse_constant=_reject_constant,
                              object_pairs_hook=unique_keys)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(source, f"not valid TOML: {exc}") from None
    except json.JSONDecodeError as exc:
        raise SpecError(source, f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise SpecError(source, f"nested too deeply (no spec field nests more than {MAX_DEPTH} levels)") from None
    except DuplicateKey as exc:
        raise SpecError(source, f"key {exc.args[0]!r} given twice in one object (give each key once)") from None
    except ValueError as exc:  # tomllib's int(): longer than Python's int_max_str_digits
        if fmt == "toml" and "digits" in str(exc):
            raise SpecError(source, f"a number is too long (more than {MAX_INT_DIGITS} digits)") from None
        raise SpecError(source, str(exc)) from None
    if not isinstance(data, dict):
        raise SpecError(source, "expected an object at the top level")
    return data


class DuplicateKey(Exception):
    """A key given twice in one JSON object (json.loads would keep the last silently)."""


class _LongInteger:
    """A JSON integer longer than MAX_INT_DIGITS, kept as its length: check_document refuses it naming its field
    (Python reads no such integer from text)."""

    def __init__(self, digits: int) -> None:
        self.digits = digits

    def __repr__(self) -> str:
        return f"an integer of {self.digits} digits"


def _parse_int(text: str) -> int | _LongInteger:
    digits = len(text.lstrip("-"))
    return _LongInteger(digits) if digits > MAX_INT_DIGITS else int(text)


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json.loads' object_pairs_hook for every JSON symattn reads (specs, exam.json, claims): DuplicateKey for a
    key given twice."""
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise DuplicateKey(key)
        data[key] = value
    return data


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number a worked solution can use")


def unknown_example(name: str) -> str:
    """The message for a name that is no built-in example: the closest name, and every valid one."""
    return f"unknown example {name!r}{suggest(name, examples.names())}; the examples are {', '.join(examples.names())}"


def example_text(name: str) -> str:
    """The TOML source of a built-in example."""
    if name not in examples.names():
        raise SpecError("--example", unknown_example(name))
    return examples.source(name)
