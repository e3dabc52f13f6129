"""Claims: the numbers a document or a student printed, read from a claims file (TOML or JSON) in either shape,
solve's JSON with only the printed numbers or a flat table of paths, each number kept as printed (its digits)."""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from ..errors import SpecError
from ..infra.inputs import read_input_text
from ..spec.files import DuplicateKey, unique_keys

Path_ = tuple  # a path into solve's answers: keys (str) and indices (int)

_NUMBER = re.compile(r"[-+−]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_MASKED = re.compile(r"[-−]\s*(?:inf|infinity|∞|\\infty)", re.I)  # -inf, −inf, −∞, -\infty
_WORD = re.compile(r"[^\W\d]\w*")
_STEP = re.compile(r'\.([^\W\d]\w*)|\[(-?[0-9]+)\]|\[("(?:[^"\\]|\\.)*")\]')
MOST_INDEX_DIGITS = 9  # an index of a path: no answer has a billion entries
# keys of solve's answers whose strings are names or LaTeX, never claims (a copy of solve's JSON may keep them)
NOT_CLAIMS = {"kind", "name", "tokens", "memory_tokens", "past_tokens", "key_tokens", "focus", "exact", "scale",
               "vocabulary", "ranking", "predicted", "ties", "activation", "pairing", "symattn", "title",
               "significant_digits", "mapping", "positions", "d_k"}


MOST_DEPTH = 12  # solve's answers nest at most 6 levels (sections, a section, queries, a token, a key, an index)
MOST_CHARACTERS = 100  # a printed number longer than this is no claim a document or a student makes
MOST_PLACES = 60  # the answers give 30 significant digits: a claim beyond 10^±60 is refused, not compared
# What was not printed: JSON's null, and in TOML (which has no null) the string "null" or an empty string
NOT_PRINTED = ("null", "")


@dataclass(frozen=True)
class Claim:
    """One printed number: where (a path into solve's answers), as printed, and the value of what it shows."""

    at: Path_
    printed: str
    value: Decimal
    places: int  # the decimal place of its last digit: 4 for "0.3383", 4 for "6.34e-02", 0 for "3"

    @property
    def unit(self) -> Decimal:
        return Decimal(1).scaleb(-self.places)


def path_text(at: Path_) -> str:
    """sections[0].queries.love.weights[3], a token that is not a plain word quoted: queries["Fine."]."""
    parts = []
    for step in at:
        if isinstance(step, int):
            parts.append(f"[{step}]")
        elif _WORD.fullmatch(step):
            parts.append(f".{step}" if parts else step)
        else:
            parts.append(f"[{json.dumps(step, ensure_ascii=False)}]")
    return "".join(parts)


def parse_path(text: str, field: str) -> Path_:
    """The inverse of path_text; a path that is not one is a SpecError naming it."""
    rest, at = ("." + text) if _WORD.match(text) else text, []
    while rest:
        match = _STEP.match(rest)
        if match is None:
            raise SpecError(field, f"expected a path such as sections[0].queries.love.weights, got {_brief(text)}")
        word, index, quoted = match.groups()
        if index is not None and len(index.lstrip("-")) > MOST_INDEX_DIGITS:
            raise SpecError(field, f"an index of {len(index.lstrip('-'))} digits (at most {MOST_INDEX_DIGITS}): "
                                   f"no answer has so many entries")
        try:
            at.append(word if word is not None else int(index) if index is not None else json.loads(quoted))
        except ValueError:  # a quoted name that is no JSON string ("\q")
            raise SpecError(field, f"expected a quoted name as JSON writes it, got {_brief(quoted)}") from None
        rest = rest[match.end():]
    if not at:
        raise SpecError(field or "claims", f"expected a path such as sections[0].queries.love.weights, got "
                                           f"{_brief(text)}")
    return tuple(at)


def _brief(text: str) -> str:
    """User text in a message: quoted, and cut to 40 characters."""
    return repr(text if len(text) <= 40 else text[:37] + "...")


def number(value: Any, field: str) -> tuple[str, Decimal, int]:
    """A printed number as (as printed, its value, the place of its last digit); a SpecError when it is none."""
    text = str(value) if isinstance(value, (int, Decimal)) and not isinstance(value, bool) else value
    if isinstance(text, str) and _MASKED.fullmatch(text.strip()):  # a masked score, as solve prints it
        return text.strip(), Decimal("-Infinity"), 0
    if not isinstance(text, str) or not _NUMBER.fullmatch(text.strip()):
        raise SpecError(field, f"expected a number as printed (\"0.3383\", 0.60, \"6.34e-02\", \"-inf\" for a masked "
                               f"score) or null, got {value!r}")
    text = text.strip()
    shown = text if len(text) <= 40 else text[:37] + "..."
    if len(text) > MOST_CHARACTERS:
        raise SpecError(field, f"expected a number as printed, of at most {MOST_CHARACTERS} characters, got {shown!r}")
    try:
        exact = Decimal(text.replace("−", "-"))
    except InvalidOperation:  # pragma: no cover - the pattern admits only decimals
        raise SpecError(field, f"expected a number, got {shown!r}") from None
    places = -exact.as_tuple().exponent
    if abs(places) > MOST_PLACES or (exact and abs(exact.adjusted()) > MOST_PLACES):
        raise SpecError(field, f"expected a number printed to at most {MOST_PLACES} decimal places and below "
                               f"10^{MOST_PLACES}, got {shown!r}")
    return text, exact, places


def read(path: Path) -> list[Claim]:
    """The claims of a claims file (.toml or .json)."""
    text = read_input_text(path, str(path))
    return parse(text, path.suffix.lower() == ".json", str(path))


def parse(text: str, is_json: bool, field: str) -> list[Claim]:
    """The claims of a claims file's text; numbers are read with their digits (floats never made)."""
    text = text.removeprefix("\ufeff")  # a byte-order mark, as --from and --students accept
    try:
        data = (json.loads(text, parse_float=Decimal, object_pairs_hook=unique_keys) if is_json
                else tomllib.loads(text, parse_float=Decimal))
    except DuplicateKey as exc:
        raise SpecError(field, f"key {_brief(exc.args[0])} given twice in one object (give each claim once)") from None
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise SpecError(field, f"not valid {'JSON' if is_json else 'TOML'}: {exc}") from None
    except RecursionError:
        raise SpecError(field, "nested too deep: no answer of solve is") from None
    if not isinstance(data, dict):
        raise SpecError(field, "expected a table of claims")
    return claims_of(data)


def claims_of(data: dict[str, Any]) -> list[Claim]:
    """The claims of parsed data: solve's shape ({"sections": [...]}) and flat paths, in the order given."""
    claims: list[Claim] = []
    for key, value in data.items():
        if key == "sections" and isinstance(value, list):
            _walk(("sections",), value, claims)
        elif key in NOT_CLAIMS:
            continue
        else:
            _walk(parse_path(key, key if len(key) <= 60 else key[:57] + "..."), value, claims)
    return claims


def _walk(at: Path_, value: Any, claims: list[Claim]) -> None:
    if len(at) > MOST_DEPTH:
        raise SpecError(path_text(at[:MOST_DEPTH]), f"nested more than {MOST_DEPTH} levels deep: no answer is")
    if value is None or value in NOT_PRINTED:
        return
    if isinstance(value, dict):
        for key, inner in value.items():
            if key not in NOT_CLAIMS:
                _walk((*at, key), inner, claims)
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            _walk((*at, index), inner, claims)
    elif isinstance(value, str) and isinstance(at[-1], str) and not any(c.isdigit() for c in value):
        return  # a word of solve's answers copied along (a normalisation's kind "layer", "rms"): not a number
    else:
        printed, exact, places = number(value, path_text(at))
        claims.append(Claim(at, printed, exact, places))
