"""Validating a parsed spec document into exact Spec objects; every error names its field in one line."""

from __future__ import annotations

import difflib
import re
from decimal import Decimal
from functools import lru_cache
from typing import Any

from sympy import Expr, ImmutableMatrix, Symbol

from .engine import causal_mask, sinusoidal_encoding
from .errors import SpecError
from .exact import matrix_of, parse_number
from .spec import (
    LANGUAGES,
    MAX_DIGITS,
    CrossAttentionSpec,
    GivenMatrix,
    HeadSpec,
    MultiHeadSpec,
    Scale,
    SectionSpec,
    SelfAttentionSpec,
    Spec,
)

_TOP_KEYS = {"title", "lang", "digits", "sections"}
_SIZE_KEYS = {"d_k", "d_model", "d_v"}
_SECTION_KEYS = {
    "self_attention": {"kind", "tokens", "X", "W_Q", "W_K", "W_V", "focus", "scale", "mask", "positional_encoding",
                       "P", *_SIZE_KEYS},
    "cross_attention": {"kind", "tokens", "X", "memory_tokens", "memory", "W_Q", "W_K", "W_V", "focus", "scale",
                        *_SIZE_KEYS},
    "multi_head": {"kind", "focus", "heads", "W_O", "tokens", "X", "d_model"},
}
_HEAD_KEYS = {"output", "W_Q", "W_K", "W_V", "scale", "d_k", "d_v"}
# Which size key fixes each dimension of a "symbolic" matrix when no numeric matrix does.
_DIMENSION_KEYS = {"d": "d_model", "dm": "d_model", "k": "d_k", "v": "d_v"}
_SYMBOL = re.compile(r"[A-Za-z][A-Za-z0-9]*(_[A-Za-z0-9]+)?")


def suggest(word: str, choices: Any) -> str:
    """' (did you mean 'W_K'?)' for the closest choice, ignoring case; '' when nothing is close."""
    by_lower = {str(choice).lower(): str(choice) for choice in choices}
    close = difflib.get_close_matches(str(word).lower(), list(by_lower), n=1)
    return f" (did you mean {by_lower[close[0]]!r}?)" if close else ""


def parse_spec(data: dict[str, Any], name: str = "spec") -> Spec:
    """Validate a parsed spec document and build the exact Spec."""
    _check_keys(data, _TOP_KEYS, "")
    title = data.get("title")
    if title is not None and not isinstance(title, str):
        raise SpecError("title", "expected a string")
    lang = parse_lang(data["lang"], "lang") if "lang" in data else None
    digits = parse_digits(data["digits"], "digits") if "digits" in data else None
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


# ---------------------------------------------------------------- sections


def _parse_section(data: Any, field: str) -> SectionSpec:
    if not isinstance(data, dict):
        raise SpecError(field, "expected a table (object) describing a section")
    kind = _require(data, "kind", field)
    if kind not in _SECTION_KEYS:
        raise SpecError(f"{field}.kind", f"unknown section kind {kind!r}{suggest(str(kind), _SECTION_KEYS)}")
    _check_keys(data, _SECTION_KEYS[kind], field)
    if kind == "self_attention":
        return _parse_self(data, field)
    if kind == "cross_attention":
        return _parse_cross(data, field)
    return _parse_multi_head(data, field)


def _parse_self(data: dict[str, Any], field: str) -> SelfAttentionSpec:
    tokens = _tokens(_require(data, "tokens", field), f"{field}.tokens")
    m = _matrices(data, field, {"X": ("n", "d", "x"), "W_Q": ("d", "k", "w^Q"), "W_K": ("d", "k", "w^K"),
                                "W_V": ("d", "v", "w^V")}, {"n": len(tokens)})
    _rows_match(m["X"], len(tokens), f"{field}.X", "tokens")
    _check_projections(m, field, m["X"].shape[1], m["X"].shape[1], "X")
    focus, all_tokens, matrix_only = _focus(data.get("focus", "all"), tokens, f"{field}.focus")
    mask, causal = _mask(data, len(tokens), field)
    P, sinusoidal = _positional(data, m["X"], field)
    return SelfAttentionSpec(tokens=tokens, X=m["X"], W_Q=m["W_Q"], W_K=m["W_K"], W_V=m["W_V"], focus=focus,
                             d_k=_d_k(data, m["W_K"], field), scale=_scale(data, field), all_tokens=all_tokens,
                             matrix_only=matrix_only, mask=mask, causal=causal, P=P, sinusoidal=sinusoidal)


def _mask(data: dict[str, Any], n: int, field: str) -> tuple[ImmutableMatrix | None, bool]:
    """mask = "causal", or an n × n matrix of 0/1 (1: the query may attend to the key)."""
    if "mask" not in data:
        return None, False
    value = data["mask"]
    if value == "causal":
        return causal_mask(n), True
    matrix = _matrix(value, f"{field}.mask")
    if matrix.shape != (n, n):
        raise SpecError(f"{field}.mask", f"{matrix.shape[0]} × {matrix.shape[1]}, but there are {n} tokens "
                                         f"(expected {n} × {n}, or \"causal\")")
    for i in range(n):
        row = matrix.values.row(i)
        if any(v not in (0, 1) for v in row):
            raise SpecError(f"{field}.mask[{i}]", "expected only 0 (masked) and 1 (visible)")
        if not any(row):
            raise SpecError(f"{field}.mask[{i}]", "every query needs at least one visible key (a 1)")
    return matrix.values, False


def _positional(data: dict[str, Any], X: GivenMatrix, field: str) -> tuple[GivenMatrix | None, bool]:
    """positional_encoding = "sinusoidal", or a given matrix P (same shape as X)."""
    if "positional_encoding" in data and "P" in data:
        raise SpecError(f"{field}.P", "give either positional_encoding or P, not both")
    if "positional_encoding" in data:
        if data["positional_encoding"] != "sinusoidal":
            raise SpecError(f"{field}.positional_encoding",
                            f"expected \"sinusoidal\" (or give the matrix as P), got {data['positional_encoding']!r}")
        n, d = X.shape
        return GivenMatrix(sinusoidal_encoding(n, d), 0, (0,) * (n * d)), True
    if "P" in data:
        P = _matrix(data["P"], f"{field}.P")
        if P.shape != X.shape:
            raise SpecError(f"{field}.P", f"{P.shape[0]} × {P.shape[1]}, but X is {X.shape[0]} × {X.shape[1]}")
        return P, False
    return None, False


def _parse_cross(data: dict[str, Any], field: str) -> CrossAttentionSpec:
    tokens = _tokens(_require(data, "tokens", field), f"{field}.tokens")
    memory_tokens = _tokens(_require(data, "memory_tokens", field), f"{field}.memory_tokens")
    m = _matrices(data, field, {"X": ("n", "d", "x"), "memory": ("m", "dm", "h"), "W_Q": ("d", "k", "w^Q"),
                                "W_K": ("dm", "k", "w^K"), "W_V": ("dm", "v", "w^V")},
                  {"n": len(tokens), "m": len(memory_tokens)})
    _rows_match(m["X"], len(tokens), f"{field}.X", "tokens")
    _rows_match(m["memory"], len(memory_tokens), f"{field}.memory", "memory_tokens")
    _check_projections(m, field, m["X"].shape[1], m["memory"].shape[1], "memory")
    focus, all_tokens, matrix_only = _focus(data.get("focus", "all"), tokens, f"{field}.focus")
    return CrossAttentionSpec(
        tokens=tokens, X=m["X"], memory_tokens=memory_tokens, memory=m["memory"], W_Q=m["W_Q"], W_K=m["W_K"],
        W_V=m["W_V"], focus=focus, d_k=_d_k(data, m["W_K"], field), scale=_scale(data, field),
        all_tokens=all_tokens, matrix_only=matrix_only,
    )


def _parse_multi_head(data: dict[str, Any], field: str) -> MultiHeadSpec:
    tokens: tuple[str, ...] = ()
    X = None
    if "tokens" in data or "X" in data:
        tokens = _tokens(_require(data, "tokens", field), f"{field}.tokens")
        X = _matrices(data, field, {"X": ("n", "d", "x")}, {"n": len(tokens)})["X"]
        _rows_match(X, len(tokens), f"{field}.X", "tokens")
    focus = _require(data, "focus", field)
    if not isinstance(focus, str):
        raise SpecError(f"{field}.focus", "expected one token name")
    if tokens and focus not in tokens:
        raise SpecError(f"{field}.focus", f"no token {focus!r} in tokens{suggest(focus, tokens)}")
    heads_data = _require(data, "heads", field)
    if not isinstance(heads_data, list) or not heads_data:
        raise SpecError(f"{field}.heads", "expected a non-empty list of heads")
    heads = tuple(_parse_head(head, f"{field}.heads[{h}]", h + 1, X) for h, head in enumerate(heads_data))
    W_O = _matrix(_require(data, "W_O", field), f"{field}.W_O")
    width = sum(head.output.shape[1] if head.output is not None else head.W_V.shape[1] for head in heads)
    if W_O.shape[0] != width:
        raise SpecError(f"{field}.W_O", f"{W_O.shape[0]} rows, but the concatenated heads have {width} entries")
    return MultiHeadSpec(focus=focus, heads=heads, W_O=W_O, tokens=tokens, X=X)


def _parse_head(data: Any, field: str, number: int, X: GivenMatrix | None) -> HeadSpec:
    if not isinstance(data, dict):
        raise SpecError(field, "expected a table with 'output' or with 'W_Q', 'W_K', 'W_V'")
    _check_keys(data, _HEAD_KEYS, field)
    if "output" in data:
        extra = sorted(set(data) - {"output"})
        if extra:
            raise SpecError(f"{field}.{extra[0]}", "a head with a given output takes no weights")
        output = data["output"]
        return HeadSpec(output=_matrix([output] if isinstance(output, list) else output, f"{field}.output"))
    if X is None:
        raise SpecError(field, "a head computed from weights needs the section's 'tokens' and 'X'")
    m = _matrices(data, field, {"W_Q": ("d", "k", f"w^{{Q({number})}}"), "W_K": ("d", "k", f"w^{{K({number})}}"),
                                "W_V": ("d", "v", f"w^{{V({number})}}")}, {"d": X.shape[1]})
    _check_projections(m, field, X.shape[1], X.shape[1], "X")
    return HeadSpec(W_Q=m["W_Q"], W_K=m["W_K"], W_V=m["W_V"], d_k=_d_k(data, m["W_K"], field),
                    scale=_scale(data, field))


# ---------------------------------------------------------------- pieces


def _check_keys(data: dict[str, Any], allowed: set[str], field: str) -> None:
    for key in data:
        if key not in allowed:
            where = f"{field}.{key}" if field else key
            raise SpecError(where, f"unknown key{suggest(key, allowed)}")


def _require(data: dict[str, Any], key: str, field: str) -> Any:
    if key not in data:
        raise SpecError(f"{field}.{key}", "missing")
    return data[key]


def _check_projections(m: dict[str, GivenMatrix], field: str, query_dim: int, key_dim: int, key_source: str) -> None:
    """W_Q, W_K, W_V shapes against the query and key/value sources."""
    _rows_match(m["W_Q"], query_dim, f"{field}.W_Q", "X columns")
    _rows_match(m["W_K"], key_dim, f"{field}.W_K", f"{key_source} columns")
    _rows_match(m["W_V"], key_dim, f"{field}.W_V", f"{key_source} columns")
    if m["W_Q"].shape[1] != m["W_K"].shape[1]:
        raise SpecError(f"{field}.W_K",
                        f"{m['W_K'].shape[1]} columns, but W_Q has {m['W_Q'].shape[1]} (q·k needs equal lengths)")


def _rows_match(matrix: GivenMatrix, expected: int, field: str, what: str) -> None:
    rows = matrix.shape[0]
    if rows != expected:
        raise SpecError(field, f"{rows} rows, but there are {expected} {what}")


def _positive_int(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        shown = str(value) if isinstance(value, Decimal) else repr(value)
        raise SpecError(field, f"expected a positive whole number, got {shown}")
    return value


def _d_k(data: dict[str, Any], W_K: GivenMatrix, field: str) -> int:
    return _positive_int(data.get("d_k", W_K.shape[1]), f"{field}.d_k")


def _scale(data: dict[str, Any], field: str) -> Scale:
    value = data.get("scale", True)
    if value is True:
        return Scale()
    if value is False:
        return Scale("none")
    number, _ = parse_number(value, f"{field}.scale")
    if number <= 0:
        raise SpecError(f"{field}.scale", f"expected true, false or a positive number, got {value!r}")
    return Scale("number", number)


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


def _focus(value: Any, tokens: tuple[str, ...], field: str) -> tuple[tuple[str, ...], bool, bool]:
    """The focus tokens, whether all tokens were asked for ("all": the full matrix form too), and whether only
    the matrix form was ("matrix"). A token named "all" or "matrix" is asked for as a list: ["matrix"]."""
    if value in ("all", "matrix"):
        return tokens, True, value == "matrix"
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names:
        raise SpecError(field, 'expected a token, a list of tokens, "all" or "matrix"')
    for name in names:
        if name not in tokens:
            raise SpecError(field, f"no token {name!r} in tokens{suggest(str(name), tokens)}")
    return tuple(dict.fromkeys(names)), False, False


def _matrices(data: dict[str, Any], field: str, plan: dict[str, tuple[str, str, str]],
              sizes: dict[str, int]) -> dict[str, GivenMatrix]:
    """Parse the matrices of a section; "symbolic" ones get their size from the numeric ones or the size keys.

    plan maps a key to (row dimension, column dimension, symbol base); sizes holds the dimensions known already.
    """
    sizes = dict(sizes)
    parsed: dict[str, GivenMatrix] = {}
    for key, (rows, cols, _base) in plan.items():
        raw = _require(data, key, field)
        if raw != "symbolic":
            parsed[key] = _matrix(raw, f"{field}.{key}")
            sizes.setdefault(rows, parsed[key].shape[0])
            sizes.setdefault(cols, parsed[key].shape[1])
    for dim, key in _DIMENSION_KEYS.items():
        if dim not in sizes and key in data:
            sizes[dim] = _positive_int(data[key], f"{field}.{key}")
    for key, (rows, cols, base) in plan.items():
        if key not in parsed:
            missing = [_DIMENSION_KEYS[d] for d in (rows, cols) if d not in sizes]
            if missing:
                raise SpecError(f"{field}.{key}", f'"symbolic" needs its size: give {missing[0]} '
                                                  "or a numeric matrix that fixes it")
            parsed[key] = symbolic_matrix(base, sizes[rows], sizes[cols])
    return {key: parsed[key] for key in plan}


def symbolic_matrix(base: str, rows: int, cols: int) -> GivenMatrix:
    """x_{11}, x_{12}, ... (x_{10,2} once an index passes 9), all real."""
    def name(i: int, j: int) -> str:
        return f"{base}_{{{i}{j}}}" if max(i, j) <= 9 else f"{base}_{{{i},{j}}}"

    entries = [[Symbol(name(i, j), real=True) for j in range(1, cols + 1)] for i in range(1, rows + 1)]
    return GivenMatrix(ImmutableMatrix(entries), 0, (0,) * (rows * cols))


def _matrix(value: Any, field: str) -> GivenMatrix:
    if value == "symbolic":
        raise SpecError(field, '"symbolic" is not available here; write the entries (names like a, b1 are fine)')
    if not isinstance(value, list) or not value:
        raise SpecError(field, "expected a non-empty list of rows")
    rows = []
    written: list[int | None] = []
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
            try:
                value, places = _written_entry(entry) if isinstance(entry, str) else parse_number(entry, "")
            except SpecError as error:  # the field named here: the entry's parse is shared by equal entries
                raise SpecError(f"{field}[{i}][{j}]", error.problem) from None
            parsed.append(value)
            written.append(places)
        rows.append(parsed)
    return GivenMatrix(matrix_of(rows), max((w for w in written if w is not None), default=0), tuple(written))


@lru_cache(maxsize=1 << 12)  # a matrix repeats its few distinct entries (41 in a random 64 × 64 spec)
def _written_entry(text: str) -> tuple[Expr, int | None]:
    """A matrix entry written as text: a symbol (a, b1, x_1), or a number with the decimals it was written with
    (parse_number). Errors name no field: the caller adds it."""
    name = text.strip()
    if _SYMBOL.fullmatch(name) and name.lower() not in ("nan", "inf", "infinity"):
        return Symbol(name, real=True), 0
    return parse_number(text, "")
