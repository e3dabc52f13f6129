"""A parsed spec document validated into a Spec: the top-level keys here, each section by its kind (the
registry, symattn.kinds), chained sections' references through pipeline/chain.py; and spec files and built-in
examples read (spec/files.py) and validated in one call."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import SpecError
from ..infra.inputs import read_input_text
from ..kinds import KINDS, kind_of
from ..kinds.base import Kind
from ..spec.fields import check_keys, parse_digit_stages, parse_lang, require
from ..spec.fields import name as parse_name
from ..spec.files import SPEC_SUFFIXES, check_document, example_text, read_spec_text
from ..spec.model import PROSE, Section, Spec
from ..spec.textmath import written
from . import chain
from .limits import check_work

_TOP_KEYS = {"title", "lang", "digits", "sections", "carry", "prose"}


def parse_spec(data: dict[str, Any], name: str = "spec", digits: int | None = None) -> Spec:
    """Validate a parsed spec document and build the exact Spec; `digits` (--digits) overrides the spec's for
    the values chained sections carry as shown (symattn.pipeline.chain)."""
    if not isinstance(data, dict):
        raise SpecError("spec", f"expected a table (object) at the top level, got {type(data).__name__}")
    check_document(data)
    check_keys(data, _TOP_KEYS, "")
    title = parse_name(data["title"], "title", "a title") if data.get("title") is not None else None
    lang = parse_lang(data["lang"], "lang") if "lang" in data else None
    spec_digits, stages = parse_digit_stages(data["digits"], "digits") if "digits" in data else (None, ())
    prose = data.get("prose")
    if prose is not None and prose not in PROSE:
        raise SpecError("prose", f'expected "full", "plain" or "none", got {prose!r}')
    sections = data.get("sections")
    if not isinstance(sections, list) or not sections:
        raise SpecError("sections", "expected a non-empty list of sections")
    carried_at = chain.digits_of(spec_digits, stages, digits)
    links = chain.Chain.start(data, sections, *carried_at)
    work = 0  # what the sections parsed so far compute: bounded before a later one's reference computes them
    for i, section in enumerate(sections):
        resolved, extra = links.take(section, f"sections[{i}]")
        try:
            links.add(replace(parse_section(resolved, f"sections[{i}]"), **extra))
        except SpecError as error:  # a carried matrix that does not fit: the message says where it came from
            raise chain.explained(error, extra) from None
        work = check_work([(i, links.parsed[-1])], work)
    chained = any(s.carried for s in links.parsed)
    return Spec(sections=tuple(links.parsed), title=title, lang=lang, digits=spec_digits, name=name, prose=prose,
                stage_digits=stages, source=data if chained else None, computed=links.computed(),
                carry_digits=carried_at[0])


def parse_section(data: Any, field: str) -> Section:
    """One section, validated by its kind."""
    if not isinstance(data, dict):
        raise SpecError(field, "expected a table (object) describing a section")
    kind = kind_of(require(data, "kind", field), f"{field}.kind")
    allowed = kind.keys | chain.SECTION_KEYS
    if not allowed.issuperset(data):  # which other kinds take a key is asked only for the error's message
        check_keys(data, allowed, field, keys_elsewhere(kind))
    section = kind.parse(data, field)
    if "heading" in data:  # any kind that takes the key: its own level-1 heading, string or table by language
        section = replace(section, heading=written(data["heading"], f"{field}.heading"))
    return section


def keys_elsewhere(kind: Kind) -> dict[str, tuple[str, ...]]:
    """The keys other kinds accept and this one does not, with those kinds' names."""
    owners: dict[str, tuple[str, ...]] = {}
    for other in KINDS.values():
        for key in other.keys - kind.keys:
            owners[key] = (*owners.get(key, ()), other.name)
    return owners


def load_spec(path: str | Path) -> Spec:
    """Read and validate a spec file (.toml or .json)."""
    return parse_spec(spec_file_data(path), name=Path(path).stem)


def spec_file_data(path: str | Path) -> dict[str, Any]:
    """A spec file's data as read, before validation (what a worksheet's versions redraw)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SPEC_SUFFIXES:
        raise SpecError(str(path), f"expected a .toml or .json spec file, got {suffix or 'no extension'}")
    return read_spec_text(read_input_text(path, str(path)), suffix.removeprefix("."), str(path))


def example_data(name: str) -> dict[str, Any]:
    """A built-in example's data as read, before validation."""
    return read_spec_text(example_text(name), "toml", f"example {name}")


def load_example(name: str) -> Spec:
    """A built-in example as a validated Spec."""
    return parse_spec(example_data(name), name=name)


def load(source: str | Path | Spec) -> Spec:
    """A Spec from itself, a spec file's path (.toml or .json, in any case) or a built-in example's name."""
    if isinstance(source, Spec):
        return source
    if isinstance(source, Path) or str(source).lower().endswith(SPEC_SUFFIXES):
        return load_spec(source)
    return load_example(str(source))
