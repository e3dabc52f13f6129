"""A notebook executed by a real Jupyter kernel (nbclient + ipykernel): `symattn.render(spec)` and the `%%symattn`
magic display the worked solution as HTML, Markdown and LaTeX, with the article's numbers in it."""

from __future__ import annotations

import os
import sys

import nbformat
import pytest
from nbclient import NotebookClient

import symattn

SPEC = '''
[[sections]]
kind = "self_attention"
tokens = ["a", "b"]
focus = "a"
X = [[1, 0], [0, 2]]
W_Q = [[1, 0], [0, 1]]
W_K = [[1, 0], [0, 1]]
W_V = [[1, 0], [0, 1]]
'''


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    cells = [nbformat.v4.new_code_cell(f"import sys; sys.path.insert(0, {os.getcwd()!r})\nimport symattn\n"
                                       "symattn.render('mt', lang='en')"),
             nbformat.v4.new_code_cell(f"symattn.render({SPEC!r}, lang='en')"),
             nbformat.v4.new_code_cell("%load_ext symattn.render.magic"),
             nbformat.v4.new_code_cell(f"%%symattn --lang ja\n{SPEC}")]
    notebook = nbformat.v4.new_notebook(cells=cells)
    folder = tmp_path_factory.mktemp("notebook")
    client = NotebookClient(notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(folder)}})
    client.execute()
    return notebook


def displayed(cell) -> dict:
    (result,) = [o for o in cell.outputs if o.output_type == "execute_result"]
    return result.data


def test_render_shows_the_articles_worked_solution_in_three_forms(executed):
    data = displayed(executed.cells[0])
    assert {"text/html", "text/markdown", "text/latex"} <= set(data)
    assert "0.3382" in data["text/markdown"] and "0.3382" in data["text/html"]  # love's weight on learning


def test_render_takes_toml_text_and_the_magic_takes_a_cell(executed):
    # a's query [1, 0]: scores [1, 0] over √2, weights e^{1/√2}/(e^{1/√2} + 1) ≈ 0.6698 and 0.3302
    for cell in (executed.cells[1], executed.cells[3]):
        markdown = displayed(cell)["text/markdown"]
        assert "0.6698" in markdown and "0.3302" in markdown
    assert "トークン埋め込み" in displayed(executed.cells[3])["text/markdown"]  # the magic's --lang ja


def test_render_is_the_renderers_package_and_refuses_what_is_not_a_spec():
    assert symattn.render.__name__ == "symattn.render" and callable(symattn.render)
    from symattn import render_markdown
    assert render_markdown(symattn.render(SPEC, lang="en")) == render_markdown(symattn.derive_spec(
        symattn.parse_spec(symattn.read_spec_text(SPEC, "toml", "spec"), "spec"), lang="en"))
    with pytest.raises(symattn.SpecError, match="expected an example's name"):
        symattn.render(3)
    assert sys.modules["symattn.render"] is symattn.render
