"""`symattn worksheet`: the chosen stages' results as boxes sized to their numbers, formulas and given values kept,
the key filled in; sentences that give a blank away only in the key; stages declared by each kind; one-line errors;
--versions redrawn in the spec's own style, the same seed giving the same files."""

from __future__ import annotations

import re

import pytest

from symattn import derive, examples
from symattn.cli import main
from symattn.kinds import kind_of
from symattn.pipeline.parse import load_example
from symattn.worksheet.sheet import worksheet
from symattn.worksheet.stages import declared


def write(tmp_path, *options: str) -> dict[str, str]:
    assert main(["worksheet", *options, "--out", str(tmp_path)]) == 0
    return {path.name: path.read_text(encoding="utf-8") for path in tmp_path.glob("*.tex")}


def test_mt_worksheet_boxes_the_chosen_stages_and_keeps_the_rest(tmp_path):
    files = write(tmp_path, "--example", "mt", "--blanks", "scores,weights,output", "--lang", "en",
                  "--format", "tex")
    sheet, key = files["mt-worksheet.tex"], files["mt-worksheet-key.tex"]
    # the raw scores of love: boxes as wide as 1.158 and 1.6976, with their products kept
    assert r"0.92 \cdot 0.45 + 1.24 \cdot 0.60 = \wsblank{1.158}" in sheet
    assert r"0.92 \cdot 0.45 + 1.24 \cdot 0.60 = \wsfilled{1.158}" in key
    assert r"\wsblank{1.6976}" in sheet and r"\wsfilled{1.6976}" in key
    # a later line that uses a blank shows it as the same box: a_I = s_I / √2 ≈ 0.8188, the scaling given
    assert re.search(r"\\frac\{\\wsblank\{1\.158\}\}\{\\sqrt\{2\}\} \\approx 0\.8188", sheet)
    # the weights and the output: boxes; the weighted sum's products use the boxed weights
    assert r"\wsblank{0.3382}" in sheet and r"\wsblank{0.8933}" in sheet
    assert r"\wsblank{0.1688} \cdot 1.10" in sheet
    # its lines are the output's entries, counted from 1 as every vector's entries are (z_1, z_2)
    assert r"z_{1} &\approx \wsblank{0.1688} \cdot 1.10" in sheet and "z_{0}" not in sheet
    assert r"\wsblank{" not in key and sheet.count(r"\wsblank{") == key.count(r"\wsfilled{")
    # given values and formulas stay: the projection of love, W_Q, the values v_j
    assert r"{q}_{\mathrm{love}} &= [0.92,\  1.24]" in sheet and "1.0 & 0.2" in sheet
    # a sentence giving the largest weight away, and the heatmap, only in the key
    assert "attends most to" in key and "attends most to" not in sheet
    assert r"\heatcells{{\tok" in key and r"\heatcells{{\tok" not in sheet
    assert "Heatmap of the attention weights" not in sheet  # (its heading and sentence go with it)
    assert "Worksheet: I love machine learning" in sheet and "(answer key)" in key


def test_the_pdfs_in_both_languages(tmp_path):
    assert main(["worksheet", "--example", "mt", "--blanks", "scores", "--lang", "ja,en", "--out",
                 str(tmp_path)]) == 0
    names = sorted(path.name for path in tmp_path.iterdir())
    assert names == ["mt-worksheet-en.pdf", "mt-worksheet-ja.pdf", "mt-worksheet-key-en.pdf",
                     "mt-worksheet-key-ja.pdf"]
    assert all((tmp_path / name).read_bytes()[:5] == b"%PDF-" for name in names)


@pytest.mark.parametrize("example", examples.names())
def test_every_kind_declares_stages_a_worksheet_blanks(example):
    spec = load_example(example)
    stages = declared(spec)
    sheets = worksheet(derive(example, lang="en"), frozenset(stages))
    found = {b.stage for b in sheets.blanks}
    assert found and found <= set(stages)
    for section in spec.sections:  # every kind's own names: attention's six, the norms', the FFN's, ...
        assert set(kind_of(section.kind).stages) <= set(stages)
    assert all(b.text for b in sheets.blanks)


def test_stage_names_of_the_kinds():
    assert kind_of("self_attention").stages == ("qkv", "scores", "scaled", "exp", "weights", "output")
    assert kind_of("feed_forward").stages == ("hidden", "activation", "output")
    assert kind_of("add_norm").stages == ("sum", "mean", "variance", "normalised", "output")
    assert kind_of("norm").stages == ("mean", "variance", "normalised", "output")
    assert kind_of("next_token").stages == ("logits", "probabilities")


def test_layer_blanks_its_norm_and_ffn_stages():
    sheets = worksheet(derive("layer", lang="en"), frozenset({"mean", "activation", "probabilities"}))
    assert {b.stage for b in sheets.blanks} == {"mean", "activation", "probabilities"}


@pytest.mark.parametrize("blanks, message", [
    ("score", "--blanks: unknown stage 'score' (this spec's stages: qkv, scores, scaled, exp, weights, output, "
              "or all)"),
    ("", "--blanks: expected stage names or all"),
])
def test_an_unknown_stage_is_a_one_line_error_and_nothing_is_written(tmp_path, capsys, blanks, message):
    out = tmp_path / "out"
    assert main(["worksheet", "--example", "mt", "--blanks", blanks, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not out.exists()


def test_other_errors(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["worksheet", "--example", "mt", "--blanks", "all", "--versions", "0", "--out", str(out)]) == 2
    assert "--versions: expected a whole number from 1 to 100, got 0" in capsys.readouterr().err
    assert main(["worksheet", "--example", "mt", "--blanks", "all", "--format", "docx", "--out", str(out)]) == 2
    assert "unknown format 'docx'" in capsys.readouterr().err
    assert main(["worksheet", "--blanks", "all", "--out", str(out)]) == 2
    assert "give either a SPEC file or --example NAME" in capsys.readouterr().err
    assert not out.exists()


def test_versions_are_redrawn_in_the_specs_style_and_repeatable(tmp_path):
    first = write(tmp_path / "a", "--example", "mt", "--blanks", "weights", "--versions", "3", "--seed", "7",
                  "--lang", "en", "--format", "tex")
    again = write(tmp_path / "b", "--example", "mt", "--blanks", "weights", "--versions", "3", "--seed", "7",
                  "--lang", "en", "--format", "tex")
    assert first == again and sorted(first) == [f"mt-worksheet{k}-0{n}.tex" for k in ("", "-key") for n in (1, 2, 3)]
    assert "Version 2" in first["mt-worksheet-02.tex"]
    other = write(tmp_path / "c", "--example", "mt", "--blanks", "weights", "--versions", "1", "--seed", "8",
                  "--lang", "en", "--format", "tex")
    assert other["mt-worksheet-01.tex"] != first["mt-worksheet-01.tex"]


def test_a_version_keeps_shapes_decimals_and_ranges():
    from symattn.pipeline.parse import example_data
    from symattn.worksheet.versions import redrawn

    original = load_example("mt").sections
    for version in redrawn(example_data("mt"), "mt", 4, 3):
        for given, drawn in zip(original, version.sections, strict=True):
            assert type(given) is type(drawn)
            if hasattr(given, "X") and hasattr(given.X, "values"):
                assert drawn.X.values.shape == given.X.values.shape and drawn.X.written == given.X.written
                assert min(drawn.X.values) >= min(given.X.values) and max(drawn.X.values) <= max(given.X.values)
        attention = [s for s in version.sections if type(s).__name__ == "SelfAttentionSpec"][0]
        assert attention.X.values != original[[type(s).__name__ for s in original].index("SelfAttentionSpec")].X.values


def _referenced(recipe) -> list[int]:
    if not recipe:
        return []
    if "exp" in recipe:
        return [recipe["exp"]]
    operands = [o for term in recipe["terms"] for o in term] + ([recipe["divisor"]] if recipe["divisor"] else [])
    return [o["b"] for o in operands if "b" in o]


@pytest.mark.parametrize("example", [name for name in examples.names() if name != "symbolic"])
def test_every_examples_self_check_page_has_an_input_per_blank_checked_from_earlier_ones(example):
    import json

    from symattn.worksheet.page import self_check_page

    sheets = worksheet(derive(example, lang="ja"), frozenset(declared(load_example(example))))
    html = self_check_page(sheets)
    checks = json.loads(html.split('id="checks">')[1].split("</script>")[0])["blanks"]
    assert [b["n"] for b in checks] == list(range(1, len(sheets.blanks) + 1))
    assert all(f'id="b{b["n"]}"' in html for b in checks)
    assert all(all(0 < n < b["n"] for n in _referenced(b["from"])) for b in checks)
    assert "自習用" in html and "<script>" in html


def test_a_symbolic_spec_has_no_self_check_page(tmp_path, capsys):
    assert main(["worksheet", "--example", "symbolic", "--blanks", "all", "--format", "pdf,html",
                 "--out", str(tmp_path / "out")]) == 2
    assert "the self-check page checks numbers" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_the_matrix_form_showing_blanked_weights_is_only_in_the_key():
    sheets = worksheet(derive("matrix", lang="en"), frozenset({"weights"}))
    kinds = lambda derivation: {type(step).__name__ for step in derivation.steps}  # noqa: E731
    assert "MatrixFormStep" in kinds(sheets.key) and "MatrixFormStep" not in kinds(sheets.worksheet)
    assert "Heatmap" in kinds(sheets.key) and "Heatmap" not in kinds(sheets.worksheet)
