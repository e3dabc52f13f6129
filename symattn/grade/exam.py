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

from ..check.hypotheses import section_from_data
from ..errors import SpecError
from ..infra.inputs import MAX_EXAM_BYTES, read_input_text
from ..spec.fields import parse_digits
from ..spec.files import check_document, read_spec_text
from .numbers import exact_decimal

# The quantities an id's symbol names, by its letters (the head's digits and a label follow them).
ROLES = {"Q": "Q", "K": "K", "V": "V", "q": "q", "s": "scores", "a": "scaled", "w": "weights", "z": "output"}
MAX_POINTS = 1000  # a part's points as exam.json may give them (symattn's are 1-20): what grades add up
MAX_INDEX = 10_000  # a blank's row, column or head
# A number as exam.json writes it: a decimal in quotes ("-0.25", 30 significant digits), or a fraction ("1/3").
# At most 20 digits before the point: symattn's answers are far smaller, and grading works to 28 and more digits.
_EXACT = re.compile(r"-?\d{1,20}(\.\d{1,40})?(/[1-9]\d{0,40})?", re.ASCII)
_LABEL = re.compile(r"\d{1,4}", re.ASCII)  # a version's label: "01" ... "1000"
_LETTER = re.compile(r"[a-z]")  # a part's letter


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
        """An input matrix of the spec (X, memory, W_Q, ...; a head's W with `head`) as Decimals, or None (none
        given, or no such head)."""
        heads = self.section.get("heads") or ()
        if head is not None and not 1 <= head <= len(heads):  # a head the section does not have
            return None
        section = self.section if head is None else heads[head - 1]
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
    """Read exam.json; a file symattn did not write (or one written before blanks had ids), or one tampered with,
    is a one-line error naming the field: each value the grader uses (and prints) is checked here."""
    field = str(path)
    text = read_input_text(path, field, MAX_EXAM_BYTES)
    data = read_spec_text(text, "json", field)  # depth, duplicate keys and huge integers refused
    try:
        check_document(data)
    except SpecError as exc:
        raise SpecError(f"{field}: {exc.field}", exc.problem) from None
    if not isinstance(data.get("versions"), list):
        raise SpecError(field, "expected the exam.json `symattn exam --format json` writes (a 'versions' list)")
    if not data["versions"]:  # nothing to grade against (an exam has at least one version)
        raise SpecError(f"{field}: versions", "expected at least one version, got an empty list")
    options = data.get("options", {})
    if not isinstance(options, dict):
        raise SpecError(f"{field}: options", "expected a table (JSON object) as `symattn exam` writes it")
    lang = options.get("lang", "en")
    if lang not in ("ja", "en"):
        raise SpecError(f"{field}: options.lang", f"expected ja or en, got {_brief(lang)}")
    digits = parse_digits(options.get("digits", 4), f"{field}: options.digits")
    versions: dict[str, GradedVersion] = {}
    for k, entry in enumerate(data["versions"]):
        where = f"{field}: versions[{k}]"
        if isinstance(entry, dict) and "parts" not in entry:
            raise SpecError(where, "has no 'parts' with blank ids: make the exam again with this symattn "
                                   "(`symattn exam ... --format json`)")
        label = _label(entry, where)
        if label in versions:
            raise SpecError(f"{where}.label", f"version {label} is given twice (each version's label once)")
        parts = tuple(_part(part, f"{where}.parts[{i}]")
                      for i, part in enumerate(_required(entry, "parts", where, list, "a list of parts")))
        letters = [p.letter for p in parts]
        if len(set(letters)) != len(letters):
            raise SpecError(f"{where}.parts", f"a part letter is given twice ({', '.join(letters)})")
        versions[label] = _version(entry, label, parts, where)
    students = tuple((_nfc(s["id"]), _nfc(s["name"]), str(s["version"])) for s in data.get("students") or ()
                     if isinstance(s, dict) and {"id", "name", "version"} <= set(s))
    title = options.get("title")
    title = _nfc(title).strip() or None if isinstance(title, str) and len(title) <= 200 else None
    return Exam(lang, digits, versions, students, title)


def _nfc(value: Any) -> str:
    return unicodedata.normalize("NFC", str(value))


def _label(entry: Any, where: str) -> str:
    """A version's label as `symattn exam` writes it: ASCII digits ("01"; "0001" for a thousand versions)."""
    label = _required(entry, "label", where, str, 'the version\'s label (digits, such as "01")')
    if not _LABEL.fullmatch(label):
        raise SpecError(f"{where}.label", f'expected the version\'s label (1 to 4 digits 0-9, such as "01"), '
                                          f"got {_brief(label)}")
    return label


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
        raise SpecError(f"{where}.{key}", f"expected {what}: a decimal or a fraction such as \"0.25\" or \"1/3\" "
                                          f"(at most 20 digits before the point), got {_brief(text)}")
    return exact_decimal(text)


def _brief(value: Any) -> str:
    text = str(value) if isinstance(value, Decimal) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def _part(data: Any, where: str) -> GradedPart:
    """One of a version's parts, each field checked: its points and tolerance decide every grade."""
    letter = _required(data, "part", where, str, "the part's letter")
    if not _LETTER.fullmatch(letter):
        raise SpecError(f"{where}.part", f"expected the part's letter (one of a-z), got {_brief(letter)}")
    tolerance = _exact(data, "tolerance", where, "the tolerance")
    if tolerance < 0:
        raise SpecError(f"{where}.tolerance", f"expected a tolerance of 0 or more, got {_brief(data['tolerance'])}")
    blanks = _required(data, "blanks", where, list, "a list of blanks")
    return GradedPart(letter, _required(data, "key", where, str, "the part's key"),
                      _whole(data, "points", where, 0, MAX_POINTS, "the part's points"), tolerance,
                      tuple(_blank(letter, blank, f"{where}.blanks[{i}]") for i, blank in enumerate(blanks)))


def _version(entry: dict[str, Any], label: str, parts: tuple[GradedPart, ...], where: str) -> GradedVersion:
    """A version's spec and solve's answers, checked where the grader reads them (each a field's error)."""
    spec = _required(entry, "spec", where, dict, "the version's spec (a JSON object)")
    section = _first(spec, f"{where}.spec")
    answers = _required(entry, "answers", where, dict, "solve's answers (a JSON object)")
    solved = _first(answers, f"{where}.answers")
    at = f"{where}.spec.sections[0]"
    kind = _required(section, "kind", at, str, "the section's kind")
    tokens = _required(section, "tokens", at, list, "a list of token names")
    if not all(isinstance(t, str) for t in tokens):
        raise SpecError(f"{at}.tokens", f"expected a list of token names, got {_brief(tokens)}")
    for key in ("X", "memory", "W_Q", "W_K", "W_V", "W_O"):
        _matrix(section, key, at)
    if section_from_data(section) is not None and "focus" not in section:  # the diagnosis reads the focus row
        raise SpecError(f"{at}.focus", "missing: expected the token whose query the exam asks")
    if "focus" in section and not (isinstance(section["focus"], str) and section["focus"] in tokens):
        raise SpecError(f"{at}.focus", f"expected one of the tokens, got {_brief(section['focus'])}")
    asked_q = any(b.role == "q" for p in parts for b in p.blanks)
    if "heads" in section:  # several heads: each with its own d_k and scale
        heads = _required(section, "heads", at, list, "a list of heads")
        details = _required({"head_details": [], **solved}, "head_details", f"{where}.answers.sections[0]", list,
                            "a list of heads")
        merged = {}
        for h, d in enumerate(details, start=1):
            if d is None:
                continue
            there = f"{where}.answers.sections[0].head_details[{h - 1}]"
            if not isinstance(d, dict) or h > len(heads) or not isinstance(heads[h - 1], dict):
                raise SpecError(there, "expected a head's details as `symattn solve` writes them")
            for key in ("W_Q", "W_K", "W_V"):
                _matrix(heads[h - 1], key, f"{at}.heads[{h - 1}]")
            queries = _matrix(d, "Q", there)
            merged[h] = ({"d_k": len(queries[0]) if queries else 1, **heads[h - 1], **d}, there)
        divisors = {h: _divisor(d, there) for h, (d, there) in merged.items()}
        d_k = {h: int(d["d_k"]) for h, (d, _) in merged.items()}
    elif "d_k" in solved:
        there = f"{where}.answers.sections[0]"
        divisors, d_k = {None: _divisor(solved, there)}, {None: int(solved["d_k"])}
    else:  # a kind without scores (feed-forward, Add & Norm, next-token): nothing scaled to carry or diagnose
        divisors, d_k = {}, {}
    focus = section.get("focus")
    focus = 1 if asked_q or focus not in tokens else tokens.index(focus) + 1
    W_O = tuple(tuple(exact_decimal(v) for v in row) for row in section["W_O"]) if "W_O" in section else None
    return GradedVersion(label, kind, parts, focus, divisors, d_k, W_O, section, answers)


def _first(data: dict[str, Any], where: str) -> dict[str, Any]:
    """data["sections"][0], which must be a JSON object."""
    sections = _required(data, "sections", where, list, "a list of sections")
    if not sections or not isinstance(sections[0], dict):
        raise SpecError(f"{where}.sections[0]", f"expected a section (a JSON object), "
                                                f"got {_brief(sections[0]) if sections else 'nothing'}")
    return sections[0]


def _matrix(data: dict[str, Any], key: str, where: str) -> list[list[Any]] | None:
    """data[key] if given: rows of equal length of exact numbers (as exam.json writes them), else a SpecError."""
    if key not in data:
        return None
    rows = data[key]
    if not isinstance(rows, list) or not rows or not all(isinstance(r, list) and r for r in rows) \
            or len({len(r) for r in rows}) != 1:
        raise SpecError(f"{where}.{key}", f"expected a matrix (rows of equal length), got {_brief(rows)}")
    for i, row in enumerate(rows):
        for j, value in enumerate(row):
            if isinstance(value, bool) or not isinstance(value, str | int) or not _EXACT.fullmatch(str(value)):
                raise SpecError(f"{where}.{key}[{i}][{j}]", f"expected a number in quotes, as `symattn exam` "
                                                            f"writes it, got {_brief(value)}")
    return rows


def _divisor(answers: dict[str, Any], where: str) -> Decimal:
    """What the scores are divided by: √d_k, 1 (scale = "none") or the given number (above 0)."""
    _whole(answers, "d_k", where, 1, MAX_INDEX, "d_k")
    scale = answers.get("scale", "sqrt(d_k)")
    if scale == "sqrt(d_k)":
        return Decimal(int(answers["d_k"])).sqrt()
    if scale == "none":
        return Decimal(1)
    divisor = _exact(answers, "scale", where, 'the scale ("sqrt(d_k)", "none" or a number above 0)')
    if divisor <= 0:
        raise SpecError(f"{where}.scale", f"expected a scale above 0, got {_brief(scale)}")
    return divisor


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
