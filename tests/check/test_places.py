"""Each wrong number of a document with its place (issue 33 item 17): the line and column it was read at and the
text of its line, in the table and in --json."""

from __future__ import annotations

import json

from symattn.cli import main

DOC = """# Attention for love

The weights of love:

| key | I | love | machine | learning |
|---|---|---|---|---|
| weight | 0.1688 | 0.2472 | 0.2457 | 0.3383 |

$$z_{\\text{love}} = [0.89, 0.93,
0.82]$$
"""


def test_a_number_printed_twice_is_placed_where_it_is_wrong(tmp_path, capsys):
    # love's output printed right in a table, then with a slip further down: the slip's own line is named
    doc = tmp_path / "doc.md"
    doc.write_text("| token | output |\n|---|---|\n| love | [0.89, 0.93, 0.82] |\n\nAgain:\n\n"
                   "$$z_{\\text{love}} = [0.89, 0.39, 0.82]$$\n", encoding="utf-8")
    assert main(["check", "--example", "mt", "--from", str(doc), "--json"]) == 1
    [wrong] = json.loads(capsys.readouterr().out)["wrong"]
    assert (wrong["at"], wrong["printed"], wrong["line"], wrong["column"]) == (
        "sections[0].queries.love.output[1]", "0.39", 7, 28)


def test_all_hold_says_what_it_did_not_check(tmp_path, capsys):
    # the operands of arithmetic written out are read but not recomputed: "all hold" says so
    doc = tmp_path / "doc.md"
    doc.write_text("$$z_{\\text{love}} = [0.89, 0.93, 0.82]$$\n\n$$[1.0 \\cdot 0.5,\\ 2.0 \\cdot 0.25]$$\n",
                   encoding="utf-8")
    assert main(["check", "--example", "mt", "--from", str(doc)]) == 0
    assert capsys.readouterr().out.splitlines()[1] == (
        "3 numbers claimed, all hold (the 4 numbers of arithmetic written out are not checked)")


def test_a_wrong_number_is_reported_with_its_line_and_column(tmp_path, capsys):
    doc = tmp_path / "doc.md"
    doc.write_text(DOC.replace("0.82]", "0.28]"), encoding="utf-8")
    status = main(["check", "--example", "mt", "--from", str(doc), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert status == 1 and report["claims"] == 7
    # the seed's renormalised 0.3383 in its table cell, and the swapped digits on the vector's second line
    assert [(w["at"], w["printed"], w["correct"], w["cause"], w["line"], w["column"], w["text"])
            for w in report["wrong"]] == [
        ("sections[0].queries.love.weights[3]", "0.3383", "0.3382", "renormalised", 7, 39,
         "| weight | 0.1688 | 0.2472 | 0.2457 | 0.3383 |"),
        ("sections[0].queries.love.output[2]", "0.28", "0.82", "typo", 10, 1, "0.28]$$")]
    assert main(["check", "--example", "mt", "--from", str(doc)]) == 1
    out = capsys.readouterr().out
    assert "sections[0].queries.love.output[2] (line 10:1)   0.28     0.82" in out
