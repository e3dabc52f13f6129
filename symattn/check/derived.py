"""What a worked derivation prints beside solve's answers, so that a document symattn (or anyone) wrote is matched
in full: the centred row u − μ of a LayerNorm (added to the answers, a claimable quantity), a row's scalars read
together (μ, σ², σ of a table row of scalars) and the entries of parallel vectors read across (a ranking table's
logit and probability of one vocabulary entry), as Quantities whose paths are answers' paths."""

from __future__ import annotations

from decimal import Decimal, localcontext
from typing import Any

from .document import Quantity


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


def records(answers: dict[str, Any]) -> list[tuple[Quantity, str | None, str]]:
    """(quantity, token, name) for each table of scalars a row prints together: a token's scalars (its mean,
    variance and σ, in the answers' order) and, where a section has a vocabulary, each entry's values across its
    vectors (logit and probability)."""
    out: list[tuple[Quantity, str | None, str]] = []

    def scalar(value: Any) -> Decimal | None:
        try:
            return Decimal(value) if isinstance(value, str) else None
        except ArithmeticError:
            return None

    def walk(at: tuple, value: Any, token: str | None) -> None:
        if isinstance(value, dict):
            keys = [k for k, v in value.items() if k not in ("eps", "temperature", "d_k") and scalar(v) is not None
                    and scalar(v).is_finite()]
            if len(keys) >= 2:
                out.append((Quantity(tuple((*at, k) for k in keys), tuple(scalar(value[k]) for k in keys)), token,
                            "/".join(keys)))
            vocabulary = value.get("vocabulary")
            if isinstance(vocabulary, list):
                across = [k for k, v in value.items() if isinstance(v, list) and len(v) == len(vocabulary)
                          and all(scalar(x) is not None for x in v)]
                for j, name in enumerate(vocabulary):
                    for a in range(len(across)):
                        for b in range(a + 1, len(across)):
                            keys = (across[a], across[b])
                            out.append((Quantity(tuple((*at, k, j) for k in keys),
                                                 tuple(scalar(value[k][j]) for k in keys)), str(name),
                                        f"{'/'.join(keys)}[{j}]"))
            for key, inner in value.items():
                if key != "exact":
                    walk((*at, key), inner, key if at and at[-1] in ("rows", "queries") else token)
        elif isinstance(value, list):
            for i, inner in enumerate(value):
                if isinstance(inner, dict):
                    walk((*at, i), inner, token)

    walk((), answers, None)
    return out
