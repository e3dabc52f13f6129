"""PDFs compiled for real (CI installs TeX Live): text, Japanese glyphs, errors, no half-written files.

These tests are never skipped: without uplatex/dvipdfmx they fail, because a PDF feature that was not
compiled was not tested.
"""

from __future__ import annotations

import shutil
import subprocess
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symattn import LatexError, derive_spec, parse_spec, render_latex
from symattn.cli import main
from symattn.render import build as build_module
from symattn.render.pdf import LatexRun, compile_pdf, log_excerpt

pytestmark = pytest.mark.pdf


def pdf_text(path) -> str:
    assert shutil.which("pdftotext"), "pdftotext (poppler-utils) is needed by the PDF tests"
    text = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, check=True).stdout
    return " ".join(text.split())


@pytest.fixture(scope="module")
def pdfs(tmp_path_factory):
    out = tmp_path_factory.mktemp("pdf")
    for lang in ("ja", "en"):
        status = main(["render", "--example", "mt", "--lang", lang, "--format", "pdf", "--out", str(out / lang)])
        assert status == 0
    return {lang: out / lang / "mt.pdf" for lang in ("ja", "en")}


def test_japanese_pdf_has_the_article_text_and_numbers(pdfs):
    text = pdf_text(pdfs["ja"])
    for phrase in ("トークン埋め込み", "私は", "Step 7: 重み付き和", "最終射影", "love", "learning"):
        assert phrase in text, phrase
    for number in ("0.92", "1.6976", "0.8188", "0.3382", "0.8933", "0.8467", "0.8742", "0.9230", "0.6962"):
        assert number in text, number
    assert pdfs["ja"].read_bytes().startswith(b"%PDF")


def test_english_pdf(pdfs):
    text = pdf_text(pdfs["en"])
    for phrase in ("Token embeddings", "Weighted sum", "Final projection", "私は"):
        assert phrase in text, phrase
    assert "トークン埋め込み" not in text


def test_latex_failure_reports_log_lines():
    broken = "\\documentclass{article}\n\\begin{document}\n\\undefinedmacro\n\\end{document}\n"
    with pytest.raises(LatexError) as caught:
        compile_pdf(broken, jobname="broken")
    message = str(caught.value)
    assert "Undefined control sequence" in message and "\n" not in message


def test_latex_failure_leaves_no_pdf(tmp_path, capsys, monkeypatch):
    broken = "\\documentclass{article}\\begin{document}\\undefinedmacro\\end{document}"
    original = build_module.text_renderer
    monkeypatch.setattr(build_module, "text_renderer",
                        lambda fmt: (lambda derivation, **settings: broken) if fmt == "tex" else original(fmt))
    status = main(["render", "--example", "mt", "--format", "pdf", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert status == 2 and "Undefined control sequence" in err
    assert not any(p.suffix == ".pdf" or p.name.startswith(".") for p in tmp_path.iterdir())


def test_shell_escape_and_file_reading_are_off():
    # \write18 would run a shell command with shell escape on; \input of an absolute path needs openin_any=a.
    probe = ("\\documentclass{article}\\begin{document}\\immediate\\write18{touch pwned}"
             "\\input{/etc/hostname}\\end{document}")
    with pytest.raises(LatexError) as caught:
        compile_pdf(probe, jobname="probe")
    assert "hostname" in str(caught.value)


def test_latex_started_early_stops_when_no_document_comes():
    """The command line starts upLaTeX before the document exists. When symattn fails or is killed, TeX sees the
    end of its standard input and stops at once rather than waiting for ever; closing the run deletes its
    folder."""
    with LatexRun() as run:
        run._process.stdin.close()  # what TeX sees when symattn dies
        assert run._process.wait(timeout=120) != 0
        assert not list(run.folder.glob("*.dvi"))
    assert not run.folder.exists()
    with LatexRun() as run:  # leaving the block without a document (an error in Python) ends TeX too
        pass
    assert run._process.returncode is not None and not run.folder.exists()


def test_the_pages_written_are_counted_while_latex_runs(tmp_path):
    """The progress display is told how many pages TeX has written: a count that only grows, ending with every
    page of the PDF."""
    source = r"\documentclass{article}\begin{document}" + r"page\newpage " * 40 + r"last\end{document}"
    seen: list[int] = []
    with LatexRun() as run:
        (tmp_path / "pages.pdf").write_bytes(run.finish(source, on_page=seen.append)[0])
    info = subprocess.run(["pdfinfo", str(tmp_path / "pages.pdf")], capture_output=True, text=True, check=True)
    assert "Pages:           41" in info.stdout
    assert seen == sorted(seen) and seen[-1] == 41


def test_log_excerpt_picks_error_lines():
    log = "This is LuaTeX\n(./a.tex\n! Undefined control sequence.\nl.3 \\foo\n\nmore\n"
    assert log_excerpt(log) == "! Undefined control sequence. | l.3 \\foo"


NASTY = r"\input{/etc/hostname}}$%#&_^~\directlua{tex.print(42*1000+7)}"


def test_user_text_appears_literally_and_is_never_executed(tmp_path):
    hostname = open("/etc/hostname", encoding="utf-8").read().strip()
    spec = tmp_path / "nasty.toml"
    spec.write_text(
        f"title = '''{NASTY}'''\n[[sections]]\nkind = 'self_attention'\n"
        f"tokens = ['''{NASTY}''', 'b&c', '私は']\nX = [[1, 0], [0, 1], [1, 1]]\n"
        "W_Q = [[1, 0], [0, 1]]\nW_K = [[1, 0], [0, 1]]\nW_V = [[1], [2]]\nfocus = 'b&c'\n",
        encoding="utf-8",
    )
    assert main(["render", str(spec), "--lang", "en", "--format", "pdf", "--out", str(tmp_path)]) == 0
    text = pdf_text(tmp_path / "nasty.pdf").replace(" ", "").replace("-", "")  # no spaces, no hyphenation
    assert "directlua{tex.print(42*1000+7)}" in text and "42007" not in text  # printed, never run
    assert r"\input{/etc/hostname}" in text
    if len(hostname) > 6:
        assert hostname not in text
    assert "b&c" in text and "私は" in text


entries = st.sampled_from(["0", "1", "-1", "0.5", "-0.25", "1.2", "2", "1/3", "-2/7", "0.125", "3"])
names = st.sampled_from(["I", "love", "私は", "猫", "a_b", "x^2", "50%", "#1", "{", "~"])


@st.composite
def random_specs(draw):
    def matrix(rows, cols):
        return [[draw(entries) for _ in range(cols)] for _ in range(rows)]

    def tokens(count):
        return draw(st.lists(names, min_size=count, max_size=count, unique=True))

    sections = []
    for kind in draw(st.lists(st.sampled_from(["self_attention", "cross_attention", "multi_head"]),
                              min_size=1, max_size=2)):
        n, d, d_k, d_v = (draw(st.integers(1, 3)) for _ in range(4))
        scale = draw(st.sampled_from([True, False, "2", "0.5"]))
        if kind == "self_attention":
            section = {"tokens": tokens(n), "X": draw(st.sampled_from([matrix(n, d), "symbolic"])),
                       "W_Q": matrix(d, d_k), "W_K": matrix(d, d_k), "W_V": matrix(d, d_v), "scale": scale}
        elif kind == "cross_attention":
            m = draw(st.integers(1, 3))
            section = {"tokens": tokens(n), "X": matrix(n, d), "memory_tokens": tokens(m), "memory": matrix(m, d),
                       "W_Q": matrix(d, d_k), "W_K": matrix(d, d_k), "W_V": matrix(d, d_v), "scale": scale}
        else:
            heads = [{"output": [draw(entries) for _ in range(d_v)]} for _ in range(n)]
            section = {"focus": "z", "heads": heads, "W_O": matrix(n * d_v, d)}
        sections.append({"kind": kind, **section})
    return {"title": draw(names), "digits": draw(st.integers(0, 6)), "sections": sections}


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(random_specs(), st.sampled_from(["ja", "en"]), st.booleans())
def test_random_specs_compile(tmp_path, data, lang, exact):
    derivation = derive_spec(parse_spec(data), lang=lang)
    pdf = compile_pdf(render_latex(derivation, exact=exact), jobname="random")
    assert pdf.startswith(b"%PDF")


@pytest.mark.parametrize(("example", "lang", "exact"), [("mt", "ja", False), ("mt", "en", True),
                                                         ("matrix", "ja", True), ("symbolic", "en", False),
                                                         ("decoder", "ja", True)])
def test_nothing_runs_off_the_page(example, lang, exact):
    from symattn.pipeline.derive import derive
    from symattn.render.pdf import compile_with_log, overfull_boxes

    _, log = compile_with_log(render_latex(derive(example, lang=lang), exact=exact), jobname=example)
    assert overfull_boxes(log) == []


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_thirty_digits_with_exact_forms_stay_on_the_page(lang):
    """--example decoder --digits 30 --exact ran 117 pt off the page: quotients and weights put their results on
    lines of their own, long products break after a dot, powers e^{x} stand right of the alignment."""
    from symattn.pipeline.derive import derive
    from symattn.render.pdf import compile_with_log, overfull_boxes

    _, log = compile_with_log(render_latex(derive("decoder", lang=lang, digits=30), exact=True), jobname="d30")
    assert overfull_boxes(log) == []


def test_long_token_names_and_fractions_stay_on_the_page():
    from symattn.render.pdf import compile_with_log, overfull_boxes

    spec = parse_spec({"sections": [{
        "kind": "self_attention", "tokens": ["internationalization", "トランスフォーマー", "c"],
        "X": [["1/3", "-2/7", "5/9", "-1/11"], ["0.125", "-1.5", "2.25", "1/6"], ["-3", "1/7", "0.5", "2"]],
        "W_Q": [["1/3", "0.2", "-0.7", "5/7"], ["0.1", "-1/9", "0.4", "0.3"], ["-0.6", "0.5", "2/3", "-0.2"],
                ["0.9", "-0.4", "0.1", "1/13"]],
        "W_K": [["-1/3", "0.3", "0.7", "2/7"], ["0.5", "1/9", "-0.4", "0.3"], ["0.6", "-0.5", "1/3", "0.2"],
                ["-0.9", "0.4", "0.15", "3/13"]],
        "W_V": [["1", "1/3", "-1", "0.5"], ["0.5", "-0.25", "2/3", "1"], ["-1", "0", "1", "1/7"],
                ["0.3", "0.3", "-0.3", "0.3"]],
        "focus": "all"}]})
    for exact in (False, True):
        _, log = compile_with_log(render_latex(derive_spec(spec, lang="ja"), exact=exact), jobname="long")
        assert overfull_boxes(log) == []


COMBINED = {"title": "masked, encoded, multi-head", "sections": [
    {"kind": "self_attention", "tokens": ["私は", "猫", "が好き"],
     "X": [["0.8", "1.5"], ["1.1", "0.4"], ["0.3", "0.9"]],
     "W_Q": [["0.9", "0.2"], ["0.3", "0.8"]], "W_K": [["0.5", "0.1"], ["-0.4", "1.1"]],
     "W_V": [["1.1", "0.0"], ["-0.2", "0.9"]], "mask": "causal", "positional_encoding": "sinusoidal",
     "focus": "all"},
    {"kind": "multi_head", "focus": "猫", "tokens": ["私は", "猫", "が好き"],
     "X": [["0.8", "1.5", "0.2", "1"], ["1.1", "0.4", "-0.5", "0"], ["0.3", "0.9", "1", "0.5"]],
     "heads": [{"W_Q": [["1", "0"], ["0", "1"], ["0.5", "0"], ["0", "0.5"]],
                "W_K": [["0", "1"], ["1", "0"], ["0", "0.5"], ["0.5", "0"]],
                "W_V": [["1", "0"], ["0", "1"], ["1", "0"], ["0", "1"]]},
               {"W_Q": [["0.2", "0"], ["0", "0.2"], ["1", "0"], ["0", "1"]],
                "W_K": [["1", "1"], ["0", "1"], ["1", "0"], ["0", "0"]],
                "W_V": [["0", "1"], ["1", "0"], ["0", "1"], ["1", "0"]]}],
     "W_O": [["0.5", "0", "0", "0"], ["0", "0.5", "0", "0"], ["0", "0", "0.5", "0"], ["0", "0", "0", "0.5"]]},
]}


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_mask_positions_and_computed_heads_in_every_format(tmp_path, lang):
    import json

    spec_file, out = tmp_path / "combined.json", tmp_path / "out"  # an output folder apart from the input
    spec_file.write_text(json.dumps(COMBINED, ensure_ascii=False), encoding="utf-8")
    assert main(["render", str(spec_file), "--lang", lang, "--format", "tex,pdf,md,html,json",
                 "--out", str(out)]) == 0
    text = pdf_text(out / "combined.pdf")
    assert "私は" in text and "−∞" in text.replace("-∞", "−∞")
    for name in ("combined.tex", "combined.md", "combined.html", "combined.json"):
        assert (out / name).stat().st_size > 1000
    data = json.loads((out / "combined.json").read_text(encoding="utf-8"))
    heads = data["sections"][1]["head_details"]
    assert len(heads) == 2 and all(h is not None for h in heads)


def test_a_matrix_wider_than_ten_columns_compiles():
    """amsmath refuses a matrix wider than MaxMatrixCols (10 unless the preamble raises it)."""
    from symattn.render.pdf import compile_with_log

    ones = [["1"] * 12 for _ in range(12)]
    spec = parse_spec({"sections": [{"kind": "self_attention", "tokens": ["a", "b"], "X": [["1"] * 12, ["0"] * 12],
                                     "W_Q": ones, "W_K": ones, "W_V": ones, "focus": "matrix"}]})
    latex = render_latex(derive_spec(spec, lang="en"))
    assert r"\setcounter{MaxMatrixCols}{12}" in latex
    compile_with_log(latex, jobname="wide")


def test_a_16_token_handout_stays_on_the_page():
    """focus = "matrix" gives a 16-token, d = 16 handout of the matrix form only; its wide matrices are split
    into labelled column blocks and its heatmap is scaled down, and nothing runs off the page."""
    import random

    from symattn.document.steps import DotProducts, MatrixFormStep, RowTimesMatrix
    from symattn.render.answers import answers
    from symattn.render.pdf import compile_with_log, overfull_boxes

    rng = random.Random(16)

    def matrix() -> list[list[str]]:
        return [[f"{rng.randint(-2000, 2000) / 100}" for _ in range(16)] for _ in range(16)]

    data = {"sections": [{"kind": "self_attention", "tokens": [f"w{i}" for i in range(16)], "X": matrix(),
                          "W_Q": matrix(), "W_K": matrix(), "W_V": matrix(), "focus": "matrix"}]}
    derivation = derive_spec(parse_spec(data), lang="en")
    kinds = {type(step) for step in derivation.steps}
    assert MatrixFormStep in kinds and not kinds & {DotProducts, RowTimesMatrix}
    everything = derive_spec(parse_spec({"sections": [{**data["sections"][0], "focus": "all"}]}), lang="en")
    assert answers(derivation) == answers(everything)  # the same answers, without the token-by-token pages
    latex = render_latex(derivation)
    assert "(columns 1–" in latex and r"\resizebox{\linewidth}" in latex
    assert r"\begin{align*}" in latex  # the tall derivations of a 16 × 16 matrix may break across pages
    _, log = compile_with_log(latex, jobname="wide")
    assert overfull_boxes(log) == []


def test_a_24_token_matrix_form_is_shown_in_bands_that_fit_the_page():
    """24 rows are more than one bmatrix may hold on a page: the matrix form shows each matrix in bands of rows
    (and blocks of columns), and nothing runs past the page's foot or side."""
    from symattn.render.pdf import compile_with_log, overfull_boxes

    def matrix(rows: int, cols: int) -> list[list[str]]:
        return [[f"{(7 * r + 3 * c) % 19 - 9}.{(r * c) % 10}" for c in range(cols)] for r in range(rows)]

    spec = parse_spec({"sections": [{"kind": "self_attention", "tokens": [f"t{i}" for i in range(24)],
                                     "X": matrix(24, 2), "W_Q": matrix(2, 2), "W_K": matrix(2, 2),
                                     "W_V": matrix(2, 2), "focus": "matrix"}]})
    latex = render_latex(derive_spec(spec, lang="ja"))
    assert "（第 13〜24 行、第 1〜" in latex
    _, log = compile_with_log(latex, jobname="tall")
    assert overfull_boxes(log) == []


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_any_unicode_in_token_names_gives_a_pdf(tmp_path, lang):
    """Letters LaTeX's tables lack, signs upLaTeX does not know, characters no font of the document has: a PDF (a
    glyph no font has is an empty box), never a LaTeX error. (Invisible format characters are refused in names.)"""
    from symattn.render.pdf import compile_with_log

    tokens = ["tiếng", "e\u0301t\u00e9", "ħ", "a∑b", "😀", "가", "Việt", "ǎ"]
    spec = parse_spec({"sections": [{"kind": "self_attention", "tokens": tokens,
                                     "X": [[str(i % 3), "1"] for i in range(len(tokens))],
                                     "W_Q": [["1", "0"], ["0", "1"]], "W_K": [["1", "0"], ["0", "1"]],
                                     "W_V": [["1", "0"], ["0", "1"]], "focus": "tiếng"}]})
    pdf, _ = compile_with_log(render_latex(derive_spec(spec, lang=lang)), jobname="unicode")
    (tmp_path / "unicode.pdf").write_bytes(pdf)
    text = unicodedata.normalize("NFC", pdf_text(tmp_path / "unicode.pdf"))  # pdftotext writes ế decomposed
    assert "tiếng" in text and "été" in text and "∑" in text


def test_english_documents_set_japanese_greek_punctuation_and_signs(tmp_path):
    """upLaTeX sets a Japanese or Greek token name in an English document from the Japanese font; the dashes,
    quotes and signs of English text (which upLaTeX would count as Japanese, full width) come out as Latin
    Modern's and math's, and nothing goes missing."""
    from symattn.render.pdf import compile_with_log

    spec = parse_spec({"title": "Attention – “worked” … −∞ ≈ 0, x ≤ y, z · W", "sections": [{
        "kind": "self_attention", "tokens": ["the", "猫", "α"],
        "X": [["1", "0.5"], ["0.8", "1.2"], ["-0.3", "0.7"]],
        "W_Q": [["1", "0"], ["0", "1"]], "W_K": [["0.5", "1"], ["1", "0.5"]], "W_V": [["1", "1"], ["0", "1"]]}]})
    pdf, log = compile_with_log(render_latex(derive_spec(spec, lang="en")), jobname="latin")
    assert "Missing character" not in log and "not set up for use with LaTeX" not in log
    (tmp_path / "latin.pdf").write_bytes(pdf)
    text = pdf_text(tmp_path / "latin.pdf")
    assert "猫" in text and "α" in text
    assert "Attention–“worked”...−∞≈0,x≤y,z·W" in "".join(text.split())
