"""From a Spec to a Derivation: each section is computed and laid out as steps by its kind."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from ..document.sentences import kept
from ..document.steps import (
    Derivation,
    DerivedSection,
    DotProducts,
    FlowFigure,
    Heading,
    Heatmap,
    Paragraph,
    Result,
    Scaling,
    SoftmaxStep,
    Step,
    WeightedSum,
)
from ..kinds import kind_of
from ..numbers import certify
from ..numbers.display import DEFAULT_DIGITS, GUARD_CAP
from ..numbers.significant import more_figures
from ..spec.model import Section, Spec
from . import chain
from .blocks import block_figures
from .parse import load, parse_spec


def derive(source: str | Path | Spec, lang: str | None = None, digits: int | None = None,
           prose: str | None = None) -> Derivation:
    """A Derivation from a built-in example name, a spec file path or a Spec; options override the spec."""
    return derive_spec(load(source), lang=lang, digits=digits, prose=prose)


def derive_spec(spec: Spec, lang: str | None = None, digits: int | None = None, steps: bool = True,
                results: tuple | None = None, prose: str | None = None) -> Derivation:
    """Compute every section of the spec exactly and build its steps (steps=False: results only, for answers;
    `results`: the sections' results when they were computed already, as by compute(); `prose`: "full",
    "plain" or "none", else the spec's, else "full" (sentences.kept))."""
    lang = lang or spec.lang or "ja"
    if digits is None:
        digits = spec.digits if spec.digits is not None else DEFAULT_DIGITS
    if chain.stale(spec, digits):
        spec = parse_spec(spec.source, spec.name, digits=digits)
    if results is None:
        computed = chain.results(spec)  # the sections a chain computed while the spec was parsed
        results = tuple(computed[id(section)] if id(section) in computed else compute(section)
                        for section in spec.sections)
    bounds = certify.bounds(spec.sections, results, kind_of) if certify.full_carry(spec.sections) else None
    prose = prose or spec.prose or "full"
    sections = tuple(_section(section, result, steps, dict(spec.stage_digits), prose)
                     for section, result in zip(spec.sections, results, strict=True))
    if bounds is not None:
        sections = tuple(replace(derived, bound=bound) for derived, bound in zip(sections, bounds, strict=True))
        if steps:
            stages = [digits, *dict(spec.stage_digits).values()]
            _certify_pages(sections, range(min(stages), max(stages) + GUARD_CAP + 1))
    return Derivation(title=spec.title, lang=lang, digits=digits, sections=_with_figures(sections), name=spec.name)


def _certify_pages(sections: tuple[DerivedSection, ...], places: range) -> None:
    """SpecError unless the bounded sections' pages show only certified digits (certify.check_section)."""
    for i, derived in enumerate(sections):
        if derived.bound is not None:
            with more_figures(certify.EXTRA_FIGURES):
                answer = kind_of(derived.kind).answers(derived.spec, derived.result)
            if answer is not None:
                certify.check_section(answer, derived.bound, places, i)


def compute(section: Section) -> Any:
    """The engine's exact result for one section of a spec, by its kind."""
    return kind_of(section.kind).compute(section)


def _with_figures(sections: tuple[DerivedSection, ...]) -> tuple[DerivedSection, ...]:
    """Each distinct flow figure once, numbered in order, under the heading of the first section it draws; before
    it, in a chain, the block figure of the section's run with the section highlighted (symattn.pipeline.blocks)."""
    blocks = block_figures(tuple(derived.spec for derived in sections))
    drawn: list[FlowFigure] = []
    placed = []
    for i, derived in enumerate(sections):
        flow = kind_of(derived.kind).figure(derived.spec) if derived.steps else None
        figures = [f for f in (blocks.get(i) if derived.steps else None, flow if flow not in drawn else None) if f]
        if not figures:
            placed.append(derived)
            continue
        numbered = []
        for figure in figures:
            drawn.append(figure)
            numbered.append(replace(figure, number=len(drawn)))
        steps = derived.steps
        at = _after_heading(steps)
        placed.append(replace(derived, steps=(*steps[:at], *numbered, *steps[at:])))
    return tuple(placed)


# The steps of each stage a spec may give its own decimals (digits = { default = 4, result = 3 }).
STAGES: dict[str, tuple[type[Step], ...]] = {
    "scores": (DotProducts, Scaling), "weights": (SoftmaxStep, Heatmap), "sum": (WeightedSum,), "result": (Result,),
}


def _section(section: Section, result: Any, steps: bool, stages: dict[str, int],
             prose: str = "full") -> DerivedSection:
    kind = kind_of(section.kind)
    if not steps:
        return DerivedSection(section.kind, section, result, ())
    steps = [_staged(s, stages) for s in kind.steps(section, result)] if stages else list(kind.steps(section, result))
    if section.carried:  # a chained section says where its rows came from, after its heading, and not "embeddings"
        steps = chain.reworded(steps, section)
        at = _after_heading(steps)
        steps[at:at] = chain.paragraphs(section)
    if prose != "full":
        steps = [step for step in steps if kept(step, prose)]
    return DerivedSection(section.kind, section, result, tuple(steps), kind.symbolic(result))


def _after_heading(steps) -> int:
    """Where a section's own first steps go: after its level-1 heading, if it opens with one."""
    return 1 if steps and isinstance(steps[0], Heading) and steps[0].level == 1 else 0


def _staged(step: Step, stages: dict[str, int]) -> Step:
    """The step with its stage's decimals, when the spec sets them (a softmax's logits: the scores')."""
    if isinstance(step, SoftmaxStep) and "scores" in stages:
        step = replace(step, logit_digits=stages["scores"])
    for stage, types in STAGES.items():
        if stage in stages and isinstance(step, types):
            return replace(step, digits=stages[stage])
    if isinstance(step, Paragraph) and step.stage in stages:  # a sentence printing a stage's numbers
        return replace(step, digits=stages[step.stage])
    return step
