"""The backward pass (kind = "backward"), through the public API: every gradient `solve` gives agrees with a NumPy
backward written from the formulas and with central finite differences of a float64 forward pass (random shapes,
masks and scales, dO given or the squared-error loss); D both ways; masked positions get dS = 0 exactly; bad input
is one line naming its field; the example renders in both languages and every line it shows checks."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import symattn
from symattn.cli import main
from symattn.render.displayed import displayed_lines

# ------------------------------------------------------------ the pass in float64, from the formulas


def forward(X, W_Q, W_K, W_V, allowed, c):
    """O = softmax(XW_Q (XW_K)ᵀ / c, masked) · XW_V, and its intermediates."""
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    S = np.where(allowed, Q @ K.T / c, -np.inf)
    e = np.exp(S - S.max(axis=1, keepdims=True))
    P = e / e.sum(axis=1, keepdims=True)
    return Q, K, V, S, P, P @ V


def backward(X, W_Q, W_K, W_V, allowed, c, dO):
    Q, K, V, S, P, O = forward(X, W_Q, W_K, W_V, allowed, c)
    dV = P.T @ dO
    dP = dO @ V.T
    D = (dP * P).sum(axis=1, keepdims=True)
    dS = P * (dP - D)
    dQ, dK = dS @ K / c, dS.T @ Q / c
    return {"P": P, "O": O, "dO": dO, "dV": dV, "dP": dP, "D": D[:, 0], "dS": dS, "dQ": dQ, "dK": dK,
            "dW_Q": X.T @ dQ, "dW_K": X.T @ dK, "dW_V": X.T @ dV, "dX": dQ @ W_Q.T + dK @ W_K.T + dV @ W_V.T}


def central(f, M, h=1e-6):
    """∂f/∂M by central differences (f(M + h) − f(M − h)) / 2h, entry by entry."""
    grad = np.zeros_like(M)
    for index in np.ndindex(*M.shape):
        up, down = M.copy(), M.copy()
        up[index] += h
        down[index] -= h
        grad[index] = (f(up) - f(down)) / (2 * h)
    return grad


def floats(rows):
    return np.array([[float(t) for t in row] for row in rows]) if isinstance(rows[0], list) \
        else np.array([float(t) for t in rows])


def random_matrix(rng, rows, cols):
    return [[str(rng.choice([-1, 1]) * rng.randint(0, 20) / 10) for _ in range(cols)] for _ in range(rows)]


def random_spec(rng):
    upstream = rng.choice(["dO", "mse", "cross_entropy"])
    # cross-entropy's exact softmax of O nests exponentials: at most 3 tokens, and 2 or 3 classes, keep it seconds
    n = rng.randint(1, 3 if upstream == "cross_entropy" else 4)
    d, d_k, d_v = rng.randint(1, 3), rng.randint(1, 3), rng.randint(2 if upstream == "cross_entropy" else 1, 3)
    tokens = [f"t{t}" for t in range(n)]
    forward_section = {"name": "attn", "kind": "self_attention", "tokens": tokens, "X": random_matrix(rng, n, d),
                       "W_Q": random_matrix(rng, d, d_k), "W_K": random_matrix(rng, d, d_k),
                       "W_V": random_matrix(rng, d, d_v)}
    mask = rng.choice(["none", "causal", "matrix"])
    if mask == "causal":
        forward_section["mask"] = "causal"
    elif mask == "matrix":
        rows = [[rng.randint(0, 1) for _ in range(n)] for _ in range(n)]
        for i, row in enumerate(rows):
            row[rng.randrange(n) if not any(row) else i] |= not any(row)
        forward_section["mask"] = rows
    scale = rng.choice([True, False, "0.5", "3"])
    if scale is not True:
        forward_section["scale"] = scale
    back = {"kind": "backward", "from": "attn", "focus": rng.choice(tokens)}
    if upstream == "dO":
        back["dO"] = random_matrix(rng, n, d_v)
    elif upstream == "mse":
        back.update(loss="mse", T=random_matrix(rng, n, d_v))
    else:
        back.update(loss="cross_entropy", targets=[rng.randint(1, d_v) for _ in range(n)])
    return {"sections": [forward_section, back]}


def inputs(spec):
    f = spec["sections"][0]
    n = len(f["tokens"])
    X, W_Q, W_K, W_V = (floats(f[k]) for k in ("X", "W_Q", "W_K", "W_V"))
    mask = f.get("mask")
    allowed = np.tril(np.ones((n, n), bool)) if mask == "causal" else \
        np.ones((n, n), bool) if mask is None else np.array(mask, bool)
    scale = f.get("scale", True)
    c = np.sqrt(W_K.shape[1]) if scale is True else 1.0 if scale is False else float(scale)
    return X, W_Q, W_K, W_V, allowed, c


def solved(spec):
    return symattn.answers(symattn.derive_spec(symattn.parse_spec(spec)))["sections"][1]


def upstream(spec, O):
    """dO and the loss L(O) the backward section states."""
    back = spec["sections"][1]
    if "dO" in back:
        dO = floats(back["dO"])
        return dO, lambda out: float((dO * out).sum())  # L = Σ dO ∘ O: its gradient is dO
    if back["loss"] == "cross_entropy":  # the rows of O as logits: L = −Σ log softmax(o_i)_{y_i}
        y = np.array(back["targets"]) - 1

        def probabilities(out):
            e = np.exp(out - out.max(axis=1, keepdims=True))
            return e / e.sum(axis=1, keepdims=True)

        return probabilities(O) - np.eye(O.shape[1])[y], \
            lambda out: -float(np.log(probabilities(out)[np.arange(len(y)), y]).sum())
    T = floats(back["T"])
    return O - T, lambda out: 0.5 * float(((out - T) ** 2).sum())


@pytest.mark.parametrize("seed", range(100))
def test_every_gradient_agrees_with_a_numpy_backward_and_with_finite_differences(seed):
    spec = random_spec(random.Random(seed))
    X, W_Q, W_K, W_V, allowed, c = inputs(spec)
    answers = solved(spec)
    O = forward(X, W_Q, W_K, W_V, allowed, c)[5]
    dO, loss = upstream(spec, O)
    want = backward(X, W_Q, W_K, W_V, allowed, c, dO)
    for key, value in want.items():
        assert np.allclose(floats(answers[key]), value, rtol=1e-9, atol=1e-12), key
    # central differences of the float forward pass, for the inputs and for every intermediate matrix
    Q, K, V, S, P, _ = forward(X, W_Q, W_K, W_V, allowed, c)

    def softmax(S_):
        e = np.exp(S_ - S_.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    numeric = {
        "dX": central(lambda M: loss(forward(M, W_Q, W_K, W_V, allowed, c)[5]), X),
        "dW_Q": central(lambda M: loss(forward(X, M, W_K, W_V, allowed, c)[5]), W_Q),
        "dW_K": central(lambda M: loss(forward(X, W_Q, M, W_V, allowed, c)[5]), W_K),
        "dW_V": central(lambda M: loss(forward(X, W_Q, W_K, M, allowed, c)[5]), W_V),
        "dQ": central(lambda M: loss(softmax(np.where(allowed, M @ K.T / c, -np.inf)) @ V), Q),
        "dK": central(lambda M: loss(softmax(np.where(allowed, Q @ M.T / c, -np.inf)) @ V), K),
        "dV": central(lambda M: loss(P @ M), V),
        "dP": central(lambda M: loss(M @ V), P),
        "dS": np.where(allowed, central(lambda M: loss(softmax(np.where(allowed, M, -np.inf)) @ V),
                                        np.where(allowed, S, 0.0)), 0.0),
    }
    for key, value in numeric.items():
        got = floats(answers[key])
        assert np.allclose(got, value, rtol=1e-6, atol=1e-8), (key, got, value)
    if "loss" in answers:
        assert abs(float(answers["loss"]) - loss(O)) < 1e-12


@pytest.mark.parametrize("seed", range(10))
def test_masked_positions_get_exactly_zero_and_D_is_the_same_both_ways(seed):
    spec = random_spec(random.Random(1000 + seed))
    spec["sections"][0]["mask"] = "causal"
    answers = solved(spec)
    n = len(spec["sections"][0]["tokens"])
    for i in range(n):
        assert all(answers["exact"]["dS"][i][j] == "0" and answers["exact"]["P"][i][j] == "0"
                   for j in range(i + 1, n))
    O, dO, dP, P = (floats(answers[k]) for k in ("O", "dO", "dP", "P"))
    assert np.allclose(floats(answers["D"]), (dO * O).sum(axis=1), rtol=1e-12, atol=1e-15)
    assert np.allclose(floats(answers["D"]), (dP * P).sum(axis=1), rtol=1e-12, atol=1e-15)
    # a query that sees one key has weight 1 there, and its row of dS is 0 (the softmax of one logit is constant)
    assert answers["exact"]["P"][0][0] == "1" and set(answers["exact"]["dS"][0]) == {"0"}


def test_the_example_gives_its_gradients_and_every_line_it_shows_checks():
    spec = symattn.load_example("backward")
    derivation = symattn.derive_spec(spec)
    answers = symattn.answers(derivation)["sections"][1]
    assert answers["kind"] == "backward" and answers["from"] == "attn"
    lines = displayed_lines(derivation)
    assert lines and all(line.checks() for line in lines)


@pytest.mark.parametrize("seed", range(8))
def test_the_finite_difference_on_the_page_is_the_float_one_and_near_the_formula(seed):
    spec = random_spec(random.Random(2000 + seed))
    spec["sections"][1].update(check="finite_difference", h="0.001")
    X, W_Q, W_K, W_V, allowed, c = inputs(spec)
    answers = solved(spec)
    _, loss = upstream(spec, forward(X, W_Q, W_K, W_V, allowed, c)[5])
    fd = answers["finite_difference"]
    for sign, key in ((1, "plus"), (-1, "minus")):
        moved = W_Q.copy()
        moved[0, 0] += sign * 0.001
        assert abs(float(fd[key]) - loss(forward(X, moved, W_K, W_V, allowed, c)[5])) < 1e-10
    assert abs(float(fd["quotient"]) - (float(fd["plus"]) - float(fd["minus"])) / 0.002) < 1e-12
    assert abs(float(fd["quotient"]) - float(answers["dW_Q"][0][0])) < 1e-4  # O(h²)
    derivation = symattn.derive_spec(symattn.parse_spec(spec))
    assert all(line.checks() for line in displayed_lines(derivation))


# ------------------------------------------------------------ bad input: one line naming the field, exit 2

FORWARD = {"name": "attn", "kind": "self_attention", "tokens": ["a", "b"], "X": [["1", "0"], ["0", "1"]],
           "W_Q": [["1", "0"], ["0", "1"]], "W_K": [["1", "0"], ["0", "1"]], "W_V": [["1", "0"], ["0", "1"]]}


@pytest.mark.parametrize(("back", "message"), [
    ({"from": "atn", "dO": [["1", "0"], ["0", "1"]]}, "sections[1].from: 'from:atn' names no section"),
    ({"from": "attn"}, "sections[1].dO: missing: give the upstream gradient dO"),
    ({"from": "attn", "dO": [["1", "0"]]}, "sections[1].dO: 1 rows, but there are 2 tokens"),
    ({"from": "attn", "dO": [["1"], ["0"]]}, "sections[1].dO: 1 columns, but the output O has 2"),
    ({"from": "attn", "loss": "hinge", "T": [["1", "0"], ["0", "1"]]}, "sections[1].loss: expected \"mse\""),
    ({"from": "attn", "loss": "cross_entropy", "T": [["1", "0"], ["0", "1"]]}, "sections[1].T: goes with loss = \"mse\""),
    ({"from": "attn", "loss": "cross_entropy", "targets": [1, 3]}, "sections[1].targets: expected class numbers from 1 to 2"),
    ({"from": "attn", "loss": "cross_entropy", "targets": [1]}, "sections[1].targets: expected a list of 2 class numbers"),
    ({"from": "attn", "loss": "mse"}, "sections[1].T: missing"),
    ({"from": "attn", "dO": [["1", "0"], ["0", "1"]], "T": [["1", "0"], ["0", "1"]]}, "sections[1].T: a target goes"),
    ({"from": "attn", "dO": [["1", "0"], ["0", "1"]], "focus": "c"}, "sections[1].focus: expected one of"),
    ({"from": 3, "dO": [["1", "0"], ["0", "1"]]}, "sections[1].from: expected the name of an earlier section"),
    ({"from": "attn", "dO": [["1", "0"], ["0", "1"]], "check": "fd"}, "sections[1].check: expected \"finite_difference\""),
    ({"from": "attn", "dO": [["1", "0"], ["0", "1"]], "h": "0.01"}, "sections[1].h: the step of check"),
    ({"from": "attn", "dO": [["1", "0"], ["0", "1"]], "check": "finite_difference", "h": "0"},
     "sections[1].h: expected a small positive step"),
])
def test_bad_input_is_one_line_naming_the_field(back, message, tmp_path, capsys):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({"sections": [FORWARD, {"kind": "backward", **back}]}), encoding="utf-8")
    assert main(["render", str(path), "--format", "md", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err, err
    assert not (tmp_path / "out").exists()


def test_a_cross_entropy_over_one_class_is_refused(tmp_path, capsys):
    # softmax over a single column is 1 for any O: the loss is identically 0, nothing to differentiate
    forward = {**FORWARD, "W_V": [["1"], ["0"]]}
    path = tmp_path / "spec.json"
    back = {"kind": "backward", "from": "attn", "loss": "cross_entropy", "targets": [1, 1]}
    path.write_text(json.dumps({"sections": [forward, back]}), encoding="utf-8")
    assert main(["solve", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "sections[1].loss:" in err and "d_v = 1" in err and "\n" not in err


def test_eight_tokens_of_width_eight_agree_with_numpy_and_sixteen_are_refused_before_any_work(capsys, tmp_path):
    rng = random.Random(7)
    spec = random_spec(rng)
    tokens = [f"t{t}" for t in range(8)]
    spec["sections"][0].update(tokens=tokens, X=random_matrix(rng, 8, 8), W_Q=random_matrix(rng, 8, 8),
                               W_K=random_matrix(rng, 8, 8), W_V=random_matrix(rng, 8, 8), mask="causal")
    spec["sections"][1] = {"kind": "backward", "from": "attn", "dO": random_matrix(rng, 8, 8), "focus": "t3"}
    X, W_Q, W_K, W_V, allowed, c = inputs(spec)
    answers = solved(spec)
    want = backward(X, W_Q, W_K, W_V, allowed, c, floats(spec["sections"][1]["dO"]))
    for key in ("dS", "dQ", "dK", "dW_Q", "dX"):
        assert np.allclose(floats(answers[key]), want[key], rtol=1e-9, atol=1e-12), key
    tokens = [f"t{t}" for t in range(16)]
    spec["sections"][0].update(tokens=tokens, X=random_matrix(rng, 16, 8))
    spec["sections"][1]["dO"] = random_matrix(rng, 16, 8)
    path = tmp_path / "big.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    assert main(["solve", str(path)]) == 2
    err = capsys.readouterr().err
    assert "sections[1]: the section computes about 131072" in err and err.count("\n") == 1


@pytest.mark.parametrize("seed", range(16))
def test_every_line_a_random_page_shows_checks_from_its_numbers(seed):
    spec = random_spec(random.Random(3000 + seed))
    derivation = symattn.derive_spec(symattn.parse_spec(spec))
    lines = displayed_lines(derivation)
    assert lines and all(line.checks() for line in lines)


def test_what_the_backward_pass_does_not_differentiate_yet_is_refused_in_one_line(capsys, tmp_path):
    forward = {**FORWARD, "positional_encoding": "sinusoidal"}
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({"sections": [forward, {"kind": "backward", "from": "attn",
                                                        "dO": [["1", "0"], ["0", "1"]]}]}))
    assert main(["solve", str(path)]) == 2
    err = capsys.readouterr().err
    assert "sections[1].from: section attn has positional encodings; a backward pass through it is not supported" \
        in err and err.count("\n") == 1


def test_a_forward_section_of_another_kind_is_refused(capsys, tmp_path):
    norm = {"name": "n", "kind": "norm", "tokens": ["a"], "X": [["1", "2"]]}
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({"sections": [norm, {"kind": "backward", "from": "n", "dO": [["1", "0"]]}]}))
    assert main(["solve", str(path)]) == 2
    assert "sections[1].from: section n is a norm section" in capsys.readouterr().err


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_example_renders_in_every_text_format(lang, tmp_path):
    assert main(["render", "--example", "backward", "--lang", lang, "--format", "tex,md,html,json",
                 "--out", str(tmp_path)]) == 0
    md = (tmp_path / "backward.md").read_text(encoding="utf-8")
    assert r"\mathrm{d}S = P \circ (\mathrm{d}P - D)" in md and r"\mathrm{d}X" in md


def test_check_holds_a_claims_file_of_gradients_to_the_exact_pass(tmp_path, capsys):
    claims = tmp_path / "claims.toml"
    claims.write_text('"sections[1].dV" = [["0.6213", "0.5215"], ["0.7413", "0.0791"], ["0.0297", "-0.0339"]]\n'
                      '"sections[1].dS[1]" = ["0.0305", "-0.0305", "0"]\n'
                      '"sections[1].dQ[1]" = ["0.0116", "-0.0226"]\n', encoding="utf-8")  # dQ without ÷ √2
    assert main(["check", "--example", "backward", str(claims)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("11 numbers claimed, 9 hold, 2 wrong")
    assert "sections[1].dQ[1][0]  0.0116   0.0082" in out
