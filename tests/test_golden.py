"""Golden files: every built-in example in every text format and language, with and without --exact, and one exam
of each kind. They pin the outputs byte for byte; after an intended change run `pytest --update-golden` and review
the diff. The files are made through the command line, the interface users have."""

from __future__ import annotations

from pathlib import Path

import pytest

from symattn import examples
from symattn.cli import main

EXAMPLES = tuple(examples.names())  # every built-in example, a kind's own included
TEXT_FORMATS = ("tex", "md", "html", "json")
# (kind, difficulty, lang) of the exams pinned: every kind, both difficulties and both languages among them.
EXAMS = (("self_attention", "easy", "ja"), ("cross_attention", "standard", "en"), ("multi_head", "easy", "en"),
         ("mixed", "standard", "ja"))
EXAM_FILES = ("exam.tex", "key.tex", "exam.json", "moodle.xml")


@pytest.mark.parametrize("exact", [False, True], ids=["decimals", "exact"])
@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("example", EXAMPLES)
def test_example_outputs_match_golden_files(example: str, lang: str, exact: bool, tmp_path: Path, golden) -> None:
    formats = TEXT_FORMATS if not exact else ("tex", "md", "html")  # the answers have no exact mode
    argv = ["render", "--example", example, "--lang", lang, "--format", ",".join(formats), "--out", str(tmp_path)]
    assert main(argv + (["--exact"] if exact else [])) == 0
    suffix = "-exact" if exact else ""
    for fmt in formats:
        if fmt == "json" and lang == "en":
            continue  # the answers do not depend on the language
        golden(f"{example}-{lang}{suffix}.{fmt}", (tmp_path / f"{example}.{fmt}").read_text(encoding="utf-8"))


@pytest.mark.parametrize(("kind", "difficulty", "lang"), EXAMS)
def test_exam_outputs_match_golden_files(kind: str, difficulty: str, lang: str, tmp_path: Path, golden) -> None:
    argv = ["exam", "--count", "3", "--seed", "5", "--kind", kind, "--difficulty", difficulty, "--lang", lang,
            "--format", "tex,json,moodle", "--out", str(tmp_path), "--jobs", "1"]
    assert main(argv) == 0
    for name in EXAM_FILES:
        golden(f"exam-{kind}-{difficulty}-{lang}-{name}", (tmp_path / name).read_text(encoding="utf-8"))
