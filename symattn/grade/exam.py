"""exam.json as the grader reads it: each version's parts (points, tolerance, blanks with their answers) and what
carrying an error forward needs (the divisor of each head's scores, W_O, the spec's inputs for the diagnosis)."""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from ..errors import SpecError
from ..infra.inputs import MAX_EXAM_BYTES, read_input_text
from ..spec.fields import parse_digits
from .numbers import exact_decimal

# The quantities an id's symbol names, by its letters (the head's digits and a label follow them).
ROLES = {"Q": "Q", "K": "K", "V": "V", "q": "q", "s": "scores", "a": "scaled", "w": "weights", "z": "output"}
MAX_POINTS = 1000  # a part's points as exam.json may give them (symattn's are 1-20): what grades add up
MAX_INDEX = 10_000  # a blank's row, column or head
# A number as exam.json writes it: a decimal in quotes ("-0.25", 30 significant digits), or a fraction ("1/3").
_EXACT = re.compile(r"-?\d{1,40}(\.\d{1,40})?(/[1-9]\d{0,40})?")


@dataclass(frozen=True)
class GradedBlank:
    """One blank: its id, part letter, role (Q, K, V, q, scores, scaled, weights, output, concat, final or None
    for a quantity the grader does not know), head (None: the only one), row and column (from 1), answer."""

    id: str
    part: str
    role: str | None
    head: int | None
    row: int
    column: int
    answer: Decimal


@dataclass(frozen=True)
class GradedPart:
    letter: str
    key: str
    points: int
    tolerance: Decimal
    blanks: tuple[GradedBlank, ...]


@dataclass(frozen=True)
class GradedVersion:
    """A version of the exam: its label, kind, parts, the focus row of Q (from 1), each head's score divisor
    (√d_k as a Decimal), W_O (multi-head), and its spec's first section (for the diagnosis)."""

    label: str
    kind: str
    parts: tuple[GradedPart, ...]
    focus_row: int
    divisors: dict[int | None, Decimal]
    d_k: dict[int | None, int]
    W_O: tuple[tuple[Decimal, ...], ...] | None
    section: dict[str, Any]
    answers: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)  # solve's (exam.json)

    @property
    def blanks(self) -> tuple[GradedBlank, ...]:
        return tuple(b for p in self.parts for b in p.blanks)

    @property
    def points(self) -> int:
        return sum(p.points for p in self.parts)

    @property
    def query(self) -> str:
        """The role of the focus query: its own vector q (asked alone), else its row of Q."""
        return "q" if any(b.role == "q" for b in self.blanks) else "Q"

    @property
    def memory(self) -> bool:
        """Whether keys and values come from an encoder's output (memory) rather than from X."""
        return "memory" in self.section

    def given(self, name: str, head: int | None = None) -> list[list[Decimal]] | None:
        """An input matrix of the spec (X, memory, W_Q, ...; a head's W with `head`) as Decimals, or None."""
        section = self.section if head is None else self.section["heads"][head - 1]
        rows = section.get(name)
        return None if rows is None else [[exact_decimal(v) for v in row] for row in rows]


@dataclass(frozen=True)
class Exam:
    lang: str
    digits: int
    versions: dict[str, GradedVersion]
    # the class list (`symattn exam --students`): (id, name, version) of each student; () without one
    students: tuple[tuple[str, str, str], ...] = ()
    title: str | None = None  # the exam's --title: the grade column's name in the LMS exports

    def student(self, written: str) -> tuple[str, str, str] | None:
        """The class list's entry of a responses row's student: by id first (the id itself, or as Moodle writes
        it, in brackets after the name: "Ann Lee (s001)"), then by name when one student alone has it; both
        NFC-normalised, so that é and e + U+0301 are one student."""
        written = unicodedata.normalize("NFC", written)
        for entry in self.students:
            number = entry[0]
            if written == number or written.endswith(f"({number})"):
                return entry
        named = [entry for entry in self.students if written == entry[1] or written.startswith(f"{entry[1]} (")]
        return named[0] if len(named) == 1 else None

    def namesakes(self, written: str) -> int:
        """How many students of the class list have the name a row gives (2 or more: matched by id only)."""
        written = unicodedata.normalize("NFC", written)
        return sum(1 for entry in self.students if written == entry[1] or written.startswith(f"{entry[1]} ("))


def load_exam(path: Path) -> Exam:
    """Read exam.json; a file symattn did not write (or one written before blanks had ids) is a one-line error."""
    field = str(path)
    text = read_input_text(path, field, MAX_EXAM_BYTES)
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SpecError(field, f"cannot read an exam.json: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("versions"), list):
        raise SpecError(field, "expected the exam.json `symattn exam --format json` writes (a 'versions' list)")
    options = data.get("options", {})
    if not isinstance(options, dict):
        raise SpecError(f"{field}: options", "expected a table (JSON object) as `symattn exam` writes it")
    lang = options.get("lang", "en")
    if lang not in ("ja", "en"):
        raise SpecError(f"{field}: options.lang", f"expected ja or en, got {_brief(lang)}")
    digits = parse_digits(options.get("digits", 4), f"{field}: options.digits")
    versions = {}
    for k, entry in enumerate(data["versions"]):
        where = f"{field}: versions[{k}]"
        if isinstance(entry, dict) and "parts" not in entry:
            raise SpecError(where, "has no 'parts' with blank ids: make the exam again with this symattn "
                                   "(`symattn exam ... --format json`)")
        parts = tuple(_part(part, f"{where}.parts[{i}]")
                      for i, part in enumerate(_required(entry, "parts", where, list, "a list of parts")))
        try:
            version = _version(entry, parts)
        except (KeyError, TypeError, ValueError, IndexError, ArithmeticError) as exc:
            what = f"no {exc.args[0]!r}" if isinstance(exc, KeyError) else "a value of another type or form"
            raise SpecError(where, f"not a version as `symattn exam` writes it ({what})") from None
        versions[version.label] = version
    students = tuple((_nfc(s["id"]), _nfc(s["name"]), str(s["version"])) for s in data.get("students") or ()
                     if isinstance(s, dict) and {"id", "name", "version"} <= set(s))
    title = options.get("title")
    title = _nfc(title).strip() or None if isinstance(title, str) and len(title) <= 200 else None
    return Exam(lang, digits, versions, students, title)


def _nfc(value: Any) -> str:
    return unicodedata.normalize("NFC", str(value))


def _required(data: Any, key: str, where: str, kind: type | tuple[type, ...], what: str) -> Any:
    """data[key], which must be of `kind`; else a one-line SpecError naming the field and `what` was expected."""
    if not isinstance(data, dict):
        raise SpecError(where, "expected a table (JSON object) as `symattn exam` writes it")
    if key not in data:
        raise SpecError(f"{where}.{key}", f"missing: expected {what}")
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, kind):
        raise SpecError(f"{where}.{key}", f"expected {what}, got {_brief(value)}")
    return value


def _whole(data: Any, key: str, where: str, low: int, high: int, what: str) -> int:
    value = _required(data, key, where, int, f"{what} (a whole number from {low} to {high})")
    if not low <= value <= high:
        raise SpecError(f"{where}.{key}", f"expected {what} (a whole number from {low} to {high}), got {value}")
    return value


def _exact(data: Any, key: str, where: str, what: str) -> Decimal:
    """A number exam.json writes in quotes, read exactly."""
    text = _required(data, key, where, str, f"{what} in quotes, as `symattn exam` writes it (\"0.00005\")")
    if not _EXACT.fullmatch(text):
        raise SpecError(f"{where}.{key}", f"expected {what}: a decimal or a fraction such as \"0.25\" or \"1/3\", "
                                          f"got {_brief(text)}")
    return exact_decimal(text)


def _brief(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def _part(data: Any, where: str) -> GradedPart:
    """One of a version's parts, each field checked: its points and tolerance decide every grade."""
    letter = _required(data, "part", where, str, "the part's letter")
    tolerance = _exact(data, "tolerance", where, "the tolerance")
    if tolerance < 0:
        raise SpecError(f"{where}.tolerance", f"expected a tolerance of 0 or more, got {_brief(data['tolerance'])}")
    blanks = _required(data, "blanks", where, list, "a list of blanks")
    return GradedPart(letter, _required(data, "key", where, str, "the part's key"),
                      _whole(data, "points", where, 0, MAX_POINTS, "the part's points"), tolerance,
                      tuple(_blank(letter, blank, f"{where}.blanks[{i}]") for i, blank in enumerate(blanks)))


def _version(entry: dict[str, Any], parts: tuple[GradedPart, ...]) -> GradedVersion:
    section = entry["spec"]["sections"][0]
    answers = entry["answers"]["sections"][0]
    kind = section["kind"]
    asked_q = any(b.role == "q" for p in parts for b in p.blanks)
    if "heads" in section:  # several heads: each with its own d_k and scale
        details = {h: {"d_k": len(d["Q"][0]), **section["heads"][h - 1], **d}
                   for h, d in enumerate(answers.get("head_details", []), start=1) if d}
        divisors = {h: _divisor(d) for h, d in details.items()}
        d_k = {h: int(d["d_k"]) for h, d in details.items()}
    elif "d_k" in answers:
        divisors, d_k = {None: _divisor(answers)}, {None: int(answers["d_k"])}
    else:  # a kind without scores (feed-forward, Add & Norm, next-token): nothing scaled to carry or diagnose
        divisors, d_k = {}, {}
    tokens, focus = section.get("tokens", []), section.get("focus")
    focus = 1 if asked_q or focus not in tokens else tokens.index(focus) + 1
    W_O = tuple(tuple(exact_decimal(v) for v in row) for row in section["W_O"]) if "W_O" in section else None
    return GradedVersion(entry["label"], kind, parts, focus, divisors, d_k, W_O, section, entry["answers"])


def _divisor(answers: dict[str, Any]) -> Decimal:
    """What the scores are divided by: √d_k, 1 (scale = "none") or the given number."""
    scale = answers.get("scale", "sqrt(d_k)")
    if scale == "sqrt(d_k)":
        return Decimal(int(answers["d_k"])).sqrt()
    return Decimal(1) if scale == "none" else exact_decimal(scale)


def _blank(part: str, data: Any, where: str) -> GradedBlank:
    symbol = _required(data, "symbol", where, str, "the blank's symbol (Q, w, z_concat, ...)")
    name, _, label = symbol.partition("_")
    base = name.rstrip("0123456789")
    # a letter and a head; multi-head's z_concat and z_final; anything else (another label, a K/V group: Kg1) is
    # a quantity the grader does not carry
    role = ROLES.get(base) if not label else label if base == "z" and label in ("concat", "final") else None
    head = None if data.get("head") is None else _whole(data, "head", where, 1, MAX_INDEX, "the blank's head")
    return GradedBlank(_required(data, "id", where, str, "the blank's id"), part, role, head,
                       _whole(data, "row", where, 1, MAX_INDEX, "the blank's row"),
                       _whole(data, "column", where, 1, MAX_INDEX, "the blank's column"),
                       _exact(data, "answer", where, "the blank's answer"))
