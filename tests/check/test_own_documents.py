"""A document symattn itself wrote checks back as all-hold (issue 33): every number it prints, intermediates included
(a LayerNorm's u − μ, a table of μ, σ², σ, a ranking table, the unrotated query, ALiBi's bias matrix, a window's
0/1 mask, a wrapped line's {-}), is matched to its quantity, in Markdown, LaTeX and HTML; and a wrong one among
them is still reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from symattn.cli import main

CLAIMS = {("layer", "md"): 376, ("layer", "tex"): 376, ("layer", "html"): 376, ("modern", "md"): 122,
          ("modern", "tex"): 106, ("modern", "html"): 120, ("decoder", "md"): 136, ("decoder", "tex"): 148,
          ("decoder", "html"): 139, ("alibi_heads", "tex"): 128, ("sliding_window", "md"): 78}


def _rendered(tmp_path: Path, example: str, fmt: str, lang: str = "ja") -> Path:
    assert main(["render", "--example", example, "--lang", lang, "--format", fmt, "--out", str(tmp_path)]) == 0
    return tmp_path / f"{example}.{fmt}"


def _check(capsys, example: str, path: Path) -> tuple[int, dict]:
    capsys.readouterr()
    status = main(["check", "--example", example, "--from", str(path), "--json"])
    return status, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(("example", "fmt"), sorted(CLAIMS))
def test_own_document_checks_as_all_hold(tmp_path, capsys, example, fmt):
    status, report = _check(capsys, example, _rendered(tmp_path, example, fmt))
    assert (status, report["passed"], report["wrong"], report["coverage"]["unmatched"]) == (0, True, [], [])
    assert report["claims"] == CLAIMS[example, fmt]


def test_own_english_layer_checks_as_all_hold(tmp_path, capsys):
    status, report = _check(capsys, "layer", _rendered(tmp_path, "layer", "md", "en"))
    assert (status, report["claims"], report["coverage"]["unmatched"]) == (0, 376, [])


def test_a_wrong_intermediate_of_an_own_document_is_reported(tmp_path, capsys):
    path = _rendered(tmp_path, "layer", "md")
    text = path.read_text(encoding="utf-8")
    # the FFN input's row, kept whole on its lead's line with its product's operator on the next (no own document
    # wraps a row mid-vector any more, so none starts a continued line with a braced sign {-})
    operand = "0.0644,\\  -1.1369] \\\\\n&\\qquad \\cdot"
    assert text.count("&= [1.408475,") == 1 and text.count(operand) == 1
    # love's centred first entry (u − μ) and the sign of the FFN input's last entry
    path.write_text(text.replace("&= [1.408475,", "&= [1.418475,").replace(operand, operand.replace("-1.1369", "1.1369")),
                    encoding="utf-8")
    status, report = _check(capsys, "layer", path)
    wrong = {(w["at"], w["printed"], w["correct"]) for w in report["wrong"]}
    assert status == 1 and ("sections[1].rows.love.centered[0]", "1.418475", "1.408475") in wrong
    assert {(at, printed, correct) for at, printed, correct in wrong if printed == "1.1369"} == {
        ("sections[1].rows.love.output[3]", "1.1369", "-1.1369")}
