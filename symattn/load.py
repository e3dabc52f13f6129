"""Reading spec files and built-in examples so that every number keeps its exact value."""

from __future__ import annotations

import json
import tomllib
from decimal import Decimal
from pathlib import Path
from typing import Any

from . import examples
from .errors import SpecError
from .spec import Spec
from .validate import parse_spec, suggest


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
    if suffix not in (".toml", ".json"):
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
