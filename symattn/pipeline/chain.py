"""Chained sections: a section's `name`, the references `"from:NAME"` and `"input:NAME"` that give a later section's
X, Y or memory as the rows an earlier section passes on (Kind.outputs, Kind.inputs), and how those values carry
(`carry = "shown"`: as the earlier document shows them, rounded; `"full"`: at the working precision).

Every reference is checked first (Chain.check_references: it names an earlier section), before anything is parsed
or computed. Then the spec is parsed in order: when a section refers to NAME, NAME is computed (once: the result is kept on the Spec for
derive_spec), its rows are rounded as its carry says and put into the section's data as an exact matrix, so the
receiving kind parses an ordinary matrix and checks its widths itself."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from typing import Any

import mpmath
from sympy import Expr, Integer, Rational

from ..document.steps import Heading, Name, Paragraph, Phrase, Step, Token, TokenTable
from ..engine import WORKING_DIGITS, Numbers, any_symbolic
from ..errors import SpecError
from ..kinds import KINDS, kind_of
from ..kinds.base import Referenced
from ..numbers.decimals import decimal_places
from ..numbers.display import DEFAULT_DIGITS, GUARD_CAP, format_number
from ..spec.fields import suggest
from ..spec.model import Carry, GivenMatrix, Section, Spec
from ..spec.numbers import matrix_of

# The matrices a reference may give, each with the key of the tokens it brings along.
REFERENCE_FIELDS = {"X": "tokens", "Y": "tokens", "memory": "memory_tokens"}
REFERENCES = ("from", "input")  # "from:NAME": NAME's output rows; "input:NAME": the rows NAME starts from
CARRY_MODES = ("shown", "full")
SECTION_KEYS = frozenset({"name", "carry"})  # keys every section takes, read here (not by its kind)
MAX_NAME = 64
# The sentences that call a section's X its embeddings (or suppose its memory), and what a section whose X (memory)
# an earlier section passed on says instead; None: nothing (the note that the embeddings are dummy values, and that
# a first layer leaves positions out). A kind whose steps say "embeddings" adds its keys here.
REWORDED: dict[str, dict[str, str | None]] = {
    "X": {"self.step1": "chain.step1", "gqa.step_inputs": "chain.step1", "table.embedding": "chain.table_row",
          "self.x_is": "chain.x_is", "self.embedding_of": "chain.row_of", "self.result_from": "chain.result_from",
          "multi.embeddings": "chain.multi_rows", "gqa.x_is": "chain.gqa_x_is",
          "note.dummy_embeddings": None, "self.no_positional": None, "self.no_positional_masked": None},
    "memory": {"cross.encoder_outputs": "chain.encoder_outputs", "cross.encoder_note": None},
}


@dataclass
class Chain:
    """The state of parsing one spec's sections in order: every section's name (known before any is parsed, for
    the messages of forward references), those parsed so far and their carry modes, and the results computed."""

    names: dict[str, int]
    carry: str
    digits: int
    result_digits: int
    raw: list[Any]
    parsed: list[Section] = field(default_factory=list)
    modes: list[str] = field(default_factory=list)
    results: dict[int, Any] = field(default_factory=dict)
    # by section: whether it computes from approximations (a full carry reaches it, directly or through rows)
    approximated: list[bool] = field(default_factory=list)

    @classmethod
    def start(cls, data: dict[str, Any], sections: list[Any], digits: int, result_digits: int) -> Chain:
        carry = carry_mode(data["carry"], "carry") if "carry" in data else "shown"
        names: dict[str, int] = {}
        for i, section in enumerate(sections):
            given = section_name(section, f"sections[{i}]")
            if given is None:
                continue
            if given in names:
                raise SpecError(f"sections[{i}].name", f"{given!r} names sections[{names[given]}] already "
                                                       "(give each section its own name)")
            names[given] = i
        links = cls(names, carry, digits, result_digits, sections)
        links.check_references()
        return links

    def check_references(self) -> None:
        """Every section's references, read before any section is parsed or computed: a mistyped or misdirected
        reference in the last section is refused at once, not after the earlier sections are computed."""
        for index, data in enumerate(self.raw):
            if not isinstance(data, dict):
                continue
            for key in REFERENCE_FIELDS:  # "FROM:enc", "output:enc": a reference mistyped, not a matrix
                value, where = data.get(key), f"sections[{index}].{key}"
                if isinstance(value, str) and ":" in value and not _is_reference(value):
                    raise SpecError(where, f'expected a list of rows, or "from:NAME" or "input:NAME" naming an '
                                           f"earlier section, got {value!r}")
                if _is_reference(value):
                    self._target(value, index, where)

    def take(self, data: Any, at: str) -> tuple[Any, dict[str, Any]]:
        """A section's data with its references resolved and the chain's own keys taken out, and what to set on
        its parsed Section (name, carried)."""
        if not isinstance(data, dict):
            return data, {}
        index = len(self.parsed)
        self.modes.append(carry_mode(data["carry"], f"{at}.carry") if "carry" in data else self.carry)
        refs = [(key, data[key]) for key in REFERENCE_FIELDS if _is_reference(data.get(key))]
        data = {key: value for key, value in data.items() if key not in SECTION_KEYS}
        named = KINDS[data["kind"]].references if isinstance(data.get("kind"), str) and data["kind"] in KINDS \
            else frozenset()
        for key in sorted(named & data.keys()):  # `from = "NAME"`: the section itself (an unknown kind: parse says)
            data[key] = self._section(data[key], index, f"{at}.{key}")
        carried = []
        brought: dict[str, str] = {}  # tokens key -> the field whose reference set it
        for key, text in refs:
            where = f"{at}.{key}"
            j = self._target(text, index, where)
            rows, carry = self._rows(j, text, key, where)
            tokens_key = REFERENCE_FIELDS[key]
            if tokens_key in brought or tokens_key in data:
                _check_tokens(data[tokens_key], rows.tokens, f"{at}.{tokens_key}", text, brought.get(tokens_key))
            else:
                data[tokens_key] = list(rows.tokens)
                brought[tokens_key] = key
            data[key] = rows.matrix
            carried.append(carry)
        return data, {"name": self.raw_name(index), "carried": tuple(carried)}

    def add(self, section: Section) -> None:
        self.parsed.append(section)
        self.approximated.append(any((c.mode == "full" and not c.exact) or self.approximated[self.names[c.source]]
                                     for c in section.carried))

    def raw_name(self, index: int) -> str | None:
        return next((name for name, i in self.names.items() if i == index), None)

    def computed(self) -> tuple[tuple[Section, Any], ...]:
        return tuple((self.parsed[j], result) for j, result in self.results.items())

    def _target(self, text: str, index: int, where: str) -> int:
        """The index of the earlier section a reference names; SpecError for any other."""
        what, _, name = text.partition(":")
        name = unicodedata.normalize("NFC", name)
        earlier = [n for n, i in self.names.items() if i < index]
        listed = f"; earlier: {', '.join(earlier)}" if earlier else "; no earlier section has a name"
        if not name.strip():
            raise SpecError(where, f'expected "{what}:NAME" with the name of an earlier section, got {text!r}')
        j = self.names.get(name)
        if j is None:
            raise SpecError(where, f"{text!r} names no section{suggest(name, self.names)}{listed}")
        if j == index:
            raise SpecError(where, f"{text!r} names this section itself; references point only backwards{listed}")
        if j > index:
            back = any(self.raw_name(index) is not None and raw == f"{ref}:{self.raw_name(index)}"
                       for raw in _references(self.raw[j]) for ref in REFERENCES)
            cycle = " (and it refers back to this one: a cycle)" if back else ""
            raise SpecError(where, f"{text!r} names a later section, sections[{j}]{cycle}; references point only "
                                   f"backwards{listed}")
        return j

    def _section(self, value: Any, index: int, where: str) -> Referenced:
        """The earlier section a key names, computed (once: derive_spec reuses the result)."""
        if not isinstance(value, str):
            raise SpecError(where, f"expected the name of an earlier section, such as \"attn\", got {value!r}")
        j = self._target(f"from:{value}", index, where)
        source = self.parsed[j]
        if j not in self.results:
            self.results[j] = kind_of(source.kind).compute(source)
        return Referenced(self.raw_name(j) or value, source, self.results[j])

    def _rows(self, j: int, text: str, key: str, where: str) -> tuple[Rows, Carry]:
        """The rows section j passes on, carried as its mode says."""
        source, what = self.parsed[j], text.partition(":")[0]
        kind = kind_of(source.kind)
        if j not in self.results:
            self.results[j] = kind.compute(source)
        result = self.results[j]
        rows = kind.outputs(source, result) if what == "from" else kind.inputs(source, result)
        name = self.raw_name(j)
        if rows is None:
            passes = "no output rows" if what == "from" else "no input rows (it starts from no X)"
            raise SpecError(where, f"{text!r}: section {name} ({source.kind}) passes {passes} on")
        if any_symbolic(rows.rows):
            raise SpecError(where, f"{text!r}: section {name} holds symbols; a chain carries numbers")
        mode = self.modes[j]
        digits = self.result_digits if what == "from" else self.digits
        known = getattr(rows, "known", None)
        # the rows' largest entry: a full carry rounds at its 90th digit, and certify bounds from its size (only
        # for output rows that carry an approximation: a full carry's, or those of a section computed from one)
        measured = what == "from" and (mode == "full" or self.approximated[j])
        largest = max((abs((known or Numbers()).number(v)) for v in rows.rows), default=mpmath.mpf(0)) \
            if measured else mpmath.mpf(0)
        quantum = full_quantum(largest) if mode == "full" else None
        values = [[carried_value(v, mode, what, digits, self.digits, known, quantum) for v in rows.rows.row(i)]
                  for i in range(rows.rows.rows)]
        exact = all(value.exact for row in values for value in row)
        matrix = GivenMatrix(matrix_of([[v.value for v in row] for row in values]),
                             max((v.places or 0 for row in values for v in row), default=0),
                             tuple(v.places for row in values for v in row))
        carry = Carry(key, what, name, mode, digits, exact, matrix.shape[1], float(largest) * (1 + 1e-12))
        return Rows(rows.tokens, matrix), carry


@dataclass(frozen=True)
class Rows:
    """The rows a reference gives: the tokens they bring and the matrix as the receiving kind parses it."""

    tokens: tuple[str, ...]
    matrix: GivenMatrix


@dataclass(frozen=True)
class Value:
    """A carried entry: its exact value, the decimals the next document writes it with (None: as a fraction),
    and whether it is the source's exact value."""

    value: Expr
    places: int | None
    exact: bool


def full_quantum(largest: mpmath.mpf) -> Decimal:
    """The last place a full carry keeps: WORKING_DIGITS significant digits of the matrix's largest entry (its
    size `largest`), so that every entry is within 10^(1 − WORKING_DIGITS) of it (certify.CARRY_ROUNDING) and an
    entry far smaller (a weight of e^{-700000}) carries as a short decimal or 0, not as a fraction of 300,000
    digits."""
    exponent = int(mpmath.floor(mpmath.log10(largest))) if largest else 0
    return Decimal(1).scaleb(exponent - WORKING_DIGITS + 1)


def carried_value(v: Expr, mode: str, what: str, digits: int, exact_up_to: int, known: Numbers | None,
                  quantum: Decimal | None = None) -> Value:
    """One entry as it carries. A rational value always carries exactly, in either mode, and the receiving page
    writes it with all its decimals (a fraction when they do not end), so that every line using it checks from the
    page, unless they are more than the lines' guard decimals allow (a value computed from a 90-digit "full"
    carry): then it is written rounded. An irrational one: "shown", its decimal as the source's document rounds
    it; "full", its working-precision number to the place `quantum` (full_quantum), an exact rational."""
    if v.is_Rational:
        places = decimal_places(v)
        return Value(v, places if places is None or places <= exact_up_to + GUARD_CAP else 0, True)
    if mode == "full":
        number = known.number(v) if known is not None else Numbers().number(v)
        text = mpmath.nstr(number, WORKING_DIGITS + 10, strip_zeros=False)
        with localcontext() as context:
            context.prec = 2 * WORKING_DIGITS + 20
            decimal = Decimal(text) if quantum is None else Decimal(text).quantize(quantum, ROUND_HALF_EVEN)
        return Value(_rational(decimal), 0, False)
    shown = format_number(v, digits, known=known, exact_up_to=exact_up_to)
    if shown.exact:
        return Value(v, decimal_places(v), True)
    return Value(*_parse_shown(shown.text), False)


def _parse_shown(text: str) -> tuple[Rational, int]:
    """A rounded number as written ("0.8933", "1.2345 \\times 10^{16}"): an exact rational and its decimals."""
    mantissa, _, power = text.partition(r" \times 10^")
    decimal = Decimal(mantissa)
    value = _rational(decimal)
    if power:
        return value * Integer(10) ** int(power.strip("{}")), 0
    return value, max(0, -decimal.as_tuple().exponent)


def _rational(decimal: Decimal) -> Rational:
    p, q = decimal.as_integer_ratio()
    return Rational(p, q)


def carry_mode(value: Any, where: str) -> str:
    if value not in CARRY_MODES:
        raise SpecError(where, f'expected "shown" (the values as the document shows them) or "full" (at the '
                               f"working precision), got {value!r}")
    return value


def section_name(data: Any, at: str) -> str | None:
    """A section's `name`: an identifier-like string (letters, digits, _; not starting with a digit)."""
    if not isinstance(data, dict) or "name" not in data:
        return None
    value = data["name"]
    if isinstance(value, str):  # é typed as e + ◌́ is the same name (as token names are NFC)
        value = unicodedata.normalize("NFC", value)
    if not isinstance(value, str) or not value.isidentifier() or len(value) > MAX_NAME:
        raise SpecError(f"{at}.name", f"expected a name of letters, digits and _ (not starting with a digit, at "
                                      f"most {MAX_NAME} characters), such as 'enc' or 'attn1', got {value!r}")
    return value


def _is_reference(value: Any) -> bool:
    return isinstance(value, str) and value.partition(":")[0] in REFERENCES and ":" in value


def _references(data: Any) -> list[str]:
    return [data[key] for key in REFERENCE_FIELDS if isinstance(data, dict) and _is_reference(data.get(key))]


def _check_tokens(given: Any, carried: tuple[str, ...], where: str, text: str, by: str | None) -> None:
    from ..spec.fields import tokens

    written = tokens(given, where) if by is None else tuple(given)
    if written != carried:
        source = f"{text!r}" if by is None else f"{text!r} (as {by}'s reference brought them)"
        raise SpecError(where, f"{list(written)}, but {source} carries the tokens {list(carried)}: leave "
                               "the tokens out, or give the same")


def digits_of(spec_digits: int | None, stages: tuple[tuple[str, int], ...], override: int | None) -> tuple[int, int]:
    """(the document's digits, the result stage's) a chain rounds "shown" values to."""
    digits = override if override is not None else spec_digits if spec_digits is not None else DEFAULT_DIGITS
    return digits, dict(stages).get("result", digits)


def explained(error: SpecError, extra: dict[str, Any]) -> SpecError:
    """A receiving section's error, with where its carried matrices came from (their widths are the sources')."""
    carried = extra.get("carried", ())
    if not carried:
        return error
    sources = ", ".join(f"{c.field} = '{c.what}:{c.source}', {_width(c)}" for c in carried)
    return SpecError(error.field, f"{error.problem} ({sources})")


def _width(carry: Carry) -> str:
    return f"{carry.columns} columns" if carry.columns != 1 else "1 column"


def stale(spec: Spec, digits: int | None) -> bool:
    """Whether a chained spec was carried at other digits than the document's (--digits): its "shown" values are
    then not the ones its document shows, and it is parsed again from its document (spec.source) at these."""
    if spec.source is None or digits is None or digits == spec.carry_digits:
        return False
    return any(c.mode == "shown" and not c.exact for s in spec.sections for c in s.carried)


def results(spec: Spec) -> dict[int, Any]:
    """The results computed while parsing the spec, by the identity of their sections."""
    return {id(section): result for section, result in spec.computed}


def paragraphs(section: Section) -> list[Paragraph]:
    """What the receiving section's document says where its chain starts: one sentence per reference."""
    said = []
    for carry in section.carried:
        # the matrix as the receiving document names it: a kind may call a key otherwise (`shown_as`)
        matrix = Name(getattr(kind_of(section.kind), "shown_as", {}).get(carry.field, carry.field))
        what = Phrase(f"chain.what_{carry.what}", (("source", Token(carry.source)),))
        key = "chain.exact" if carry.exact else f"chain.{carry.mode}"
        params: dict[str, Any] = {"matrix": matrix, "what": what}
        if key == "chain.shown":
            params["digits"] = carry.digits
        elif key == "chain.full":
            params["working"] = WORKING_DIGITS
        said.append(Paragraph(key, params))
    return said


def reworded(steps: list[Step], section: Section) -> list[Step]:
    """The steps of a section whose X (memory) an earlier section passed on, without calling X embeddings
    (REWORDED); a sentence reworded keeps its condition's truth (it replaces one said under it), so it records no
    facts."""
    words: dict[str, str | None] = {}
    for carry in section.carried:
        words.update(REWORDED.get(carry.field, {}))
    out: list[Step] = []
    for step in steps:
        if isinstance(step, (Heading, Paragraph)) and step.key in words:
            if words[step.key] is None:
                continue
            step = replace(step, key=words[step.key], facts=None)
        elif isinstance(step, TokenTable):
            step = replace(step, header=tuple(words.get(h) or h if isinstance(h, str) else h for h in step.header))
        out.append(step)
    return out
