"""Moodle's mark of a response equals `symattn grade`'s: every box of every version of every kind replayed through
Moodle's cloze rules (tests/exam/moodle_cloze.py, read from the XML alone) weighs at least 1, each part's boxes
add up to its points on the paper (times the question's one factor), and the same answers get the same mark from
the Moodle question (its fraction times the paper's total, the quiz slot's mark) as from `symattn grade`."""

from __future__ import annotations

import csv
import json
import math
import random
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from symattn import ExamOptions, build_exam
from symattn.cli import main

from .moodle_cloze import extract, grade


@pytest.fixture(scope="module", params=["easy", "standard"])
def exam(request, tmp_path_factory):
    out = tmp_path_factory.mktemp("marks")
    build_exam(ExamOptions(16, 5, "mixed", request.param, "en"), out, ("json", "moodle"))  # every kind twice
    data = json.loads((out / "exam.json").read_text(encoding="utf-8"))
    root = ET.parse(out / "moodle.xml").getroot()
    questions = [q.find("questiontext/text").text for q in root.findall("question") if q.get("type") == "cloze"]
    return out, data, questions


def test_every_box_weighs_at_least_one_and_each_part_its_papers_share(exam):
    _, data, questions = exam
    kinds = set()
    for version, text in zip(data["versions"], questions, strict=True):
        kinds.add(version["spec"]["sections"][0]["kind"])
        blanks, mark, _ = extract(text)
        total = sum(p["points"] for p in version["parts"])
        factor = mark / total
        assert factor.is_integer() and all(b.mark >= 1 for b in blanks)
        weights = iter(b.mark for b in blanks)
        for part in version["parts"]:  # exam.json's blanks are in the cloze's order
            mine = [next(weights) for _ in part["blanks"]]
            assert sum(mine) == part["points"] * factor and len(set(mine)) == 1
        assert next(weights, None) is None
    assert len(kinds) >= 6  # (rope is a self_attention section; add_norm a norm one)


def responses(data: dict, rng: random.Random) -> list[tuple[str, str, dict[str, str | None]]]:
    """Students with the mistakes Moodle and grade must mark alike (none that error carried forward credits:
    Moodle carries nothing, test_carried_forward_is_what_moodle_cannot_give below): all right; boxes typed 999; boxes left empty; one box a part off by 1;
    the scaled scores left unscaled."""
    rows = []
    for version in data["versions"]:
        exact = {b["id"]: b["answer"] for p in version["parts"] for b in p["blanks"]}
        ids = list(exact)
        rows.append(("all right", version["label"], dict(exact)))
        rows.append(("some 999", version["label"], {k: ("999" if rng.random() < 0.3 else v) for k, v in exact.items()}))
        rows.append(("some empty", version["label"],
                     {k: (None if rng.random() < 0.4 else v) for k, v in exact.items()}))
        # one slip a part, the rest right, part n's slip 10^n: a slip of the same size in a part and in the one it
        # carries into (w[1] and z[1] = 1·w[1] + 0·w[2] + ...) is the student's own earlier value carried, which
        # grade credits and Moodle cannot; no carried value moves ten times its source's slip here
        first = {p["blanks"][0]["id"]: 10 ** n for n, p in enumerate(version["parts"])}
        rows.append(("a slip a part", version["label"], {k: (f"{float(v) + first[k]:.6f}" if k in first else v)
                                                         for k, v in exact.items()}))
        keys = {p["key"]: [b["id"] for b in p["blanks"]] for p in version["parts"]}
        scaled, scores = keys.get("scaled", []), keys.get("scores", [])
        if not scaled:  # RoPE asks the raw scores s and the scaled a in one part
            blanks = [b for p in version["parts"] if p["key"] == "scores" for b in p["blanks"]]
            scaled, scores = ([b["id"] for b in blanks if b["symbol"] == name] for name in ("a", "s"))
        if scaled and len(scaled) == len(scores):  # √d_k forgotten
            raw = dict(zip(scaled, (f"{float(exact[k]):.6f}" for k in scores), strict=True))
            rows.append(("no scaling", version["label"], {k: raw.get(k, v) for k, v in exact.items()}))
        rows.append(("first box only", version["label"], {k: (v if k == ids[0] else None) for k, v in exact.items()}))
    return rows


def marks(exam, rows, out: Path) -> list[tuple[str, str, float, float, str]]:
    """Every row's (version, student, Moodle's mark, grade's total, grade's feedback in Markdown)."""
    exam_dir, data, questions = exam
    columns = list(dict.fromkeys(b["id"] for v in data["versions"] for p in v["parts"] for b in p["blanks"]))
    sheet = out / "responses.csv"
    with sheet.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "version", *columns])
        for n, (who, label, answers) in enumerate(rows):
            writer.writerow([f"{who} {n}", label, *(answers.get(c) or "" for c in columns)])
    assert main(["grade", str(exam_dir / "exam.json"), str(sheet), "--out", str(out / "g"), "--format", "md"]) == 0
    with (out / "g" / "grades.csv").open(encoding="utf-8") as handle:
        totals = {r["student"]: float(r["total"]) for r in csv.DictReader(handle)}
    feedback = sorted((out / "g" / "feedback").glob("*.md"))  # numbered in the responses' order
    assert len(feedback) == len(rows)
    text = dict(zip((v["label"] for v in data["versions"]), questions, strict=True))
    points = {v["label"]: sum(p["points"] for p in v["parts"]) for v in data["versions"]}
    found = []
    for n, (who, label, answers) in enumerate(rows):
        blanks, _, _ = extract(text[label])
        typed = [math.nan if a is None else float(a) for a in answers.values()]
        moodle = grade(blanks, typed) * points[label]  # the quiz slot set to the paper's total
        found.append((label, who, moodle, totals[f"{who} {n}"], feedback[n].read_text(encoding="utf-8")))
    return found


def test_moodles_mark_is_symattn_grades(exam, tmp_path):
    found = marks(exam, responses(exam[1], random.Random(3)), tmp_path)
    differ = [(label, who, moodle, total) for label, who, moodle, total, _ in found
              if abs(moodle - total) > 0.005 + 1e-9]  # grades.csv rounds to two decimals
    assert not differ
    assert len(found) >= 5 * 16 and all(moodle < 20 for _, who, moodle, _, _ in found if who != "all right")


def test_carried_forward_is_what_moodle_cannot_give(exam, tmp_path):
    """The same slip of +1 in the first box of every part: where a later box is the student's own slipped value
    carried (z[1] = 1·w[1] + 0·w[2] + ...), grade credits it by error carried forward and Moodle cannot. Grade's
    total is Moodle's mark plus exactly the shares of the boxes its feedback lists as carried, and nothing else."""
    data = exam[1]
    rows = []
    for version in data["versions"]:
        exact = {b["id"]: b["answer"] for p in version["parts"] for b in p["blanks"]}
        first = {p["blanks"][0]["id"] for p in version["parts"]}
        rows.append(("slip", version["label"], {k: (f"{float(v) + 1:.6f}" if k in first else v)
                                                for k, v in exact.items()}))
    share = {(v["label"], p["part"]): p["points"] / len(p["blanks"]) for v in data["versions"] for p in v["parts"]}
    carried_rows = 0
    for label, _, moodle, total, feedback in marks(exam, rows, tmp_path):
        credited = feedback.split("## Credited by error carried forward", 1)[1] if "## Credited" in feedback else ""
        parts = re.findall(r"^- \(([a-z])\) ", credited, re.M)
        carried_rows += bool(parts)
        assert abs(total - moodle - sum(share[(label, part)] for part in parts)) <= 0.005 + 1e-9, (label, feedback)
    if data["options"]["difficulty"] == "easy":  # (weights −1/0/1: versions 08 and 10, a whole box of (e) each)
        assert carried_rows >= 1


def test_moodle_xml_states_the_question_mark(exam):
    """defaultgrade is what Moodle's import makes the question worth (the weights' sum), so nothing is hidden."""
    out, _, questions = exam
    root = ET.parse(Path(out) / "moodle.xml").getroot()
    for question, text in zip([q for q in root.findall("question") if q.get("type") == "cloze"], questions,
                              strict=True):
        assert float(question.find("defaultgrade").text) == extract(text)[1]
        assert question.find("penalty").text == "0"
