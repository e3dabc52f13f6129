"""ALiBi, attention with linear biases (Press et al., 2021, arXiv:2108.12409): causal self-attention without
positional encodings, whose scaled scores get the bias −m·(i − j) for a key j positions before the query, with one
slope m per head (given, or the paper's geometric 2^(−8h/H)). The spec's keys: spec.py; the answers': answers.py."""

from __future__ import annotations

from typing import Any

from ...document.steps import FlowFigure, Step
from ...features.attention import stages as attention_stages
from ..base import Kind, Size
from . import answers as answer_data
from . import engine, solution
from . import figure as flow
from . import spec as specs
from .spec import AlibiSpec


class AlibiKind(Kind):
    name = AlibiSpec.kind
    stages = attention_stages.STAGES  # `symattn worksheet --blanks`
    stage_of = attention_stages.stage_of
    keys = specs.KEYS

    def parse(self, data: dict[str, Any], field: str) -> AlibiSpec:
        return specs.parse(data, field)

    def compute(self, section: AlibiSpec) -> engine.AlibiResult:
        return engine.compute(section)

    def symbolic(self, result: engine.AlibiResult) -> bool:
        return False  # numbers only (spec.py refuses symbols)

    def steps(self, section: AlibiSpec, result: engine.AlibiResult) -> list[Step]:
        return solution.steps(section, result)

    def answers(self, section: AlibiSpec, result: engine.AlibiResult) -> dict[str, Any]:
        return answer_data.answers(section, result)

    def figure(self, section: AlibiSpec) -> FlowFigure | None:
        return flow.figure(section)

    def stage(self, section: AlibiSpec) -> str | None:
        return "masked"  # in a chain's block figure: causal (masked) self-attention

    def size(self, section: AlibiSpec) -> Size:
        n = len(section.tokens)
        d = max(max(h.W_Q.shape[1], h.W_V.shape[1], section.X.shape[1]) for h in section.heads)
        heads = len(section.heads)
        return Size("focus", heads * len(section.focus.stepwise), n, d,
                    heads * n * n if section.focus.matrix_form(n) else 0, work=heads * n * n)


ALIBI = AlibiKind()
