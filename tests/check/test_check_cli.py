"""symattn check on the command line: the seed article's erratum from its claims, the JSON keys, exit statuses,
and bad claims refused with one line (exit 2)."""

from __future__ import annotations

import json

import pytest

from symattn.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_the_seed_articles_one_erratum_from_its_claims(capsys):
    status, out, err = run(capsys, "check", "--example", "mt", "--claims", "article", "--json")
    report = json.loads(out)
    assert status == 1 and err == ""
    assert set(report) == {"claims", "holding", "wrong", "passed"}  # a claims file: no coverage
    assert report["passed"] is False
    assert report["claims"] == 101 and report["holding"] == 100
    [wrong] = report["wrong"]
    assert set(wrong) == {"at", "printed", "correct", "cause", "explanation"}
    assert (wrong["at"], wrong["printed"], wrong["correct"], wrong["cause"]) == (
        "sections[0].queries.love.weights[3]", "0.3383", "0.3382", "renormalised")


def test_the_table_names_the_erratum(capsys):
    status, out, _ = run(capsys, "check", "--example", "mt", "--claims", "article")
    assert status == 1
    assert out.splitlines()[0] == "101 numbers claimed, 100 hold, 1 wrong"
    assert "sections[0].queries.love.weights[3]  0.3383   0.3382   renormalised" in out


def _write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_both_shapes_and_both_formats(tmp_path, capsys):
    flat = _write(tmp_path, "flat.toml", '"sections[0].queries.love.weights" = ["0.1688", "0.2472", "null", "0.3382"]\n'
                                         '"sections[1].queries.私は.output" = ["0.847", "0.887", "0.577"]\n')
    nested = _write(tmp_path, "nested.json", json.dumps(
        {"sections": [{"queries": {"love": {"weights": ["0.17", "0.25", "0.25", "0.34"]}}}, {},
                      {"output": [0.8742, "0.9230", None]}]}))
    for path, claims in ((flat, 6), (nested, 6)):
        status, out, _ = run(capsys, "check", "--example", "mt", path, "--json")
        assert (status, json.loads(out)) == (0, {"claims": claims, "holding": claims, "wrong": [], "passed": True})


def test_printed_digits_decide_the_precision(tmp_path, capsys):
    # 0.1688 holds at 4 decimals; "0.169" and "1.688e-01" claim 3 and 4 decimals; "0.17" holds, "0.1689" does not
    path = _write(tmp_path, "c.toml", '"sections[0].queries.love.weights" = ["1.688e-01", "0.247", 0.2457, "0.3381"]\n')
    status, out, _ = run(capsys, "check", "--example", "mt", path, "--json")
    report = json.loads(out)
    assert status == 1 and report["holding"] == 3
    assert [(w["printed"], w["correct"], w["cause"]) for w in report["wrong"]] == [("0.3381", "0.3382", "rounding")]
    path = _write(tmp_path, "e.toml", '"sections[0].queries.love.weights[0]" = "1.698e-01"\n')
    status, out, _ = run(capsys, "check", "--example", "mt", path, "--json")
    [wrong] = json.loads(out)["wrong"]
    assert (wrong["correct"], wrong["cause"]) == ("1.688e-01", "typo")


@pytest.mark.parametrize(("text", "message"), [
    ('"sections[0].queries.lov.weights" = ["0.1"]', "sections[0].queries.lov.weights[0]: no such quantity 'lov'"),
    ('"sections[0].queries.love.weights" = ["0.1", "0.2", "0.3", "0.4", "0.5"]',
     "sections[0].queries.love.weights[4]: sections[0].queries.love.weights[4]: no such entry"),
    ('"sections[0].queries.love.weights" = "0.1"', "sections[0].queries.love.weights: the shape differs"),
    ('"sections[9].Q" = [["1"]]', "sections[9].Q[0][0]: sections[9]: no such entry"),
    ('"sections[0].Q" = [["one"]]', "sections[0].Q[0][0]: expected a number as printed"),
    ('"sections(0)" = 1', "sections(0): expected a path"),
    ('"sections[0].exact.Q[0][0]" = "1"', "sections[0].exact.Q[0][0]: this answer is not a number"),
    ('"" = "1"', "claims: expected a path"),
    ('"sections[0].Q[0][0]" = "1e-999999"', "sections[0].Q[0][0]: expected a number printed to at most 60"),
    ('"sections[0].Q[0][0]" = "' + "1" * 500 + '"', "sections[0].Q[0][0]: expected a number as printed, of at most"),
])
def test_bad_claims_are_one_line_errors(tmp_path, capsys, text, message):
    path = _write(tmp_path, "bad.toml", text + "\n")
    status, out, err = run(capsys, "check", "--example", "mt", path)
    assert status == 2 and out == ""
    assert err.startswith(f"symattn: error: {message}") and err.count("\n") == 1


def test_usage_errors(tmp_path, capsys):
    for argv in (["check", "--example", "mt"], ["check", "--claims", "article"],
                 ["check", "--example", "mt", "--claims", "none"]):
        status, _, err = run(capsys, *argv)
        assert status == 2 and err.count("\n") == 1, argv


def test_quoted_token_names(tmp_path, capsys):
    spec = _write(tmp_path, "s.toml", 'title = "q"\n[[sections]]\nkind = "self_attention"\ntokens = ["Fine.", "ok"]\n'
                                      'X = [[1, 0], [0, 1]]\nW_Q = [[1, 0], [0, 1]]\nW_K = [[1, 0], [0, 1]]\n'
                                      'W_V = [[1, 0], [0, 1]]\nfocus = "Fine."\nscale = false\n')
    claims = _write(tmp_path, "c.toml", "'sections[0].queries[\"Fine.\"].scores' = [\"1\", \"0\"]\n"
                                        "'sections[0].queries[\"Fine.\"].weights' = [\"0.7311\", \"0.2689\"]\n")
    status, out, _ = run(capsys, "check", spec, claims, "--json")
    assert (status, json.loads(out)["holding"]) == (0, 4)


def test_the_report_as_markdown(tmp_path, capsys):
    status, _, err = run(capsys, "check", "--example", "mt", "--claims", "article", "--format", "md",
                         "--out", str(tmp_path))
    text = (tmp_path / "mt-check.md").read_text(encoding="utf-8")
    assert status == 1 and f"wrote {tmp_path / 'mt-check.md'}" in err
    assert "| sections\\[0\\] (self\\_attention) | love: weights\\[3\\] | 0\\.3383 | 0\\.3382 | renormalised |" in text
    # the correct derivation of the wrong line's section follows, with the correct weight; not the other sections
    assert "\\approx [0.1688,\\  0.2472,\\  0.2457,\\  0.3382]" in text
    assert "私は" not in text


def test_a_bad_report_format_writes_nothing(tmp_path, capsys):
    status, out, err = run(capsys, "check", "--example", "mt", "--claims", "article", "--format", "docx",
                           "--out", str(tmp_path))
    assert status == 2 and out == "" and "--format: unknown format 'docx'" in err and not any(tmp_path.iterdir())


@pytest.mark.pdf
def test_the_report_as_pdf(tmp_path, capsys):
    import shutil

    if shutil.which("uplatex") is None:
        pytest.skip("no TeX")
    status, _, _ = run(capsys, "check", "--example", "mt", "--claims", "article", "--format", "pdf",
                       "--out", str(tmp_path))
    assert status == 1 and (tmp_path / "mt-check.pdf").read_bytes().startswith(b"%PDF")


def test_a_number_where_the_mask_hides_the_key(tmp_path, capsys):
    claims = '"sections[0].queries.が.scaled_scores" = ["0.7352", "1.0650", "0.6491", "0.5"]\n'
    path = _write(tmp_path, "m.toml", claims)
    status, out, _ = run(capsys, "check", "--example", "decoder", path, "--json")
    assert status == 1
    assert [(w["at"], w["correct"], w["cause"]) for w in json.loads(out)["wrong"]] == [
        ("sections[0].queries.が.scaled_scores[3]", "-inf", "mask")]


def test_a_claim_of_many_decimals_is_compared(tmp_path, capsys):
    """29 decimals and more (Decimal's default context has 28 digits): compared, not a traceback."""
    claim = '"sections[0].queries.love.weights[0]" = "0.16880000000000000000000000000001"\n'
    path = _write(tmp_path, "long.toml", claim)
    status, out, _ = run(capsys, "check", "--example", "mt", path, "--json")
    assert status == 1 and json.loads(out)["claims"] == 1


def test_the_report_never_overwrites_an_input(tmp_path, capsys):
    """The report mt-check.md read back with --from into the same folder: refused (exit 2), the input unchanged."""
    out = tmp_path / "R"
    assert run(capsys, "check", "--example", "mt", "--claims", "article", "--format", "md", "--out", str(out))[0] == 1
    report = out / "mt-check.md"
    before = report.read_bytes()
    status, _, err = run(capsys, "check", "--example", "mt", "--from", str(report), "--format", "md", "--out", str(out))
    assert status == 2 and "--out: would overwrite the input" in err and report.read_bytes() == before


def test_claims_nested_too_deep_are_one_line_errors(tmp_path, capsys):
    path = _write(tmp_path, "deep.toml", '"sections[0].Q" = ' + "[" * 2000 + "]" * 2000 + "\n")
    status, _, err = run(capsys, "check", "--example", "mt", path)
    assert status == 2 and err.endswith("deep.toml: nested too deep: no answer of solve is\n") and err.count("\n") == 1
