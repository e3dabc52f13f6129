"""The package's structure, read from its source: no import cycles (function-level imports included), no module
over 400 lines, and the kinds of section named only by their own modules and the registry."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parent.parent / "symattn"
MAX_LINES = 400


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported(module: str, path: Path) -> set[str]:
    """The package's modules that a module imports, anywhere in it (in functions too): `import symattn.a.b` and
    `from .a import b` name symattn.a.b when it is a module, else the package symattn.a (its __init__). Importing
    a module first imports the packages above it, except those the importer is itself inside (they are being
    imported already)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                origin = ".".join([*base, *([node.module] if node.module else [])])
            else:
                origin = node.module or ""
            names = [f"{origin}.{a.name}" if f"{origin}.{a.name}" in MODULES else origin for a in node.names]
        else:
            continue
        for name in names:
            if name.split(".")[0] != "symattn":
                continue
            while name not in MODULES:
                name = name.rpartition(".")[0]
            targets.add(name)
            parts = name.split(".")
            for i in range(1, len(parts)):
                above = ".".join(parts[:i])
                if not (module == above or module.startswith(above + ".")):
                    targets.add(above)
    targets.discard(module)
    return targets


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (or a module that imports itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph.get(v, ()):
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_cycles_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_imports_resolve_relative_and_function_level_imports():
    graph = {module: imported(module, path) for module, path in MODULES.items()}
    assert "symattn.kinds" in graph["symattn.pipeline.parse"]  # from ..kinds import kind_of: the package's __init__
    assert "symattn.features.attention.solution" in graph["symattn.kinds.self_attention.kind"]  # import as common
    assert "symattn.kinds" not in graph["symattn.kinds.self_attention.kind"]  # its own package is being imported
    assert "symattn.pipeline.parse" in graph["symattn.cli"]  # imported inside a function, so that --help is quick
    assert "symattn" in graph["symattn.render.answers"]  # from .. import __version__


def test_no_import_cycle_in_the_package():
    graph = {module: imported(module, path) for module, path in MODULES.items()}
    assert cycles(graph) == []


def package_of(module: str) -> str:
    """The package a module belongs to for layering: symattn.<package>, a kind's or a feature's folder counting as
    symattn.kinds or symattn.features; a top-level module is its own."""
    return ".".join(module.split(".")[:2])


def test_no_import_cycle_between_packages():
    """The packages are layers: none imports (in any function) a package that imports it back."""
    graph = {module: imported(module, path) for module, path in MODULES.items()}
    packages: dict[str, set[str]] = {}
    for module, targets in graph.items():
        for target in targets:
            if package_of(target) != package_of(module):
                packages.setdefault(package_of(module), set()).add(package_of(target))
    assert cycles(packages) == []


def test_package_cycles_are_found():
    assert package_of("symattn.kinds.alibi.kind") == "symattn.kinds" and package_of("symattn.cli") == "symattn.cli"
    assert cycles({"symattn.render": {"symattn.kinds"}, "symattn.kinds": {"symattn.render"}}) != []


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


@pytest.mark.parametrize("path", MODULES.values(), ids=lambda path: str(path.relative_to(PACKAGE.parent)))
def test_no_module_over_400_lines(path):
    assert _lines(path) <= MAX_LINES, f"{path.relative_to(PACKAGE.parent)} has {_lines(path)} lines"


def kind_names_in(path: Path, names: tuple[str, ...]) -> set[str]:
    """The kinds a module names in its string literals (docstrings and help texts included)."""
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.update(pattern.findall(node.value))
    return found


# Kind names that a module uses as ordinary words, not as kinds: \\operatorname{norm} in the math a spec writes.
ORDINARY_WORDS = {"symattn.spec.textmath": {"norm"}}


def test_the_kind_switch_lives_only_in_the_registry():
    """Apart from the kinds' own folders, only the registry (symattn.kinds) and the command line's help name more than
    one kind: the code does not switch on kinds by name, it asks the registry. The examples' .toml files are data
    and not checked."""
    from symattn.kinds import KINDS

    names = tuple(KINDS)
    folders = {type(kind).__module__.rpartition(".")[0] for kind in KINDS.values()}
    # a kind's own modules: those of its folder (kinds/norm/ holds add_norm and norm)
    own = {module for module in MODULES if any(module == k or module.startswith(k + ".") for k in folders)}
    naming = {module: kind_names_in(path, names) - ORDINARY_WORDS.get(module, set())
              for module, path in MODULES.items() if module not in own}
    several = {module: sorted(kinds) for module, kinds in naming.items() if len(kinds) > 1}
    assert set(several) <= {"symattn.kinds", "symattn.cli", "symattn.arguments"}, f"modules that name more than one kind: {several}"


# Where a kind's or a feature's name is still spoken outside its folder, the registry, the CLI and the folders that
# compose it: the central places this restructure has not yet emptied (see README, How it is built). The list may
# only shrink: a new kind or feature named anywhere else fails the test below.
STILL_CENTRAL: dict[str, set[str]] = {}  # modules allowed to name a kind or feature outside its folder: none left
FEATURES = ("rope", "kv_cache", "online_softmax", "given_forms")
# Kind names that are ordinary words in text: the "text" of a language string, a vector's "norm".
WORDS = {"text", "norm"}


def test_kinds_and_features_are_named_only_in_their_folders():
    """Outside kinds/<name>/ (or features/<name>/), a kind's or a feature's name appears in string literals only in
    the registry, the command line, a folder that imports that folder (a kind composing a feature), and the
    places STILL_CENTRAL lists."""
    from symattn.kinds import KINDS

    folders = {name: type(KINDS[name]).__module__.rpartition(".")[0] for name in KINDS}
    folders.update({name: f"symattn.features.{name}" for name in FEATURES})
    graph = {module: imported(module, path) for module, path in MODULES.items()}
    names = tuple(name for name in folders if name not in WORDS)

    def folder_of(module: str) -> str:  # a kind's or a feature's folder, else the module itself
        parts = module.split(".")
        return ".".join(parts[:3]) if len(parts) > 3 and parts[1] in ("kinds", "features") else module

    def imports(module: str, folder: str) -> bool:  # whether the module's folder imports that folder
        own = folder_of(module)
        return any(target == folder or target.startswith(folder + ".") for source, targets in graph.items()
                   if source == own or source.startswith(own + ".") for target in targets)

    found = {}
    for module, path in MODULES.items():
        if module in ("symattn.kinds", "symattn.cli", "symattn.arguments"):
            continue
        for name in kind_names_in(path, names):
            folder = folders[name]
            inside = module == folder or module.startswith(folder + ".")
            composes = imports(module, folder)
            if not inside and not composes and name not in STILL_CENTRAL.get(module, set()):
                found.setdefault(module, set()).add(name)
    assert not found, f"kinds or features named outside their folders: {found}"
