"""The pandoc Lua filter (symattn/filters/symattn.lua): a Markdown tutorial with an English and a Japanese
```symattn block, and a broken one, through pandoc >= 3 (pypandoc-binary's, the test extra) to HTML and LaTeX."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pypandoc
import pytest

from symattn.filters import LUA

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = """---
title: Attention by hand
---

# English

In the article, love attends most to learning (`sections[0].queries.love.weights[3]`{.symattn ref=mt}; to two
decimals `sections[0].queries.love.weights[3]`{.symattn ref=mt digits=2}), and not to
`sections[0].queries.lvoe.weights[3]`{.symattn ref=mt}.

```{.symattn lang=en}
example = "mt"
```

# 日本語

```{.symattn lang=ja prose=plain}
example = "symbolic"
```

# Broken

```{.symattn lang=en}
[[sections]]
kind = "self_atention"
```

```python
print("other code blocks stay")
```
"""


def pandoc(folder: Path, writer: str) -> str:
    """The tutorial in folder through the filter to that writer's output (the cache in folder/cache)."""
    env = {**os.environ, "SYMATTN_PYTHON": sys.executable, "SYMATTN_CACHE": str(folder / "cache"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    subprocess.run([pypandoc.get_pandoc_path(), "tutorial.md", "--lua-filter", str(LUA), "-s", "--mathml",
                    "-t", writer, "-o", f"tutorial.{writer}"], cwd=folder, env=env, check=True, timeout=300)
    return (folder / f"tutorial.{writer}").read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def converted(tmp_path_factory):
    """The tutorial as HTML and as LaTeX, and its folder."""
    folder = tmp_path_factory.mktemp("tutorial")
    (folder / "tutorial.md").write_text(TUTORIAL, encoding="utf-8")
    return {"html": pandoc(folder, "html"), "latex": pandoc(folder, "latex"), "folder": folder}


def test_pandoc_is_three_or_newer():
    assert int(pypandoc.get_pandoc_version().split(".")[0]) >= 3


def test_each_block_becomes_its_worked_solution_as_native_math(converted):
    html = converted["html"]
    assert html.count("<math") > 100
    assert "0.3382" in html and "Self-Attention" in html  # mt in English: love's weight for learning
    assert "一般式" in html or "記号" in html  # the symbolic example in Japanese
    assert "example = " not in html  # the blocks are replaced
    assert "other code blocks stay" in html


def test_a_broken_block_is_a_visible_callout_with_symattns_one_line_error(converted):
    html = " ".join(converted["html"].split())
    assert '<div class="callout-warning symattn-error">' in html
    assert "sections[0].kind: unknown section kind 'self_atention' (did you mean 'self_attention'?)" in html


def test_an_inline_reference_is_the_number_symattn_computed(converted):
    html = " ".join(converted["html"].split())
    assert '(<span class="symattn">0.3382</span>; to two decimals <span class="symattn">0.34</span>)' in html
    assert "symattn: sections[0].queries.lvoe.weights[3]: no such quantity 'lvoe' (keys here: love)" in html
    assert "`sections[0]" not in html


def test_the_latex_writer_gets_the_same_math(converted):
    latex = converted["latex"]
    assert r"\begin{aligned}" in latex and "0.3382" in latex and "日本語" in latex


def test_each_block_is_cached_by_its_text_and_options_and_read_back(converted):
    cached = sorted((converted["folder"] / "cache").glob("*.md"))
    assert len(cached) == 2  # the two blocks that rendered (a failure is not kept), shared by both writers
    mt = next(path for path in cached if "0.3382" in path.read_text(encoding="utf-8"))
    mt.write_text("Read from the cache.\n", encoding="utf-8")
    try:
        html = pandoc(converted["folder"], "html")
    finally:
        mt.unlink()
    assert "Read from the cache." in html and "0.1688" not in html  # (w_I, in the mt block alone)


def test_the_quarto_extension_is_the_same_filter():
    folder = ROOT / "_extensions" / "symattn"
    assert "- symattn.lua" in (folder / "_extension.yml").read_text(encoding="utf-8")
    assert (folder / "symattn.lua").resolve() == LUA
    assert subprocess.run([sys.executable, "-m", "symattn.filters"], capture_output=True, text=True, cwd=ROOT,
                          check=True).stdout.strip() == str(LUA)
