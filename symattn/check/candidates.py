"""The candidates a document's group of numbers is matched against: the derivation's quantities (solve's answers,
with their family, token and head), the forms a matrix derivation prints (transposed, every query stacked, rows
of scalars read across), and
the spec's given inputs (each head's own too) with what follows from them alone (a row of X times a given W)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal, localcontext
from typing import Any

from .claims import path_text
from .document import Quantity


@dataclass(frozen=True)
class Candidate:
    """A quantity a group may print, with what names it (family, token, head); given: an input of the spec or
    what follows from inputs alone (no path into the answers, so never a claim)."""

    quantity: Quantity
    family: str | None
    token: str | None
    head: int | None
    given: bool  # an input of the spec (no path into the answers)
    name: str



def _row_tokens(section: dict[str, Any], family: str) -> list[str]:
    if family in ("K", "V") and section.get("memory_tokens"):
        return list(section["memory_tokens"])
    return list(section.get("tokens") or ())


def computed_of(quantity: Quantity, answers: dict[str, Any]) -> Candidate:
    """A quantity of solve's answers with what names it: its family (the key), token and head."""
    paths = quantity.paths
    whole = len({p[:-1] for p in paths}) > 1  # a matrix, row by row
    at = paths[0][:-2] if whole else paths[0][:-1]
    section = answers["sections"][at[1]]
    family = token = head = None
    for i in range(2, len(at)):
        step, previous = at[i], at[i - 1]
        if isinstance(step, str):
            if previous in ("queries", "rows"):
                token = step
            else:
                family = step
        elif previous == "heads":
            head = step + 1
        elif family is not None:
            rows = _row_tokens(section, family)
            token = rows[step] if step < len(rows) else None
    return Candidate(quantity, family, token, head, False, path_text(at))


def matrix_forms(computed: list[Candidate], answers: dict[str, Any]) -> list[Candidate]:
    """The forms a matrix-form derivation prints that solve's answers hold only in parts: each matrix
    transposed (K^T) and every query's scores, scaled scores, weights and outputs stacked, when every token is
    a query (in the tokens' order)."""
    out = []
    for c in computed:
        paths = c.quantity.paths
        if c.token is None and len({p[:-1] for p in paths}) > 1:
            order = sorted(range(len(paths)), key=lambda k: (paths[k][-1], paths[k][-2]))
            if order != list(range(len(paths))):
                out.append(replace(c, quantity=Quantity(tuple(paths[k] for k in order),
                                                        tuple(c.quantity.values[k] for k in order)),
                                   name=c.name + "^T"))
    for index, section in enumerate(answers.get("sections", ())):
        holders = [(f"sections[{index}]", section, None)]
        holders += [(f"sections[{index}].heads[{h}]", head, h + 1) for h, head in enumerate(section.get("heads") or ())
                    if isinstance(head, dict)]
        for where, holder, head in holders:
            out += _stacked(computed, where, holder, section.get("tokens") or (), head)
    return out


def _stacked(computed: list[Candidate], where: str, holder: dict[str, Any], tokens: Any, head: int | None
             ) -> list[Candidate]:
    """Every query's rows of a section (or of one head) stacked as a matrix, when every token is a query: the
    scores, scaled scores, ALiBi's bias and biased scores, weights and outputs; and the mask as 1 where a key is
    seen, 0 where it is masked (what the scaled scores say: given, never a claim)."""
    queries = holder.get("queries")
    if not isinstance(queries, dict) or not tokens or list(queries) != list(tokens):
        return []
    rows = {(c.family, c.token): c for c in computed if c.name.startswith(f"{where}.queries.") and c.head == head}
    out = []
    for family in ("scores", "scaled_scores", "bias", "biased_scores", "weights", "output"):
        parts = [rows.get((family, t)) for t in tokens]
        if all(parts):
            out.append(Candidate(Quantity(tuple(p for c in parts for p in c.quantity.paths),
                                          tuple(v for c in parts for v in c.quantity.values)),
                                 family, None, head, False, f"{where}.{family} (every query)"))
            if family == "scaled_scores" and any(v.is_infinite() for v in out[-1].quantity.values):
                seen = tuple(Decimal(0 if v.is_infinite() else 1) for v in out[-1].quantity.values)
                out.append(Candidate(Quantity(out[-1].quantity.paths, seen), "mask", None, head, True,
                                     f"{where}.mask (1: the key is seen)"))
    return out


def inputs(spec: Any, answers: dict[str, Any]) -> list[Candidate]:
    """The spec's given matrices (X, the memory, W_Q, W_K, W_V, W_O, a mask, γ, each head's own), whole and row by
    row, and each row of X times each given W_Q, W_K, W_V (a query before RoPE rotates it), as candidates: a group
    that prints one is an input or follows from inputs alone, not a claim."""
    from .diagnose import answered

    out: list[Candidate] = []
    for index, section in enumerate(answered(spec)):
        data = answers["sections"][index] if index < len(answers.get("sections", ())) else {}
        given: list[Candidate] = []
        _given(section, f"sections[{index}]", index, data, None, given)
        out += given + _products(given)
    return out


def _products(given: list[Candidate]) -> list[Candidate]:
    """Each row of X times each whole W_Q, W_K, W_V among a section's inputs (at 40 significant digits)."""
    rows = [c for c in given if c.family == "X" and c.token is not None]
    weights = [c for c in given if c.family in ("W_Q", "W_K", "W_V") and c.token is None]
    out = []
    for w in weights:
        width = max(p[-1] for p in w.quantity.paths) + 1
        height = len(w.quantity.values) // width
        for x in rows:
            if len(x.quantity.values) != height:
                continue
            with localcontext() as context:
                context.prec = 40
                values = tuple(sum((x.quantity.values[i] * w.quantity.values[i * width + j] for i in range(height)),
                                   Decimal(0)) for j in range(width))
            out.append(Candidate(Quantity(tuple((*x.quantity.paths[0][:-1], "·", w.name, j) for j in range(width)),
                                          values), w.family[-1], x.token, w.head, True, f"{x.name}·{w.name}"))
    return out


def _given(holder: Any, where: str, index: int, data: dict[str, Any], head: int | None, out: list) -> None:
    """The given matrices among a section's (or a head's) fields, into `out`."""
    fields = getattr(holder, "__dataclass_fields__", {})
    for name in fields:
        value = getattr(holder, name, None)
        if isinstance(value, tuple) and value and all(hasattr(getattr(v, "values", None), "tolist") for v in value):
            for h, inner in enumerate(value):  # one given matrix per head (grouped-query W_Q)
                _matrix(inner.values, name, f"{where}.{name}[{h}]", index, data, h + 1, out)
            continue
        if isinstance(value, tuple) and value and hasattr(value[0], "__dataclass_fields__"):
            for h, inner in enumerate(value):  # heads, kv_heads
                _given(inner, f"{where}.{name}[{h}]", index, data, h + 1, out)
            continue
        values = getattr(value, "values", None)
        if values is None or not hasattr(values, "tolist") or (head is None and name in data):
            continue
        _matrix(values, name, f"{where}.{name}", index, data, head, out)


def _matrix(values: Any, name: str, where: str, index: int, data: dict[str, Any], head: int | None, out: list
            ) -> None:
    """One given matrix, whole and row by row, into `out` (none when it holds symbols)."""
    try:
        rows = [[_decimal(v) for v in row] for row in values.tolist()]
    except (TypeError, ValueError, AttributeError):  # symbols
        return
    tokens = data.get("memory_tokens" if name == "memory" else "tokens") or []
    at = ("inputs", index, where)
    out.append(Candidate(Quantity(tuple((*at, i, j) for i, row in enumerate(rows) for j in range(len(row))),
                                  tuple(v for row in rows for v in row)), name, None, head, True, where))
    for i, row in enumerate(rows):
        token = tokens[i] if name in ("X", "memory") and i < len(tokens) else None
        out.append(Candidate(Quantity(tuple((*at, i, j) for j in range(len(row))), tuple(row)), name, token,
                             head, True, f"{where}[{i}]"))


def _decimal(value: Any) -> Decimal:
    """An exact rational as a decimal of 40 significant digits (finer than any printed place)."""
    p, q = value.as_numer_denom()
    with localcontext() as context:
        context.prec = 40
        return Decimal(int(p)) / Decimal(int(q))


def records(answers: dict[str, Any]) -> list[tuple[Quantity, str | None, str]]:
    """(quantity, token, name) for each row of scalars a derivation's table prints together, its paths the
    answers': a token's scalars (its mean, variance and σ, in the answers' order) and, where a section has a
    vocabulary, each entry's values across its vectors (a ranking table's logit and probability)."""
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
