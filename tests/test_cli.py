"""The command line: help, examples, rendering, and one-line errors with nothing written."""

from __future__ import annotations

import subprocess
import sys

import pytest

from symattn import examples
from symattn.cli import main
from symattn.render import build as build_module


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_help_everywhere(capsys):
    for argv in ([], ["render", "--help"], ["examples", "--help"], ["--help"]):
        with pytest.raises(SystemExit) if "--help" in argv else _nothing():
            main(argv)
        out = capsys.readouterr().out
        assert "usage: symattn" in out


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_help_does_not_import_sympy():
    code = ("import sys\nfrom symattn.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "main(['examples'])\nprint('sympy' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().endswith("False")


def test_examples_lists_and_shows_mt(capsys):
    status, out, _ = run(capsys, "examples")
    names = [line.split()[0] for line in out.splitlines()]
    assert status == 0 and names == sorted(names) and {"mt", "symbolic", "matrix"} <= set(names)
    assert "I love machine learning" in out
    status, out, _ = run(capsys, "examples", "--show", "mt")
    assert status == 0 and 'kind = "cross_attention"' in out


def test_render_tex_only(tmp_path, capsys):
    status, out, err = run(capsys, "render", "--example", "mt", "--format", "tex", "--out", str(tmp_path))
    assert status == 0
    assert (tmp_path / "mt.tex").is_file() and not (tmp_path / "mt.pdf").exists()
    assert f"wrote {tmp_path / 'mt.tex'}" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["render", "--example", "nope"],
         "--example: unknown example 'nope'; the examples are " + ", ".join(examples.names())),
        (["render", "--example", "mt", "--format", "tex,docx"], "--format: unknown format 'docx'"),
        (["render", "--example", "mt", "--digits", "x"], "--digits: expected a whole number of decimals"),
        (["render"], "render: give either a SPEC file or --example NAME"),
        (["render", "missing.toml"], "missing.toml: cannot read file"),
        (["examples", "--show", "nope"],
         "--show: unknown example 'nope'; the examples are alibi, alibi_heads, backward, decoder, layer, matrix, modern, mt"),
    ],
)
def test_bad_input_is_one_line_exit_2_nothing_written(tmp_path, capsys, argv, message):
    status, out, err = run(capsys, *argv, *(["--out", str(tmp_path)] if argv[0] == "render" else []))
    assert status == 2
    assert err.startswith(f"symattn: error: {message}")
    assert err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_a_mask_on_cross_attention_says_masks_are_for_self_attention(tmp_path, capsys):
    spec = tmp_path / "cross.toml"
    spec.write_text('[[sections]]\nkind = "cross_attention"\ntokens = ["a"]\nX = [[1, 0]]\nmemory_tokens = ["b"]\n'
                    'memory = [[1, 0]]\nW_Q = [[1], [0]]\nW_K = [[1], [0]]\nW_V = [[1], [0]]\nmask = "causal"\n',
                    encoding="utf-8")
    status, _, err = run(capsys, "render", str(spec), "--out", str(tmp_path / "out"))
    assert status == 2 and err.count("\n") == 1
    assert err == ("symattn: error: sections[0].mask: applies to self_attention, multi_head and grouped_query sections "
                   "only (this section is cross_attention)\n")


def test_bad_spec_file_writes_nothing(tmp_path, capsys):
    spec = tmp_path / "bad.toml"
    spec.write_text('[[sections]]\nkind = "self_attention"\ntokens = ["a"]\nX = [[1.0, "1,5"]]\n', encoding="utf-8")
    out_dir = tmp_path / "out"
    status, _, err = run(capsys, "render", str(spec), "--out", str(out_dir))
    assert status == 2 and "sections[0].X[0][1]: expected a number" in err
    assert not out_dir.exists()


def test_without_tex_the_tex_is_still_written(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(build_module, "tex_available", lambda: False)
    status, out, err = run(capsys, "render", "--example", "mt", "--out", str(tmp_path))
    assert status == 0
    assert (tmp_path / "mt.tex").is_file() and not (tmp_path / "mt.pdf").exists()
    assert "no TeX engine found" in err and "apt-get install" in err


def test_without_tex_an_explicit_pdf_is_an_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(build_module, "tex_available", lambda: False)
    status, _, err = run(capsys, "render", "--example", "mt", "--format", "pdf", "--out", str(tmp_path))
    assert status == 2 and "no TeX engine found" in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_a_long_document_says_what_it_is_doing(tmp_path, capsys):
    """A matrix form of 56 × 56 weights (about 49 pages) names each phase on stderr; the mt handout does not."""
    import json

    n = 56
    rows = [[str(i % 5), str(i % 3)] for i in range(n)]
    spec = tmp_path / "long.json"
    spec.write_text(json.dumps({"sections": [{"kind": "self_attention", "tokens": [f"t{i}" for i in range(n)],
                                              "X": rows, "W_Q": [[1, 0], [0, 1]], "W_K": [[1, 0], [0, 1]],
                                              "W_V": [[1, 0], [0, 1]], "focus": "matrix"}]}), encoding="utf-8")
    status, _, err = run(capsys, "render", str(spec), "--format", "md", "--out", str(tmp_path / "out"))
    assert status == 0
    assert err.splitlines()[:2] == ["symattn: deriving a document of about 49 pages...", "symattn: writing long.md..."]
    status, _, err = run(capsys, "render", "--example", "mt", "--format", "md", "--out", str(tmp_path / "out"))
    assert status == 0 and "deriving" not in err
