"""What the attention kinds pass on to a later section (Kind.outputs, Kind.inputs): each token's output row, computed
for every token even when the section's focus derives fewer (the document is not changed: the missing rows come
from a second computation with every token in focus), and the rows the section starts from."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from sympy import ImmutableMatrix

from ..engine import Numbers
from ..numbers import certify
from ..spec.model import Focus, Section
from .base import Carried, Kind


@dataclass(frozen=True)
class KnownRows(Carried):
    """Carried rows with the numbers of their irrational entries (engine.Numbers), so that rounding them for the
    next section evaluates nothing again."""

    known: Numbers | None = None


def every_token(kind: Kind, section: Section, result: Any) -> tuple[Section, Any]:
    """The section and its result with every token in focus: itself when its focus holds every token already,
    else the section recomputed with focus on all its tokens (the kinds' compute is pure)."""
    tokens = section.tokens
    if set(section.focus.tokens) == set(tokens):
        return section, result
    complete = replace(section, focus=Focus("tokens", tokens))
    return complete, kind.compute(complete)


def attention_outputs(kind: Kind, section: Section, result: Any) -> KnownRows | None:
    """Self- and cross-attention: each token's output z_t = Σ_j w_j v_j (None without values: given scores)."""
    if result.V is None:
        return None
    section, result = every_token(kind, section, result)
    rows = [result.queries[i].output for i in range(len(section.tokens))]
    return KnownRows(section.tokens, ImmutableMatrix.vstack(*rows), result.known)


def combined_outputs(kind: Kind, section: Section, result: Any) -> KnownRows:
    """Multi-head and grouped-query attention: each token's output row, the heads' concatenation times W_O."""
    if not section.tokens:  # heads whose outputs are given: the one focus token's row
        return KnownRows(section.focus.tokens, result.output, result.known)
    section, result = every_token(kind, section, result)
    rows = [_combined(result, i) for i in range(len(section.tokens))]
    return KnownRows(section.tokens, ImmutableMatrix.vstack(*(row.output for row in rows)),
                     Numbers(*(row.known for row in rows)))


def _combined(result: Any, i: int) -> Any:
    """Query i's MultiHead: a multi-head result's row, or a grouped-query result's combination."""
    return result.rows[i] if hasattr(result, "rows") else result.combined(i)


def start_rows(tokens: tuple[str, ...], X: ImmutableMatrix | None) -> Carried | None:
    """The rows a section starts from (X, or X + P with positional encodings); None for a section without X (given
    Q, K and V, or given head outputs)."""
    return None if X is None else Carried(tokens, X)


def rows_error(section: Section, errors: dict[str, float], field: str = "X", positions: Any = None) \
        -> tuple[float, float]:
    """(error, size) of the rows a section computes from: its carried matrix's error and largest entry, plus its
    positional encodings' (exact, so no error; sinusoids are at most 1 in size)."""
    extra = 0.0 if positions is None else 1.0 if positions.mode == "sinusoidal" else certify.largest(positions.P)
    return errors.get(field, 0.0), certify.largest(getattr(section, field)) + extra


def cached_sizes(cache: Any) -> tuple[float, float]:
    """The largest entries of a KV cache's keys and values (exact inputs), or zeros without one."""
    return (0.0, 0.0) if cache is None else (certify.largest(cache.K), certify.largest(cache.V))
