"""The KV cache of a decoding step: the cached step equals recomputing the whole sequence (against an independent
numpy implementation), its bad input, its answers and its documents.

Alignment (the convention where frameworks could differ; this is Hugging Face's cache with PyTorch's causal mask):
the p cached positions are 0 … p − 1, new token t is at absolute position p + t, and its query attends to keys
0 … p + t, i.e. the mask is np.tril(ones((n, p + n)), k=p), the last n rows of the whole sequence's causal mask.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sympy import ImmutableMatrix, Integer, Rational, cos, sin, sqrt

from symattn import answers, derive, parse_spec, render_markdown
from symattn.cli import main
from symattn.features.kv_cache import engine as engine_cache
from symattn.spec.model import Mask, Rope

# ------------------------------------------------------------ an independent float implementation


def softmax_rows(S: np.ndarray) -> np.ndarray:
    A = np.exp(S - S.max(axis=1, keepdims=True))
    return A / A.sum(axis=1, keepdims=True)


def sinusoidal(positions: np.ndarray, d: int) -> np.ndarray:
    """PE(pos, 2i) = sin(pos / 10000^{2i/d}), PE(pos, 2i + 1) = cos(…), positions as given (absolute)."""
    P = np.zeros((len(positions), d))
    for c in range(d):
        angle = positions / 10000 ** (2 * (c // 2) / d)
        P[:, c] = np.sin(angle) if c % 2 == 0 else np.cos(angle)
    return P


def whole_sequence(X: np.ndarray, WQ, WK, WV, positional: bool, pairing: str | None = None) -> np.ndarray:
    """Causal self-attention over the whole sequence, no cache: softmax(QKᵀ/√d_k + M)V with M lower triangular
    (with `pairing`, RoPE: Q and K rotated for positions 0 … p + n − 1)."""
    total = X.shape[0]
    if positional:
        X = X + sinusoidal(np.arange(total), X.shape[1])
    Q, K, V = X @ WQ, X @ WK, X @ WV
    if pairing is not None:
        Q, K = rotate(Q, np.arange(total), pairing), rotate(K, np.arange(total), pairing)
    S = Q @ K.T / np.sqrt(WK.shape[1]) + np.where(np.tril(np.ones((total, total))) == 1, 0.0, -np.inf)
    return softmax_rows(S) @ V


def cache_of(X_past: np.ndarray, WK, WV, positional: bool,
             pairing: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The keys and values a model stores for the past tokens (with RoPE, the keys rotated for their positions)."""
    if positional:
        X_past = X_past + sinusoidal(np.arange(X_past.shape[0]), X_past.shape[1])
    K = X_past @ WK
    return (K if pairing is None else rotate(K, np.arange(X_past.shape[0]), pairing)), X_past @ WV


def texts(M: np.ndarray) -> list[list[str]]:
    """A float matrix as spec entries (each float's shortest repr, read exactly)."""
    return [[repr(float(v)) for v in row] for row in M]


def random_case(seed: int, positional: bool, pairing: str | None = None):
    rng = np.random.default_rng(seed)
    p, n, d = int(rng.integers(1, 4)), int(rng.integers(1, 3)), 2 * int(rng.integers(1, 3))
    X = np.round(rng.uniform(-1.5, 1.5, (p + n, d)), 1)
    WQ, WK, WV = (np.round(rng.uniform(-1, 1, (d, d)), 1) for _ in range(3))
    past_K, past_V = cache_of(X[:p], WK, WV, positional, pairing)
    section = {"kind": "self_attention", "tokens": [f"n{t}" for t in range(n)], "X": texts(X[p:]),
               "W_Q": texts(WQ), "W_K": texts(WK), "W_V": texts(WV), "past_tokens": [f"p{j}" for j in range(p)],
               "past_K": texts(past_K), "past_V": texts(past_V)}
    if positional:
        section["positional_encoding"] = "sinusoidal"
    if pairing is not None:
        section["rope"] = {"pairing": pairing}
    return section, whole_sequence(X, WQ, WK, WV, positional, pairing), p, n


@pytest.mark.parametrize(("positional", "pairing"), [(False, None), (True, None), (False, "interleaved"),
                                                     (False, "half")], ids=["plain", "sinusoidal", "rope", "rope-half"])
@pytest.mark.parametrize("seed", range(6))
def test_the_cached_step_equals_recomputing_the_whole_sequence(seed: int, positional: bool, pairing) -> None:
    section, whole, p, n = random_case(seed, positional, pairing)
    data = answers(derive(parse_spec({"sections": [section]})))["sections"][0]
    assert data["positions"] == list(range(p, p + n)) and len(data["V"]) == p + n
    assert len(data["K"]) == (p + n if pairing is None else n)  # with RoPE, K is the new keys before the rotation
    for t, token in enumerate(section["tokens"]):
        output = [float(v) for v in data["queries"][token]["output"]]
        assert np.allclose(output, whole[p + t], atol=1e-9, rtol=0)
        weights = data["queries"][token]["weights"]
        assert len(weights) == p + n and all(float(w) == 0 for w in weights[p + t + 1:])
    if pairing is not None:  # RoPE's positions are the new tokens' absolute ones; the cache's keys stay as given
        assert data["rope"]["positions"] == list(range(p, p + n)) and len(data["K_rotated"]) == p + n
        assert [[float(v) for v in row] for row in data["K_rotated"][:p]] == [
            [float(v) for v in row] for row in section["past_K"]]


def rotate(M: np.ndarray, positions: np.ndarray, pairing: str, base: float = 10000.0) -> np.ndarray:
    """RoPE in float: pair i, (2i, 2i + 1) interleaved (RoFormer) or (i, i + d/2) half (GPT-NeoX, LLaMA's
    rotate_half), turned by the angle m·θ_i, θ_i = base^(−2i/d), at position m."""
    d = M.shape[1]
    out = M.copy()
    for i in range(d // 2):
        a, b = (2 * i, 2 * i + 1) if pairing == "interleaved" else (i, i + d // 2)
        phi = positions * base ** (-2 * i / d)
        out[:, a] = M[:, a] * np.cos(phi) - M[:, b] * np.sin(phi)
        out[:, b] = M[:, a] * np.sin(phi) + M[:, b] * np.cos(phi)
    return out


def to_float(M: ImmutableMatrix) -> np.ndarray:
    return np.array(M.evalf(30).tolist(), dtype=float)


@pytest.mark.parametrize("pairing", ["interleaved", "half"])
@pytest.mark.parametrize("seed", range(3))
def test_the_cached_step_with_rope_equals_the_whole_sequence(seed: int, pairing: str) -> None:
    """The cache stores keys rotated for their own positions; the new queries and keys turn by p + t."""
    rng = np.random.default_rng(100 + seed)
    p, n, d = 2 + seed % 2, 1 + seed % 2, 4
    Q, K, V = (rng.integers(-9, 10, (p + n, d)) / 10 for _ in range(3))
    at = np.arange(p + n)
    Qr, Kr = rotate(Q, at, pairing), rotate(K, at, pairing)
    S = Qr @ Kr.T / np.sqrt(d) + np.where(np.tril(np.ones((p + n, p + n))) == 1, 0.0, -np.inf)
    whole = softmax_rows(S) @ V
    exact = [ImmutableMatrix([[Rational(int(round(10 * v)), 10) for v in row] for row in M]) for M in (Q, K, V)]
    past_K = ImmutableMatrix([[Rational(repr(float(v))) for v in row] for row in Kr[:p]])  # stored rotated
    new = {"Q": exact[0][p:, :], "K": exact[1][p:, :], "V": exact[2][p:, :]}
    step = engine_cache.decode(new, past_K, exact[2][:p, :], sqrt(Integer(d)), tuple(range(n)),
                               Mask.causal(n, p).values, Rope(pairing=pairing))
    for t in range(n):
        assert np.allclose(to_float(step.queries[t].output), whole[p + t], atol=1e-9, rtol=0)


def test_the_offset_causal_mask_is_the_whole_masks_last_rows() -> None:
    for p, n in ((0, 3), (2, 1), (3, 2)):
        whole = np.tril(np.ones((p + n, p + n), dtype=int))
        assert np.array_equal(np.array(Mask.causal(n, p).values.tolist(), dtype=int), whole[p:])
        assert np.array_equal(whole[p:], np.tril(np.ones((n, p + n), dtype=int), k=p))


# ------------------------------------------------------------ a small cache, by hand

def exact(rows: list[list[float]]) -> list[list[str]]:
    """Entries as text: parse_spec refuses binary floats."""
    return [[str(v) for v in row] for row in rows]


SPEC = {"kind": "self_attention", "past_tokens": ["I", "love"], "past_K": exact([[1.0, 0.5], [0.2, 1.1]]),
        "past_V": exact([[0.5, 1.0], [1.5, -0.5]]), "tokens": ["cats", "too"], "X": exact([[1.0, 0.5], [0.2, 1.5]]),
        "W_Q": exact([[1, 0], [0, 1]]), "W_K": exact([[0.5, 0.1], [-0.3, 1.0]]), "W_V": exact([[1, 0], [0, 1]])}


def write(tmp_path: Path, section: dict) -> Path:
    path = tmp_path / "kv.json"
    path.write_text(json.dumps({"sections": [section]}), encoding="utf-8")
    return path


def test_the_answers_give_the_cache_and_every_key() -> None:
    data = answers(derive(parse_spec({"sections": [SPEC]})))["sections"][0]
    assert data["past_tokens"] == ["I", "love"] and data["key_tokens"] == ["I", "love", "cats", "too"]
    assert data["tokens"] == ["cats", "too"] and data["positions"] == [2, 3]
    assert data["K"][0] == ["1.00000000000000000000000000000", "0.500000000000000000000000000000"]
    assert data["K"][2][0].startswith("0.35") and data["V"][3][1].startswith("1.5")
    cats = data["queries"]["cats"]
    assert cats["exact"]["scores"] == ["\\frac{5}{4}", "\\frac{3}{4}", "\\frac{13}{20}", "\\frac{41}{100}"]
    assert cats["scaled_scores"][3] == "-inf" and float(cats["weights"][3]) == 0


def test_the_document_says_which_positions_each_new_token_sees() -> None:
    en = render_markdown(derive(parse_spec({"sections": [SPEC]}), lang="en"))
    assert "`cats`, at position 2, sees positions 0–2: `I`, `love` and itself." in en
    assert "`too`, at position 3, sees positions 0–3: `I`, `love`, `cats` and itself." in en
    assert "| `love` | $1$ | $[0.20,\\ 1.10]$ | $[1.50,\\ -0.50]$ |" in en  # the cache before, with positions
    assert "| `too` | $3$ | $[-0.35,\\ 1.52]$ | $[0.20,\\ 1.50]$ |" in en  # and after
    assert "The row of position 3 (`too`) in the whole sequence's attention:" in en
    ja = render_markdown(derive(parse_spec({"sections": [SPEC]}), lang="ja"))
    assert "位置 2 の「`cats`」は位置 0〜2、つまり「`I`」、「`love`」と自分自身を参照する。" in ja


def test_one_new_token_sees_every_position_and_nothing_is_masked() -> None:
    one = {**SPEC, "tokens": ["cats"], "X": exact([[1.0, 0.5]])}
    en = render_markdown(derive(parse_spec({"sections": [one]}), lang="en"))
    assert "No entry of $M$ is 0 here: nothing is masked." in en and "replaced by −∞" not in en


def test_a_given_mask_spans_the_cached_positions() -> None:
    masked = {**SPEC, "mask": [[0, 1, 1, 0], [1, 0, 1, 1]]}
    data = answers(derive(parse_spec({"sections": [masked]})))["sections"][0]
    queries = data["queries"]
    assert queries["cats"]["scaled_scores"][0] == "-inf" and queries["too"]["scaled_scores"][1] == "-inf"
    en = render_markdown(derive(parse_spec({"sections": [masked]}), lang="en"))
    assert "`cats`, at position 2, sees `love` and itself." in en


@pytest.mark.parametrize(("change", "message"), [
    ({"past_V": exact([[0.5, 1.0]])}, "sections[0].past_V: 1 rows, but there are 2 past_tokens"),
    ({"past_K": exact([[1.0, 0.5, 1], [0.2, 1.1, 1]])},
     "sections[0].past_K: 3 columns, but the section's keys are 2 wide"),
    ({"past_V": exact([[0.5], [1.5]])}, "sections[0].past_V: 1 columns, but the section's values are 2 wide"),
    ({"past_K": None}, "sections[0].past_K: missing: a KV cache gives past_tokens, past_K and past_V together"),
    ({"past_tokens": None}, "sections[0].past_tokens: missing"),
    ({"past_tokens": ["I", "cats"]}, "sections[0].past_tokens[1]: token 'cats' is also one of the new tokens"),
    ({"mask": [[1, 0], [1, 1]]}, "sections[0].mask: 2 × 2, but with a KV cache there are 2 cached + 2 new = 4 "
                                 "positions, a column each (expected 2 × 4"),
])
def test_bad_caches_are_one_line_errors(change: dict, message: str, tmp_path: Path, capsys) -> None:
    section = {k: v for k, v in {**SPEC, **change}.items() if v is not None}
    assert main(["solve", str(write(tmp_path, section))]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_every_format_renders(tmp_path: Path) -> None:
    spec = write(tmp_path, SPEC)
    for lang in ("ja", "en"):
        out = tmp_path / lang
        assert main(["render", str(spec), "--lang", lang, "--format", "md,html,json", "--out", str(out)]) == 0
        html = (tmp_path / lang / "kv.html").read_text(encoding="utf-8")
        assert "<svg" in html and html.count("<table") >= 4


@pytest.mark.pdf
@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_pdf_compiles(lang: str, tmp_path: Path) -> None:
    assert main(["render", str(write(tmp_path, SPEC)), "--lang", lang, "--format", "pdf", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "kv.pdf").read_bytes().startswith(b"%PDF")


def test_sinusoidal_positions_continue_after_the_cache() -> None:
    spec = parse_spec({"sections": [{**SPEC, "positional_encoding": "sinusoidal"}]})
    P = spec.sections[0].positions.P.values
    assert P[0, 0] == sin(2) and P[1, 1] == cos(3)  # d = 2: PE(pos, 0) = sin(pos), PE(pos, 1) = cos(pos)
    en = render_markdown(derive(spec, lang="en"))
    assert "the rows of $P$ above are those of their absolute positions (positions 2–3)" in en
