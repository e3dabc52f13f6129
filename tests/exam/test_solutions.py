"""solutions.pdf and the key's grading table: every answer with the range of written answers accepted, checked
against an independent computation; the table is the key's alone."""

from __future__ import annotations

import json
import re
import subprocess
from fractions import Fraction

import pytest

from symattn import ExamOptions, build_exam
from symattn.cli import main
from symattn.exercises.exercise import tolerance

from .test_moodle import PARTS, attention, flat_expected


@pytest.fixture(scope="module")
def sheet(tmp_path_factory):
    out = tmp_path_factory.mktemp("solutions")
    build_exam(ExamOptions(5, 4, "mixed", "standard", "en"), out, ("json", "tex", "solutions"))
    return out


def versions(tex: str) -> list[str]:
    return re.split(r"\\textbf\{Version \d+\}", tex)[1:]


def test_every_answer_is_listed_with_its_accepted_range(sheet):
    data = json.loads((sheet / "exam.json").read_text(encoding="utf-8"))
    blocks = versions((sheet / "solutions.tex").read_text(encoding="utf-8"))
    assert len(blocks) == len(data["versions"])
    for block, version in zip(blocks, data["versions"], strict=True):
        if not attention(version["spec"]):  # a newer kind's version (tests/exam/test_new_kinds.py)
            continue
        section = version["spec"]["sections"][0]
        d_k = len((section["heads"][0] if "heads" in section else section)["W_K"][0])
        rows = [r for r in block.split("\\toprule")[1].split("\\bottomrule")[0].split("\\\\") if r.strip()]
        values, ranges = [], []
        for row, key in zip(rows, PARTS, strict=True):
            answers, tol = row.rsplit("&", 1)
            assert tol.strip() == rf"$\pm {tolerance(4, key, d_k)}$"
            for number, low, high in re.findall(r"\$(-?\d+(?:\.\d+)?)\$(?:\\,\{\\scriptsize\[\$(-?[\d.]+)\$, "
                                                r"\$(-?[\d.]+)\$\]\})?", answers.split("&", 1)[1]):
                values.append(float(number))
                ranges.append((low, high, float(Fraction(tolerance(4, key, d_k)))))
        expected = flat_expected(version["spec"])
        if expected is None:  # a newer kind's version (tests/exam/test_new_kinds.py)
            continue
        assert len(values) == len(expected)
        for value, (low, high, tol), exact in zip(values, ranges, expected, strict=True):
            assert abs(value - exact) <= 0.00005 + 1e-12  # rounded as asked
            if low:
                assert float(low) - 1e-12 <= exact <= float(high) + 1e-12
                assert exact - tol - 1e-12 <= float(low) < exact - tol + 0.0001  # the smallest 4-decimal answer in
                assert exact + tol - 0.0001 < float(high) <= exact + tol + 1e-12  # range, and the largest
            else:
                assert abs(value - exact) < 1e-12  # shown alone: the exact value, the only answer accepted


@pytest.mark.pdf
def test_solutions_pdf_and_the_keys_grading_table(tmp_path):
    assert main(["exam", "--count", "3", "--seed", "5", "--kind", "mixed", "--lang", "en", "--out",
                 str(tmp_path)]) == 0
    pdf = {name: subprocess.run(["pdftotext", str(tmp_path / f"{name}.pdf"), "-"], capture_output=True,
                                text=True).stdout for name in ("exam", "key", "solutions")}
    assert all(f"Version 0{i}" in pdf["solutions"] for i in (1, 2, 3)) and "Solutions sheet" in pdf["solutions"]
    info = subprocess.run(["pdfinfo", str(tmp_path / "solutions.pdf")], capture_output=True, text=True).stdout
    assert re.search(r"Pages:\s+1\n", info)  # three versions on one page
    assert pdf["key"].count("Grading: accepted answers") == 3 and "±0.0002" in pdf["key"]
    assert "Grading" not in pdf["exam"] and "±" not in pdf["exam"]
