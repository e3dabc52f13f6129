"""Multi-head attention for every token (focus = "all", "matrix" or a list): the answers match an independent numpy
implementation written the way torch.nn.MultiheadAttention is defined, on random inputs with 2 or 3 heads, masks,
scale options, positional encodings and RoPE; `queries` in the JSON; every format renders; bad input is one line."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from symattn import SpecError, answers, derive_spec, parse_spec, render_html, render_json, render_markdown
from symattn.cli import main

# ---------------------------------------------------------------- the reference, as torch defines it
#
# torch.nn.MultiheadAttention(embed_dim=E, num_heads=H, bias=False) holds in_proj_weight (3E × E), the stacked
# [W_q; W_k; W_v], and out_proj.weight (E_out × E). It computes q = x W_qᵀ, k = x W_kᵀ, v = x W_vᵀ, splits the
# columns into H consecutive blocks (head h: columns h·d … (h+1)·d − 1), softmax(q_h k_hᵀ / √d + mask) v_h per head
# (attn_mask True, or −∞, where a query may not see a key), concatenates the heads' outputs in head order and
# multiplies by out_proj.weightᵀ. A spec's head h has W_Q^(h) (E × d), so W_q = [W_Q^(1) … W_Q^(H)]ᵀ, and
# out_proj.weight = W_Oᵀ. torch always divides by √d; `divisors` covers symattn's other scale options. RoPE
# (interleaved) turns the pair (2i, 2i+1) of a head's q and k at position m by m·base^(−2i/d), before the scores.


def rope_rows(M: np.ndarray, base: float = 10000.0) -> np.ndarray:
    out = M.copy()
    d = M.shape[1]
    for m in range(M.shape[0]):
        for i in range(d // 2):
            phi = m * base ** (-2 * i / d)
            a, b = M[m, 2 * i], M[m, 2 * i + 1]
            out[m, 2 * i], out[m, 2 * i + 1] = a * np.cos(phi) - b * np.sin(phi), a * np.sin(phi) + b * np.cos(phi)
    return out


def torch_style(X, heads, W_O, divisors, masks, ropes=None):
    """attn_output of torch.nn.MultiheadAttention (no biases) for every token, and each head's output."""
    H, d = len(heads), heads[0][0].shape[1]
    in_proj = np.vstack([np.hstack([h[c] for h in heads]).T for c in range(3)])  # (3E × E_in): [W_q; W_k; W_v]
    E = H * d
    q, k, v = X @ in_proj[:E].T, X @ in_proj[E:2 * E].T, X @ in_proj[2 * E:].T
    outputs = []
    for h in range(H):
        cols = slice(h * d, (h + 1) * d)
        qh, kh, vh = q[:, cols], k[:, cols], v[:, cols]
        if ropes and ropes[h]:
            qh, kh = rope_rows(qh), rope_rows(kh)
        scores = qh @ kh.T / divisors[h]
        if masks[h] is not None:
            scores = np.where(masks[h] == 0, -np.inf, scores)
        weights = np.exp(scores - scores.max(axis=1, keepdims=True))
        weights /= weights.sum(axis=1, keepdims=True)
        outputs.append(weights @ vh)
    concat = np.hstack(outputs)
    out_proj = W_O.T
    return outputs, concat, concat @ out_proj.T


def sinusoidal(n: int, d: int) -> np.ndarray:
    return np.array([[np.sin(p / 10000 ** (2 * (c // 2) / d)) if c % 2 == 0 else np.cos(p / 10000 ** (2 * (c // 2) / d))
                      for c in range(d)] for p in range(n)])


# ---------------------------------------------------------------- random specs


def decimals(rng: random.Random, rows: int, cols: int) -> list[list[str]]:
    return [[f"{rng.randint(-15, 15) / 10:.1f}" for _ in range(cols)] for _ in range(rows)]


def random_spec(rng: random.Random, focus, n: int = 4, H: int = 2, d: int = 2, **section):
    E = H * d
    tokens = [f"t{i}" for i in range(n)]
    heads = [{key: decimals(rng, E, d) for key in ("W_Q", "W_K", "W_V")} for _ in range(H)]
    data = {"kind": "multi_head", "tokens": tokens, "X": decimals(rng, n, E), "focus": focus, "heads": heads,
            "W_O": decimals(rng, E, E), **section}
    return {"title": "random", "lang": "en", "sections": [data]}


def matrix(rows) -> np.ndarray:
    return np.array([[float(v) for v in row] for row in rows])


def reference(data: dict):
    """The numpy answers of a spec's multi-head section, reading the same settings symattn reads."""
    s = data["sections"][0]
    n = len(s["tokens"])
    X = matrix(s["X"])
    if s.get("positional_encoding") == "sinusoidal":
        X = X + sinusoidal(*X.shape)
    heads = [tuple(matrix(h[c]) for c in ("W_Q", "W_K", "W_V")) for h in s["heads"]]
    divisors, masks, ropes = [], [], []
    for h in s["heads"]:
        scale = h.get("scale", s.get("scale", True))
        d_k = h.get("d_k", s.get("d_k", len(h["W_K"][0])))
        divisors.append(np.sqrt(d_k) if scale is True else 1.0 if scale is False else float(scale))
        mask = h.get("mask", s.get("mask"))
        masks.append(None if mask is None else np.tril(np.ones((n, n))) if mask == "causal" else matrix(mask))
        ropes.append(bool(h.get("rope", s.get("rope", False))))
    return torch_style(X, heads, matrix(s["W_O"]), divisors, masks, ropes)


def solved(data: dict) -> dict:
    return answers(derive_spec(parse_spec(data)))["sections"][0]


def floats(texts) -> np.ndarray:
    return np.array([float(t) for t in texts])


def check_queries(data: dict, section: dict, tokens) -> None:
    outputs, concat, final = reference(data)
    names = data["sections"][0]["tokens"]
    assert list(section["queries"]) == list(tokens)
    for token, answer in section["queries"].items():
        t = names.index(token)
        for h, head in enumerate(answer["heads"]):
            np.testing.assert_allclose(floats(head), outputs[h][t], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(floats(answer["concat"]), concat[t], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(floats(answer["output"]), final[t], rtol=1e-10, atol=1e-12)
        assert set(answer["exact"]) == {"heads", "concat", "output"}
    first = section["queries"][tokens[0]]
    assert section["focus"] == tokens[0]
    assert (section["heads"], section["concat"], section["output"]) == (first["heads"], first["concat"],
                                                                       first["output"])


@pytest.mark.parametrize("seed", range(6))
def test_every_token_matches_torch_multihead_attention(seed):
    rng = random.Random(seed)
    H = 2 + seed % 2
    mask = [None, "causal", [[1, 0, 1, 0], [1, 1, 0, 0], [0, 1, 1, 1], [1, 1, 1, 1]]][seed % 3]
    settings = {} if mask is None else {"mask": mask}
    scale = [True, False, "1.5"][seed % 3]
    if scale is not True:
        settings["scale"] = scale
    data = random_spec(rng, "all", H=H, **settings)
    if seed % 2:  # a head's own settings win over the section's
        data["sections"][0]["heads"][1].update(scale=True, d_k=3)
    section = solved(data)
    check_queries(data, section, data["sections"][0]["tokens"])


def test_the_matrix_form_with_positions_matches():
    data = random_spec(random.Random(11), "matrix", n=3, H=2, positional_encoding="sinusoidal")
    data["sections"][0]["heads"][1]["mask"] = "causal"
    check_queries(data, solved(data), data["sections"][0]["tokens"])


def test_the_matrix_form_with_a_rope_head_matches():
    data = random_spec(random.Random(13), "matrix", n=4, H=3)
    data["sections"][0]["heads"][0]["rope"] = True
    data["sections"][0]["heads"][2].update(mask="causal", rope=True)
    check_queries(data, solved(data), data["sections"][0]["tokens"])


def test_a_list_of_tokens_gives_those_queries_in_order():
    data = random_spec(random.Random(3), ["t3", "t1"], H=3, rope=True, mask="causal")
    section = solved(data)
    check_queries(data, section, ["t3", "t1"])
    assert [sorted(detail["queries"]) for detail in section["head_details"]] == [["t1", "t3"]] * 3
    s = data["sections"][0]
    X, W_Q = matrix(s["X"]), matrix(s["heads"][1]["W_Q"])
    detail = section["head_details"][1]  # a RoPE head: Q before the rotation, Q_rotated after it
    np.testing.assert_allclose(np.array([floats(row) for row in detail["Q"]]), X @ W_Q, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.array([floats(row) for row in detail["Q_rotated"]]), rope_rows(X @ W_Q),
                               rtol=1e-10, atol=1e-12)
    assert detail["rope"]["positions"] == [0, 1, 2, 3]


def test_one_token_keeps_its_answers_and_has_them_under_queries_too():
    data = random_spec(random.Random(5), "t2")
    section = solved(data)
    assert list(section["queries"]) == ["t2"]
    assert {key: section["queries"]["t2"][key] for key in ("heads", "concat", "output", "exact")} == {
        key: section[key] for key in ("heads", "concat", "output", "exact")}
    _, _, final = reference(data)
    np.testing.assert_allclose(floats(section["output"]), final[2], rtol=1e-10)


# ---------------------------------------------------------------- documents


def test_every_format_renders_every_focus():
    for focus in ("all", "matrix", ["t1", "t0"]):
        data = random_spec(random.Random(7), focus, n=3, mask="causal")
        data["sections"][0]["heads"][1]["rope"] = True
        derivation = derive_spec(parse_spec(data))
        md = render_markdown(derivation)
        assert "Multi-head attention" in md
        assert ("Z}_{\\text{final}}" in md) == (focus != ["t1", "t0"])
        assert "<math" in render_html(derivation)
        assert set(json.loads(render_json(derivation))["sections"][0]["queries"]) == {"t0", "t1", "t2"} - (
            {"t2"} if isinstance(focus, list) else set())


def test_the_head_matrices_are_named_by_head(tmp_path):
    data = random_spec(random.Random(8), "matrix", n=3, scale=False)
    md = render_markdown(derive_spec(parse_spec(data)))
    assert "{S}^{(1)} &= Q^{(1)} K^{(1)\\top}" in md and "{Z}^{(2)} &= {A}^{(2)} V^{(2)}" in md
    assert "{S'}" not in md  # scale = false: no scaled matrix
    assert "\\bigl[\\, Z^{(1)} \\,\\Vert\\, Z^{(2)} \\,\\bigr]" in md


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_pdf_builds(tmp_path, lang):
    data = random_spec(random.Random(9), "all", n=3, mask="causal", positional_encoding="sinusoidal")
    path = tmp_path / "mh.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert main(["render", str(path), "--lang", lang, "--format", "pdf", "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "mh.pdf").read_bytes().startswith(b"%PDF")


# ---------------------------------------------------------------- bad input and size


@pytest.mark.parametrize(("change", "field"), [
    (lambda s: s.update(heads=[{"output": ["1", "2"]}, {"output": ["1", "2"]}], W_O=[["1"]] * 4), "sections[0].focus"),
    (lambda s: s["heads"][1].update(mask=[[1, 0], [1, 1]]), "sections[0].heads[1].mask"),
    (lambda s: s.update(rope={"pairing": "halves"}), "sections[0].rope.pairing"),
    (lambda s: s.update(mask="casual"), "sections[0].mask"),
    (lambda s: s.update(P=[["1"]]), "sections[0].P"),
    (lambda s: s.update(focus=["t0", "zz"]), "sections[0].focus"),
    (lambda s: s.update(positional_encoding="sinusoidal", rope=True), "sections[0].rope"),
    (lambda s: s.update(P=[["0"] * 4] * 4) or s["heads"][0].update(rope=True), "sections[0].heads[0].rope"),
])
def test_bad_input_names_the_field(change, field):
    data = random_spec(random.Random(1), "all")
    change(data["sections"][0])
    with pytest.raises(SpecError) as error:
        parse_spec(data)
    assert str(error.value).startswith(f"{field}: ") and "\n" not in str(error.value)


def test_settings_need_computed_heads():
    data = {"sections": [{"kind": "multi_head", "focus": "a", "heads": [{"output": ["1"]}], "W_O": [["1"]],
                          "mask": "causal"}]}
    with pytest.raises(SpecError, match=r"^sections\[0\]\.mask: applies to heads computed from weights"):
        parse_spec(data)


def test_rope_on_an_odd_head_names_the_section_key():
    data = random_spec(random.Random(2), "all", d=3, rope=True)
    with pytest.raises(SpecError, match=r"^sections\[0\]\.rope: .*odd"):
        parse_spec(data)


def test_the_size_limit_counts_every_token(tmp_path, capsys):
    def refused(data) -> str:
        path = tmp_path / "big.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        assert main(["render", str(path), "--format", "md", "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and not (tmp_path / "out").exists()
        return err[0]

    rng = random.Random(4)
    assert "matrix form of" in refused(random_spec(rng, "matrix", n=100))
    tokens = [f"t{i}" for i in range(40)]
    line = refused(random_spec(rng, tokens, n=64, d=4))
    assert line.startswith("symattn: error: sections[0].focus: 80 queries of heads derived one by one over 64 keys")
    line = refused(random_spec(rng, "all", n=64, d=4))  # every token's steps: too many, its matrix form fits
    assert "128 queries of heads derived one by one" in line and 'focus = "matrix"' in line


@pytest.mark.parametrize("digits", [None, 3])
@pytest.mark.parametrize("focus", ["all", "matrix", ["t2", "t0"]])
def test_every_displayed_line_checks(focus, digits):
    from symattn.render.displayed import displayed_lines
    from tests.render.test_displayed_lines import check

    data = random_spec(random.Random(12), focus, n=3, mask="causal")
    data["sections"][0]["heads"][1]["scale"] = "1/3"
    lines = displayed_lines(derive_spec(parse_spec(data), lang="en", digits=digits))
    assert len(lines) > 20
    for line in lines:
        check(line)


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_every_conditional_sentence_is_true(lang):
    from symattn.document.sentences import CONDITIONS
    from symattn.document.steps import Heading, Paragraph

    said = set()
    for focus in ("all", "matrix", ["t2", "t1"]):
        data = random_spec(random.Random(14), focus, n=3, H=3, mask="causal", scale=False)
        data["sections"][0]["heads"][1].update(rope={"pairing": "half"}, scale=True)
        data["sections"][0]["heads"][2].update(mask=[[1, 1, 0], [1, 1, 1], [0, 1, 1]], scale="2")
        for step in derive_spec(parse_spec(data), lang=lang).steps:
            if isinstance(step, Paragraph | Heading) and step.key in CONDITIONS:
                assert CONDITIONS[step.key](step.facts), (step.key, step.facts)
                said.add(step.key)
    assert {"rope.intro", "rope.pairs_half"} <= said


def test_symbolic_embeddings_keep_the_matrices_as_formulas():
    data = {"sections": [{"kind": "multi_head", "tokens": ["A", "B"], "X": "symbolic", "d_model": 2, "focus": "all",
                          "heads": [{"W_Q": [["1", "0"], ["0", "1"]], "W_K": [["1", "0"], ["0", "1"]],
                                     "W_V": [["1", "0"], ["0", "1"]]}] * 2,
                          "W_O": [["1", "0"], ["0", "1"], ["1", "0"], ["0", "1"]]}]}
    md = render_markdown(derive_spec(parse_spec(data), lang="en"))
    assert "{Z}_{\\text{final}} &= {Z}_{\\text{concat}} W_O\n\\end{aligned}" in md
    assert "with symbols, each entry is left as that product" in md
