"""Inputs that crashed with a traceback or misbehaved (issue 30, items 13, 14, 16 and 19): each is now a correct
result or a one-line error naming the field, exit status 2."""

from __future__ import annotations

import json
import re
import time

import pytest

from symattn.cli import main

IDENTITY = [[1, 0], [0, 1]]


def _section(**fields):
    return {"kind": "self_attention", "tokens": ["a", "b"], "X": IDENTITY, "W_Q": IDENTITY, "W_K": IDENTITY,
            "W_V": IDENTITY, **fields}


def _run(capsys, *argv):
    capsys.readouterr()
    started = time.perf_counter()
    status = main(list(argv))
    captured = capsys.readouterr()
    assert time.perf_counter() - started < 20, argv
    assert "Traceback" not in captured.err
    return status, captured.out, captured.err


def _spec(tmp_path, data, name="spec.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return str(path)


def _one_line_error(status, err, message):
    assert status == 2 and err.count("\n") == 1 and message in err, err


# ---------------------------------------------------------------- item 13: solve and render at large magnitudes


def test_a_chain_of_full_carries_past_the_floats_range_is_refused_naming_the_section(tmp_path, capsys):
    sections = [_section(name="s0")] + [_section(name=f"s{i}", X=f"from:s{i - 1}") for i in range(1, 200)]
    status, out, err = _run(capsys, "solve", _spec(tmp_path, {"sections": sections, "carry": "full"}))
    _one_line_error(status, err, 'with carry = "full", the bound of the unrounded chain grows past any number')
    assert re.search(r"error: sections\[\d+\]: ", err) and out == ""


def test_a_weight_of_1e30_renders_in_every_format(tmp_path, capsys):
    """The layer example's dec_attn alone with W_Q[3][2] = 1e30: e^a of scores near -10^30 is no longer computed
    to |a|/2 digits (an OverflowError)."""
    section = {"kind": "self_attention", "tokens": ["<s>", "私は"], "mask": "causal", "focus": "私は",
               "X": [["0.2", "0.1", "0.0", "0.3"], ["0.8", "1.5", "0.4", "0.1"]],
               "W_Q": [["0.7", "0.3", "-0.3", "-0.4"], ["0.3", "0.7", "0.8", "0.6"], ["0.8", "-0.7", "0.0", "-0.8"],
                       ["-0.6", "0.8", "1e30", "0.9"]],
               "W_K": [["0.6", "-0.8", "0.6", "-0.6"], ["0.9", "-0.9", "-0.9", "-0.4"],
                       ["-0.2", "-0.3", "0.3", "0.3"], ["-1.0", "0.1", "-1.0", "0.2"]],
               "W_V": [["0.3", "-0.8", "1.0", "0.8"], ["-0.1", "-0.2", "-0.2", "0.6"], ["1.0", "0.2", "-1.0", "-0.2"],
                       ["0.3", "0.0", "1.0", "-0.6"]]}
    status, _, err = _run(capsys, "render", _spec(tmp_path, {"sections": [section]}), "--format", "tex,md,html,json",
                          "--out", str(tmp_path / "out"))
    assert status == 0, err
    assert {p.name for p in (tmp_path / "out").iterdir()} == {"spec.tex", "spec.md", "spec.html", "spec.json",
                                                          ".symattn-sets.json"}


ROTATED_HUGE = "8.82823805705876592323616352074E-258409489985751672295471796347"  # e^{-5·10^29·√2·sin 1} / Z


def test_rope_with_a_key_of_1e30_gives_its_weight_beyond_a_decimals_exponents(tmp_path, capsys):
    section = _section(rope=True, W_K=[[1, 0], [0, "1e30"]])
    status, out, err = _run(capsys, "solve", _spec(tmp_path, {"sections": [section]}))
    assert status == 0, err
    weights = json.loads(out)["sections"][0]["queries"]["a"]["weights"]
    assert weights == ["1.00000000000000000000000000000", ROTATED_HUGE]


def test_grouped_query_with_rope_and_a_key_of_1e30(tmp_path, capsys):
    section = {"kind": "grouped_query", "tokens": ["a", "b"], "X": IDENTITY, "rope": True,
               "heads": [{"W_Q": IDENTITY}, {"W_Q": IDENTITY}],
               "kv_heads": [{"W_K": [[1, 0], [0, "1e30"]], "W_V": IDENTITY}], "W_O": IDENTITY + IDENTITY}
    path = _spec(tmp_path, {"sections": [section]})
    status, out, err = _run(capsys, "solve", path)
    assert status == 0, err
    assert ROTATED_HUGE in out
    status, _, err = _run(capsys, "render", path, "--format", "md,json", "--out", str(tmp_path / "out"))
    assert status == 0, err


def test_a_causal_mask_over_a_symbolic_x_renders(tmp_path, capsys):
    """The first token sees itself alone: its sum is numeric in a section with a symbol, and is said so."""
    path = _spec(tmp_path, {"lang": "en", "sections": [_section(X=[[1, 0], [0, "a"]], mask="causal")]})
    status, _, err = _run(capsys, "render", path, "--format", "md", "--out", str(tmp_path / "out"))
    assert status == 0, err
    text = (tmp_path / "out" / "spec.md").read_text(encoding="utf-8")
    assert "computed with the exact weights" in text and "in symbols" in text


# ---------------------------------------------------------------- item 14: claims files and text math


@pytest.mark.parametrize(("claims", "message"), [
    ('{"sections[0].Q[' + "9" * 5000 + '][0]": 1}', "an index of 5000 digits (at most 9)"),
    ('{"sections[0].Q[0][0]": 1, "sections[0].Q[0][0]": 2}', "key 'sections[0].Q[0][0]' given twice"),
    ('{"sections[0].queries[\\"\\u001b[31mX\\"].weights[0]": 1}', "expected a quoted name as JSON writes it"),
])
def test_claims_that_crashed_or_passed_silently(tmp_path, capsys, claims, message):
    status, _, err = _run(capsys, "check", "--example", "matrix", _spec(tmp_path, claims, "claims.json"))
    _one_line_error(status, err, message)
    assert len(err) < 300


def test_no_control_character_reaches_the_terminal(tmp_path, capsys):
    for key in ("\u001b[31mRED", "sections[0].Q[0][0]\u009b2J", "\u202eabc"):
        status, _, err = _run(capsys, "check", "--example", "matrix", _spec(tmp_path, {key: 1}, "claims.json"))
        assert status == 2 and err.count("\n") == 1
        assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e]", err), repr(err)
    assert "\\x1b[31mRED" in _run(capsys, "check", "--example", "matrix",
                                  _spec(tmp_path, {"\u001b[31mRED": 1}, "claims.json"))[2]


@pytest.mark.parametrize(("math", "message"), [
    ("x^2^3", "two superscripts on one base"),
    ("x_1_2", "two subscripts on one base"),
    ("x'^2'", "a prime after a superscript"),
    ("x^2'", "a prime after a superscript"),
    ("x'_1'", "a prime after a superscript"),
    ("\\sqrt[\\sqrt[3]{2}]{x}", "a root's index holds no brackets or root"),
    ("x_\\left(y\\right)", "\\left after _ needs braces"),
    ("x^\\sqrt{2}", "\\sqrt after ^ needs braces"),
    ("x^\\frac{1}{2}", "\\frac after ^ needs braces"),
])
def test_text_math_that_fails_in_html_or_pdf_is_refused_naming_the_block(tmp_path, capsys, math, message):
    spec = {"sections": [{"kind": "text", "paragraphs": ["ok", f"see ${math}$"]}]}
    status, _, err = _run(capsys, "render", _spec(tmp_path, spec), "--format", "md,html", "--out",
                          str(tmp_path / "out"))
    _one_line_error(status, err, f"error: sections[0].paragraphs[1]: {message}")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("math", ["x'^2", "x''", "x_1'", "x^2_3", "{x^2}^3", "x^{2^3}", "x_{1_2}", "x^\\alpha",
                                  "\\sum_{i}^{n} x_i", "\\sqrt[3]{x}^2", "\\left(x\\right)^2", "e^{a_j} / Z"])
def test_text_math_that_sets_everywhere_is_kept(tmp_path, capsys, math):
    spec = {"sections": [{"kind": "text", "paragraphs": [f"see ${math}$"]}]}
    status, _, err = _run(capsys, "render", _spec(tmp_path, spec), "--format", "md,html", "--out",
                          str(tmp_path / "out"))
    assert status == 0, err


# ---------------------------------------------------------------- item 16: Markdown read without a math extension


def test_markdown_math_and_tokens_make_no_live_link_and_a_pipe_shows_as_typed(tmp_path, capsys):
    markdown_it = pytest.importorskip("markdown_it")
    spec = {"lang": "en", "sections": [
        {"kind": "text", "paragraphs": ["see $![a](http://evil.example/p.png)$ and $[click](http://evil.example)$ "
                                        "and $[x][y]$"],
         "table": {"header": ["a", "b"], "rows": [["$[c](http://evil.example)$", "x"]]}},
        _section(tokens=["a|b", "[k](http://evil.example)"], focus="a|b")]}
    status, _, err = _run(capsys, "render", _spec(tmp_path, spec), "--format", "md", "--out", str(tmp_path / "out"))
    assert status == 0, err
    source = (tmp_path / "out" / "spec.md").read_text(encoding="utf-8")
    html = markdown_it.MarkdownIt("commonmark").enable("table").render(source)
    assert not re.search(r"<(a|img)\b", html), re.findall(r"<(?:a|img)\b[^>]*>", html)
    assert "<code>a|b</code>" in html and "a\\|b" not in html  # in running text and in the tables' cells alike
    assert re.search(r"<td><code>a\|b</code></td>", html)
    assert "]{}(http://evil.example" in source  # the math as KaTeX sets it: ] ( with an empty group between


# ---------------------------------------------------------------- item 19: numbers written as no digits 0-9


def test_a_json_integer_of_5000_digits_is_refused_naming_its_field(tmp_path, capsys):
    text = json.dumps({"sections": [_section()]}).replace('"W_V": [[1', '"W_V": [[' + "9" * 5000)
    status, _, err = _run(capsys, "solve", _spec(tmp_path, text))
    _one_line_error(status, err, "error: sections[0].W_V[0][0]: an integer of 5000 digits is too long (at most "
                                 "4300 digits)")


@pytest.mark.parametrize(("option", "value"), [("--count", "٤"), ("--seed", "７"), ("--count", "²"),
                                               ("--tokens", "٣"), ("--jobs", "１")])
def test_exam_options_take_ascii_digits_only(tmp_path, capsys, option, value):
    status, _, err = _run(capsys, "exam", option, value, "--format", "json", "--out", str(tmp_path / "out"))
    _one_line_error(status, err, f"error: {option}: expected a whole number written with the digits 0-9")
    assert not (tmp_path / "out").exists()
