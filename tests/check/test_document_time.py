"""check --from reads a 1 MB document in linear time, whatever it holds: not only its groups (test_document.py's
hostile fragments) but their labels and their matching to the derivation's quantities. A table of 40,000 rows
without a rule took 291 s (each row's header was looked for upwards to the top), 20,000 vectors of random numbers
5 s; on an idle machine each document here now takes at most 2 s."""

from __future__ import annotations

import random
import time

import pytest

from symattn.check import answers_of
from symattn.check.document import html_text
from symattn.check.matching import read_document
from symattn.pipeline.parse import load_example
from symattn.render.build import build

MEGABYTE = 1_000_000
BOUND = 6  # seconds of CPU time (wall time on a machine shared with other tests is no measure; ≤ 2 s idle)


def _numbers(rnd: random.Random, count: int = 4) -> list[str]:
    return [f"{rnd.random():.4f}" for _ in range(count)]


# each makes one line of a document from a seeded generator
LINES = {
    "table without a rule": lambda r: "| love | " + " | ".join(_numbers(r)) + " |",
    "one table under a rule": lambda r: "| love | " + " | ".join(_numbers(r)) + " |",
    "vectors": lambda r: "[" + ", ".join(_numbers(r)) + "]",
    "labelled equations": lambda r: "Q_{love} = [" + ", ".join(_numbers(r)) + "]",
    "the right weights again and again": lambda r: "weights [0.1238, 0.2497, 0.3382, 0.2883]",
    "tab-separated rows": lambda r: "\t".join(["love", *_numbers(r)]),
}


@pytest.fixture(scope="module")
def mt():
    spec = load_example("mt")
    return spec, answers_of(spec)


def _document(line, header: str = "") -> tuple[str, int]:
    """A megabyte of lines (after the header) and how many."""
    rnd, lines, size = random.Random(7), [], len(header)
    while size < MEGABYTE:
        lines.append(line(rnd))
        size += len(lines[-1].encode()) + 1
    return "\n".join([header, *lines] if header else lines), len(lines)


@pytest.mark.parametrize("kind", sorted(LINES))
def test_a_megabyte_is_read_and_matched_in_linear_time(kind, mt):
    spec, answers = mt
    header = "| token | a | b | c | d |\n|---|---|---|---|---|" if kind == "one table under a rule" else ""
    text, count = _document(LINES[kind], header)
    start = time.process_time()
    claims, coverage = read_document(text, answers, spec)
    took = time.process_time() - start
    print(f"{kind}: {took:.2f} s")
    assert took < BOUND, f"{kind}: {took:.1f} s"
    assert len(coverage.reads) == min(count, 20000)  # each line's group up to the bound read, given a verdict
    if kind == "the right weights again and again":
        assert [str(c.at[-1]) for c in claims] == ["0", "1", "2", "3"]  # the one vector, claimed once
        assert all(read.how == "label" for read in coverage.reads)


@pytest.mark.parametrize("suffix", ["md", "html"])
def test_symattns_own_document_a_megabyte_long(suffix, mt, tmp_path):
    spec, answers = mt
    build(spec, tmp_path, (suffix,), lang="en")
    page = (tmp_path / f"mt.{suffix}").read_text(encoding="utf-8")
    text = page * (MEGABYTE // len(page.encode()) + 1)
    start = time.process_time()
    claims, coverage = read_document(html_text(text) if suffix == "html" else text, answers, spec)
    assert time.process_time() - start < BOUND
    assert len(claims) > 50 and coverage.reads


def test_check_from_a_document_at_the_input_limit_ends_in_seconds(tmp_path, capsys):
    """16 MB, the most any input file may hold (infra/inputs.py): the whole command, reading, labels, matching and
    report, within the bound (its groups are bounded; each table row's header is looked for only as far as read)."""
    from symattn.cli import main
    from symattn.infra.inputs import MAX_INPUT_BYTES

    rnd, lines, size = random.Random(3), [], 0
    while size < MAX_INPUT_BYTES - 100:
        lines.append(LINES["table without a rule"](rnd))
        size += len(lines[-1]) + 1
    document = tmp_path / "big.md"
    document.write_text("\n".join(lines), encoding="utf-8")
    assert document.stat().st_size <= MAX_INPUT_BYTES
    start = time.process_time()
    assert main(["check", "--example", "mt", "--from", str(document), "--partial"]) == 1
    assert time.process_time() - start < BOUND + 4
    assert "80000 numbers read in 20000 groups" in capsys.readouterr().out
