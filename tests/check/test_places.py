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
    assert "sections[0].queries.love.output[2] (line 10:1)   0.28     0.82" in capsys.readouterr().out
