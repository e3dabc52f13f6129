"""The pipeline recomputed in floats under alternative hypotheses (the mistakes people make): no scaling, d_k for
√d_k, a weight matrix transposed, the softmax over the wrong axis, a mask missing or misapplied, the positional
encoding's exponent from the dimension index, earlier values rounded to k decimals. Floats suffice: a hypothesis
only has to reproduce printed numbers of a few decimals, and the exact derivation decides what is correct."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .. import kinds

Matrix = list[list[float]]  # rows of floats

# The stages whose rounded values a later stage may have been computed from, in pipeline order.
STAGES = ("X_plus_P", "projections", "scores", "scaled_scores", "weights")
PLACES = (1, 2, 3, 4)


@dataclass(frozen=True)
class Variant:
    """One hypothesis: what differs from the correct computation (the defaults are the correct one)."""

    cause: str = "correct"
    divisor: str = "spec"  # "spec", "none" (no scaling), "d_k" (divided by d_k), "times" (multiplied by √d_k)
    transposed: str = ""  # "W_Q", "W_K" or "W_V": that matrix used transposed
    axis: int = 1  # 1: softmax over each query's keys (correct); 0: over the queries
    mask: str = "spec"  # "spec", "none" (left out), "transposed", "zero" (masked scores 0, not −∞), "causal"
    pe: str = "pair"  # "pair" (correct), "dim2" (10000^(2j/d)), "dim1" (10000^(j/d)), "concat" (sin half, cos
    # half), "from1" (positions counted from 1)
    softmax: str = "softmax"  # "exp": e^a taken for the weights, never divided by their sum
    values: str = "V"  # "K": the output computed as w·K
    stage: str = ""  # rounded_intermediates: the stage whose values were rounded to `places` decimals
    places: int = 0
    explanation: str = ""  # a kind's own mistake (answer_variants): its one-line explanation


@dataclass(frozen=True)
class Section:
    """What a self- or cross-attention section computes from, in floats (lists of rows)."""

    X: Matrix | None  # the query rows before any positional encoding
    M: Matrix | None  # the key/value rows (X itself in self-attention)
    W: dict[str, Matrix]  # W_Q, W_K, W_V (empty in a given form)
    given: dict[str, Matrix]  # Q, K, V or scores of a given form
    d_k: int | None
    divisor: float
    mask: Matrix | None  # 1: visible
    sinusoidal: bool
    P: Matrix | None  # a given P (sinusoidal: None, computed per variant)
    own_keys: bool  # keys and values from X itself (self-attention), not from a memory
    tokens: tuple[str, ...]


def section_of(spec: Any) -> Section | None:
    """The float inputs of a section the hypotheses can recompute, as its kind gives them (kinds/<name>/
    hypotheses.py: self- and cross-attention, computed or given, without RoPE or a KV cache, numeric); None for a
    kind without hypotheses or a section they do not model."""
    hypotheses = kinds.folder_module(spec.kind, "hypotheses")
    recompute = getattr(hypotheses, "inputs_of_spec", None)  # (a norm's hypotheses work from its answers)
    inputs = None if recompute is None else recompute(spec)
    return None if inputs is None else Section(**inputs)


def section_from_data(data: dict[str, Any]) -> Section | None:
    """section_of() of a section given as plain spec data with exact decimal strings (an exam version in
    exam.json, which `symattn grade` diagnoses); None for any other."""
    kind = data.get("kind")
    hypotheses = kinds.folder_module(kind, "hypotheses") if isinstance(kind, str) else None
    recompute = getattr(hypotheses, "inputs_of_data", None)
    inputs = None if recompute is None else recompute(data)
    return None if inputs is None else Section(**inputs)


def answer_variants(data: dict[str, Any], spec: Any = None) -> list[tuple[Variant, dict[tuple, float]]]:
    """The mistakes a kind recomputes from its section's answers alone (kinds/<name>/hypotheses.py's
    alternatives(): a norm's unbiased variance, ε left out, ...), each with its float predictions by path within
    the section (`spec`: the section's spec when at hand, for its given matrices); [] for a kind without them."""
    kind = data.get("kind")
    module = kinds.folder_module(kind, "hypotheses") if isinstance(kind, str) else None
    alternatives = getattr(module, "alternatives", None)
    if alternatives is None:
        return []
    return [(Variant(cause, stage=stage or "", places=places or 0, explanation=why), predicted)
            for cause, why, stage, places, predicted in alternatives(data, spec)]


def variants(section: Section) -> list[Variant]:
    """The hypotheses that apply to a section (the correct computation first)."""
    out = [Variant()]
    if section.d_k is not None:
        out += [Variant("no_scaling", divisor="none"), Variant("scaled_by_d_k", divisor="d_k"),
                Variant("times_sqrt_d_k", divisor="times")]
    out += [Variant("unnormalised_softmax", softmax="exp"), Variant("keys_for_values", values="K")]
    out += [Variant("transposed", transposed=name) for name, W in section.W.items() if len(W) == len(W[0])]
    out.append(Variant("softmax_axis", axis=0))
    if section.mask is not None:
        out += [Variant("mask", mask=m) for m in ("none", "transposed", "zero")]
    elif section.own_keys:
        out.append(Variant("mask", mask="causal"))
    if section.sinusoidal:
        out += [Variant("pe_index", pe="dim2"), Variant("pe_index", pe="dim1"),
                Variant("pe_concatenated", pe="concat"), Variant("positions_from_1", pe="from1")]
    stages = [s for s in STAGES if s != "X_plus_P" or section.sinusoidal or section.P is not None]
    if not section.W:
        stages = [s for s in stages if s not in ("X_plus_P", "projections")]
    out += [Variant("rounded_intermediates", stage=s, places=k) for s in stages for k in PLACES]
    return out


def sinusoids(n: int, d: int, pe: str) -> Matrix:
    """PE(pos, j): the paper's exponent 2⌊j/2⌋/d, or the mistaken 2j/d ("dim2") or j/d ("dim1"); the sines in the
    first half and the cosines in the second ("concat", as tensor2tensor and the Illustrated Transformer's code
    do), or positions counted from 1 ("from1")."""
    half = (d + 1) // 2

    def entry(pos: int, j: int) -> float:
        if pe == "concat":
            pair, sine = (j, True) if j < half else (j - half, False)
            angle = pos / 10000.0 ** (2 * pair / d)
            return math.sin(angle) if sine else math.cos(angle)
        exponent = {"pair": 2 * (j // 2), "dim2": 2 * j, "dim1": j, "from1": 2 * (j // 2)}[pe] / d
        angle = (pos + (pe == "from1")) / 10000.0 ** exponent
        return math.sin(angle) if j % 2 == 0 else math.cos(angle)

    return [[entry(pos, j) for j in range(d)] for pos in range(n)]


def _matmul(a: Matrix, b: Matrix) -> Matrix:
    if len(a[0]) != len(b):
        raise ValueError("shapes")
    columns = list(zip(*b, strict=True))
    return [[math.fsum(x * y for x, y in zip(row, col, strict=True)) for col in columns] for row in a]


def _transpose(a: Matrix) -> Matrix:
    return [list(col) for col in zip(*a, strict=True)]


def _rounded(values: Matrix, variant: Variant, stage: str) -> Matrix:
    if variant.stage != stage:
        return values
    return [[half_up(v, variant.places) if math.isfinite(v) else v for v in row] for row in values]


def half_up(value: float, places: int) -> float:
    """A value rounded half-up to `places` decimals, as by hand (round() rounds half to even); a float a few ulps
    from a decimal tie (0.35 as 0.34999…) counts as the tie it stands for."""
    scale = 10.0 ** places
    return math.floor(value * scale + 0.5 + TIE) / scale


TIE = 1e-9  # how near a tie a scaled float counts as one


def run(section: Section, variant: Variant, queries: dict[str, int]) -> dict[tuple, float]:
    """The section's answers under one hypothesis, keyed by path within the section (as solve's JSON):
    P, X_plus_P, Q, K, V and queries.<token>.scores/scaled_scores/weights/output for the tokens asked."""
    out: dict[tuple, float] = {}
    given = section.given
    if given:
        Q, K, V = given.get("Q"), given.get("K"), given.get("V")
    else:
        X, M = section.X, section.M
        P = sinusoids(len(X), len(X[0]), variant.pe) if section.sinusoidal else section.P
        if P is not None:
            _put(out, ("P",), P)
            X = _rounded([[x + p for x, p in zip(r, q, strict=True)] for r, q in zip(X, P, strict=True)], variant,
                         "X_plus_P")
            _put(out, ("X_plus_P",), X)
            M = X
        W = {k: (_transpose(w) if variant.transposed == k else w) for k, w in section.W.items()}
        try:
            Q, K, V = _matmul(X, W["W_Q"]), _matmul(M, W["W_K"]), _matmul(M, W["W_V"])
        except ValueError:  # a transposed matrix that does not fit
            return out
        Q, K, V = (_rounded(m, variant, "projections") for m in (Q, K, V))
        for name, m in zip("QKV", (Q, K, V), strict=True):
            _put(out, (name,), m)
    scores = given["scores"] if "scores" in given else _matmul(Q, _transpose(K))
    scores = _rounded(scores, variant, "scores")
    divisor = {"spec": section.divisor, "none": 1.0, "d_k": float(section.d_k or 1),
               "times": 1 / section.divisor}[variant.divisor]
    scaled = _rounded([[s / divisor for s in row] for row in scores], variant, "scaled_scores")
    visible = _visible(section, variant, len(scaled), len(scaled[0]))
    if variant.mask == "zero":
        scaled = [[s if v else 0.0 for s, v in zip(r, w, strict=True)] for r, w in zip(scaled, visible, strict=True)]
        visible = [[True] * len(r) for r in visible]
    if variant.softmax == "exp":
        weights = [[_exp(s) if v else 0.0 for s, v in zip(r, w, strict=True)] for r, w in zip(scaled, visible,
                                                                                          strict=True)]
    else:
        weights = _softmax(scaled, visible) if variant.axis == 1 else \
            _transpose(_softmax(_transpose(scaled), _transpose(visible)))
    weights = _rounded(weights, variant, "weights")
    values = K if variant.values == "K" else V
    try:
        output = None if values is None else _matmul(weights, values)
    except ValueError:  # w·K where K has fewer keys than weights (it never does) or V is of another width
        output = None
    for token, i in queries.items():
        at = ("queries", token)
        _put(out, (*at, "scores"), [scores[i]])
        _put(out, (*at, "scaled_scores"), [[s if v else -math.inf for s, v in zip(scaled[i], visible[i],
                                                                                  strict=True)]])
        _put(out, (*at, "weights"), [weights[i]])
        if output is not None:
            _put(out, (*at, "output"), [output[i]])
    return out


def _exp(value: float) -> float:
    return math.exp(value) if value < 700 else math.inf


def _visible(section: Section, variant: Variant, n: int, m: int) -> list[list[bool]]:
    if variant.mask == "causal":
        return [[j <= i for j in range(m)] for i in range(n)]
    if section.mask is None or variant.mask == "none":
        return [[True] * m for _ in range(n)]
    mask = _transpose(section.mask) if variant.mask == "transposed" and n == m else section.mask
    return [[v > 0 for v in row] for row in mask]


def _softmax(scaled: Matrix, visible: list[list[bool]]) -> Matrix:
    """Each row's softmax over its visible entries (a row with none: zeros)."""
    out = []
    for row, seen in zip(scaled, visible, strict=True):
        top = max((s for s, v in zip(row, seen, strict=True) if v), default=0.0)
        e = [math.exp(s - top) if v else 0.0 for s, v in zip(row, seen, strict=True)]
        total = math.fsum(e) or 1.0
        out.append([x / total for x in e])
    return out


def _put(out: dict[tuple, float], at: tuple, values: Matrix) -> None:
    """Rows under `at`: (at, i, j) for a matrix; a one-row vector (queries) as (at, j)."""
    vector = at[0] == "queries"
    for i, row in enumerate(values):
        for j, value in enumerate(row):
            out[(*at, j) if vector else (*at, i, j)] = value
