"""Shared fixtures: the mt example, and the --update-golden flag that rewrites golden files."""

from __future__ import annotations

from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite tests/golden/* from the current output")


@pytest.fixture
def golden(request: pytest.FixtureRequest):
    """Compare text with a golden file, or rewrite the file with --update-golden."""

    def check(name: str, text: str) -> None:
        path = GOLDEN / name
        if request.config.getoption("--update-golden"):
            path.write_text(text, encoding="utf-8")
            return
        assert path.is_file(), f"missing golden file {path}; run pytest --update-golden"
        assert text == path.read_text(encoding="utf-8"), f"{name} differs; run pytest --update-golden if intended"

    return check


@pytest.fixture(scope="session")
def mt():
    from symattn.pipeline.parse import load_example

    return load_example("mt")
