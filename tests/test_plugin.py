"""The plugin API (symattn.plugin): a whole kind defined in this one file from its public names alone, with a step
type of its own, the printer of that step, its strings in both languages and a flow figure drawn from data, renders
to every format (the PDF compiled for real) with its exact values and checkable lines."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from sympy import ImmutableMatrix, Rational

import symattn
import symattn.plugin as plugin
from symattn.cli import main
from symattn.plugin import (
    Arrow,
    Box,
    CheckedLine,
    Flow,
    FlowFigure,
    Heading,
    Kind,
    Name,
    Paragraph,
    Section,
    Shown,
    Step,
    VectorEquation,
    math,
    matrix,
    operand,
    parse_number,
    require,
    words,
)
from symattn.render.displayed import displayed_lines

# ------------------------------------------------------------ the kind: s = q·k + b, exactly


@dataclass(frozen=True)
class BiasedSpec(Section):
    kind = "biased_dot"
    q: ImmutableMatrix
    k: ImmutableMatrix
    b: Rational
    decimals: int


@dataclass(frozen=True)
class BiasedScore(Step):
    """s = q·k + b, with q and k as shown."""

    q: Shown
    k: Shown
    b: Shown
    value: Rational


class BiasedScorePrinter:
    """The printer of BiasedScore: one checkable line, q_1 k_1 + q_2 k_2 + b = s."""

    def _print_BiasedScore(self, step: BiasedScore) -> str:
        q, k, b = self.numbers(step.q), self.numbers(step.k), self.numbers(step.b)

        def lines_at(places: int) -> list[CheckedLine]:
            terms = tuple((operand(x, nx, places), operand(y, ny, places))
                          for x, nx, y, ny in zip(step.q.entries, q, step.k.entries, k, strict=True))
            return [CheckedLine("s", self.result_operand(step.value), (*terms, (operand(step.b.entries[0], b[0],
                                                                                         places),)))]

        line = self.checked_lines(plugin.guarded(lines_at, self.digits))[0]
        pieces = self.operation(line)
        return self.align([f"s &= q \\cdot k + b = {' '.join(pieces)} {self.relation(line.relation == '=')} "
                           f"{line.result.text}"])


class BiasedDot(Kind):
    name = "biased_dot"
    keys = frozenset({"kind", "q", "k", "b"})
    printers = (BiasedScorePrinter,)
    strings = {
        "en": {"biased_dot.heading": "A biased dot product", "biased_dot.score": "The score adds the bias:",
               "biased_dot.caption": "Figure {number}: the score of q and k, plus b.",
               "biased_dot.box_score": "score"},
        "ja": {"biased_dot.heading": "バイアス付き内積", "biased_dot.score": "スコアにバイアスを足す:",
               "biased_dot.caption": "図{number}: q と k のスコアに b を足す。", "biased_dot.box_score": "スコア"},
    }

    def parse(self, data: dict[str, Any], field: str) -> BiasedSpec:
        q = matrix([require(data, "q", field)], f"{field}.q")
        k = matrix([require(data, "k", field)], f"{field}.k")
        if q.shape != k.shape:
            raise symattn.SpecError(f"{field}.k", f"{k.shape[1]} entries, but q has {q.shape[1]}")
        b, _ = parse_number(require(data, "b", field), f"{field}.b")
        return BiasedSpec(q.values, k.values, b, max(q.decimals, k.decimals))

    def compute(self, section: BiasedSpec) -> Rational:
        return (section.q * section.k.T)[0, 0] + section.b

    def symbolic(self, result: Rational) -> bool:
        return False

    def figure(self, section: BiasedSpec) -> FlowFigure:
        boxes = (Box("Q", 0, Rational(0), (math("q"),)), Box("K", 0, Rational(1), (math("k"),)),
                 Box("S", 1, Rational(1, 2), (math(r"q \cdot k + b"), words("biased_dot.box_score")), "output"))
        return FlowFigure("biased_dot", drawing=Flow(boxes, (Arrow("merge", ("Q", "K"), ("S",)),), (7,)),
                          caption="biased_dot.caption")

    def steps(self, section: BiasedSpec, result: Rational) -> list[Step]:
        q, k = Shown(section.q, section.decimals), Shown(section.k, section.decimals)
        return [Heading(1, "biased_dot.heading"), VectorEquation(Name("q"), q), VectorEquation(Name("k"), k),
                Paragraph("biased_dot.score"),
                BiasedScore(q, k, Shown(ImmutableMatrix([[section.b]]), uniform=False), result)]

    def answers(self, section: BiasedSpec, result: Rational) -> dict[str, Any]:
        return {"kind": self.name, "score": str(result)}


# q·k + b = 0.03 + 0.08 + 0.5 = 0.61 exactly
SPEC = {"title": "Biased", "lang": "en",
        "sections": [{"kind": "biased_dot", "q": ["0.1", "0.2"], "k": ["0.3", "0.4"], "b": "0.5"}]}


@pytest.fixture
def biased():
    kind = plugin.register_kind(BiasedDot())
    try:
        yield kind
    finally:
        plugin.unregister_kind("biased_dot")


def test_every_name_of_the_plugin_api_imports():
    assert len(plugin.__all__) == len(set(plugin.__all__)) > 40
    for name in plugin.__all__:
        assert getattr(plugin, name) is not None, name


def test_the_kind_prints_its_own_step_in_every_format(biased):
    derivation = symattn.derive_spec(symattn.parse_spec(SPEC))
    assert derivation.sections[0].result == Rational(61, 100)
    tex = symattn.render_latex(derivation)
    assert r"0.1 \cdot 0.3 + 0.2 \cdot 0.4 + 0.5 = 0.61" in tex
    assert "Figure 1: the score of q and k, plus b." in tex and r"\flowcontent{S}" in tex
    for text in (symattn.render_markdown(derivation), symattn.render_html(derivation)):
        assert "A biased dot product" in text and "0.61" in text and "Figure 1: the score of q and k" in text
    assert r"q \cdot k + b" in symattn.render_markdown(derivation)  # the figure's boxes, from its data
    assert "<svg" in symattn.render_html(derivation)
    assert symattn.answers(derivation)["sections"] == [{"kind": "biased_dot", "score": "61/100"}]


def test_the_kind_s_line_is_checkable(biased):
    derivation = symattn.derive_spec(symattn.parse_spec(SPEC))
    lines = [line for line in displayed_lines(derivation) if line.what == "s"]
    assert len(lines) == 1 and lines[0].checks() and lines[0].result.text == "0.61"


def test_the_kind_speaks_japanese(biased):
    derivation = symattn.derive_spec(symattn.parse_spec({**SPEC, "lang": "ja"}))
    assert "バイアス付き内積" in symattn.render_markdown(derivation) and "図1" in symattn.render_latex(derivation)


def test_an_unregistered_kind_is_unknown_again(biased):
    plugin.unregister_kind("biased_dot")
    try:
        with pytest.raises(symattn.SpecError, match="unknown section kind 'biased_dot'"):
            symattn.parse_spec(SPEC)
    finally:
        plugin.register_kind(BiasedDot())


@pytest.mark.pdf
def test_the_kind_compiles_to_pdf(biased, tmp_path):
    spec = tmp_path / "biased.json"
    spec.write_text(json.dumps(SPEC), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["render", str(spec), "--format", "tex,md,html,json,pdf", "--out", str(out)]) == 0
    assert (out / "biased.pdf").read_bytes().startswith(b"%PDF")
    assert json.loads((out / "biased.json").read_text(encoding="utf-8"))["sections"][0]["score"] == "61/100"
