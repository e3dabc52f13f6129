"""The pandoc Lua filter (symattn/filters/symattn.lua): a Markdown tutorial with an English and a Japanese
```symattn block, and a broken one, through pandoc >= 3 (pypandoc-binary's, the test extra) to HTML and LaTeX."""

from __future__ import annotations

import json
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


# An author's tutorial that cites the article twice, in English and in Japanese: it must print, lay out in a
# browser and pass `symattn check` against the example it cites.
TWO_BLOCKS = """---
title: Attention by hand
---

# English

Love attends most to learning (`sections[0].queries.love.weights[3]`{.symattn ref=mt}).

```{.symattn lang=en}
example = "mt"
```

# 日本語

```{.symattn lang=ja prose=plain}
example = "mt"
```
"""


@pytest.fixture(scope="session")
def two_blocks(tmp_path_factory):
    """The tutorial as HTML (MathML) and as a PDF through LuaLaTeX (pandoc's engine with Japanese fonts)."""
    folder = tmp_path_factory.mktemp("two-blocks")
    (folder / "tutorial.md").write_text(TWO_BLOCKS, encoding="utf-8")
    pandoc(folder, "html")
    env = {**os.environ, "SYMATTN_PYTHON": sys.executable, "SYMATTN_CACHE": str(folder / "cache"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    made = subprocess.run([pypandoc.get_pandoc_path(), "tutorial.md", "--lua-filter", str(LUA), "-s",
                           "--pdf-engine=lualatex", "-V", "CJKmainfont=HaranoAjiMincho-Regular",
                           "-V", "CJKoptions=BoldFont=HaranoAjiGothic-Medium", "-o", "tutorial.pdf"],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=600)
    assert made.returncode == 0, made.stderr
    return {"folder": folder, "html": folder / "tutorial.html", "pdf": folder / "tutorial.pdf",
            "pdf_warnings": made.stderr}


def test_the_tutorial_prints_every_number_and_character(two_blocks):
    text = subprocess.run(["pdftotext", str(two_blocks["pdf"]), "-"], capture_output=True, text=True,
                          check=True).stdout
    assert "Love attends most to learning (0.3382)." in text
    assert text.count("[0.1688, 0.2472, 0.2457, 0.3382]") == 2  # love's weights, in English and in Japanese
    assert "Value の重み付き和" in text
    assert "Missing character" not in two_blocks["pdf_warnings"]  # (a heat map's shades are drawn, not typed)


def test_check_of_the_tutorial_holds(two_blocks, capsys):
    from symattn.cli import main
    assert main(["check", "--example", "mt", "--from", str(two_blocks["html"])]) == 0
    report = capsys.readouterr().out
    assert " 0 unmatched" in report and "all hold" in report


MATH_PROBE = """<script>
window.addEventListener('load', () => {
  const maths = [...document.querySelectorAll('math')];
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify({maths: maths.length,
    empty: maths.filter(m => m.getBoundingClientRect().width < 1).map(m => m.textContent.slice(0, 40)),
    text: document.body.innerText.includes('0.3382')});
  document.body.appendChild(pre);
});
</script>"""


def test_the_tutorial_lays_out_in_chromium(two_blocks, tmp_path):
    """Every formula of the filtered page is laid out by the browser as MathML (none left as TeX source)."""
    from html import unescape

    from .test_formats import chromium
    probe = tmp_path / "probe.html"
    probe.write_text(two_blocks["html"].read_text(encoding="utf-8").replace("</body>", MATH_PROBE + "</body>"),
                     encoding="utf-8")
    dom = chromium(f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", probe.as_uri()).stdout
    start = dom.index('<pre id="probe">') + len('<pre id="probe">')
    result = json.loads(unescape(dom[start:dom.index("</pre>", start)]))
    assert result["maths"] > 200 and not result["empty"] and result["text"]
