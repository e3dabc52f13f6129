"""The fields that sections share, validated into exact values; every error names its field in one line."""

from __future__ import annotations

import difflib
import re
import unicodedata
from decimal import Decimal
from functools import lru_cache
from typing import Any

from sympy import Expr, ImmutableMatrix, Symbol

from ..errors import SpecError
from .model import LANGUAGES, MAX_DIGITS, WRITTEN_NAME, Cache, Focus, GivenMatrix, Mask, Positions, Scale
from .numbers import matrix_of, parse_number

SIZE_KEYS = frozenset({"d_k", "d_model", "d_v"})
# Which size key fixes each dimension of a "symbolic" matrix when no numeric matrix does.
_DIMENSION_KEYS = {"d": "d_model", "dm": "d_model", "k": "d_k", "v": "d_v"}
# The dimensions whose size key must agree with the matrices (d_k may differ from W_K's columns: it is the divisor
# of the scaling; d_model sizes both X and the memory of a cross-attention, which may differ).
_CHECKED_DIMENSIONS = {"v"}
_ASCII_DIGITS = re.compile(r"[0-9]+")
# The largest size a size key may give: it sizes "symbolic" matrices, one symbol per entry.
MAX_SIZE = 1024
# Unicode categories a name may not contain: control, format (invisible: U+200B, U+200D, U+FEFF, bidi marks),
# surrogate (not a character), and the line and paragraph separators.
_INVISIBLE = {"Cc": "control characters", "Cf": "invisible format characters", "Cs": "lone surrogates",
              "Zl": "line separators", "Zp": "paragraph separators"}


def suggest(word: str, choices: Any) -> str:
    """' (did you mean 'W_K'?)' for the closest choice, ignoring case; '' when nothing is close."""
    by_lower = {str(choice).lower(): str(choice) for choice in choices}
    close = difflib.get_close_matches(str(word).lower(), list(by_lower), n=1)
    return f" (did you mean {by_lower[close[0]]!r}?)" if close else ""


def parse_lang(value: Any, field: str) -> str:
    if value not in LANGUAGES:
        raise SpecError(field, f"expected one of {', '.join(LANGUAGES)}, got {value!r}")
    return value


def parse_digits(value: Any, field: str) -> int:
    """A whole number of decimals, 0 to MAX_DIGITS: an integer, or its text in ASCII digits ("4"; not "٤", "²")."""
    text = value.strip() if isinstance(value, str) else ""
    if _ASCII_DIGITS.fullmatch(text) and len(text) <= 6:  # a longer text is out of range, and kept to be shown
        value = int(text)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_DIGITS:
        raise SpecError(field, f"expected a whole number of decimals from 0 to {MAX_DIGITS}, got {value!r}")
    return value


# The stages a spec may give decimals of their own: `digits = { default = 4, result = 3 }` (see derivation.STAGES).
DIGIT_STAGES = ("default", "scores", "weights", "sum", "result")


def parse_digit_stages(value: Any, field: str) -> tuple[int | None, tuple[tuple[str, int], ...]]:
    """`digits`: a whole number (every stage), or a table of stages to whole numbers; (default, other stages)."""
    if not isinstance(value, dict):
        return parse_digits(value, field), ()
    check_keys(value, set(DIGIT_STAGES), field)
    parsed = {stage: parse_digits(value[stage], f"{field}.{stage}") for stage in DIGIT_STAGES if stage in value}
    default = parsed.pop("default", None)
    return default, tuple(parsed.items())


def mask(data: dict[str, Any], n: int, field: str, past: int = 0) -> Mask | None:
    """mask = "causal", or an n × n matrix of 0/1 (1: the query may attend to the key); after `past` tokens of a KV
    cache, n × (past + n): a row per new token, a column per position."""
    if "mask" not in data:
        return None
    value = data["mask"]
    keys = past + n
    if value == "causal":
        return Mask.causal(n, past)
    if isinstance(value, str):  # "casual": the one word a mask may be
        raise SpecError(f"{field}.mask", f"expected \"causal\" or a matrix of 0 and 1 ({n} × {keys}), got {value!r}"
                                         f"{suggest(value, ['causal'])}")
    given = matrix(value, f"{field}.mask")
    if given.shape != (n, keys):
        there = (f"there are {n} tokens" if not past else
                 f"with a KV cache there are {past} cached + {n} new = {keys} positions, a column each")
        raise SpecError(f"{field}.mask", f"{given.shape[0]} × {given.shape[1]}, but {there} "
                                         f"(expected {n} × {keys}, or \"causal\")")
    for i in range(n):
        row = given.values.row(i)
        if any(v not in (0, 1) for v in row):
            raise SpecError(f"{field}.mask[{i}]", "expected only 0 (masked) and 1 (visible)")
        if not any(row):
            raise SpecError(f"{field}.mask[{i}]", "every query needs at least one visible key (a 1)")
    return Mask("matrix", given.values)


def positions(data: dict[str, Any], X: GivenMatrix, field: str, offset: int = 0) -> Positions | None:
    """positional_encoding = "sinusoidal" (X's rows at positions offset, offset + 1, …: after a KV cache's), or a
    given matrix P (same shape as X)."""
    if "positional_encoding" in data and "P" in data:
        raise SpecError(f"{field}.P", "give either positional_encoding or P, not both")
    if "positional_encoding" in data:
        if data["positional_encoding"] != "sinusoidal":
            raise SpecError(f"{field}.positional_encoding",
                            f"expected \"sinusoidal\" (or give the matrix as P), got {data['positional_encoding']!r}")
        n, d = X.shape
        return Positions.sinusoidal(n, d, offset)
    if "P" in data:
        P = matrix(data["P"], f"{field}.P")
        if P.shape != X.shape:
            raise SpecError(f"{field}.P", f"{P.shape[0]} × {P.shape[1]}, but X is {X.shape[0]} × {X.shape[1]}")
        return Positions("given", P)
    return None


def whole(value: Any, field: str, most: int = 10**6) -> int:
    """A whole number from 0 to `most` (a position)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= most:
        raise SpecError(field, f"expected a whole number from 0 to {most}, got {shown(value)}")
    return value


def shown(value: Any) -> str:
    """A value as an error shows it: a number as written (1.5, not Decimal('1.5')), anything else as repr."""
    if isinstance(value, bool):
        return str(value).lower()
    return str(value) if isinstance(value, Decimal) else repr(value)


CACHE_KEYS = frozenset({"past_tokens", "past_K", "past_V"})


def cache(data: dict[str, Any], field: str, d_k: int, d_v: int, new: tuple[str, ...] = (),
          tokens_field: str | None = None) -> Cache | None:
    """past_tokens, past_K and past_V, all three or none: the cached keys (d_k wide) and values (d_v wide) of the
    earlier positions, one row per past token; a past token's name may not repeat one of the `new` tokens.
    `tokens_field`: where past_tokens is written, if not in `field` (grouped-query attention: on the section)."""
    given = [key for key in ("past_tokens", "past_K", "past_V") if key in data]
    if not given:
        return None
    missing = [key for key in ("past_tokens", "past_K", "past_V") if key not in data]
    if missing:
        raise SpecError(f"{field}.{missing[0]}", f"missing: a KV cache gives past_tokens, past_K and past_V "
                                                 f"together (this one gives {', '.join(given)})")
    at = tokens_field or field
    past = tokens(data["past_tokens"], f"{at}.past_tokens")
    for i, token in enumerate(past):
        if token in new:
            raise SpecError(f"{at}.past_tokens[{i}]", f"token {token!r} is also one of the new tokens")
    K, V = matrix(data["past_K"], f"{field}.past_K"), matrix(data["past_V"], f"{field}.past_V")
    for key, given_matrix, width in (("past_K", K, d_k), ("past_V", V, d_v)):
        rows_match(given_matrix, len(past), f"{field}.{key}", "past_tokens")
        if given_matrix.shape[1] != width:
            what = "keys are" if key == "past_K" else "values are"
            raise SpecError(f"{field}.{key}", f"{given_matrix.shape[1]} columns, but the section's {what} "
                                              f"{width} wide")
    return Cache(past, K, V)


def name(value: Any, field: str, what: str = "a name") -> str:
    """A token name or a title: a non-empty string, NFC-normalised (so that "é" and "e" + U+0301 are one name),
    without control, format or surrogate characters and without leading or trailing whitespace."""
    if not isinstance(value, str) or not value.strip():
        raise SpecError(field, f"expected {what} (a non-empty string), got {value!r}")
    for char in value:
        category = unicodedata.category(char)
        if category in _INVISIBLE:
            raise SpecError(field, f"expected {what} without {_INVISIBLE[category]}, got {value!r} "
                                   f"(U+{ord(char):04X})")
    if value != value.strip():
        raise SpecError(field, f"expected {what} without leading or trailing whitespace, got {value!r}")
    return unicodedata.normalize("NFC", value)


def key_field(field: str, key: Any) -> str:
    """The field of a key inside field: 'sections[0].W_K'; a key that is not plain printable text is shown quoted
    and escaped, so that an error stays one line."""
    shown = key if isinstance(key, str) and key.isprintable() and key.strip() == key and key else repr(key)
    return f"{field}.{shown}" if field else shown


def check_keys(data: dict[str, Any], allowed: set[str], field: str,
               elsewhere: dict[str, tuple[str, ...]] | None = None) -> None:
    """Every key of `data` is allowed; `elsewhere` names the other kinds of section that accept a key this one
    does not (a mask on cross-attention: masks apply to self-attention only)."""
    for key in data:
        if key not in allowed:
            owners = (elsewhere or {}).get(key)
            if owners:
                kinds = owners[0] if len(owners) == 1 else f"{', '.join(owners[:-1])} and {owners[-1]}"
                raise SpecError(key_field(field, key), f"applies to {kinds} sections only "
                                                       f"(this section is {data.get('kind')})")
            raise SpecError(key_field(field, key), f"unknown key{suggest(str(key), allowed)}")


def require(data: dict[str, Any], key: str, field: str) -> Any:
    if key not in data:
        raise SpecError(f"{field}.{key}", "missing")
    return data[key]


def check_projections(m: dict[str, GivenMatrix], field: str, query_dim: int, key_dim: int, key_source: str) -> None:
    """W_Q, W_K, W_V shapes against the query and key/value sources."""
    rows_match(m["W_Q"], query_dim, f"{field}.W_Q", "X columns")
    rows_match(m["W_K"], key_dim, f"{field}.W_K", f"{key_source} columns")
    rows_match(m["W_V"], key_dim, f"{field}.W_V", f"{key_source} columns")
    if m["W_Q"].shape[1] != m["W_K"].shape[1]:
        raise SpecError(f"{field}.W_K",
                        f"{m['W_K'].shape[1]} columns, but W_Q has {m['W_Q'].shape[1]} (q·k needs equal lengths)")


def rows_match(given: GivenMatrix, expected: int, field: str, what: str) -> None:
    rows = given.shape[0]
    if rows != expected:
        raise SpecError(field, f"{rows} rows, but there are {expected} {what}")


def positive_int(value: Any, field: str, most: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0 or (most is not None and value > most):
        shown = str(value) if isinstance(value, Decimal) else repr(value)
        upto = "" if most is None else f" up to {most}"
        raise SpecError(field, f"expected a positive whole number{upto}, got {shown}")
    return value


def d_k(data: dict[str, Any], W_K: GivenMatrix, field: str) -> int:
    return positive_int(data.get("d_k", W_K.shape[1]), f"{field}.d_k")


def d_k_used(data: dict[str, Any], scale: Scale, sized: bool, field: str) -> None:
    """A d_k that neither divides the scores (scale = false or a number) nor sizes a symbolic matrix has no effect:
    refused, rather than ignored."""
    if "d_k" in data and scale.mode != "sqrt_d_k" and not sized:
        given = "false" if scale.mode == "none" else data["scale"]
        raise SpecError(f"{field}.d_k", f"applies to scale = true (the scores ÷ √d_k); with scale = {given} it has "
                                        "no effect (leave it out)")


def scale(data: dict[str, Any], field: str) -> Scale:
    value = data.get("scale", True)
    if value is True:
        return Scale()
    if value is False:
        return Scale("none")
    number, _ = parse_number(value, f"{field}.scale")
    if number <= 0:
        raise SpecError(f"{field}.scale", f"expected true, false or a positive number, got {value!r}")
    return Scale("number", number)


def tokens(value: Any, field: str) -> tuple[str, ...]:
    """Token names (name): two that are equal once NFC-normalised are duplicates."""
    if not isinstance(value, list) or not value:
        raise SpecError(field, "expected a non-empty list of token names")
    seen: dict[str, int] = {}
    for i, token in enumerate(value):
        normal = name(token, f"{field}[{i}]")
        if normal in seen:
            same = "" if token == value[seen[normal]] else f", the same name as {field}[{seen[normal]}] once normalised"
            raise SpecError(f"{field}[{i}]", f"duplicate token {token!r}{same}")
        seen[normal] = i
    return tuple(seen)


def focus(value: Any, tokens: tuple[str, ...], field: str) -> Focus:
    """focus = a token, a list of tokens, "all" (every token, then the matrix form) or "matrix" (the matrix form
    alone). A token named "all" or "matrix" is asked for as a list: ["matrix"]."""
    if value in ("all", "matrix"):
        return Focus(value, tokens)
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names:
        raise SpecError(field, 'expected a token, a list of tokens, "all" or "matrix"')
    normal = [unicodedata.normalize("NFC", token) if isinstance(token, str) else token for token in names]
    for token in normal:
        if token not in tokens:
            raise SpecError(field, f"no token {token!r} in tokens{suggest(str(token), tokens)}")
    return Focus("tokens", tuple(dict.fromkeys(normal)))


def matrices(data: dict[str, Any], field: str, plan: dict[str, tuple[str, str, str]],
              sizes: dict[str, int]) -> dict[str, GivenMatrix]:
    """Parse the matrices of a section; "symbolic" ones get their size from the numeric ones or the size keys.

    plan maps a key to (row dimension, column dimension, symbol base); sizes holds the dimensions known already.
    """
    sizes = dict(sizes)
    parsed: dict[str, GivenMatrix] = {}
    for key, (rows, cols, _base) in plan.items():
        raw = require(data, key, field)
        if raw != "symbolic":
            parsed[key] = matrix(raw, f"{field}.{key}")
            sizes.setdefault(rows, parsed[key].shape[0])
            sizes.setdefault(cols, parsed[key].shape[1])
    for dim, key in _DIMENSION_KEYS.items():  # a size key is checked even when the matrices fix its size
        if key in data and key in plan_keys(plan, dim) and (dim not in sizes or key != "d_k"):  # d_k: d_k()
            size = positive_int(data[key], f"{field}.{key}", MAX_SIZE)
            if dim not in sizes:
                sizes[dim] = size
            elif dim in _CHECKED_DIMENSIONS and sizes[dim] != size:
                raise SpecError(f"{field}.{key}", f"{key} = {size}, but the matrices have {sizes[dim]}")
    for key, (rows, cols, base) in plan.items():
        if key not in parsed:
            missing = [_DIMENSION_KEYS[d] for d in (rows, cols) if d not in sizes]
            if missing:
                raise SpecError(f"{field}.{key}", f'"symbolic" needs its size: give {missing[0]} '
                                                  "or a numeric matrix that fixes it")
            parsed[key] = symbolic_matrix(base, sizes[rows], sizes[cols])
    return {key: parsed[key] for key in plan}


def plan_keys(plan: dict[str, tuple[str, str, str]], dim: str) -> set[str]:
    """The size keys that a plan's dimension may take (none when no matrix of the plan has that dimension)."""
    return {_DIMENSION_KEYS[dim]} if any(dim in (rows, cols) for rows, cols, _ in plan.values()) else set()


def symbolic_matrix(base: str, rows: int, cols: int) -> GivenMatrix:
    """x_{11}, x_{12}, ... (x_{10,2} once an index passes 9), all real."""
    def name(i: int, j: int) -> str:
        return f"{base}_{{{i}{j}}}" if max(i, j) <= 9 else f"{base}_{{{i},{j}}}"

    entries = [[Symbol(name(i, j), real=True) for j in range(1, cols + 1)] for i in range(1, rows + 1)]
    return GivenMatrix(ImmutableMatrix(entries), 0, (0,) * (rows * cols))


def matrix(value: Any, field: str) -> GivenMatrix:
    """A numeric matrix (entries may be names such as a, b1); each entry keeps how it was written. A GivenMatrix
    is one already (the rows a chained section carries: symattn.pipeline.chain)."""
    if isinstance(value, GivenMatrix):
        return value
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
                number, places = _written_entry(entry) if isinstance(entry, str) else parse_number(entry, "")
            except SpecError as error:  # the field named here: the entry's parse is shared by equal entries
                raise SpecError(f"{field}[{i}][{j}]", error.problem) from None
            parsed.append(number)
            written.append(places)
        rows.append(parsed)
    return GivenMatrix(matrix_of(rows), max((w for w in written if w is not None), default=0), tuple(written))


@lru_cache(maxsize=1 << 12)  # a matrix repeats its few distinct entries
def _written_entry(text: str) -> tuple[Expr, int | None]:
    """A matrix entry written as text: a symbol (a, b1, x_1), or a number with the decimals it was written with
    (parse_number). Errors name no field: the caller adds it."""
    name = text.strip()
    if WRITTEN_NAME.fullmatch(name) and name.lower() not in ("nan", "inf", "infinity"):
        return Symbol(name, real=True), 0
    return parse_number(text, "")
