"""--paper a4|letter, --split files named by student with a class list, and the solutions sheet's class list."""

from __future__ import annotations

import re
import subprocess

import pytest

from symattn.cli import main

from .test_paper import class_list

STUDENTS = [("s001", "Ada Lovelace"), ("s/02", "O'Neil, Ann"), ("c3", "山田 太郎")]


def media_box(pdf) -> tuple[float, float]:
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    width, height = re.search(r"Page size:\s+([\d.]+) x ([\d.]+) pts", info).groups()
    return float(width), float(height)


def test_letter_paper_in_every_source(tmp_path):
    assert main(["exam", "--count", "2", "--paper", "letter", "--format", "tex", "--out",
                 str(tmp_path)]) == 0
    for name in ("exam.tex", "key.tex"):
        source = (tmp_path / name).read_text(encoding="utf-8")
        assert "letterpaper" in source and "a4paper" not in source


def test_a_bad_paper_is_one_line(tmp_path, capsys):
    assert main(["exam", "--count", "2", "--paper", "a5", "--format", "json", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == "symattn: error: --paper: expected a4 or letter, got 'a5'"
    assert not (tmp_path / "o").exists()


@pytest.mark.pdf
def test_split_files_are_named_by_student_on_letter_paper(tmp_path):
    (tmp_path / "class.csv").write_bytes(class_list(STUDENTS))
    out = tmp_path / "out"
    assert main(["exam", "--students", str(tmp_path / "class.csv"), "--seed", "3", "--lang", "en", "--split",
                 "--paper", "letter", "--format", "pdf", "--out", str(out)]) == 0
    names = sorted(p.name for p in out.glob("exam-*.pdf"))
    assert names == ["exam-01-s001-Ada-Lovelace.pdf", "exam-02-s-02-O-Neil-Ann.pdf", "exam-03-c3-山田-太郎.pdf"]
    assert sorted(p.name for p in out.glob("key-*.pdf")) == [n.replace("exam-", "key-") for n in names]
    for pdf in (out / "exam.pdf", out / names[0], out / "solutions.pdf"):
        assert media_box(pdf) == (612, 792)  # US Letter
    text = subprocess.run(["pdftotext", str(out / "solutions.pdf"), "-"], capture_output=True, text=True,
                          check=True).stdout
    flat = " ".join(text.split())
    assert "Students and their versions:" in flat
    for k, (number, name) in enumerate(STUDENTS, start=1):
        assert f"{name} ({number}): {k:02d}" in flat
