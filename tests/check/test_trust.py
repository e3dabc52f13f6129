"""check you can trust (issue 33): never "all hold" for what was not checked, rows wrong throughout reported,
numbers matched by their labels, the coverage of a document's reading first, −∞ for a masked score, and causes
that can be true."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from symattn.check import check
from symattn.check.claims import claims_of
from symattn.cli import main
from symattn.pipeline.parse import load_example

SEED = Path(__file__).parent / "data" / "seed-article.txt"
LOVE = {"0.1688": "0.2000", "0.2472": "0.2500", "0.2457": "0.2500", "0.3383": "0.3000"}


def _run(capsys, *args: str) -> tuple[int, str]:
    status = main(["check", *args])
    return status, capsys.readouterr().out


def _document(tmp_path: Path, text: str, name: str = "doc.md") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_nothing_checked_is_no_pass(tmp_path, capsys):  # item 2
    doc = _document(tmp_path, "Attention is all you need. Nothing here is a number of the derivation.\n")
    status, out = _run(capsys, "--example", "mt", "--from", doc)
    assert status == 1
    assert "nothing was checked" in out and "all hold" not in out
    status, out = _run(capsys, "--example", "mt", "--from", doc, "--json")
    report = json.loads(out)
    assert (status, report["claims"], report["passed"]) == (1, 0, False)


def test_a_row_wrong_throughout_is_reported_with_one_cause(tmp_path, capsys):  # items 1 and 4
    text = SEED.read_text(encoding="utf-8")
    for old, new in LOVE.items():
        text = text.replace(old, new)
    status, out = _run(capsys, "--example", "mt", "--from", _document(tmp_path, text, "seed.txt"), "--json")
    report = json.loads(out)
    assert status == 1 and not report["passed"]
    wrong = {w["at"]: (w["printed"], w["correct"], w["cause"]) for w in report["wrong"]}
    assert wrong == {f"sections[0].queries.love.weights[{j}]": (printed, correct, "unknown") for j, (printed, correct)
                     in enumerate((("0.2000", "0.1688"), ("0.2500", "0.2472"), ("0.2500", "0.2457"),
                                   ("0.3000", "0.3382")))}
    assert all("4 of the 4 entries of this vector are wrong" in w["explanation"] for w in report["wrong"])


def test_coverage_comes_first(capsys):  # item 16
    status, out = _run(capsys, "--example", "mt", "--from", str(SEED))
    first, second = out.splitlines()[:2]
    assert status == 1
    assert first.startswith("403 numbers read in 118 groups: ") and first.endswith(", 0 unmatched")
    assert "matched by label" in first and "given inputs" in first
    claimed = int(second.split()[0])
    assert claimed >= 95 and second == f"{claimed} numbers claimed, {claimed - 1} hold, 1 wrong"
    status, out = _run(capsys, "--example", "mt", "--from", str(SEED), "--json")
    report = json.loads(out)
    assert {"claims", "holding", "wrong"} <= set(report)  # the keys scripts read stay
    coverage = report["coverage"]
    assert coverage["read"] == 403 and coverage["unmatched"] == []
    assert coverage["by_label"] + coverage["by_value"] >= report["claims"]


def test_unmatched_numbers_fail_unless_partial(tmp_path, capsys):  # item 16
    text = SEED.read_text(encoding="utf-8") + "\nOne more vector: [9.1234, 8.5, 7.25]\n"
    doc = _document(tmp_path, text, "seed.txt")
    line = text.count("\n") + 0  # the added line, counted from 1
    status, out = _run(capsys, "--example", "mt", "--from", doc)
    assert status == 1
    assert "all hold" not in out
    assert f"unmatched: line {line}, column 18: 9.1234, 8.5, 7.25" in out
    doc = _document(tmp_path, text.replace("0.3383", "0.3382"), "fixed.txt")
    status, out = _run(capsys, "--example", "mt", "--from", doc)
    assert status == 1 and "all hold; 3 numbers read match nothing" in out
    status, out = _run(capsys, "--example", "mt", "--from", doc, "--partial")
    assert status == 0 and "match nothing (--partial)" in out and "unmatched: line" in out


def test_the_masked_minus_infinity_solve_prints(tmp_path, capsys):  # item 5
    assert main(["solve", "--example", "decoder"]) == 0
    answers = capsys.readouterr().out
    assert '"-inf"' in answers
    status, out = _run(capsys, "--example", "decoder", _document(tmp_path, answers, "answers.json"))
    assert (status, out.splitlines()[0]) == (0, "104 numbers claimed, all hold")
    spec = load_example("decoder")
    at = "sections[0].queries.私は.scaled_scores"
    for minus_infinity in ("-inf", "−inf", "−∞", "-∞"):
        assert check(spec, claims_of({f"{at}[1]": minus_infinity})).wrong == ()
    [masked_printed, visible_masked] = check(spec, claims_of({f"{at}[1]": "0.5", f"{at}[0]": "-inf"})).wrong
    assert (masked_printed.cause, masked_printed.correct) == ("mask", "-inf")
    assert visible_masked.cause == "mask" and "not masked" in visible_masked.explanation
    # in a document too: the vector with its −∞ entries is the query's scaled scores
    doc = _document(tmp_path, "The scaled scores of 機械学習:\n\n$$a = [1.4213,\\ 1.8440,\\ -\\infty,\\ −∞]$$\n")
    status, out = _run(capsys, "--example", "decoder", "--from", doc, "--partial", "--json")
    report = json.loads(out)
    assert report["claims"] == 4 and report["wrong"] == []


TUTORIAL = """## Step 2: projections

| token | Q | K | V |
|---|---|---|---|
| `I` | [1.05, 0.65] | [0.45, 0.60] | [1.10, 0.40, 0.65] |
| `love` | [0.92, 1.24] | {k_love} | [0.72, 0.96, 0.76] |

The embedding of love is $x_{{\\text{{love}}}} = {x_love}$, and its key $K_{{\\text{{love}}}} = {k_love}$.
"""


def test_matched_by_label_not_by_value(tmp_path, capsys):  # item 3
    # a wrong K row equal to love's Q row: the K column and K_love say what it is, so it is a wrong K, not Q
    doc = _document(tmp_path, TUTORIAL.format(k_love="[0.92, 1.24]", x_love="[0.8, 1.2]"))
    status, out = _run(capsys, "--example", "mt", "--from", doc, "--json")
    report = json.loads(out)
    assert status == 1
    assert [(w["at"], w["printed"], w["correct"]) for w in report["wrong"]] == [
        ("sections[0].K[1][0]", "0.92", "0.12"), ("sections[0].K[1][1]", "1.24", "1.28")]
    assert report["coverage"]["given"] == 2  # x_love, the spec's input, is not a claim on a computed quantity
    # a given input printed with the values of a computed one is not credited as that one
    doc = _document(tmp_path, TUTORIAL.format(k_love="[0.12, 1.28]", x_love="[0.92, 1.24]"))
    status, out = _run(capsys, "--example", "mt", "--from", doc, "--json")
    report = json.loads(out)
    assert status == 1 and report["wrong"] == []
    [unmatched] = report["coverage"]["unmatched"]
    assert unmatched["numbers"] == ["0.92", "1.24"] and "differs from the spec's sections[0].X[1]" in \
        unmatched["reason"]


@pytest.mark.parametrize(("example", "at", "printed", "cause"), [
    ("decoder", "sections[0].P[0][1]", "2", "unknown"),  # cos 0 = 1 exactly: nothing to round
    ("decoder", "sections[0].queries.私は.weights[0]", "0.99", "unknown"),  # the one visible key's weight is 1
    ("decoder", "sections[0].queries.私は.scores[0]", "5.2309", "typo"),  # 5.2308 exactly: a slip, not rounding
    ("mt", "sections[0].queries.love.weights[0]", "0.27", "unknown"),  # 0.17 at two decimals: chance, no typo
    ("mt", "sections[0].queries.love.weights[0]", "0.1868", "typo"),  # two digits swapped
    ("mt", "sections[0].queries.love.weights[0]", "0.1687", "rounding"),  # 0.16881532… one unit low
])
def test_causes_that_cannot_be_true(example, at, printed, cause):  # item 4
    [finding] = check(load_example(example), claims_of({at: printed})).wrong
    assert finding.cause == cause, finding.explanation
