"""Reading spec files and built-in examples so that every number keeps its exact value, and validating a parsed
document into a Spec: the top-level keys here, each section by its kind (symattn.kinds)."""

from __future__ import annotations

import json
import tomllib
from decimal import Decimal
from pathlib import Path
from typing import Any

from .. import examples
from ..errors import SpecError
from ..kinds import kind_of
from .fields import check_keys, parse_digits, parse_lang, require, suggest
from .model import Section, Spec

_TOP_KEYS = {"title", "lang", "digits", "sections"}
SPEC_SUFFIXES = (".toml", ".json")


def parse_spec(data: dict[str, Any], name: str = "spec") -> Spec:
    """Validate a parsed spec document and build the exact Spec."""
    check_keys(data, _TOP_KEYS, "")
    title = data.get("title")
    if title is not None and not isinstance(title, str):
        raise SpecError("title", "expected a string")
    lang = parse_lang(data["lang"], "lang") if "lang" in data else None
    digits = parse_digits(data["digits"], "digits") if "digits" in data else None
    sections = data.get("sections")
    if not isinstance(sections, list) or not sections:
        raise SpecError("sections", "expected a non-empty list of sections")
    parsed = tuple(parse_section(section, f"sections[{i}]") for i, section in enumerate(sections))
    return Spec(sections=parsed, title=title, lang=lang, digits=digits, name=name)


def parse_section(data: Any, field: str) -> Section:
    """One section, validated by its kind."""
    if not isinstance(data, dict):
        raise SpecError(field, "expected a table (object) describing a section")
    kind = kind_of(require(data, "kind", field), f"{field}.kind")
    check_keys(data, kind.keys, field)
    return kind.parse(data, field)


def read_spec_text(text: str, fmt: str, source: str) -> dict[str, Any]:
    """Parse TOML or JSON text; floats become Decimal (their text, not a binary float)."""
    try:
        if fmt == "toml":
            data = tomllib.loads(text, parse_float=Decimal)
        else:
            data = json.loads(text, parse_float=Decimal, parse_constant=_reject_constant)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(source, f"not valid TOML: {exc}") from None
    except json.JSONDecodeError as exc:
        raise SpecError(source, f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except ValueError as exc:
        raise SpecError(source, str(exc)) from None
    if not isinstance(data, dict):
        raise SpecError(source, "expected an object at the top level")
    return data


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number a worked solution can use")


def load_spec(path: str | Path) -> Spec:
    """Read and validate a spec file (.toml or .json)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SPEC_SUFFIXES:
        raise SpecError(str(path), f"expected a .toml or .json spec file, got {suffix or 'no extension'}")
    fmt = suffix.removeprefix(".")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError(str(path), f"cannot read file ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise SpecError(str(path), "not UTF-8 text") from None
    return parse_spec(read_spec_text(text, fmt, str(path)), name=path.stem)


def example_text(name: str) -> str:
    """The TOML source of a built-in example."""
    if name not in examples.names():
        raise SpecError("--example", f"unknown example {name!r}{suggest(name, examples.names())}")
    return examples.source(name)


def load_example(name: str) -> Spec:
    """A built-in example as a validated Spec."""
    return parse_spec(read_spec_text(example_text(name), "toml", f"example {name}"), name=name)


def load(source: str | Path | Spec) -> Spec:
    """A Spec from itself, a spec file's path (.toml or .json, in any case) or a built-in example's name."""
    if isinstance(source, Spec):
        return source
    if isinstance(source, Path) or str(source).lower().endswith(SPEC_SUFFIXES):
        return load_spec(source)
    return load_example(str(source))
