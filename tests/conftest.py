"""Shared fixtures: the mt example, and the --update-golden flag that rewrites golden files."""

from __future__ import annotations

import os
import subprocess
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


@pytest.fixture
def read_only_out(tmp_path: Path):
    """A folder nobody may write in: its permission bits, or for root (whom they do not stop) the immutable
    attribute (chattr +i, on the Linux file systems CI has); writable again after the test."""
    out = tmp_path / "ro"
    out.mkdir()
    root = os.geteuid() == 0
    if root:
        subprocess.run(["chattr", "+i", str(out)], check=True)
    else:
        out.chmod(0o555)
    yield out
    subprocess.run(["chattr", "-i", str(out)], check=True) if root else out.chmod(0o755)
