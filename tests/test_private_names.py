"""No test reaches into the package's private names: tests go through public functions, so that the package can
change its insides without breaking them. Checked on the tests' syntax trees: `from symattn... import _x`, a
private module in an import, and `module._x` (or `setattr(module, "_x", ...)`) on a symattn module."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).parent
PACKAGE = TESTS.parent / "symattn"


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def is_module(dotted: str) -> bool:
    """Whether symattn.a.b is a module or package of the checkout (found by its file, without importing it)."""
    parts = dotted.split(".")
    if parts[0] != "symattn":
        return False
    path = PACKAGE.joinpath(*parts[1:])
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def offences(source: str, filename: str = "<test>") -> list[str]:
    """Every private name of the package that the source imports or reads, as 'file:line: what'."""
    tree = ast.parse(source, filename)
    modules: dict[str, str] = {}  # local name -> symattn module it is bound to
    found: list[str] = []

    def report(node: ast.AST, what: str) -> None:
        found.append(f"{filename}:{node.lineno}: {what}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != "symattn":
                    continue
                if any(private(part) for part in alias.name.split(".")):
                    report(node, f"import {alias.name}")
                if alias.asname:
                    modules[alias.asname] = alias.name
                else:
                    modules["symattn"] = "symattn"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "symattn":
            if any(private(part) for part in node.module.split(".")):
                report(node, f"from {node.module} import ...")
            for alias in node.names:
                if private(alias.name):
                    report(node, f"from {node.module} import {alias.name}")
                elif is_module(f"{node.module}.{alias.name}"):
                    modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def module_of(node: ast.AST) -> str | None:
        """The symattn module an expression names (a bound name, or a chain of submodules), if any."""
        if isinstance(node, ast.Name):
            return modules.get(node.id)
        if isinstance(node, ast.Attribute):
            base = module_of(node.value)
            if base is not None and is_module(f"{base}.{node.attr}"):
                return f"{base}.{node.attr}"
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and private(node.attr):
            base = module_of(node.value)
            if base is not None:
                report(node, f"{base}.{node.attr}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "setattr"
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
              and isinstance(node.args[1].value, str) and private(node.args[1].value)):
            base = module_of(node.args[0])
            if base is not None:
                report(node, f"setattr({base}, {node.args[1].value!r})")
    return found


def test_the_checker_finds_private_names():
    source = """
import symattn.render.latex
import symattn.engine as eng
from symattn.numbers import display as numfmt
from symattn.engine import fast
from symattn.numbers.display import _joined, format_number
from symattn.render import latex as lx
symattn.render.latex._private
eng._cache
numfmt._joined([])
fast._hidden
lx._x
monkeypatch.setattr(numfmt, "_joined", None)
derivation._repr_html_()
symattn.__version__, numfmt.__file__
"""
    assert sorted(line.split(": ", 1)[1] for line in offences(source)) == sorted([
        "from symattn.numbers.display import _joined", "symattn.render.latex._private", "symattn.engine._cache",
        "symattn.numbers.display._joined", "symattn.engine.fast._hidden", "symattn.render.latex._x",
        "setattr(symattn.numbers.display, '_joined')",
    ])


def test_no_test_imports_a_private_name_of_the_package():
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        if path == Path(__file__):
            continue
        found += offences(path.read_text(encoding="utf-8"), str(path.relative_to(TESTS)))
    assert not found, "tests that use private names of symattn:\n" + "\n".join(found)
