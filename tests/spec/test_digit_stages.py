"""Digits per stage (issue 16, item 7): `digits = { default = 4, result = 3 }`, --digits sets the default, bad
values give one line naming the field."""

from __future__ import annotations

import subprocess
import sys

import pytest

from symattn import SpecError, derive, parse_spec, render_markdown


def spec(digits):
    return {"digits": digits, "sections": [{
        "kind": "self_attention", "tokens": ["a", "b"], "X": [[1, 0], [0, 1]], "W_Q": [[1, 0], [0, 1]],
        "W_K": [[1, 0], [0, 1]], "W_V": [[1, 2], [3, 4]]}]}


@pytest.mark.parametrize("digits, field", [({"result": "x"}, "digits.result"), ({"default": -1}, "digits.default"),
                                           ({"weights": 31}, "digits.weights"), ({"results": 3}, "digits.results")])
def test_bad_stage_digits_name_the_field(digits, field):
    with pytest.raises(SpecError) as error:
        parse_spec(spec(digits))
    assert str(error.value).startswith(f"{field}: ")
    assert "\n" not in str(error.value)


def test_bad_stage_digits_exit_2(tmp_path):
    path = tmp_path / "bad.toml"
    text = subprocess.run([sys.executable, "-m", "symattn", "examples", "--show", "mt"], capture_output=True,
                          text=True, check=True).stdout
    path.write_text(text.replace("digits = { default = 4, result = 3 }", 'digits = { default = 4, result = "x" }'),
                    encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "symattn", "render", str(path), "--format", "md", "--out",
                          str(tmp_path)], capture_output=True, text=True)
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        "symattn: error: digits.result: expected a whole number of decimals from 0 to 30, got 'x'"]


def test_a_stage_rounds_its_own_steps():
    text = render_markdown(derive(parse_spec(spec({"default": 5, "weights": 2, "result": 3}))))
    assert r"{z}_{\text{a}} &\approx [1.660,\  2.660]" in text  # the result at 3 decimals
    assert r"&\approx [0.67,\  0.33]" in text  # the weights at 2


MT_NUMBERS = [
    "0.8188", "1.2004", "1.1942", "1.5138",  # scaled scores
    "0.1688", "0.2472", "0.2457", "0.3382",  # weights (the article's 0.3383 is an erratum)
    r"[0.8933,\  0.9295,\  0.8176]",  # the weighted sum
    r"{z}_{\text{love}} &\approx [0.893,\  0.930,\  0.818]",  # the result, to 3 decimals as the article
    "1.6709", "1.6830", "1.7060", "1.7302",  # cross-attention scores
    "1.1815", "1.1901", "1.2063", "1.2234", "0.2453", "0.2474", "0.2515", "0.2558",
    r"[0.8467,\  0.8874,\  0.5768]", r"{z}_{\text{私は}} &\approx [0.847,\  0.887,\  0.577]",
    r"{z}_{\text{final}} &= [0.8742,\  0.9230,\  0.6962]",
]


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_mt_prints_the_articles_numbers_at_its_precision(lang):
    text = render_markdown(derive("mt", lang=lang))
    for number in MT_NUMBERS:
        assert number in text, number
    assert "0.3383" not in text


def test_command_line_digits_set_the_default():
    derivation = derive("mt", digits=3)
    text = render_markdown(derivation)
    assert r"{z}_{\text{love}} &\approx [0.893,\  0.930,\  0.818]" in text
    assert "1.6976" in text  # a short exact score is shown exactly: 1.6976/√2 ≈ 1.200
    assert r"\frac{1.6976}{\sqrt{2}} \approx 1.200" in text
