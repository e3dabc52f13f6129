"""`symattn exam`: generate the versions, derive them, write the paper, the key, JSON and Moodle XML."""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__
from ..derivation import derive_spec
from ..errors import SpecError
from ..model import Derivation
from ..output import write_atomic
from ..progress import Progress
from ..render.answers import answers
from ..render.pdf import compile_pdf
from .generate import Version, check_request, generate
from .moodle import MoodleWriter
from .paper import ExamWriter

EXAM_FORMATS = ("pdf", "tex", "json", "moodle")


@dataclass(frozen=True)
class ExamOptions:
    """Everything that makes an exam; the same options always give the same files."""

    count: int
    seed: int
    kind: str = "self_attention"
    difficulty: str = "easy"
    lang: str = "en"
    digits: int = 4


def parse_exam_formats(text: str) -> tuple[str, ...]:
    formats = tuple(dict.fromkeys(part.strip().lower() for part in text.split(",") if part.strip()))
    for fmt in formats or ("",):
        if fmt not in EXAM_FORMATS:
            raise SpecError("--format", f"unknown format {fmt!r} (expected {', '.join(EXAM_FORMATS)})")
    return formats


def build_exam(options: ExamOptions, out_dir: Path, formats: tuple[str, ...], split: bool = False) -> list[Path]:
    """Write the requested files; everything is computed before anything is written."""
    check_request(options.count, options.kind, options.difficulty, options.digits)
    with Progress("generating versions", options.count) as bar:
        versions = generate(options.count, options.seed, options.kind, options.difficulty, options.lang)
        pairs: list[tuple[Version, Derivation]] = []
        for version in versions:
            pairs.append((version, derive_spec(version.spec, lang=options.lang, digits=options.digits,
                                                  results=version.results or None)))
            bar.advance()
    paper = ExamWriter(options.lang, options.digits)
    files: dict[str, str] = {}
    if {"tex", "pdf"} & set(formats):
        files["exam.tex"], files["key.tex"] = paper.documents(pairs)
    if "json" in formats:
        files["exam.json"] = exam_json(options, pairs)
    if "moodle" in formats:
        files["moodle.xml"] = MoodleWriter(options.lang, options.digits).quiz(pairs)
    pdfs = _compile(paper, pairs, files, split) if "pdf" in formats else {}
    written = []
    for name, content in [*files.items(), *pdfs.items()]:
        if name.endswith(".tex") and "tex" not in formats:
            continue
        write_atomic(out_dir / name, content)
        written.append(out_dir / name)
    return written


def _compile(paper: ExamWriter, pairs, files: dict[str, str], split: bool) -> dict[str, bytes]:
    """exam.pdf and key.pdf (one LaTeX run each, side by side); with split also a pair per version, in parallel."""
    jobs = {"exam.pdf": files["exam.tex"], "key.pdf": files["key.tex"]}
    if split:
        for version, derivation in pairs:
            exam, key = paper.documents([(version, derivation)])
            jobs[f"exam-{version.label}.pdf"], jobs[f"key-{version.label}.pdf"] = exam, key
    results: dict[str, bytes] = {}
    with Progress("compiling PDFs", len(jobs)) as bar, ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        futures = {name: pool.submit(compile_pdf, source, name.removesuffix(".pdf")) for name, source in jobs.items()}
        for name, future in futures.items():
            results[name] = future.result()
            bar.advance()
    return results


def exam_json(options: ExamOptions, pairs: list[tuple[Version, Derivation]]) -> str:
    """Every version's spec (re-renderable with `symattn render`) and its answers, with the options that made it."""
    data: dict[str, Any] = {
        "symattn": __version__,
        "seed": options.seed,
        "options": {"count": options.count, "kind": options.kind, "difficulty": options.difficulty,
                    "lang": options.lang, "digits": options.digits},
        "versions": [{"label": version.label, "spec": version.data, "answers": answers(derivation)}
                     for version, derivation in pairs],
    }
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"
