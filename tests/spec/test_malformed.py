"""A corpus of malformed specs, made from valid ones by systematic mutations, each run through `symattn render`
and `symattn solve` (cli.main in-process): exit status 2, one line `symattn: error: FIELD: ...` naming the field,
nothing written, no traceback, quickly."""

from __future__ import annotations

import copy
import json
import time

import pytest

from symattn import parse_spec
from symattn.cli import main

I2 = [["1", "0"], ["0", "1"]]
SELF = {"kind": "self_attention", "tokens": ["a", "b"], "X": I2, "W_Q": I2, "W_K": I2, "W_V": [["1"], ["2"]],
        "focus": "a", "scale": True, "mask": "causal", "positional_encoding": "sinusoidal"}
CROSS = {"kind": "cross_attention", "tokens": ["a"], "X": [["1", "2"]], "memory_tokens": ["m", "n"], "memory": I2,
         "W_Q": I2, "W_K": I2, "W_V": I2, "focus": "a"}
MULTI = {"kind": "multi_head", "tokens": ["a", "b"], "X": I2, "focus": "a",
         "heads": [{"W_Q": I2, "W_K": I2, "W_V": [["1"], ["0"]]}, {"W_Q": I2, "W_K": I2, "W_V": [["0"], ["1"]]}],
         "W_O": [["1", "0"], ["0", "1"]]}
BASE = {"title": "t", "lang": "en", "digits": 3, "sections": [SELF, CROSS, MULTI]}

# Values that no field takes, whatever its type.
BAD = [{}, True, None, [], [[{}]], "", -1, "x\x07"]
TEXT_BAD = ["a\x00", "\x01", "\x07", "b\x0b", "\x1b[31m", "\x7f", "x\u200by", "\ufeffa", " a", "a ", "\u3000",
            "\u2028", "a\nb"]


def mutations() -> list[tuple[str, object, str]]:
    """(id, spec document or raw JSON text, the field the error must name)."""
    cases: list[tuple[str, object, str]] = []

    def put(case_id: str, where: str, key: str, value: object, field: str | None = None) -> None:
        data = copy.deepcopy(BASE)
        target = data if where == "" else data["sections"][int(where)]
        if value is KeyError:
            del target[key]
        else:
            target[key] = value
        prefix = f"sections[{where}]." if where else ""
        cases.append((case_id, data, field or f"{prefix}{key}"))

    for s, section in enumerate(BASE["sections"]):
        for key in section:
            for b, value in enumerate(BAD):
                if key == "scale" and value is True:  # the one value of BAD that a field takes
                    continue
                put(f"{section['kind']}-{key}-bad{b}", str(s), key, value)
        for key in ("tokens", "X", "W_Q", "W_K", "W_V", "memory", "memory_tokens", "heads", "W_O", "focus"):
            optional = ("tokens", "X") if section["kind"] == "multi_head" else ("focus",)
            if key in section and key not in optional:
                put(f"{section['kind']}-{key}-missing", str(s), key, KeyError)
        put(f"{section['kind']}-unknown-key", str(s), "W_k", I2)
        put(f"{section['kind']}-escaped-key", str(s), "a\nb", 1, f"sections[{s}].'a\\nb'")
        if "tokens" in section:
            for t, text in enumerate(TEXT_BAD):
                put(f"{section['kind']}-token-text{t}", str(s), "tokens", [section["tokens"][0], text],
                    f"sections[{s}].tokens[1]")
            put(f"{section['kind']}-token-nfc-duplicate", str(s), "tokens", ["\u00e9", "e\u0301"],
                f"sections[{s}].tokens[1]")
            put(f"{section['kind']}-X-ragged", str(s), "X", [["1", "0"], ["1"]], f"sections[{s}].X[1]")
            put(f"{section['kind']}-X-rows", str(s), "X", [["1", "0"]] * 3, f"sections[{s}].X")
            put(f"{section['kind']}-X-empty-row", str(s), "X", [[], []], f"sections[{s}].X[0]")
    for t, text in enumerate(TEXT_BAD):
        put(f"cross-memory-token-text{t}", "1", "memory_tokens", ["m", text], "sections[1].memory_tokens[1]")
        put(f"title-text{t}", "", "title", text)
    for key, value in [("mask", [["1", "0"]]), ("mask", [["1", "2"], ["1", "1"]]), ("mask", [["0", "0"], ["1", "1"]]),
                       ("mask", "causl"), ("positional_encoding", "cosine"), ("P", [["1", "0"]]),
                       ("scale", "0"), ("scale", "-2"), ("d_k", "2"), ("d_k", 0), ("d_v", 3), ("d_model", 10**9),
                       ("W_K", [["1", "0", "0"], ["0", "1", "0"]]), ("W_V", [["1"], ["1"], ["1"]]),
                       ("focus", "c"), ("focus", ["a", "c"]), ("X", "symbolic\x00"), ("X", [["1", "nan"], I2[1]]),
                       ("X", [["1", "1/0"], I2[1]])]:
        field = {"mask": "sections[0].mask", "X": "sections[0].X"}.get(key, f"sections[0].{key}")
        put(f"self-{key}-{value!r}", "0", key, value, field)
    for h, head in enumerate([{}, {"output": ["1"], "W_Q": I2}, {"W_Q": I2}, {"W_Q": I2, "W_K": I2, "W_V": "x"},
                              {"output": [["1", {}]]}, {"W_Q": I2, "W_K": [["1"]], "W_V": I2}, "head", ["1"]]):
        put(f"multi-head{h}", "2", "heads", [head], "sections[2].heads[0]")
    put("multi-W_O-rows", "2", "W_O", [["1", "0"]], "sections[2].W_O")
    put("multi-focus-outside", "2", "focus", "z", "sections[2].focus")
    for key, value in [("lang", "fr"), ("lang", ["en"]), ("digits", "\u00b2"), ("digits", "\u0664"), ("digits", 31),
                       ("digits", "1" * 5000), ("sections", []), ("sections", {}), ("sections", ["x"]),
                       ("titel", "t")]:
        put(f"top-{key}-{value!r:.20}", "", key, value)
    for kind in (["self_attention"], {}, "self_atention", 3):
        put(f"kind-{kind!r}", "0", "kind", kind)
    deep: object = "1"
    for _ in range(40):
        deep = [deep]
    put("nested-in-X", "0", "X", deep, "sections[0].X")
    text = json.dumps(BASE)
    cases += [
        ("json-duplicate-key", text.replace('"digits": 3', '"digits": 3, "digits": 4'), "{spec}: key 'digits'"),
        ("json-duplicate-inner-key", text.replace('"focus": "a"', '"focus": "a", "focus": "b"', 1),
         "{spec}: key 'focus'"),
        ("json-deep", '{"sections": ' + "[" * 100_000 + "]" * 100_000 + "}", "{spec}"),
        ("json-surrogate-title", text.replace('"title": "t"', '"title": "\\ud800"'), "title"),
        ("json-surrogate-token", text.replace('["a", "b"]', '["a", "\\udfff"]', 1), "sections[0].tokens[1]"),
        ("json-long-int", text.replace('"digits": 3', '"digits": ' + "1" * 5000),
         "digits: an integer of 5000 digits is too long (at most 4300 digits)"),
        ("json-invalid", text[:-1], "{spec}: not valid JSON"),
        ("json-top-list", "[]", "{spec}"),
        ("json-nan", text.replace('"digits": 3', '"digits": NaN'), "{spec}"),
    ]
    return cases


CASES = mutations()


def test_the_base_spec_is_valid():
    assert len(parse_spec(copy.deepcopy(BASE)).sections) == 3


def test_the_corpus_is_large():
    assert len(CASES) >= 150
    assert len({case_id for case_id, _, _ in CASES}) == len(CASES)


@pytest.mark.parametrize(("data", "field"), [(data, field) for _, data, field in CASES],
                         ids=[case_id for case_id, _, _ in CASES])
def test_malformed_spec_gives_one_line_naming_the_field(tmp_path, capsys, data, field):
    spec = tmp_path / "spec.json"
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    spec.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    for argv in (["render", str(spec), "--format", "tex,md,html,json", "--out", str(out)], ["solve", str(spec)]):
        started = time.perf_counter()
        status = main(argv)
        elapsed = time.perf_counter() - started
        captured = capsys.readouterr()
        lines = captured.err.splitlines()
        assert status == 2, captured.err
        assert len(lines) == 1, captured.err
        assert lines[0].startswith(f"symattn: error: {field.replace('{spec}', str(spec))}"), lines[0]
        assert "Traceback" not in captured.err and captured.out == ""
        assert not out.exists() or not any(out.iterdir())
        assert elapsed < 5, f"{argv[0]} took {elapsed:.1f} s"
