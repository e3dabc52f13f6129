"""A non-editable install renders too: the wheel ships templates/, locales and examples."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.pdf
def test_wheel_renders_from_outside_the_checkout(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path / "dist"), str(ROOT)], check=True, capture_output=True)
    wheel = next((tmp_path / "dist").glob("symattn-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for needed in ("symattn/templates/preamble-common.tex", "symattn/templates/preamble-article.tex",
                   "symattn/templates/preamble-ja.tex", "symattn/templates/preamble-slides.tex",
                   "symattn/filters/symattn.lua",
                   "symattn/locales/ja.toml", "symattn/examples/mt.toml"):
        assert needed in names, needed
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = {**os.environ, "PYTHONPATH": str(site)}
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run([sys.executable, "-m", "symattn", "render", "--example", "mt", "--format", "tex,pdf"],
                          cwd=work, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (work / "output" / "mt.pdf").read_bytes().startswith(b"%PDF")
    where = subprocess.run([sys.executable, "-c", "import symattn; print(symattn.__file__)"], cwd=work, env=env,
                           capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(site))
