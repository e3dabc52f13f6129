"""Every whole spec the README shows (a TOML block with sections and no elided parts) is accepted and renders: a
lecturer copies them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import symattn

README = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
BLOCKS = [block for block in re.findall(r"```toml\n(.*?)```", README, re.S)
          if "[[sections]]" in block and "..." not in block and "…" not in block]


def test_the_readme_shows_whole_specs():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("block", BLOCKS, ids=lambda block: block.split("kind = ")[1].split("\n")[0])
def test_each_whole_spec_of_the_readme_renders(block):
    spec = symattn.parse_spec(symattn.read_spec_text(block, "toml", "readme.toml"))
    assert symattn.render_markdown(symattn.derive_spec(spec)).startswith("# ")
