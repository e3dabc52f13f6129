"""The backward pass through a self-attention section (`kind = "backward"`, `from = "NAME"`): exact gradients of a
loss with respect to V, the weights P, the scores S, Q, K, the projection weights and X, each step with its formula.
A kind of its own, not a key of the forward section: a later section reads the forward one as chained sections do, the
forward page stays as it is, and the backward page has its own heading, steps and answers. The spec's keys:
spec.py; the answers': answers.py."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...document.steps import Step
from ..base import Kind, Size
from . import answers as answer_data
from . import difference as numeric
from . import engine, solution
from . import spec as specs
from .spec import BackwardSpec


class BackwardKind(Kind):
    name = BackwardSpec.kind
    keys = specs.KEYS
    references = frozenset({"from"})

    def parse(self, data: dict[str, Any], field: str) -> BackwardSpec:
        return specs.parse(data, field)

    def compute(self, section: BackwardSpec) -> engine.BackwardResult:
        result = engine.compute(section)
        if section.h is None:
            return result
        return replace(result, difference=numeric.difference(section, result.dW_Q[0, 0], result.known))

    def symbolic(self, result: engine.BackwardResult) -> bool:
        return False  # numbers only (spec.py refuses symbols)

    def steps(self, section: BackwardSpec, result: engine.BackwardResult) -> list[Step]:
        return solution.steps(section, result)

    def answers(self, section: BackwardSpec, result: engine.BackwardResult) -> dict[str, Any]:
        return answer_data.answers(section, result)

    def size(self, section: BackwardSpec) -> Size:
        source = section.forward.section
        n = len(source.tokens)
        d = max(source.X.shape[1], source.W_Q.shape[1], source.W_V.shape[1])
        # work: the terms the exact gradients sum, about 4 n³d (each entry of dQ, dK, dW and dX is a sum over the
        # n² products of weights that dS holds); 8 tokens at d = 8 (16,384) take 14 s, 16 tokens (131,072) are
        # refused (they took 150 s)
        return Size("focus", 1, n, d, n * n, work=WORK_PER_TERM * n**3 * d)


WORK_PER_TERM = 4


BACKWARD = BackwardKind()
