"""Spec features beyond the article: symbolic matrices, scaling options, focus = all, size keys."""

from __future__ import annotations

from decimal import Decimal

import pytest
from sympy import Rational, Symbol

from symattn import SpecError, parse_spec, read_spec_text

I2 = [["1", "0"], ["0", "1"]]


def section(**overrides):
    base = {"kind": "self_attention", "tokens": ["a", "b"], "X": I2, "W_Q": I2, "W_K": I2, "W_V": [["1"], ["2"]]}
    base.update(overrides)
    return parse_spec({"sections": [base]}).sections[0]


def test_symbolic_X_takes_its_size_from_the_weights():
    s = section(X="symbolic")
    assert s.X.shape == (2, 2)
    assert s.X.values[1, 0] == Symbol("x_{21}", real=True)
    assert s.X.symbolic and not s.W_Q.symbolic


def test_symbolic_weights_need_a_size_when_nothing_fixes_it():
    with pytest.raises(SpecError, match=r'sections\[0\].W_V: "symbolic" needs its size: give d_v'):
        section(W_V="symbolic")
    assert section(W_V="symbolic", d_v=3).W_V.shape == (2, 3)
    assert section(X="symbolic", W_Q="symbolic", W_K="symbolic", W_V="symbolic", d_model=3, d_k=2,
                   d_v=1).W_K.shape == (3, 2)


def test_named_entries_are_symbols():
    s = section(X=[["a", "b1"], ["x_1", "0.5"]])
    assert s.X.values[0, 1] == Symbol("b1", real=True)
    assert s.X.values[1, 1] == Rational(1, 2)


@pytest.mark.parametrize(("value", "mode", "number"), [(True, "sqrt_d_k", None), (False, "none", None),
                                                        (Decimal("2.5"), "number", Rational(5, 2)),
                                                        ("1/3", "number", Rational(1, 3))])
def test_scale_option(value, mode, number):
    scale = section(scale=value).scale
    assert (scale.mode, scale.number) == (mode, number)


def test_bad_scale():
    with pytest.raises(SpecError, match=r"sections\[0\].scale: expected true, false or a positive number"):
        section(scale="-2")


def test_focus_all_is_remembered():
    assert section(focus="all").focus.mode == "all"
    assert section(focus=["a", "b"]).focus.mode == "tokens"
    assert section().focus.mode == "all"  # the default
    assert section(focus="matrix").focus.stepwise == ()


def test_d_k_overrides_scaling_only():
    s = section(d_k=4)
    assert s.d_k == 4 and s.W_K.shape == (2, 2)


@pytest.mark.parametrize("text", ["[[sections]]\nkind = 'self_attention'\nX = [[nan]]\n",
                                  "[[sections]]\nkind = 'self_attention'\nX = [[inf]]\n"])
def test_toml_nan_and_inf_are_refused(text):
    data = read_spec_text(text + "tokens = ['a']\nW_Q = [[1]]\nW_K = [[1]]\nW_V = [[1]]\n", "toml", "f.toml")
    with pytest.raises(SpecError, match=r"sections\[0\].X\[0\]\[0\]: expected a finite number"):
        parse_spec(data)


def test_string_nan_is_not_a_symbol():
    with pytest.raises(SpecError, match="expected a number"):
        section(X=[["nan", "0"], ["0", "1"]])


def test_symbolic_in_W_O_is_refused_with_a_hint():
    with pytest.raises(SpecError, match=r'sections\[0\].W_O: "symbolic" is not available here'):
        parse_spec({"sections": [{"kind": "multi_head", "focus": "a", "heads": [{"output": ["1"]}],
                                  "W_O": "symbolic"}]})


def test_equal_entries_share_their_parse_and_errors_still_name_their_own_field():
    s = section(X=[["0.50", "a"], ["0.50", "0.5"]], W_Q=[["0.50", "1"], ["a", "0"]])
    assert s.X.values[0, 0] == s.X.values[1, 1] == Rational(1, 2) and s.W_Q.values[1, 0] == Symbol("a", real=True)
    assert s.X.written == (2, 0, 2, 1)  # each as written: "0.50" two decimals, "0.5" one
    for bad in ("1/0", "abc!"):
        for _ in range(2):  # the second time from the same parse
            with pytest.raises(SpecError, match=rf"sections\[0\].X\[1\]\[0\]: .*{bad[:3]}"):
                section(X=[["1", "0"], [bad, "1"]])
