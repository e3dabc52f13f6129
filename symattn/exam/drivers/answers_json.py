"""exam.json: every version's spec (re-renderable with `symattn render`) and its answers (the `symattn solve`
schema), with the options that made the exam."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from json.encoder import encode_basestring
from typing import Any

from ... import __version__
from ...exercises.exercise import Exercise
from ...numbers.decimals import to_decimal
from ...numbers.significant import significant
from ...render.answers import answers
from ..blanks import blanks, letter, part_blanks
from ..examiners import examiner_of
from ..fair import exam_level
from ..heading import heading
from ..options import ExamOptions
from ..points import PART_LETTERS
from .base import Share

_SLOT = "@versions@"  # where the versions' entries go


class JsonDriver:
    """Writes exam.json; each version's entry is encoded where the version is made (in a worker process)."""

    name = "json"

    def __init__(self, options: ExamOptions) -> None:
        self.options = options

    def version(self, exercise: Exercise) -> str:
        return version_json(exercise.label, exercise.data, answers(exercise.derivation), workload(exercise),
                            parts_json(exercise), work_json(exercise, self.options.difficulty))

    def files(self, shares: list[Share]) -> dict[str, str]:
        return {"exam.json": exam_json(self.options, [share.text for share in shares],
                                       [share.label for share in shares])}


def workload(exercise: Exercise) -> dict[str, Any]:
    """A version's work by hand (exercise.Work): scalar products and operations in all, and per asked part (by
    its key) with its points; the same for every version of a kind in one exam."""
    total = exercise.workload
    return {"products": total.products, "operations": total.operations,
            "parts": {p.key: {"products": p.work.products, "operations": p.work.operations, "points": p.points}
                      for p in exercise.parts}}


def work_json(exercise: Exercise, difficulty: str) -> dict[str, Any]:
    """The work that costs this version's student time, which differs between versions (workload's does not):
    the products worked by hand (neither factor 0 or ±1, exercises/work.py) and the band its kind's versions are
    drawn within (null: none), and the blanks with how many different answers they hold."""
    section = exercise.data["sections"][0]
    examiner = examiner_of(section)
    band = examiner.work_band(difficulty)
    values = [to_decimal(b.value, 12, known=b.known) for b in blanks(exercise)]
    return {"hand_products": examiner.hand_products(section), "band": None if band is None else list(band),
            "blanks": len(values), "distinct_answers": len({v.normalize() for v in values})}


def version_json(label: str, spec: dict[str, Any], answers: dict[str, Any], workload: dict[str, Any] | None = None,
                 parts: list[dict[str, Any]] | None = None, work: dict[str, Any] | None = None) -> str:
    """One version's entry: JSON's own lines, two levels deeper for their place in the list (a JSON string holds
    no line break, so every line break is one of the layout's)."""
    entry = {"label": label, "spec": spec, "answers": answers, **({} if workload is None else {"workload": workload}),
             **({} if work is None else {"work": work}), **({} if parts is None else {"parts": parts})}
    return _indented(entry, "\n  ")


def _float(value: float) -> str:
    """A float as json writes it."""
    if value != value:
        return "NaN"
    return "Infinity" if value == math.inf else "-Infinity" if value == -math.inf else float.__repr__(value)


# json's text of each scalar type (json writes an int or str subclass as its base type, a bool as true/false)
_SCALAR: dict[type, Callable[[Any], str]] = {str: encode_basestring, int: int.__repr__, float: _float,
                                             bool: lambda value: "true" if value else "false",
                                             type(None): lambda value: "null"}
_WRITE = _SCALAR.get


def _indented(value: Any, pad: str) -> str:
    """json.dumps(value, ensure_ascii=False, indent=1) with each line break followed by `pad` (the value's own
    indentation): the same bytes, ~2.5x faster than json's indent (pure Python, a generator per container and a
    yield per item): each container's items are written by their type's C function and joined once."""
    kind = type(value)
    if kind is dict and value:
        inner = pad + " "
        try:
            texts = [encode_basestring(key) + ": " + (write(item) if (write := _WRITE(type(item)))
                                                      else _indented(item, inner)) for key, item in value.items()]
        except TypeError:  # a key that is not a string: json's own conversion
            return json.dumps(value, ensure_ascii=False, indent=1).replace("\n", pad)
        return "{" + inner + ("," + inner).join(texts) + pad + "}"
    if kind is list and value:
        inner = pad + " "
        texts = [write(item) if (write := _WRITE(type(item))) else _indented(item, inner) for item in value]
        return "[" + inner + ("," + inner).join(texts) + pad + "]"
    if kind is dict or kind is list:  # empty: as json writes it, without its indenting encoder (a reference cycle)
        return "{}" if kind is dict else "[]"
    # a scalar, or a value json writes in its own way (a tuple, a subclass)
    return json.dumps(value, ensure_ascii=False, indent=1).replace("\n", pad)


def parts_json(exercise: Exercise) -> list[dict[str, Any]]:
    """Each part's letter, key, points and tolerance, and its blanks (exam/blanks.py: id, what each is an entry
    of, and the answer to 30 significant digits), for graders (`symattn grade`)."""
    return [{"part": letter(k), "key": part.key, "points": part.points, "tolerance": part.tolerance,
             "blanks": [{"id": b.id, "symbol": b.symbol, "row": b.row, "column": b.column,
                         **({"head": b.head} if b.head is not None else {}),
                         "answer": significant(b.value, known=b.known)} for b in part_blanks(exercise.label, k, part)]}
            for k, part in enumerate(exercise.parts)]


def exam_json(options: ExamOptions, versions: list[str], labels: list[str]) -> str:
    """exam.json: json.dumps(..., indent=1) of the whole, with the versions' entries as version_json() wrote
    them (`labels`: theirs, in order)."""
    data: dict[str, Any] = {
        "symattn": __version__,
        "seed": options.seed,
        "options": {"count": options.count, "kind": options.kind, "difficulty": options.difficulty,
                    "lang": options.lang, "digits": options.digits, **fair_options(options), **heading(options)},
        # the class list (--students): which version each student has
        "students": [{"id": student.id, "name": student.name, "version": label}
                     for student, label in zip(options.students, labels, strict=False)],
        "versions": [_SLOT],
    }
    head, tail = json.dumps(data, ensure_ascii=False, indent=1).split(json.dumps(_SLOT))
    return head + ",\n  ".join(versions) + tail + "\n"


def fair_options(options: ExamOptions) -> dict[str, Any]:
    """The shape every version shares (given or drawn once: fair.exam_level) and the parts asked."""
    level = exam_level(options.seed, options.kind, options.difficulty, options.tokens, options.d_k)
    return {"tokens": level.tokens[0], "d_k": level.d_k[0],
            "parts": list(options.parts or PART_LETTERS),
            "points": None if options.points is None else dict(options.points)}
