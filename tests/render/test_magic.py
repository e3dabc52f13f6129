"""The %%symattn cell magic, run by IPython's own shell (as a notebook's kernel runs a cell)."""

from __future__ import annotations

import pytest
from IPython.core.interactiveshell import InteractiveShell


@pytest.fixture(scope="module")
def shell():
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "symattn.render.magic")
    return ip


def test_a_cell_shows_its_worked_solution_as_markdown_latex_and_html(shell):
    derivation = shell.run_cell_magic("symattn", "--lang en --digits 3", 'example = "mt"\n')
    formats, _ = shell.display_formatter.format(derivation)
    assert "rounded half-up to 3 places" in formats["text/markdown"] and "0.338" in formats["text/markdown"]
    assert "Self-Attention" in formats["text/html"] and "text/latex" in formats


def test_a_cell_with_a_spec_of_its_own_and_one_with_an_error(shell, capsys):
    spec = ('[[sections]]\nkind = "self_attention"\ntokens = ["a", "b"]\nX = [[1, 0], [0, 1]]\n'
            'W_Q = [[1, 0], [0, 1]]\nW_K = [[1, 0], [0, 1]]\nW_V = [[1, 0], [0, 1]]\n')
    derivation = shell.run_cell_magic("symattn", "--lang ja", spec)
    assert derivation.lang == "ja" and len(derivation.sections) == 1
    assert shell.run_cell_magic("symattn", "", spec.replace("self_attention", "self_atention")) is None
    assert capsys.readouterr().err.startswith("symattn: error: sections[0].kind: unknown section kind")
