"""The paper's writing space is sized to what each part asks, the sentence before the e^x table stays with it, and
the key's "Answers:" never stands alone at a page's foot (checked in the PDFs' text)."""

from __future__ import annotations

import json
import re

import pytest

from symattn.cli import main

from .test_paper import pages


def test_space_follows_the_numbers_asked_and_the_work(tmp_path):
    assert main(["exam", "--count", "2", "--seed", "4", "--kind", "rope", "--difficulty", "standard", "--lang", "en",
                 "--format", "tex,json", "--out", str(tmp_path)]) == 0
    source = (tmp_path / "exam.tex").read_text(encoding="utf-8")
    spaces = [float(mm) for mm in re.findall(r"\\begin\{solution\}\[([\d.]+)mm plus", source)]
    exam = json.loads((tmp_path / "exam.json").read_text(encoding="utf-8"))
    expected = []
    for version in exam["versions"]:
        work = version["workload"]["parts"]
        for part in version["parts"]:
            expected.append(min(170, 12 + 2.5 * len(part["blanks"]) + 0.5 * work[part["key"]]["operations"]))
    assert spaces == expected
    a, e = spaces[0], spaces[4]  # (a): 12 vectors of Q, K, V; (e): the two numbers of the output
    assert a > 3 * e  # (main: 62 mm against 53 mm)


@pytest.mark.pdf
def test_the_exp_sentence_stays_with_its_table_and_answers_never_end_a_page(tmp_path):
    assert main(["exam", "--count", "3", "--seed", "2026", "--kind", "multi_head", "--lang", "en", "--format", "pdf",
                 "--out", str(tmp_path / "mh")]) == 0
    for text in pages(tmp_path / "mh" / "exam.pdf"):
        if "with this table of" in text:
            assert re.search(r"with this table of.*\n.*−3\s", text, re.S), "the e^x table is overleaf"
    for kind in ("add_norm", "next_token"):
        assert main(["exam", "--count", "3", "--seed", "2026", "--kind", kind, "--lang", "en", "--format", "pdf",
                     "--out", str(tmp_path / kind)]) == 0
        for number, text in enumerate(pages(tmp_path / kind / "key.pdf"), start=1):
            body = [line.strip() for line in text.splitlines()
                    if line.strip() and not line.strip().startswith(("Version ", "Page "))]
            assert not body or not body[-1].endswith("Answers:"), f"{kind} key page {number}"
