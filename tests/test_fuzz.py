"""A seeded fuzz of every input a user hands symattn (issue 30): specs (solve, render), text blocks, exam.json
(grade), claims (check), response sheets in symattn's and Moodle's format (grade) and class lists (exam
--students), each mutated at random from a valid one. Every run is a result or a one-line error
with exit status 2, never a traceback and never past 20 s. Each target runs for a few seconds (the whole test
well under a minute); a failure names the case's seed, which replays it alone (`_case(target, seed)`)."""

from __future__ import annotations

import copy
import csv
import io
import json
import random
import re
import signal
import time
from decimal import Decimal

import pytest

from symattn import examples
from symattn.cli import main

SEED = 20261203
BUDGET = 8.0  # seconds per target
AT_LEAST = 12  # cases per target, however slow the machine
CASE_LIMIT = 20  # seconds a single case may take
_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e]")

# Values a careless or hostile user writes where another was expected.
HOSTILE = [None, True, 0, -1, 10**9, "", " ", "0", "-0", "1e30", "1e-60", "1e999", "NaN", "inf", "1/0", "1/3",
           "٤", "７", "²", "\u200b", "\u202eab", "a\x1bb", "\x00", "x" * 300, "=cmd|' /C calc'!A0",
           "<img src=x onerror=alert(1)>", "\\input{/etc/passwd}", "\\def\\x{\\x}\\x", "$x^2^3$", "[a](b)", "a|b",
           [], {}, [[]], [[1, 2], [3]], [["a"]], {"a": 1}, "9" * 60, -(10**40), Decimal("0.1"), 1.5]


class _Timeout(BaseException):
    """A case past CASE_LIMIT (a BaseException: main() passes it on as it would a hang's interruption)."""


def _on_alarm(signum, frame):
    raise _Timeout()


def _plain(value):
    """Parsed TOML (Decimals) as JSON-able data: numbers as their text, exactly."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return str(value) if isinstance(value, Decimal) else value


def _nodes(data, path=()):
    """Every (path, value) of a document, its root included."""
    yield path, data
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for key, value in items:
        yield from _nodes(value, (*path, key))


def _mutate(rng: random.Random, data):
    """One to three random edits: a value replaced by a hostile one, a key dropped or added, a list grown or
    emptied, a number made huge or tiny, a level nested deeper."""
    data = copy.deepcopy(data)
    for _ in range(rng.randint(1, 3)):
        nodes = list(_nodes(data))
        path, value = rng.choice(nodes[1:] or nodes)
        parent = data
        for key in path[:-1]:
            parent = parent[key]
        if not path:
            continue
        key = path[-1]
        op = rng.random()
        if op < 0.45:
            parent[key] = copy.deepcopy(rng.choice(HOSTILE))
        elif op < 0.55 and isinstance(parent, dict):
            del parent[key]
        elif op < 0.62 and isinstance(parent, dict):
            extra = rng.choice(["W_k", "extra", "kind", "rope", "mask", "focus", "scale", "carry"])
            parent[extra] = rng.choice(HOSTILE)
        elif op < 0.72 and isinstance(value, list) and value:
            value.extend(copy.deepcopy(value[: rng.randint(1, len(value))]))
        elif op < 0.8 and isinstance(value, (str, int)) and not isinstance(value, bool):
            parent[key] = rng.choice(["1e30", "-1e30", "1e-30", "123456789012345678901234567890.5", "1/7"])
        elif op < 0.88:
            nested = value
            for _ in range(rng.randint(1, 30)):
                nested = [nested]
            parent[key] = nested
        elif isinstance(value, list):
            parent[key] = []
        else:
            parent[key] = str(value) + rng.choice(["x", "\x07", "}", "$", "\\", "{", "'", '"'])
    return data


def _text_mutation(rng: random.Random, text: str) -> str:
    """Raw-text damage: a cut, a character inserted, a key given twice, a 5,000-digit integer."""
    op = rng.random()
    at = rng.randrange(len(text) + 1)
    if op < 0.3:
        return text[:at]
    if op < 0.6:
        return text[:at] + rng.choice(['"', "{", "[", ",", "\\", "\x00", "9" * 5000, "٤"]) + text[at:]
    if op < 0.8 and text.startswith("{"):
        key = rng.choice(re.findall(r'"([^"\\]+)":', text) or ["sections"])
        return '{"' + key + '": 0, ' + text[1:]
    return text[:at] + "[" * 2000 + "]" * 2000 + text[at:]


def _run(capsys, argv, allowed=(0, 2)):
    """main(argv) within CASE_LIMIT: (status, stderr), with the outcome asserted."""
    capsys.readouterr()
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, CASE_LIMIT)
    try:
        status = main(argv)
    except _Timeout:
        pytest.fail(f"{argv[0]} took more than {CASE_LIMIT} s")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    err = capsys.readouterr().err
    assert status in allowed, err
    if status == 2:
        assert err.startswith("symattn: error: ") and err.count("\n") == 1, err
    assert not _CONTROL.search(err), repr(err)
    return status, err


def _fuzz(target, capsys, tmp_path):
    """Cases of `target` (a function of rng, folder, capsys) for BUDGET seconds, and at least AT_LEAST of them."""
    started, seed = time.perf_counter(), 0
    while seed < AT_LEAST or time.perf_counter() - started < BUDGET:
        folder = tmp_path / f"{target.__name__}-{seed}"
        folder.mkdir()
        try:
            target(random.Random(f"{SEED}-{target.__name__}-{seed}"), folder, capsys)
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise AssertionError(f"{target.__name__} case seed {seed}: {exc}") from exc
        seed += 1
    return seed


# ---------------------------------------------------------------- the targets

_EXAMPLES = ("matrix", "mt", "sliding_window", "symbolic", "modern", "alibi_heads", "decoder")


def _example_data(name: str) -> dict:
    import tomllib

    return _plain(tomllib.loads(examples.source(name), parse_float=Decimal))


def spec_case(rng, folder, capsys):
    data = _mutate(rng, _example_data(rng.choice(_EXAMPLES)))
    text = json.dumps(data, ensure_ascii=False, default=str)
    if rng.random() < 0.25:
        text = _text_mutation(rng, text)
    path = folder / "spec.json"
    path.write_text(text, encoding="utf-8")
    if rng.random() < 0.3:
        _run(capsys, ["render", str(path), "--format", "md,json", "--out", str(folder / "out")])
    else:
        _run(capsys, ["solve", str(path)])


_MATH_PIECES = ["x", "2", "^", "_", "'", "{", "}", "[", "]", "(", ")", "\\frac", "\\sqrt", "\\left(", "\\right)",
                "\\text{a}", "\\alpha", "\\input", "\\def", "|", "<", "!", "=", " ", "\\,", "\\{", "%", "&", "é",
                "$", "\\$", "\\"]


def text_case(rng, folder, capsys):
    def sentence():
        pieces = [rng.choice(["Word ", "<b>", "*a*", "| ", "[x](y) ", "é ", "\\input{f} "])]
        for _ in range(rng.randint(0, 3)):
            pieces.append("$" + "".join(rng.choice(_MATH_PIECES) for _ in range(rng.randint(1, 8))) + "$ ")
        return "".join(pieces)
    section = {"kind": "text", "paragraphs": [sentence() for _ in range(rng.randint(1, 3))]}
    if rng.random() < 0.5:
        section["table"] = {"header": [sentence(), "b"], "rows": [[sentence(), sentence()]]}
    if rng.random() < 0.3:
        section["heading"] = {"ja": sentence(), "en": sentence()}
    path = folder / "spec.json"
    path.write_text(json.dumps({"sections": [section]}, ensure_ascii=False), encoding="utf-8")
    _run(capsys, ["render", str(path), "--format", "md,html", "--out", str(folder / "out")])


@pytest.fixture(scope="module")
def made_exams(tmp_path_factory):
    """exam.json of two versions of self-attention and of multi-head attention, and a correct responses row."""
    made = []
    for kind in ("self_attention", "multi_head"):
        folder = tmp_path_factory.mktemp(kind)
        assert main(["exam", "--count", "2", "--kind", kind, "--lang", "en", "--format", "json", "--out",
                     str(folder)]) == 0
        made.append(json.loads((folder / "exam.json").read_text(encoding="utf-8")))
    return made


def _exam_case(made):
    def exam_case(rng, folder, capsys):
        data = rng.choice(made)
        ids = [(b["id"], b["answer"]) for p in data["versions"][0]["parts"] for b in p["blanks"]]
        tampered = _mutate(rng, data)
        text = json.dumps(tampered, ensure_ascii=False, default=str)
        if rng.random() < 0.2:
            text = _text_mutation(rng, text)
        (folder / "exam.json").write_text(text, encoding="utf-8")
        # the responses stay plain (typed answers and names are fuzzed with grading's own tests): the exam.json varies
        answers = [answer[:6] if rng.random() < 0.8 else rng.choice(["", "x", "0.5"]) for _, answer in ids]
        with (folder / "r.csv").open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["student", "version", *(i for i, _ in ids)])
            writer.writerow([rng.choice(["Ann", "=1+1"]), rng.choice(["01", "1", "v01", "02"]), *answers])
        _run(capsys, ["grade", str(folder / "exam.json"), str(folder / "r.csv"), "--out", str(folder / "out"),
                      "--format", "md"])
    return exam_case


@pytest.fixture(scope="module")
def matrix_answers():
    import io
    from contextlib import redirect_stdout

    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["solve", "--example", "matrix"]) == 0
    return json.loads(out.getvalue())


def _claims_case(answers):
    paths = [("sections[0].Q[0][0]", answers["sections"][0]["Q"][0][0]),
             ("sections[0].K[1][1]", answers["sections"][0]["K"][1][1])]
    for token, query in answers["sections"][0]["queries"].items():
        paths.append((f"sections[0].queries.{token}.weights[0]", query["weights"][0][:6]))

    def claims_case(rng, folder, capsys):
        claims = {}
        for path, value in rng.sample(paths, rng.randint(1, len(paths))):
            if rng.random() < 0.4:
                at = rng.randrange(len(path) + 1)
                path = path[:at] + rng.choice(["[", "]", '["\\u001b"]', "[" + "9" * 50 + "]", ".", "\x9b", '"',
                                              "[-1]", "[0][0][0]"]) + path[at:]
            claims[path] = rng.choice(HOSTILE) if rng.random() < 0.3 else value
        text = json.dumps(_plain(claims), ensure_ascii=False, default=str)
        if rng.random() < 0.3:
            text = _text_mutation(rng, text)
        suffix = rng.choice([".json", ".json", ".toml"])
        (folder / f"claims{suffix}").write_text(text, encoding="utf-8")
        _run(capsys, ["check", "--example", "matrix", str(folder / f"claims{suffix}")], allowed=(0, 1, 2))
    return claims_case


# Cells a student, a spreadsheet or Moodle puts in a response sheet or a class list.
ANSWERS = ["0.5", " 0.5 ", "0,5", ".5", "-0", "1/2", "½", "0.12345678901234567890123456789",
           "3.00000000000000000000000000000", "0." + "0" * 10000 + "1", "9e999", "-9e999", "1e20", "1e-60", "NaN",
           "-inf", "0x1", "1_000", "٤", "７", "²", "", " ", "n/a", "0.5\n0.6", '"', "=1+1", "\x00", "\x1b[2J"]
NAMES = ["Ann", "Wei Wang", "Wei Wang", "é", "e\u0301", "\u200b", "\u202eab", "a\x07b", "a\x00b", "\x1b[31mred",
         "x" * 100_000, "محمد", "דוד", "=HYPERLINK(\"http://x\")", "+cmd", "@SUM(A1)", "<script>alert(1)</script>",
         "\\def\\x{\\x}\\x", "\\input{/etc/passwd}", "$x^2$", "[a](http://x)", "", " ", "a,b", 'a"b', "a\nb"]
VERSIONS = ["01", "1", "v01", "Version 02", "02", "2", "03", "²", "٤", "9" * 5000, "", "-1", "0x1", "1.0", "=1"]


def _cell(rng: random.Random, choices: list[str], plain: str) -> str:
    return rng.choice(choices) if rng.random() < 0.3 else plain


def _csv_text(rng: random.Random, rows: list[list[str]]) -> str:
    """rows as CSV, then perhaps damaged: a row cut, a column dropped or doubled, a stray quote, a BOM, CR line
    ends, a cell past the header, or raw-text damage."""
    rows = [list(r) for r in rows]
    op = rng.random()
    if op < 0.1 and len(rows) > 1:
        rows[rng.randrange(1, len(rows))] = rows[-1][: rng.randrange(len(rows[-1]) + 1)]
    elif op < 0.2:
        k = rng.randrange(len(rows[0]))
        rows = [r[:k] + r[k + 1:] for r in rows]
    elif op < 0.3:
        k = rng.randrange(len(rows[0]))
        rows = [r + r[k:k + 1] for r in rows]
    elif op < 0.35:
        rows.append(list(rows[-1]))  # a student twice
    elif op < 0.4:
        rows[-1].append("stray")
    out = io.StringIO()
    csv.writer(out, lineterminator=rng.choice(["\n", "\r\n", "\r"])).writerows(rows)
    text = out.getvalue()
    if rng.random() < 0.15:
        text = "\ufeff" + text
    if rng.random() < 0.15:
        text = _text_mutation(rng, text)
    return text


def _responses_case(made):
    """grade with a response sheet in symattn's format, its cells and its shape fuzzed (exam.json stays valid)."""
    def responses_case(rng, folder, capsys):
        data = rng.choice(made)
        (folder / "exam.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        ids = [b["id"] for v in data["versions"] for p in v["parts"] for b in p["blanks"]]
        answers = {b["id"]: b["answer"][:6] for v in data["versions"] for p in v["parts"] for b in p["blanks"]}
        rows = [["student", "version", *ids]]
        for k in range(rng.randint(1, 4)):
            label = data["versions"][k % len(data["versions"])]["label"]
            rows.append([_cell(rng, NAMES, f"S{k}"), _cell(rng, VERSIONS, label),
                         *(_cell(rng, ANSWERS, answers[i]) for i in ids)])
        (folder / "r.csv").write_text(_csv_text(rng, rows), encoding="utf-8", newline="")
        _run(capsys, ["grade", str(folder / "exam.json"), str(folder / "r.csv"), "--out", str(folder / "out"),
                      "--format", "md"])
    return responses_case


def _moodle_case(made):
    """grade with Moodle's quiz Responses report: names, identities, cloze summaries and right answers fuzzed."""
    def moodle_case(rng, folder, capsys):
        data = rng.choice(made)
        (folder / "exam.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        header = ["Last name", "First name", rng.choice(["ID number", "Email address", "Username", "Group"]),
                  "Status", "Grade/20.00", "Response 1", *(["Right answer 1"] if rng.random() < 0.9 else [])]
        rows = [header]
        for k in range(rng.randint(1, 4)):
            version = data["versions"][k % len(data["versions"])]
            values = [b["answer"] for p in version["parts"] for b in p["blanks"]]
            typed = [_cell(rng, ANSWERS, value[:6]) for value in values]
            if rng.random() < 0.2:
                typed = typed[: rng.randrange(len(typed) + 1)]
            summary = "; ".join(f"part {i}: {v}" for i, v in enumerate(typed, start=1))
            right = "; ".join(f"part {i}: {_cell(rng, ANSWERS, v)}" for i, v in enumerate(values, start=1))
            rows.append([_cell(rng, NAMES, f"L{k}"), _cell(rng, NAMES, f"F{k}"), _cell(rng, NAMES, f"s{k}"),
                         "Finished", "10.00", rng.choice([summary] * 8 + ["-", "", "part 2: 1", "x" * 300]),
                         right][:len(header)])
        (folder / "m.csv").write_text(_csv_text(rng, rows), encoding="utf-8", newline="")
        _run(capsys, ["grade", str(folder / "exam.json"), str(folder / "m.csv"), "--out", str(folder / "out"),
                      "--format", "md"])
    return moodle_case


def students_case(rng, folder, capsys):
    """exam --students with a class list fuzzed: ids, names, the header, the CSV itself."""
    header = rng.choice([["id", "name"]] * 4 + [["name", "id"], ["ID", "Name", "email"], ["id"], ["id", "name", "name"]])
    rows = [header]
    for k in range(rng.randint(1, 4)):
        cells = {"id": _cell(rng, NAMES + VERSIONS, f"s{k}"), "name": _cell(rng, NAMES, f"Student {k}")}
        rows.append([cells.get(column.lower(), "x@example.org") for column in header])
    (folder / "class.csv").write_text(_csv_text(rng, rows), encoding="utf-8", newline="")
    _run(capsys, ["exam", "--students", str(folder / "class.csv"), "--lang", "en", "--format", "json,tex",
                  "--out", str(folder / "out")])


def test_fuzz_specs_text_exams_and_claims(tmp_path, capsys, made_exams, matrix_answers):
    counts = {target.__name__: _fuzz(target, capsys, tmp_path)
              for target in (spec_case, text_case, _exam_case(made_exams), _claims_case(matrix_answers))}
    assert all(n >= AT_LEAST for n in counts.values()), counts


def test_fuzz_response_sheets_and_class_lists(tmp_path, capsys, made_exams):
    counts = {target.__name__: _fuzz(target, capsys, tmp_path)
              for target in (_responses_case(made_exams), _moodle_case(made_exams), students_case)}
    assert all(n >= AT_LEAST for n in counts.values()), counts
