"""The block figures of chained sections: each run of sections that pass their rows on (symattn.chain) is drawn as
its stages in order, once at every section of the run, with that section highlighted (an encoder layer, a decoder
step). Text sections between them are passed over; a section that takes nothing from the run starts a new one."""

from __future__ import annotations

from .kinds import kind_of
from .model import FlowFigure
from .spec.model import Section


def block_figures(sections: tuple[Section, ...]) -> dict[int, FlowFigure]:
    """The block figure of each section (by index) in a run of two or more chained sections."""
    figures: dict[int, FlowFigure] = {}
    for run in _runs(sections):
        if len(run) < 2:
            continue
        stages = tuple(kind_of(sections[i].kind).stage(sections[i]) for i in run)
        names = {sections[i].name for i in run}
        # rows from a section outside the run (the encoder's output into cross-attention) enter from the side
        side = next((n for n, i in enumerate(run)
                     if any(c.source not in names for c in sections[i].carried)), -1)
        for n, i in enumerate(run):
            figures[i] = FlowFigure("block", stages=stages, current=n, side=side)
    return figures


def _runs(sections: tuple[Section, ...]) -> list[list[int]]:
    """The runs: sections with a stage, each joining the current run when it reads a section of it."""
    runs: list[list[int]] = []
    for i, section in enumerate(sections):
        if kind_of(section.kind).stage(section) is None:
            continue
        reads = {c.source for c in section.carried}
        if runs and reads & {sections[j].name for j in runs[-1]}:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs
