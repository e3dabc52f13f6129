"""Adding a kind of section is one module: a tiny kind defined here, with its own language strings, registered
through the public API, renders to every format (the PDF compiled for real) with its exact values."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from sympy import ImmutableMatrix, Rational

import symattn
from symattn import Kind, register_kind, unregister_kind
from symattn.cli import main
from symattn.document.steps import DotProducts, Heading, Name, Num, Paragraph, Shown, Step, VectorEquation
from symattn.infra import i18n
from symattn.spec.fields import matrix, require
from symattn.spec.model import Section
from symattn.spec.numbers import parse_number

# ------------------------------------------------------------ the kind: s = q·k / c, exactly


@dataclass(frozen=True)
class ScaledDotSpec(Section):
    kind = "scaled_dot"
    q: ImmutableMatrix  # one row
    k: ImmutableMatrix  # one row
    c: Rational
    decimals: int


@dataclass(frozen=True)
class ScaledDotResult:
    dot: Rational
    score: Rational


class ScaledDot(Kind):
    name = "scaled_dot"
    keys = frozenset({"kind", "q", "k", "c"})
    strings = {
        "en": {"scaled_dot.heading": "A scaled dot product", "scaled_dot.intro": "The query and the key:",
               "scaled_dot.dot": "Their dot product:", "scaled_dot.score": "Divided by {c}, the score is:"},
        "ja": {"scaled_dot.heading": "スケール付き内積", "scaled_dot.intro": "クエリとキー:",
               "scaled_dot.dot": "内積:", "scaled_dot.score": "{c} で割ったスコア:"},
    }

    def parse(self, data: dict[str, Any], field: str) -> ScaledDotSpec:
        q = matrix([require(data, "q", field)], f"{field}.q")
        k = matrix([require(data, "k", field)], f"{field}.k")
        if q.shape != k.shape:
            raise symattn.SpecError(f"{field}.k", f"{k.shape[1]} entries, but q has {q.shape[1]}")
        c, _ = parse_number(require(data, "c", field), f"{field}.c")
        if c == 0:
            raise symattn.SpecError(f"{field}.c", "expected a number other than 0")
        return ScaledDotSpec(q.values, k.values, c, max(q.decimals, k.decimals))

    def compute(self, section: ScaledDotSpec) -> ScaledDotResult:
        dot = (section.q * section.k.T)[0, 0]
        return ScaledDotResult(dot, dot / section.c)

    def symbolic(self, result: ScaledDotResult) -> bool:
        return False

    def steps(self, section: ScaledDotSpec, result: ScaledDotResult) -> list[Step]:
        q, k = Shown(section.q, section.decimals), Shown(section.k, section.decimals)
        return [
            Heading(1, "scaled_dot.heading"),
            Paragraph("scaled_dot.intro"),
            VectorEquation(Name("Q"), q),
            VectorEquation(Name("K"), k),
            Paragraph("scaled_dot.dot"),
            DotProducts(Name("Q"), (Name("K"),), q, (k,), (result.dot,)),
            Paragraph("scaled_dot.score", {"c": Num(section.c)}),
            VectorEquation(Name("s"), Shown(ImmutableMatrix([[result.score]]), uniform=False)),
        ]

    def answers(self, section: ScaledDotSpec, result: ScaledDotResult) -> dict[str, Any]:
        return {"kind": self.name, "dot": str(result.dot), "score": str(result.score)}


SCALED_DOT = ScaledDot()

# q·k = 0.03 + 0.08 = 0.11 and 0.11 / 0.4 = 0.275 exactly (in binary floats 0.27499999999999997)
SPEC = {"title": "Scaled dot", "lang": "en",
        "sections": [{"kind": "scaled_dot", "q": ["0.1", "0.2"], "k": ["0.3", "0.4"], "c": "0.4"}]}
SPEC_TOML = """title = "Scaled dot"
lang = "en"

[[sections]]
kind = "scaled_dot"
q = [0.1, 0.2]
k = [0.3, 0.4]
c = 0.4
"""


@pytest.fixture
def scaled_dot():
    """The kind, registered for one test and gone afterwards (strings included)."""
    register_kind(SCALED_DOT)
    try:
        yield SCALED_DOT
    finally:
        unregister_kind("scaled_dot")


# ------------------------------------------------------------ the tests


def test_the_kind_renders_to_every_format_through_the_public_api(scaled_dot):
    derivation = symattn.derive_spec(symattn.parse_spec(SPEC))
    assert [section.kind for section in derivation.sections] == ["scaled_dot"]
    assert derivation.sections[0].result.score == Rational(11, 40)
    for text in (symattn.render_latex(derivation), symattn.render_markdown(derivation),
                 symattn.render_html(derivation)):
        assert "A scaled dot product" in text and "Their dot product:" in text and "Divided by" in text
        assert "0.275" in text and "0.11" in text and "0.27499" not in text
    tex = symattn.render_latex(derivation)
    assert r"0.1 \cdot 0.3 + 0.2 \cdot 0.4" in tex
    assert symattn.answers(derivation)["sections"] == [{"kind": "scaled_dot", "dot": "11/100", "score": "11/40"}]
    assert json.loads(symattn.render_json(derivation))["sections"][0]["score"] == "11/40"


def test_the_kind_speaks_every_language(scaled_dot):
    derivation = symattn.derive_spec(symattn.parse_spec({**SPEC, "lang": "ja"}))
    assert "スケール付き内積" in symattn.render_markdown(derivation)


@pytest.mark.pdf
def test_the_cli_renders_the_kind_to_every_format_and_the_pdf_compiles(scaled_dot, tmp_path, capsys):
    spec = tmp_path / "dot.toml"
    spec.write_text(SPEC_TOML, encoding="utf-8")
    out = tmp_path / "out"
    assert main(["render", str(spec), "--format", "tex,md,html,json,pdf", "--out", str(out)]) == 0
    files = {path.suffix: path for path in out.iterdir() if not path.name.startswith(".")}  # (the manifest)
    assert set(files) >= {".tex", ".md", ".html", ".json", ".pdf"}
    for suffix in (".tex", ".md", ".html"):
        assert "0.275" in files[suffix].read_text(encoding="utf-8")
    assert json.loads(files[".json"].read_text(encoding="utf-8"))["sections"][0]["score"] == "11/40"
    assert files[".pdf"].read_bytes().startswith(b"%PDF")


def test_registering_adds_the_strings_and_unregistering_removes_them():
    assert "scaled_dot" not in symattn.kinds.KINDS and "scaled_dot.heading" not in i18n.strings("en")
    register_kind(SCALED_DOT)
    try:
        assert symattn.kind_of("scaled_dot") is SCALED_DOT
        assert i18n.text("en", "scaled_dot.heading") == "A scaled dot product"
        assert set(i18n.strings("en")) == set(i18n.strings("ja"))
        with pytest.raises(ValueError, match="registered already"):
            register_kind(ScaledDot())
    finally:
        unregister_kind("scaled_dot")
    assert "scaled_dot" not in symattn.kinds.KINDS and "scaled_dot.heading" not in i18n.strings("en")
    with pytest.raises(symattn.SpecError, match="unknown section kind 'scaled_dot'"):
        symattn.parse_spec(SPEC)


@pytest.mark.parametrize("strings, problem", [
    ({"en": {"scaled_dot.heading": "x"}}, "every language needs them"),
    ({"en": {"scaled_dot.heading": "x"}, "ja": {"scaled_dot.other": "y"}}, "different keys"),
    ({"en": {"self.heading": "Not self-attention"}, "ja": {"self.heading": "違う"}}, "exists already"),
    ({"en": {"flat": "x"}, "ja": {"flat": "y"}}, "dotted keys"),
])
def test_a_kind_without_good_strings_is_refused(strings, problem):
    class Broken(ScaledDot):
        pass

    Broken.strings = strings
    with pytest.raises(ValueError, match=problem):
        register_kind(Broken())
    assert "scaled_dot" not in symattn.kinds.KINDS
    assert set(i18n.strings("en")) == set(i18n.strings("ja")) and "scaled_dot.heading" not in i18n.strings("en")
