"""`symattn exam`: generate the versions, derive them, write the paper, the key, JSON and Moodle XML."""

from __future__ import annotations

import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

from .. import __version__
from ..derivation import derive_spec
from ..errors import SpecError
from ..output import write_atomic
from ..progress import Progress
from ..render.answers import answers
from ..render.pdf import compile_pdf
from .generate import Candidate, check, check_request, search
from .moodle import MoodleWriter
from .paper import ExamWriter
from .workers import ordered_map

EXAM_FORMATS = ("pdf", "tex", "json", "moodle")
_SLOT = "@versions@"  # where the versions' entries go in exam.json


@dataclass(frozen=True)
class ExamOptions:
    """Everything that makes an exam; the same options always give the same files."""

    count: int
    seed: int
    kind: str = "self_attention"
    difficulty: str = "easy"
    lang: str = "en"
    digits: int = 4


@dataclass(frozen=True)
class Rendered:
    """One version's share of each file: its LaTeX, its entry of exam.json, its Moodle question."""

    tex: str | None
    json: str | None
    question: str | None


@dataclass(frozen=True)
class RenderVersion:
    """A candidate checked, derived and rendered in one call: a worker process's task."""

    options: ExamOptions
    formats: tuple[str, ...]

    def __call__(self, candidate: Candidate) -> Rendered | None:
        version = check(candidate)
        if version is None:
            return None
        tex = bool({"tex", "pdf"} & set(self.formats))
        derivation = derive_spec(version.spec, lang=self.options.lang, digits=self.options.digits, steps=tex,
                                 results=version.results)
        paper, moodle = writers(self.options.lang, self.options.digits)
        return Rendered(paper.version(version, derivation) if tex else None,
                        version_json(version.label, version.data, answers(derivation)) if "json" in self.formats
                        else None,
                        moodle.question_html(derivation) if "moodle" in self.formats else None)


@lru_cache
def writers(lang: str, digits: int) -> tuple[ExamWriter, MoodleWriter]:
    """The paper's and the quiz's writers, made once per process."""
    return ExamWriter(lang, digits), MoodleWriter(lang, digits)


def parse_exam_formats(text: str) -> tuple[str, ...]:
    formats = tuple(dict.fromkeys(part.strip().lower() for part in text.split(",") if part.strip()))
    for fmt in formats or ("",):
        if fmt not in EXAM_FORMATS:
            raise SpecError("--format", f"unknown format {fmt!r} (expected {', '.join(EXAM_FORMATS)})")
    return formats


def build_exam(options: ExamOptions, out_dir: Path, formats: tuple[str, ...], split: bool = False,
               jobs: int = 1) -> list[Path]:
    """Write the requested files; everything is computed before anything is written. The versions are checked
    and rendered in `jobs` processes; the files are the same for any number of them."""
    check_request(options.count, options.kind, options.difficulty, options.digits)
    versions: list[tuple[Candidate, Rendered]] = []
    with (Progress("generating versions", options.count) as bar,
          ordered_map(RenderVersion(options, formats), jobs, options.count) as run):
        for version in search(options.count, options.seed, options.kind, options.difficulty, options.lang, run):
            versions.append(version)
            bar.advance()
    paper, moodle = writers(options.lang, options.digits)
    files: dict[str, str] = {}
    if {"tex", "pdf"} & set(formats):
        files["exam.tex"], files["key.tex"] = paper.documents([rendered.tex for _, rendered in versions])
    if "json" in formats:
        files["exam.json"] = exam_json(options, [rendered.json for _, rendered in versions])
    if "moodle" in formats:
        files["moodle.xml"] = moodle.quiz([(c.label, r.question) for c, r in versions])
    pdfs = _compile(paper, versions, files, split) if "pdf" in formats else {}
    written = []
    for name, content in [*files.items(), *pdfs.items()]:
        if name.endswith(".tex") and "tex" not in formats:
            continue
        write_atomic(out_dir / name, content)
        written.append(out_dir / name)
    return written


def _compile(paper: ExamWriter, versions: list[tuple[Candidate, Rendered]], files: dict[str, str],
             split: bool) -> dict[str, bytes]:
    """exam.pdf and key.pdf (one LaTeX run each, side by side); with split also a pair per version, in parallel."""
    jobs = {"exam.pdf": files["exam.tex"], "key.pdf": files["key.tex"]}
    if split:
        for candidate, rendered in versions:
            exam, key = paper.documents([rendered.tex])
            jobs[f"exam-{candidate.label}.pdf"], jobs[f"key-{candidate.label}.pdf"] = exam, key
    results: dict[str, bytes] = {}
    pages, lock = dict.fromkeys(jobs, 0), threading.Lock()
    with Progress("compiling PDFs", len(jobs)) as bar, ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:

        def written(name: str, count: int) -> None:  # from the worker threads: the pages of every PDF so far
            with lock:
                pages[name] = count
                bar.describe(f"pages written: {sum(pages.values())}")

        futures = {name: pool.submit(compile_pdf, source, name.removesuffix(".pdf"),
                                     on_page=partial(written, name)) for name, source in jobs.items()}
        for name, future in futures.items():
            results[name] = future.result()
            with lock:
                bar.advance()
    return results


def exam_json(options: ExamOptions, versions: list[str]) -> str:
    """Every version's spec (re-renderable with `symattn render`) and its answers, with the options that made it;
    `versions` holds each version's entry as version_json() writes it. The file is json.dumps(..., indent=1) of
    the whole; the entries are encoded where the versions are rendered."""
    data: dict[str, Any] = {
        "symattn": __version__,
        "seed": options.seed,
        "options": {"count": options.count, "kind": options.kind, "difficulty": options.difficulty,
                    "lang": options.lang, "digits": options.digits},
        "versions": [_SLOT],
    }
    head, tail = json.dumps(data, ensure_ascii=False, indent=1).split(json.dumps(_SLOT))
    return head + ",\n  ".join(versions) + tail + "\n"


def version_json(label: str, spec: dict[str, Any], answers: dict[str, Any]) -> str:
    """One version's entry of exam.json: JSON's own lines, two levels deeper for their place in the list (a JSON
    string holds no line break, so every line break is one of the layout's)."""
    entry = {"label": label, "spec": spec, "answers": answers}
    return json.dumps(entry, ensure_ascii=False, indent=1).replace("\n", "\n  ")
