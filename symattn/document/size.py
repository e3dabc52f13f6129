"""How much a section's document shows and how much `solve` computes, from its spec alone (Kind.size), and the
largest document `render` writes and the most work any command does (checked by pipeline/limits.py)."""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass
from typing import Any

# The largest document `render` writes (measured: README "Large inputs"): queries derived one by one × keys × d,
# and entries of a matrix form (n × m). Beyond them TeX runs for minutes or stops ("TeX capacity exceeded").
MAX_STEPS = 16384
MAX_MATRIX = 16384
# The page estimate: about 6.5 pages a query derived, plus one per 45 of queries × keys × d, and one per 64 entries
# of a matrix form (16 to 48 tokens, d = 8 or 16, en; 64 to 128 tokens, d = 4).
QUERY_PAGES = 6.5
STEPS_PER_PAGE = 45
ENTRIES_PER_PAGE = 64
GIVEN_PER_PAGE = 220  # given matrices' entries a page (8 tokens at d = 128, focus = "matrix": 50,000 in 221 pages)
# The keys one derivation is worked over, and the heatmap's columns (a KV cache of 500 past tokens: TeX's main
# memory ran out in the heatmap's tabular of 501 columns; 250 made 64 pages in 4 s).
MAX_KEYS = 256
# Online softmax: the blocks derived one by one (queries derived × blocks), about a third of a page each (block 1:
# 16 tokens, 256 blocks, 143 pages in 11 s; 32 tokens, 1,024 blocks, 546 pages in 35 s; 90 tokens, 3,782 pages).
MAX_BLOCKS = 256
BLOCKS_PER_PAGE = 3
# The lines of one derivation set at once (next_token: a line per vocabulary entry; 512 entries made 67 pages in
# 14 s, 2,048 ran TeX past 150 s).
MAX_LINES = 512
# Text sections: the characters of one paragraph, note, cell or reference (one TeX paragraph: 100,000 characters
# made 23 pages in 5 s, 200,000 stopped TeX with no error line), a table's columns (200 compiled, 500 did not), and
# how deep math may nest braces (\frac 40 deep compiled; 100 deep: "dvipdfmx: Capacity exceeded").
MAX_TEXT = 100000
MAX_COLUMNS = 200
MAX_DEPTH = 40
TEXT_PER_PAGE = 3000
# The most `solve` (and every command, since each derives the spec) computes: query-key pairs, each a weight
# evaluated to 90 digits (an online softmax's count ONLINE_WORK times: its blocks keep exact running sums), or the
# values of a section without a softmax. 256 × 256 pairs take about 7 s; 8,000 tokens online reached 24 GB.
MAX_WORK = 65536
ONLINE_WORK = 8


@dataclass(frozen=True)
class Size:
    """How much a section's document shows: `stepwise` queries derived one by one, each over `keys` keys of
    vectors `d` wide, and a matrix form of `matrix` (n × m) entries. `field` is the section key that chooses it
    (focus, or a multi-head's heads)."""

    field: str = "focus"
    stepwise: int = 0
    keys: int = 0
    d: int = 0
    matrix: int = 0
    what: str = ""  # what the stepwise ones are, for the message, if not tokens (or a multi-head's heads)
    over: str = ""  # what each of them is worked over, for the message, if not "over {keys} keys (d = {d})"
    matrix_what: str = ""  # what the matrix entries are, for the message, if not "a matrix form of {matrix} entries"
    work: int = 0  # what solve computes (query-key pairs, or values; see MAX_WORK); 0: the section has no answers
    blocks: int = 0  # online softmax blocks derived one by one
    lines: int = 0  # the lines of its longest derivation, when they are more than its keys (a vocabulary's entries)
    text: int = 0  # a text section: the characters of its longest string (the one `field` names)
    depth: int = 0  # ... the deepest nesting of braces in its math (in the string `field` names)
    columns: int = 0  # ... its table's columns
    characters: int = 0  # ... all its characters

    @property
    def steps(self) -> int:
        """The step-by-step part's size: queries × keys × d."""
        return self.stepwise * self.keys * self.d

    @property
    def pages(self) -> int:
        """About how many PDF pages the section takes (fitted to handouts of 16 to 64 tokens)."""
        return max(1, round(self.stepwise * QUERY_PAGES + self.steps / STEPS_PER_PAGE + self.matrix / ENTRIES_PER_PAGE
                            + self.blocks / BLOCKS_PER_PAGE + self.characters / TEXT_PER_PAGE))


def entries(section: Any) -> tuple[int, str]:
    """The entries of the matrices a section is given (X, the W's, a cache, a vocabulary's W: each shown, and most
    multiplied into another shown as large), and the field of the largest: found in its fields, heads included."""
    total, largest, name = 0, 0, ""

    def walk(value: Any, field: str) -> None:
        nonlocal total, largest, name
        shape = getattr(value, "shape", None)
        if isinstance(shape, tuple) and len(shape) == 2 and all(isinstance(x, int) for x in shape):
            total += shape[0] * shape[1]
            if shape[0] * shape[1] > largest:
                largest, name = shape[0] * shape[1], field
        elif isinstance(value, tuple):
            for i, inner in enumerate(value):
                walk(inner, f"{field}[{i}]")
        elif is_dataclass(value) and not isinstance(value, type):
            for f in fields(value):
                walk(getattr(value, f.name), f"{field}.{f.name}" if field else f.name)

    walk(section, "")
    return total, name
