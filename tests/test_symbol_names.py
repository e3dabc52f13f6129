"""A name written in a spec prints as written: `pi` is the letters p, i (\\mathit{pi}), not π; `xddot` is not ẍ,
`Alpha` not a roman A. One-letter names and their subscripts print as before (a, b_{1}, x_{2})."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from symattn.cli import main

NAMES = ["pi", "alpha", "Alpha", "xddot", "lambda", "theta1", "hbar", "beta_k"]
LATEX = {"pi": r"\mathit{pi}", "alpha": r"\mathit{alpha}", "Alpha": r"\mathit{Alpha}", "xddot": r"\mathit{xddot}",
         "lambda": r"\mathit{lambda}", "theta1": r"\mathit{theta}_{1}", "hbar": r"\mathit{hbar}",
         "beta_k": r"\mathit{beta}_{k}", "a": "a", "b1": "b_{1}", "x_2": "x_{2}"}
# what SymPy's printer would have made of these names
SYMBOLS = [r"\pi", r"\alpha", r"\mathrm{A}", r"\ddot", r"\lambda", r"\theta", r"\hbar", r"\beta"]
GREEK = "παΑẍλθℏβ"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("names")
    spec = folder / "names.json"
    spec.write_text(json.dumps({"title": "Names", "lang": "en", "sections": [{
        "kind": "self_attention", "tokens": ["u", "v"],
        "X": [["pi", "alpha"], ["Alpha", "xddot"]], "W_Q": [["lambda", 0], [0, "theta1"]],
        "W_K": [["hbar", 0], [0, "a"]], "W_V": [["beta_k", 0], ["b1", "x_2"]]}]}), encoding="utf-8")
    assert main(["render", str(spec), "--format", "tex,md,html,json", "--out", str(folder / "out")]) == 0
    return {path.suffix[1:]: path.read_text(encoding="utf-8") for path in (folder / "out").iterdir()
            if not path.name.startswith(".")}  # (the folder's manifest aside)


@pytest.mark.parametrize("fmt", ["tex", "md", "json"])
def test_names_print_as_written_in_latex(rendered, fmt):
    text = rendered[fmt] if fmt != "json" else json.dumps(json.loads(rendered[fmt])["sections"], ensure_ascii=False)
    text = text.replace("\\\\", "\\") if fmt == "json" else text
    if fmt == "tex":  # the body: the English preamble maps typed Greek letters to \pi and the others
        text = text[text.index("\\begin{document}"):]
    for name, latex in LATEX.items():
        assert latex in text, name
    for symbol in SYMBOLS:
        assert symbol not in text, symbol


def test_the_mathml_shows_the_letters(rendered):
    html = rendered["html"]
    assert not any(letter in html for letter in GREEK)
    assert not any(f"&#X{ord(letter):05X};" in html.upper() for letter in GREEK)  # nor as entities
    for name in NAMES:
        letters = name.split("_")[0].rstrip("0123456789")
        assert "".join(f'<mi mathvariant="italic">{c}</mi>' for c in letters) in html, name
    assert "<msub><mi>b</mi><mrow><mn>1</mn></mrow></msub>" in html


def test_the_symbolic_example_keeps_its_indexed_names(tmp_path):
    assert main(["render", "--example", "symbolic", "--format", "tex", "--out", str(tmp_path)]) == 0
    tex = Path(tmp_path, "symbolic.tex").read_text(encoding="utf-8")
    assert "x_{11}" in tex and "x_{22}" in tex and r"\mathit" not in tex
