"""Exams for the grading tests: a hand-worked version from its spec, or generated ones, written as exam.json by
the exam's own JSON driver, and responses CSVs in both formats."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from symattn.exam.build import exercise
from symattn.exam.drivers.answers_json import JsonDriver
from symattn.exam.drivers.base import Share
from symattn.exam.generate import Version, generate
from symattn.exam.options import ExamOptions
from symattn.pipeline.derive import compute
from symattn.pipeline.parse import parse_spec

# Self-attention over A, B with X = I: Q, K, V are the weight matrices' rows. q_A = [1, 1, 0, 0],
# k_A = [1, 0, 1, 0], k_B = [2, 2, 0, 0]: s = [1, 4]; d_k = 4: a = [0.5, 2]; w = softmax(a); z = w (V = I).
HAND = {"title": "Version 01", "lang": "en", "sections": [{
    "kind": "self_attention", "tokens": ["A", "B"], "X": [["1", "0"], ["0", "1"]],
    "W_Q": [["1", "1", "0", "0"], ["0", "0", "1", "1"]], "W_K": [["1", "0", "1", "0"], ["2", "2", "0", "0"]],
    "W_V": [["1", "0"], ["0", "1"]], "focus": "A"}]}


def write_exam(folder: Path, datas: list[dict], lang: str = "en", difficulty: str = "standard") -> Path:
    """exam.json of versions given as spec data, written by the JSON driver (at `standard` by default: a
    hand-written version's scaled scores need not be on the easy paper's e^x table)."""
    options = ExamOptions(len(datas), 0, difficulty=difficulty, lang=lang)
    shares = []
    for k, data in enumerate(datas, start=1):
        spec = parse_spec(data, name=f"v{k}")
        version = Version(f"{k:02d}", data, spec, (compute(spec.sections[0]),))
        work = exercise(version, options, steps=False)
        shares.append(Share(work.label, work.points, JsonDriver(options).version(work)))
    path = folder / "exam.json"
    path.write_text(JsonDriver(options).files(shares)["exam.json"], encoding="utf-8")
    return path


def generated(folder: Path, count: int, kind: str, seed: int = 1, difficulty: str = "easy") -> Path:
    """exam.json of `count` generated versions of a kind."""
    return write_exam(folder, [v.data for v in generate(count, seed, kind, difficulty, "en")], difficulty=difficulty)


def blanks(exam_path: Path) -> dict[str, list[dict]]:
    """Each version's blanks (exam.json's entries) by label, in order."""
    data = json.loads(exam_path.read_text(encoding="utf-8"))
    return {v["label"]: [b for p in v["parts"] for b in p["blanks"]] for v in data["versions"]}


def rounded(answer: str, digits: int = 4) -> str:
    """An exam.json answer as a student writes it: rounded half-up to `digits` decimals."""
    from decimal import ROUND_HALF_UP, Decimal

    return format(Decimal(answer).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP), "f")


def correct(exam_path: Path, label: str) -> dict[str, str]:
    """Every blank of a version answered correctly (to 4 decimals)."""
    return {b["id"]: rounded(b["answer"]) for b in blanks(exam_path)[label]}


def write_csv(path: Path, exam_path: Path, rows: list[tuple[str, str, dict[str, str]]]) -> Path:
    """symattn's responses CSV: student, version, then every blank id of the exam."""
    ids = [b["id"] for bs in blanks(exam_path).values() for b in bs]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "version", *ids])
        for student, label, answers in rows:
            writer.writerow([student, label, *(answers.get(i, "") for i in ids)])
    return path
