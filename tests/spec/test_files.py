"""Spec parsing: the built-in example, exact numbers, one-line errors naming the field."""

from __future__ import annotations

import copy
import json

import pytest
from sympy import Rational

from symattn import SpecError
from symattn.pipeline.parse import load_example, load_spec, parse_spec
from symattn.spec.files import example_text, read_spec_text


def test_mt_example_is_exact(mt):
    self_attention, cross, multi = (section for section in mt.sections if section.kind != "text")
    assert [section.kind for section in mt.sections].count("text") == 9  # the article's structure around them
    assert self_attention.X.values[1, 0] == Rational(4, 5)
    assert self_attention.W_K.values[1, 0] == Rational(-3, 10)
    assert cross.X.decimals == 3 and cross.memory.decimals == 3
    assert multi.W_O.decimals == 2
    assert self_attention.d_k == 2 and self_attention.focus.tokens == ("love",)
    assert cross.focus.tokens == ("私は",)
    assert mt.lang == "ja" and mt.digits == 4


def test_json_and_toml_read_the_same():
    data = read_spec_text(example_text("mt"), "toml", "mt")
    as_json = json.dumps(data, default=str, ensure_ascii=False)
    assert parse_spec(read_spec_text(as_json, "json", "mt.json")) == load_example("mt").__class__(
        **{**load_example("mt").__dict__, "name": "spec"})


BASE = {"sections": [{"kind": "self_attention", "tokens": ["a", "b"], "X": [["1", "0"], ["0", "1"]],
                      "W_Q": [["1", "0"], ["0", "1"]], "W_K": [["1", "0"], ["0", "1"]],
                      "W_V": [["1"], ["1"]], "focus": "a"}]}


def broken(path: str, value):
    data = copy.deepcopy(BASE)
    *parents, last = path.split(".")
    target = data["sections"][0]
    for key in parents:
        target = target[key]
    if value is KeyError:
        del target[last]
    else:
        target[last] = value
    return data


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("kind", "self_atention",
         "sections[0].kind: unknown section kind 'self_atention' (did you mean 'self_attention'?)"),
        ("W_k", [["1"]], "sections[0].W_k: unknown key (did you mean 'W_K'?)"),
        ("X", [["1", "0"], ["1"]], "sections[0].X[1]: 1 entries, but row 0 has 2 (ragged matrix)"),
        ("X", [], "sections[0].X: expected a non-empty list of rows"),
        ("W_K", [["1", "0"], ["0", "1"], ["1", "1"]], "sections[0].W_K: 3 rows, but there are 2 X columns"),
        ("W_Q", [["1"], ["0.5.1"]], "sections[0].W_Q[1][0]: expected a number such as 0.8, -1.25 or 1/3, got '0.5.1'"),
        ("tokens", ["a", "a"], "sections[0].tokens[1]: duplicate token 'a'"),
        ("focus", "c", "sections[0].focus: no token 'c' in tokens"),
        ("d_k", 0, "sections[0].d_k: expected a positive whole number, got 0"),
        ("W_Q", KeyError, "sections[0].W_Q: missing"),
    ],
)
def test_errors_name_the_field(path, value, message):
    with pytest.raises(SpecError) as caught:
        parse_spec(broken(path, value))
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_heads_must_match_W_O():
    data = {"sections": [{"kind": "multi_head", "focus": "a", "heads": [{"output": ["1", "2"]}],
                          "W_O": [["1"], ["1"], ["1"]]}]}
    with pytest.raises(SpecError, match=r"sections\[0\].W_O: 3 rows, but the concatenated heads have 2 entries"):
        parse_spec(data)


def test_unparsable_file(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("title = \n", encoding="utf-8")
    with pytest.raises(SpecError, match="not valid TOML"):
        load_spec(bad)
    nan = tmp_path / "nan.json"
    nan.write_text('{"sections": [], "digits": NaN}', encoding="utf-8")
    with pytest.raises(SpecError, match="NaN is not a number"):
        load_spec(nan)


@pytest.mark.parametrize(("text", "message"), [
    ("digits = 3\ndigits = 4\n", "not valid TOML: Cannot overwrite a value"),
    ("x = " + "[" * 50_000 + "]" * 50_000 + "\n", "nested too deeply"),
    ("digits = " + "1" * 5000 + "\n", "a number is too long"),
])
def test_toml_refuses_duplicate_keys_deep_nesting_and_long_numbers(text, message):
    with pytest.raises(SpecError, match=message):
        read_spec_text(text, "toml", "s.toml")


def test_names_are_nfc_and_focus_finds_them():
    data = broken("tokens", ["e\u0301", "b"])
    data["sections"][0]["focus"] = "e\u0301"
    section = parse_spec(data).sections[0]
    assert section.tokens == ("\u00e9", "b") and section.focus.tokens == ("\u00e9",)


@pytest.mark.parametrize("command", [["render", "--example", "mt", "--format", "tex"], ["exam", "--format", "tex"]])
@pytest.mark.parametrize("digits", ["\u00b2", "\u0664", "31", "1" * 5000])
def test_digits_on_the_command_line_are_ascii(tmp_path, capsys, command, digits):
    from symattn.cli import main

    assert main([*command, "--out", str(tmp_path / "out"), "--digits", digits]) == 2
    assert capsys.readouterr().err.startswith("symattn: error: --digits: expected a whole number")
    assert not (tmp_path / "out").exists()
