"""The documented size limit of `render`: a document too large to compile is refused at once, with one line
naming the section's focus, and nothing written; one at the limit renders and its PDF compiles."""

from __future__ import annotations

import json
import time

import pytest

from symattn.cli import main


def spec_file(tmp_path, n: int, d: int, focus, name: str = "size") -> str:
    """A self-attention spec of n tokens, d wide (small integers, so the numbers stay short)."""
    def matrix(rows: int, cols: int) -> list[list[int]]:
        return [[(3 * i + 5 * j) % 7 - 3 for j in range(cols)] for i in range(rows)]
    spec = {"title": name, "lang": "en", "digits": 2, "sections": [{
        "kind": "self_attention", "tokens": [f"t{i}" for i in range(n)], "X": matrix(n, d),
        "W_Q": matrix(d, d), "W_K": matrix(d, d), "W_V": matrix(d, d), "focus": focus}]}
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    return str(path)


def refused(capsys, tmp_path, argv: list[str]) -> str:
    out = tmp_path / "out"
    start = time.perf_counter()
    status = main([*argv, "--out", str(out)])
    elapsed = time.perf_counter() - start
    captured = capsys.readouterr()
    assert status == 2
    assert elapsed < 5
    assert not out.exists()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("symattn: error: sections[0].focus: ")
    return lines[0]


def test_200_tokens_all_is_refused_at_once(capsys, tmp_path):
    line = refused(capsys, tmp_path, ["render", spec_file(tmp_path, 200, 16, "all"), "--format", "tex,pdf"])
    assert "200 tokens derived one by one" in line and "pages" in line
    assert "symattn solve" in line


def test_many_queries_suggest_the_matrix_form_when_it_fits(capsys, tmp_path):
    line = refused(capsys, tmp_path, ["render", spec_file(tmp_path, 64, 16, "all"), "--format", "md"])
    assert 'focus = "matrix"' in line and "symattn solve" in line
    assert "at most 16 are written out" in line  # 16 queries × 64 keys × d = 16


def test_a_matrix_form_too_large_is_refused(capsys, tmp_path):
    line = refused(capsys, tmp_path, ["render", spec_file(tmp_path, 200, 2, "matrix"), "--format", "tex"])
    assert "matrix form of 40000 entries" in line and "symattn solve" in line


def test_json_and_solve_are_not_limited(capsys, tmp_path):
    spec = spec_file(tmp_path, 64, 16, "all")
    assert main(["render", spec, "--format", "json", "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "size.json").exists()
    capsys.readouterr()
    assert main(["solve", spec]) == 0
    assert len(json.loads(capsys.readouterr().out)["sections"][0]["tokens"]) == 64


@pytest.mark.pdf
def test_a_document_at_the_limit_compiles(capsys, tmp_path):
    # 32 tokens derived one by one × 32 keys × d = 16: exactly the limit on steps (about 580 pages)
    spec = spec_file(tmp_path, 32, 16, "all", name="limit")
    status = main(["render", spec, "--format", "tex,pdf", "--out", str(tmp_path / "out")])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert "TeX capacity exceeded" not in captured.err
    assert (tmp_path / "out" / "limit.tex").exists()
    assert (tmp_path / "out" / "limit.pdf").read_bytes().startswith(b"%PDF")
