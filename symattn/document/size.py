"""How much a section's document shows, from its spec alone (Kind.size), and the largest document `render` writes."""

from __future__ import annotations

from dataclasses import dataclass

# The largest document `render` writes (measured: README "Large inputs"): queries derived one by one × keys × d,
# and entries of a matrix form (n × m). Beyond them TeX runs for minutes or stops ("TeX capacity exceeded").
MAX_STEPS = 16384
MAX_MATRIX = 16384
# The page estimate: about 6.5 pages a query derived, plus one per 45 of queries × keys × d, and one per 64 entries
# of a matrix form (16 to 48 tokens, d = 8 or 16, en; 64 to 128 tokens, d = 4).
QUERY_PAGES = 6.5
STEPS_PER_PAGE = 45
ENTRIES_PER_PAGE = 64


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

    @property
    def steps(self) -> int:
        """The step-by-step part's size: queries × keys × d."""
        return self.stepwise * self.keys * self.d

    @property
    def pages(self) -> int:
        """About how many PDF pages the section takes (fitted to handouts of 16 to 64 tokens)."""
        return max(1, round(self.stepwise * QUERY_PAGES + self.steps / STEPS_PER_PAGE + self.matrix / ENTRIES_PER_PAGE))
