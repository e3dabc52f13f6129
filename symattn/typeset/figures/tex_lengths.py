"""Lengths of the flow figures as TeX computes them: typeset/figures/flow.py's geometry written as \\dimexpr expressions,
with the boxes measured by TeX and the values fixed in named lengths."""

from __future__ import annotations

from fractions import Fraction


class TexLength:
    """A length as a TeX dimen expression (the inside of \\dimexpr), for typeset/figures/flow.py's geometry."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text

    def __add__(self, other: TexLength) -> TexLength:
        return TexLength(f"({self.text}+{other.text})")

    def __sub__(self, other: TexLength) -> TexLength:
        return TexLength(f"({self.text}-{other.text})")

    def __mul__(self, factor: Fraction) -> TexLength:
        factor = Fraction(factor)
        if factor == 0:
            return TexLength("0pt")
        return self if factor == 1 else TexLength(f"({self.text})*{factor.numerator}/{factor.denominator}")

    def __truediv__(self, divisor: int) -> TexLength:
        return TexLength(f"({self.text})/{divisor}")


class TexDims:
    """The lengths of a figure as TeX computes them: boxes measured, values fixed in named lengths."""

    height = TexLength(r"\FlowH")

    def __init__(self) -> None:
        self.statements: list[str] = []

    def mm(self, value: float) -> TexLength:
        return TexLength(f"{value}mm")

    def width(self, box) -> TexLength:
        return TexLength(rf"\wd\flowbox{{{box.name}}}")

    def fix(self, name: str, value: TexLength) -> TexLength:
        self.statements.append(rf"\flowset{{{name}}}{{{value}}}")
        return TexLength(rf"\flowl{{{name}}}")

    def widest(self, name: str, values: list[TexLength]) -> TexLength:
        widest = self.fix(name, values[0])
        self.statements += [rf"\ifdim\dimexpr{b}\relax>{widest}\flowset{{{name}}}{{{b}}}\fi" for b in values[1:]]
        return widest

    def register(self, value: TexLength) -> TexLength:
        """The value in a named length, if it is an expression."""
        if "(" not in value.text:
            return value
        return self.fix(f"c{len(self.statements)}", value)
