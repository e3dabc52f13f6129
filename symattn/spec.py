"""Spec files: exact parsing and validation of TOML/JSON specs and the built-in examples."""

from __future__ import annotations

import difflib
import json
import tomllib
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from sympy import ImmutableMatrix

from . import examples
from .errors import SpecError
from .exact import parse_number

LANGUAGES = ("ja", "en")
MAX_DIGITS = 30


@dataclass(frozen=True)
class GivenMatrix:
    """A matrix from the input, exact, with the number of decimals it was written with (for display)."""

    values: ImmutableMatrix
    decimals: int

    @property
    def shape(self) -> tuple[int, int]:
        return self.values.shape


@dataclass(frozen=True)
class SelfAttentionSpec:
    """Self-attention over one sequence: Q, K, V all come from X."""

    tokens: tuple[str, ...]
    X: GivenMatrix
    W_Q: GivenMatrix
    W_K: GivenMatrix
    W_V: GivenMatrix
    focus: tuple[str, ...]
    d_k: int
    kind: str = "self_attention"


@dataclass(frozen=True)
class CrossAttentionSpec:
    """Cross-attention: queries from decoder tokens X, keys and values from the encoder's memory."""

    tokens: tuple[str, ...]
    X: GivenMatrix
    memory_tokens: tuple[str, ...]
    memory: GivenMatrix
    W_Q: GivenMatrix
    W_K: GivenMatrix
    W_V: GivenMatrix
    focus: tuple[str, ...]
    d_k: int
    kind: str = "cross_attention"


@dataclass(frozen=True)
class HeadSpec:
    """One head of multi-head attention: either its output is given, or its own weights are."""

    output: GivenMatrix | None = None
    W_Q: GivenMatrix | None = None
    W_K: GivenMatrix | None = None
    W_V: GivenMatrix | None = None
    d_k: int | None = None


@dataclass(frozen=True)
class MultiHeadSpec:
    """Multi-head attention for one focus token: head outputs, concatenation, projection by W_O."""

    focus: str
    heads: tuple[HeadSpec, ...]
    W_O: GivenMatrix
    tokens: tuple[str, ...] = ()
    X: GivenMatrix | None = None
    kind: str = "multi_head"


SectionSpec = SelfAttentionSpec | CrossAttentionSpec | MultiHeadSpec


@dataclass(frozen=True)
class Spec:
    """A whole document: optional title, language and digit budget, and its sections in order."""

    sections: tuple[SectionSpec, ...]
    title: str | None = None
    lang: str | None = None
    digits: int | None = None
    name: str = "spec"


# ---------------------------------------------------------------- reading files


def read_spec_text(text: str, fmt: str, source: str) -> dict[str, Any]:
    """Parse TOML or JSON text so that every number keeps its exact value (floats become Decimal)."""
    try:
        if fmt == "toml":
            return tomllib.loads(text, parse_float=Decimal)
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
    fmt = "json" if path.suffix.lower() == ".json" else "toml"
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
        raise SpecError("--example", f"unknown example {name!r}{_suggest(name, examples.names())}")
    return examples.source(name)


def load_example(name: str) -> Spec:
    """A built-in example as a validated Spec."""
    return parse_spec(read_spec_text(example_text(name), "toml", f"example {name}"), name=name)


# ---------------------------------------------------------------- validation

_TOP_KEYS = {"title", "lang", "digits", "sections"}
_SECTION_KEYS = {
    "self_attention": {"kind", "tokens", "X", "W_Q", "W_K", "W_V", "focus", "d_k"},
    "cross_attention": {"kind", "tokens", "X", "memory_tokens", "memory", "W_Q", "W_K", "W_V", "focus", "d_k"},
    "multi_head": {"kind", "focus", "heads", "W_O", "tokens", "X"},
}
_HEAD_KEYS = {"output", "W_Q", "W_K", "W_V", "d_k"}


def _suggest(word: str, choices: Any) -> str:
    """' (did you mean 'W_K'?)' for the closest choice, ignoring case; '' when nothing is close."""
    by_lower = {str(choice).lower(): str(choice) for choice in choices}
    close = difflib.get_close_matches(str(word).lower(), list(by_lower), n=1)
    return f" (did you mean {by_lower[close[0]]!r}?)" if close else ""


def _check_keys(data: dict[str, Any], allowed: set[str], field: str) -> None:
    for key in data:
        if key not in allowed:
            where = f"{field}.{key}" if field else key
            raise SpecError(where, f"unknown key{_suggest(key, allowed)}")


def _require(data: dict[str, Any], key: str, field: str) -> Any:
    if key not in data:
        raise SpecError(f"{field}.{key}", "missing")
    return data[key]


def parse_spec(data: dict[str, Any], name: str = "spec") -> Spec:
    """Validate a parsed spec document and build the exact Spec."""
    _check_keys(data, _TOP_KEYS, "")
    title = data.get("title")
    if title is not None and not isinstance(title, str):
        raise SpecError("title", "expected a string")
    lang = data.get("lang")
    if lang is not None:
        lang = parse_lang(lang, "lang")
    digits = data.get("digits")
    if digits is not None:
        digits = parse_digits(digits, "digits")
    sections = data.get("sections")
    if not isinstance(sections, list) or not sections:
        raise SpecError("sections", "expected a non-empty list of sections")
    parsed = tuple(_parse_section(section, f"sections[{i}]") for i, section in enumerate(sections))
    return Spec(sections=parsed, title=title, lang=lang, digits=digits, name=name)


def parse_lang(value: Any, field: str) -> str:
    if value not in LANGUAGES:
        raise SpecError(field, f"expected one of {', '.join(LANGUAGES)}, got {value!r}")
    return value


def parse_digits(value: Any, field: str) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_DIGITS:
        raise SpecError(field, f"expected a whole number of decimals from 0 to {MAX_DIGITS}, got {value!r}")
    return value


def _parse_section(data: Any, field: str) -> SectionSpec:
    if not isinstance(data, dict):
        raise SpecError(field, "expected a table (object) describing a section")
    kind = _require(data, "kind", field)
    if kind not in _SECTION_KEYS:
        raise SpecError(f"{field}.kind", f"unknown section kind {kind!r}{_suggest(str(kind), _SECTION_KEYS)}")
    _check_keys(data, _SECTION_KEYS[kind], field)
    if kind == "self_attention":
        return _parse_self(data, field)
    if kind == "cross_attention":
        return _parse_cross(data, field)
    return _parse_multi_head(data, field)


def _parse_self(data: dict[str, Any], field: str) -> SelfAttentionSpec:
    tokens = _tokens(_require(data, "tokens", field), f"{field}.tokens")
    X = _matrix(_require(data, "X", field), f"{field}.X")
    _rows_match(X, len(tokens), f"{field}.X", "tokens")
    W_Q, W_K, W_V = _projections(data, field, X.shape[1], X.shape[1])
    return SelfAttentionSpec(
        tokens=tokens, X=X, W_Q=W_Q, W_K=W_K, W_V=W_V,
        focus=_focus(data.get("focus", "all"), tokens, f"{field}.focus"),
        d_k=_d_k(data, W_K, field),
    )


def _parse_cross(data: dict[str, Any], field: str) -> CrossAttentionSpec:
    tokens = _tokens(_require(data, "tokens", field), f"{field}.tokens")
    X = _matrix(_require(data, "X", field), f"{field}.X")
    _rows_match(X, len(tokens), f"{field}.X", "tokens")
    memory_tokens = _tokens(_require(data, "memory_tokens", field), f"{field}.memory_tokens")
    memory = _matrix(_require(data, "memory", field), f"{field}.memory")
    _rows_match(memory, len(memory_tokens), f"{field}.memory", "memory_tokens")
    W_Q, W_K, W_V = _projections(data, field, X.shape[1], memory.shape[1], "memory")
    return CrossAttentionSpec(
        tokens=tokens, X=X, memory_tokens=memory_tokens, memory=memory, W_Q=W_Q, W_K=W_K, W_V=W_V,
        focus=_focus(data.get("focus", "all"), tokens, f"{field}.focus"),
        d_k=_d_k(data, W_K, field),
    )


def _parse_multi_head(data: dict[str, Any], field: str) -> MultiHeadSpec:
    tokens: tuple[str, ...] = ()
    X = None
    if "tokens" in data or "X" in data:
        tokens = _tokens(_require(data, "tokens", field), f"{field}.tokens")
        X = _matrix(_require(data, "X", field), f"{field}.X")
        _rows_match(X, len(tokens), f"{field}.X", "tokens")
    focus = _require(data, "focus", field)
    if not isinstance(focus, str):
        raise SpecError(f"{field}.focus", "expected one token name")
    if tokens and focus not in tokens:
        raise SpecError(f"{field}.focus", f"no token {focus!r} in tokens{_suggest(focus, tokens)}")
    heads_data = _require(data, "heads", field)
    if not isinstance(heads_data, list) or not heads_data:
        raise SpecError(f"{field}.heads", "expected a non-empty list of heads")
    heads = tuple(_parse_head(head, f"{field}.heads[{h}]", X) for h, head in enumerate(heads_data))
    W_O = _matrix(_require(data, "W_O", field), f"{field}.W_O")
    width = 0
    for _h, head in enumerate(heads):
        width += head.output.shape[1] if head.output is not None else head.W_V.shape[1]  # type: ignore[union-attr]
    if W_O.shape[0] != width:
        raise SpecError(f"{field}.W_O", f"{W_O.shape[0]} rows, but the concatenated heads have {width} entries")
    return MultiHeadSpec(focus=focus, heads=heads, W_O=W_O, tokens=tokens, X=X)


def _parse_head(data: Any, field: str, X: GivenMatrix | None) -> HeadSpec:
    if not isinstance(data, dict):
        raise SpecError(field, "expected a table with 'output' or with 'W_Q', 'W_K', 'W_V'")
    _check_keys(data, _HEAD_KEYS, field)
    if "output" in data:
        extra = sorted(set(data) - {"output"})
        if extra:
            raise SpecError(f"{field}.{extra[0]}", "a head with a given output takes no weights")
        output = _matrix([_require(data, "output", field)], f"{field}.output")
        return HeadSpec(output=output)
    if X is None:
        raise SpecError(field, "a head computed from weights needs the section's 'tokens' and 'X'")
    W_Q, W_K, W_V = _projections(data, field, X.shape[1], X.shape[1])
    return HeadSpec(W_Q=W_Q, W_K=W_K, W_V=W_V, d_k=_d_k(data, W_K, field))


def _projections(data: dict[str, Any], field: str, query_dim: int, key_dim: int, key_source: str = "X"):
    """W_Q, W_K, W_V with their shapes checked against the query and key/value sources."""
    W_Q = _matrix(_require(data, "W_Q", field), f"{field}.W_Q")
    W_K = _matrix(_require(data, "W_K", field), f"{field}.W_K")
    W_V = _matrix(_require(data, "W_V", field), f"{field}.W_V")
    _rows_match(W_Q, query_dim, f"{field}.W_Q", "X columns")
    _rows_match(W_K, key_dim, f"{field}.W_K", f"{key_source} columns")
    _rows_match(W_V, key_dim, f"{field}.W_V", f"{key_source} columns")
    if W_Q.shape[1] != W_K.shape[1]:
        raise SpecError(f"{field}.W_K", f"{W_K.shape[1]} columns, but W_Q has {W_Q.shape[1]} (q·k needs equal lengths)")
    return W_Q, W_K, W_V


def _rows_match(matrix: GivenMatrix, expected: int, field: str, what: str) -> None:
    rows = matrix.shape[0]
    if rows != expected:
        raise SpecError(field, f"{rows} rows, but there are {expected} {what}")


def _d_k(data: dict[str, Any], W_K: GivenMatrix, field: str) -> int:
    value = data.get("d_k", W_K.shape[1])
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise SpecError(f"{field}.d_k", f"expected a positive whole number, got {value!r}")
    return value


def _tokens(value: Any, field: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise SpecError(field, "expected a non-empty list of token names")
    seen: set[str] = set()
    for i, token in enumerate(value):
        if not isinstance(token, str) or not token.strip():
            raise SpecError(f"{field}[{i}]", f"expected a non-empty string, got {token!r}")
        if token in seen:
            raise SpecError(f"{field}[{i}]", f"duplicate token {token!r}")
        seen.add(token)
    return tuple(value)


def _focus(value: Any, tokens: tuple[str, ...], field: str) -> tuple[str, ...]:
    if value == "all":
        return tokens
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names:
        raise SpecError(field, "expected a token, a list of tokens, or \"all\"")
    for name in names:
        if name not in tokens:
            raise SpecError(field, f"no token {name!r} in tokens{_suggest(str(name), tokens)}")
    return tuple(dict.fromkeys(names))


def _matrix(value: Any, field: str) -> GivenMatrix:
    if not isinstance(value, list) or not value:
        raise SpecError(field, "expected a non-empty list of rows")
    rows = []
    decimals = 0
    width = None
    for i, row in enumerate(value):
        if not isinstance(row, list) or not row:
            raise SpecError(f"{field}[{i}]", "expected a non-empty list of numbers")
        if width is None:
            width = len(row)
        elif len(row) != width:
            raise SpecError(f"{field}[{i}]", f"{len(row)} entries, but row 0 has {width} (ragged matrix)")
        parsed = []
        for j, entry in enumerate(row):
            number, places = parse_number(entry, f"{field}[{i}][{j}]")
            parsed.append(number)
            decimals = max(decimals, places)
        rows.append(parsed)
    return GivenMatrix(ImmutableMatrix(rows), decimals)
