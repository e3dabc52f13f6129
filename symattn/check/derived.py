"""What a worked derivation prints beside solve's answers that is claimable as they are: the centred row u − μ of a
LayerNorm, added to the answers (check.candidates.records reads a row's scalars and a ranking table's rows)."""

from __future__ import annotations

from decimal import Decimal, localcontext
from typing import Any


def with_centred(answers: dict[str, Any]) -> dict[str, Any]:
    """The answers with every row that has a sum and its mean (a LayerNorm's) given its centred sum u − μ under
    "centered" (entries of 30 significant digits, as solve's)."""
    def walk(value: Any) -> None:
        if isinstance(value, dict):
            total, mean = value.get("sum"), value.get("mean")
            if isinstance(total, list) and isinstance(mean, str) and "centered" not in value:
                try:
                    with localcontext() as context:
                        context.prec = 30
                        value["centered"] = [str(Decimal(v) - Decimal(mean)) for v in total]
                except (ArithmeticError, TypeError, ValueError):  # a symbolic row
                    value.pop("centered", None)
            for inner in list(value.values()):
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    walk(answers)
    return answers
