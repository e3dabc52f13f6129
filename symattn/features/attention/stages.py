"""The worksheet stages of the attention kinds (`symattn worksheet --blanks`): which stage each computation step of
theirs writes. Q, K and V are one stage; a softmax's e^{a} and Z lines are "exp", its weights "weights"."""

from __future__ import annotations

from ...document.steps import DotProducts, RowTimesMatrix, Scaling, SoftmaxStep, Step, WeightedSum

STAGES = ("qkv", "scores", "scaled", "exp", "weights", "output")
_WRITES = {RowTimesMatrix: "qkv", DotProducts: "scores", Scaling: "scaled", SoftmaxStep: "weights",
           WeightedSum: "output"}


def stage_of(kind: object, step: Step) -> str | None:
    """Kind.stage_of of an attention kind (set as its method: `stage_of = stages.stage_of`)."""
    return _WRITES.get(type(step))
