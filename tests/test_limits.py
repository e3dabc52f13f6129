"""The measured limits of document/size.py, for every kind: just above each one, `render` (and for work, every
command) refuses at once with one line naming the field and writes nothing; at the limits a document renders in
seconds and its PDF compiles (one shared PDF for the limits TeX met: keys, text, columns, nesting)."""

from __future__ import annotations

import json
import time

import pytest

from symattn.cli import main
from symattn.document.size import (
    MAX_BLOCKS,
    MAX_COLUMNS,
    MAX_DEPTH,
    MAX_KEYS,
    MAX_LINES,
    MAX_TEXT,
    MAX_WORK,
    ONLINE_WORK,
)


def _matrix(rows: int, cols: int, k: int = 0) -> list[list[float]]:
    return [[((3 * i + 5 * j + k) % 7 - 3) / 2 for j in range(cols)] for i in range(rows)]


def _attention(n: int, d: int = 2, **more) -> dict:
    return {"kind": "self_attention", "tokens": [f"t{i}" for i in range(n)], "X": _matrix(n, d),
            "W_Q": _matrix(d, d, 1), "W_K": _matrix(d, d, 2), "W_V": _matrix(d, d, 3), **more}


def _cached(past: int) -> dict:
    return {**_attention(1), "tokens": ["new"], "past_tokens": [f"p{i}" for i in range(past)],
            "past_K": _matrix(past, 2, 4), "past_V": _matrix(past, 2, 5)}


def _vocabulary(v: int) -> dict:
    return {"kind": "next_token", "tokens": ["a", "b"], "X": _matrix(2, 2), "vocabulary": [f"w{i}" for i in range(v)],
            "W_vocab": _matrix(2, v)}


def _fraction(depth: int) -> str:
    math = "x"
    for _ in range(depth):
        math = "\\frac{1}{" + math + "}"
    return f"${math}$"


def _file(tmp_path, sections: list[dict], name: str = "limit") -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"lang": "en", "digits": 2, "sections": sections}), encoding="utf-8")
    return str(path)


def _refused(capsys, tmp_path, command: list[str]) -> str:
    out = tmp_path / "out"
    start = time.perf_counter()
    status = main([*command, *(["--out", str(out)] if command[0] == "render" else [])])
    elapsed = time.perf_counter() - start
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and elapsed < 10 and not out.exists(), (status, elapsed, err)
    assert len(err) == 1 and err[0].startswith("symattn: error: "), err
    return err[0].removeprefix("symattn: error: ")


ABOVE = {  # a section just past each limit, and the start of its one-line refusal
    "past tokens": ([_cached(MAX_KEYS)], "sections[0].focus: 257 keys"),
    "width": ([_attention(8, 128, focus="matrix")], "sections[0].W_Q: the section's given matrices hold"),
    "vocabulary": ([_vocabulary(MAX_LINES + 1)], "sections[0].vocabulary: 513 entries"),
    "blocks": ([_attention(17, softmax="online", block=1)], "sections[0].focus: the online softmax derives 289"),
    "paragraph": ([{"kind": "text", "paragraphs": ["a" * (MAX_TEXT + 1)]}], "sections[0].paragraphs[0]: a text of"),
    "columns": ([{"kind": "text", "table": {"header": ["h"] * (MAX_COLUMNS + 1), "rows": [["c"] * (MAX_COLUMNS + 1)]}}],
                "sections[0].table: a table of 201 columns"),
    "nesting": ([{"kind": "text", "notes": ["fine", _fraction(MAX_DEPTH + 1)]}], "sections[0].notes[1]: math nested 41"),
}


@pytest.mark.parametrize("case", sorted(ABOVE))
def test_just_above_each_limit_render_refuses_at_once(capsys, tmp_path, case):
    sections, start = ABOVE[case]
    line = _refused(capsys, tmp_path, ["render", _file(tmp_path, sections), "--format", "md,pdf"])
    assert line.startswith(start), line


def test_a_large_vocabulary_is_counted_in_entries(capsys, tmp_path):
    line = _refused(capsys, tmp_path, ["render", _file(tmp_path, [_vocabulary(20000)]), "--format", "tex"])
    assert line.startswith("sections[0].vocabulary: 20000 entries make a derivation of 20000 lines; at most 512 "
                           "are set"), line
    assert "pages" not in line


def test_text_alone_is_not_told_to_use_solve(capsys, tmp_path):
    sections = [{"kind": "text", "paragraphs": ["x"]} for _ in range(5000)]
    line = _refused(capsys, tmp_path, ["render", _file(tmp_path, sections), "--format", "md"])
    assert line.startswith("sections: the 5000 sections make a document of about") and "solve" not in line, line


def test_solve_is_bounded_and_render_does_not_recommend_it_past_that(capsys, tmp_path):
    """8,000 tokens with an online softmax of block 1 reached 24 GB in solve: every command refuses it at once."""
    spec = _file(tmp_path, [_attention(8000, softmax="online", block=1)])
    for command in (["solve", spec], ["render", spec, "--format", "json"], ["render", spec, "--format", "pdf"]):
        line = _refused(capsys, tmp_path, command)
        assert line.startswith(f"sections[0]: the section computes about {8000 * 8000 * ONLINE_WORK} query-key "
                               f"pairs or values"), line
        assert "use symattn solve" not in line
    line = _refused(capsys, tmp_path, ["solve", _file(tmp_path, [_attention(257, focus="matrix")] * 1
                                                      + [_attention(1)])])
    assert line.startswith("sections[0]: the section computes about 66049"), line
    chain = [_attention(200, focus="matrix"), _attention(200, focus="matrix")]  # each within, together past it
    assert _refused(capsys, tmp_path, ["solve", _file(tmp_path, chain)]).startswith(
        "sections: the sections up to this one compute about 80000")


def test_solve_at_its_limit_ends_in_seconds(capsys, tmp_path):
    start = time.perf_counter()
    assert main(["solve", _file(tmp_path, [_attention(int(MAX_WORK ** 0.5), focus="matrix")])]) == 0
    assert time.perf_counter() - start < 30
    assert len(json.loads(capsys.readouterr().out)["sections"][0]["queries"]) == 256


@pytest.mark.parametrize("section", [_vocabulary(MAX_LINES), _attention(16, softmax="online", block=1, focus="all")],
                         ids=["vocabulary", "blocks"])
def test_text_formats_at_the_vocabulary_and_block_limits(tmp_path, section):
    """The limits whose PDFs take longest (512 entries: 67 pages, ~14 s; 256 blocks: 143 pages, ~11 s on a loaded
    machine) render their text formats in seconds; 1,024 entries took 33 s to the PDF, 1,024 blocks 35 s."""
    start = time.perf_counter()
    assert main(["render", _file(tmp_path, [section]), "--format", "tex,md,html,json", "--out", str(tmp_path / "out")]) == 0
    assert time.perf_counter() - start < 20
    assert 16 * 16 == MAX_BLOCKS


@pytest.mark.pdf
def test_one_document_at_the_keys_and_text_limits_compiles(capsys, tmp_path):
    """256 keys (a cache of 255 past tokens: the heatmap's columns), a paragraph of 100,000 characters, a table of
    200 columns and math nested 40 deep, in one PDF."""
    sections = [_cached(MAX_KEYS - 1),
                {"kind": "text", "paragraphs": [("word " * (MAX_TEXT // 5))[:MAX_TEXT], _fraction(MAX_DEPTH)],
                 "table": {"header": ["h"] * MAX_COLUMNS, "rows": [["c"] * MAX_COLUMNS]}}]
    start = time.perf_counter()
    status = main(["render", _file(tmp_path, sections), "--format", "pdf", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 0, err
    assert time.perf_counter() - start < 60
    assert (tmp_path / "out" / "limit.pdf").read_bytes().startswith(b"%PDF")
