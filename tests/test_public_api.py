"""The public API: `symattn.__all__` is the documented surface, every name in it imports (lazily, so that the
command line starts without SymPy), and the README's Python example works through it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import symattn

README = Path(__file__).parent.parent / "README.md"

PUBLIC = {
    # derivations
    "derive", "derive_spec", "Derivation",
    # specs
    "load_spec", "load_example", "parse_spec", "read_spec_text", "Spec",
    # outputs
    "render", "render_latex", "render_markdown", "render_html", "render_json", "answers", "compile_pdf",
    # kinds of section
    "Kind", "register_kind", "unregister_kind", "kind_of",
    # exams
    "ExamOptions", "build_exam", "generate",
    # errors
    "SymattnError", "SpecError", "RenderError", "LatexError",
}


def test_all_is_the_documented_surface():
    assert sorted(symattn.__all__) == symattn.__all__
    assert set(symattn.__all__) == PUBLIC


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_every_public_name_imports(name):
    value = getattr(symattn, name)
    assert value is not None
    assert name in dir(symattn)
    namespace: dict = {}
    exec(f"from symattn import {name}", namespace)
    assert namespace[name] is value


def test_register_kind_is_the_registry():
    from symattn import kinds

    assert symattn.register_kind is kinds.register and symattn.unregister_kind is kinds.unregister
    assert symattn.kind_of("self_attention").name == "self_attention"


def test_unknown_attribute_raises_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        symattn.nothing_here  # noqa: B018
    with pytest.raises(ImportError):
        exec("from symattn import nothing_here", {})


def test_importing_the_package_and_the_cli_does_not_import_sympy():
    code = "import symattn, symattn.cli, sys; symattn.__all__; dir(symattn); assert 'sympy' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_readme_python_example_runs_through_the_public_names():
    block = re.search(r"## Python\n\n```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert block, "the README has no Python example under ## Python"
    code = block.group(1)
    imported = re.findall(r"^from symattn import (.+)$", code, re.M)
    assert imported and all(name.strip() in symattn.__all__ for line in imported for name in line.split(","))
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)
    assert r"\documentclass" in namespace["tex"]
    assert namespace["pdf"].startswith(b"%PDF")
    assert "exp" in str(namespace["love"].softmax.weights)


def test_the_public_api_renders_every_format(mt):
    derivation = symattn.derive_spec(mt, lang="en")
    assert isinstance(derivation, symattn.Derivation)
    assert r"\begin{document}" in symattn.render_latex(derivation)
    assert symattn.render_markdown(derivation).startswith("# Attention, worked out")
    assert "<math" in symattn.render_html(derivation)
    data = symattn.answers(derivation)
    assert data["symattn"] == symattn.__version__ and [s["kind"] for s in data["sections"]][0] == "self_attention"
    assert '"symattn": "0.1.0"' in symattn.render_json(derivation)


def test_the_public_api_parses_specs():
    data = symattn.read_spec_text('[[sections]]\nkind = "nothing"\n', "toml", "t.toml")
    with pytest.raises(symattn.SpecError, match="unknown section kind"):
        symattn.parse_spec(data)
    assert issubclass(symattn.SpecError, symattn.SymattnError)
