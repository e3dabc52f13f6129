"""Adding an output format is one entry in render/formats.py: a throw-away format registered through the
registry's public function renders through the command line with its own suffix, a format compiled from it too,
and the help and --format follow the registry."""

from __future__ import annotations

import gzip
import re

import pytest

from symattn.cli import main
from symattn.render import formats
from symattn.render.formats import Format, register, unregister

# The throw-away formats: an outline of the headings as plain text (its file suffix other than its name), and that
# outline gzipped, compiled from its text by a function of this module.
TXT = Format("txt", "outline.txt", renderer=f"{__name__}:render_outline", label="outline")
TXT_GZ = Format("txtgz", "outline.txt.gz", compiled_from="txt", compiler=f"{__name__}:gzipped", paged=False)


def render_outline(derivation, exact: bool = False) -> str:
    """The headings of the derivation's Markdown, one a line, indented by level."""
    from symattn import render_markdown

    headings = re.findall(r"^(#+) (.*)$", render_markdown(derivation, exact=exact), re.MULTILINE)
    return "".join(f"{'  ' * (len(marks) - 1)}{text}\n" for marks, text in headings)


def gzipped(text: str, jobname: str) -> bytes:
    return gzip.compress(text.encode("utf-8"), mtime=0)


@pytest.fixture
def txt_formats():
    register(TXT)
    register(TXT_GZ)
    try:
        yield
    finally:
        unregister("txtgz")
        unregister("txt")


def _render_help(capsys) -> str:
    with pytest.raises(SystemExit):
        main(["render", "--help"])
    return " ".join(capsys.readouterr().out.split())


def _listed_formats(help_text: str) -> list[str]:
    listed = re.search(r"comma-separated output formats: (.*?) \(default: tex,pdf\)", help_text)
    assert listed, help_text
    return listed.group(1).split(", ")


def test_a_registered_format_renders_through_the_command_line(txt_formats, tmp_path, capsys):
    status = main(["render", "--example", "mt", "--format", "txt", "--out", str(tmp_path)])
    assert status == 0
    written = tmp_path / "mt.outline.txt"
    assert capsys.readouterr().out == f"wrote {written}\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == [".symattn-sets.json", "mt.outline.txt"]
    outline = written.read_text(encoding="utf-8")
    assert outline.startswith("Attention の計算：I love machine learning\n  Attention は何を決めるのか\n")
    assert "    Step 7: 重み付き和\n" in outline


def test_a_format_compiled_from_a_registered_one(txt_formats, tmp_path, capsys):
    status = main(["render", "--example", "mt", "--lang", "en", "--format", "txtgz,md", "--out", str(tmp_path)])
    assert status == 0
    assert capsys.readouterr().out.splitlines() == [f"wrote {tmp_path / 'mt.md'}",
                                                    f"wrote {tmp_path / 'mt.outline.txt.gz'}"]
    assert not (tmp_path / "mt.outline.txt").exists()  # its source's text is made, not written
    text = gzip.decompress((tmp_path / "mt.outline.txt.gz").read_bytes()).decode("utf-8")
    assert text.startswith("Attention, worked out")


def test_the_help_lists_exactly_the_registry_formats(capsys):
    assert _listed_formats(_render_help(capsys)) == list(formats.names()) == ["tex", "pdf", "json", "md", "html",
                                                                                   "slides-tex", "slides"]


def test_the_help_and_format_follow_registration(txt_formats, capsys):
    assert _listed_formats(_render_help(capsys)) == list(formats.names())[:7] + ["txt", "txtgz"]


def test_an_unregistered_format_is_unknown_again(tmp_path, capsys):
    register(TXT)
    unregister("txt")
    assert "txt" not in formats.names()
    status = main(["render", "--example", "mt", "--format", "txt", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert status == 2 and err == ("symattn: error: --format: unknown format 'txt' "
                                   "(expected tex, pdf, json, md, html, slides-tex, slides)\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("fmt", "message"), [
    (Format("md", "markdown", renderer="x:y"), "a format named 'md' is registered already"),
    (Format("Txt", "txt", renderer="x:y"), "expected a lowercase word"),
    (Format("a,b", "txt", renderer="x:y"), "expected a lowercase word"),
    (Format("markdown", "md", renderer="x:y"), "the suffix 'md' is 'md''s"),
    (Format("txt", ".txt", renderer="x:y"), "expected a file suffix without the dot"),
    (Format("txt", "txt"), "expected either a renderer or the format it is compiled from"),
    (Format("txt", "txt", renderer="x:y", compiled_from="tex", compiler="x:z"), "expected either a renderer"),
    (Format("epub", "epub", compiled_from="pdf", compiler="x:z"), "must be a registered text format"),
    (Format("epub", "epub", compiled_from="html"), "must be a registered text format, with a compiler"),
])
def test_a_format_that_would_not_work_is_refused(fmt, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        register(fmt)
    assert fmt.name not in formats.names() or formats.format_of(fmt.name) is not fmt


def test_a_source_format_is_not_unregistered_under_a_compiled_one(txt_formats):
    with pytest.raises(ValueError, match="format 'txtgz' is compiled from 'txt'"):
        unregister("txt")
    with pytest.raises(ValueError, match="format 'pdf' is compiled from 'tex'"):
        unregister("tex")
    with pytest.raises(KeyError):
        unregister("nothing")


def test_the_registry_imports_no_renderer():
    import subprocess
    import sys

    code = ("import sys; from symattn.cli import build_parser; build_parser(); "
            "print(sorted(m for m in sys.modules if m.startswith(('sympy', 'symattn.render.'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['symattn.render.formats']"
