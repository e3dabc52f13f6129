"""The block figures of chained sections: each run of sections that pass their rows on (pipeline.chain) is drawn as
its stages in order, once at every section of the run, with that section highlighted (an encoder layer, a decoder
step). Text sections between them are passed over; a section that takes nothing from the run starts a new one."""

from __future__ import annotations

from ..document.steps import FlowFigure
from ..kinds import kind_of
from ..spec.model import Section
from .block_figure import block_figure

# The most boxes a block figure draws in its column (an 11-section decoder step fits a page with its caption).
MOST_STAGES = 12


def block_figures(sections: tuple[Section, ...]) -> dict[int, FlowFigure]:
    """The block figure of each section (by index) in a run of two or more chained sections."""
    figures: dict[int, FlowFigure] = {}
    for run in _runs(sections):
        if len(run) < 2:
            continue
        stages = tuple(stage for _, stage in run)
        names = {sections[i].name for i, _ in run}
        # rows from a section outside the run (the encoder's output into cross-attention) enter from the side
        side = next((n for n, (i, _) in enumerate(run)
                     if any(c.source not in names for c in sections[i].carried)), -1)
        for n, (i, _) in enumerate(run):
            shown, current, at = _window(stages, n, side)
            figures[i] = block_figure(shown, current, at)
    return figures


def _window(stages: tuple[str, ...], current: int, side: int) -> tuple[tuple[str, ...], int, int]:
    """A long chain's stages near the current one, with "dots" for those left out above and below (a column of
    30 boxes would run off the page): the stages, the current one's place and the side stage's (-1: not shown)."""
    if len(stages) <= MOST_STAGES:
        return stages, current, side
    start = max(0, min(current - MOST_STAGES // 2 + 1, len(stages) - MOST_STAGES + 2))
    end = min(len(stages), start + MOST_STAGES - 2)
    shown = (*(("dots",) if start else ()), *stages[start:end], *(("dots",) if end < len(stages) else ()))
    offset = 1 if start else 0
    return shown, current - start + offset, side - start + offset if start <= side < end else -1


def _runs(sections: tuple[Section, ...]) -> list[list[tuple[int, str]]]:
    """The runs, as (index, stage): sections with a stage, each joining the current run when it reads a section of
    it."""
    runs: list[list[tuple[int, str]]] = []
    names: set[str | None] = set()  # the current run's section names
    for i, section in enumerate(sections):
        stage = kind_of(section.kind).stage(section)
        if stage is None:
            continue
        if runs and {c.source for c in section.carried} & names:
            runs[-1].append((i, stage))
        else:
            runs.append([(i, stage)])
            names = set()
        names.add(section.name)
    return runs
