"""`symattn exam`: generate the versions, make each an Exercise, let the drivers write their files, compile PDFs."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path

from ..derivation import derive_spec
from ..output import check_targets, write_set
from ..progress import Progress
from ..render.pdf import LatexRuns, sweep_stale_folders
from .drivers import DRIVERS, Driver, Share
from .drivers.paper import PaperDriver
from .examiners import examiner_of
from .exercise import Exercise, exp_table
from .generate import Candidate, Version, check, check_request, search
from .options import ExamOptions
from .workers import ordered_map

EXAM_FORMATS = ("pdf", *DRIVERS)  # pdf: exam.pdf and key.pdf, compiled from the paper driver's .tex


def exercise(version: Version, options: ExamOptions, steps: bool = True) -> Exercise:
    """A version as an Exercise: derived (with steps for the worked solution), and asked by its kind."""
    derivation = derive_spec(version.spec, lang=options.lang, digits=options.digits, steps=steps,
                             results=version.results)
    section = version.spec.sections[0]
    asked = examiner_of(version.data["sections"][0]).exercise(section, version.results[0], options.digits)
    return Exercise(version.label, version.data, version.spec, derivation, asked.intro, asked.given, asked.focus,
                    asked.d_k, asked.parts, exp_table(asked.d_k, asked.scaled),
                    asked.task, asked.softmax, asked.angles)


@dataclass(frozen=True)
class RenderVersion:
    """A candidate checked, made an Exercise and written by each driver in one call: a worker process's task."""

    options: ExamOptions
    drivers: tuple[str, ...]  # the DRIVERS that write files

    def __call__(self, candidate: Candidate) -> dict[str, Share] | None:
        version = check(candidate)
        if version is None:
            return None
        work = exercise(version, self.options, steps="tex" in self.drivers)
        return {name: Share(work.label, work.points, driver.version(work))
                for name, driver in drivers(self.options, self.drivers).items()}


@lru_cache
def drivers(options: ExamOptions, names: tuple[str, ...]) -> dict[str, Driver]:
    """The drivers of an exam, made once per process."""
    return {name: DRIVERS[name](options) for name in names}


def build_exam(options: ExamOptions, out_dir: Path, formats: tuple[str, ...], split: bool = False,
               jobs: int = 1) -> list[Path]:
    """Write the requested files: everything is computed and compiled first, then the whole set is written
    (write_set: all files or none). The versions are checked and rendered in `jobs` processes; the files are
    the same for any number of them."""
    check_request(options.count, options.kind, options.difficulty, options.digits)
    check_targets([out_dir / "exam.json"])  # an --out that can never be written fails before the long work
    sweep_stale_folders()  # build folders of earlier runs killed with SIGKILL
    names = tuple(name for name in DRIVERS if name in formats or (name == "tex" and "pdf" in formats))
    versions: list[tuple[Candidate, dict[str, Share]]] = []
    with (Progress("generating versions", options.count) as bar,
          ordered_map(RenderVersion(options, names), jobs, options.count) as run):
        for version in search(options.count, options.seed, options.kind, options.difficulty, options.lang, run):
            versions.append(version)
            bar.advance()
    files: dict[str, str] = {}
    for name, driver in drivers(options, names).items():
        files.update(driver.files([shares[name] for _, shares in versions]))
    pdfs = _compile(drivers(options, names)["tex"], versions, files, split) if "pdf" in formats else {}
    outputs = {out_dir / name: content for name, content in [*files.items(), *pdfs.items()]
               if not (name.endswith(".tex") and "tex" not in formats)}
    write_set(outputs)
    return list(outputs)


def _compile(paper: PaperDriver, versions: list[tuple[Candidate, dict[str, Share]]], files: dict[str, str],
             split: bool) -> dict[str, bytes]:
    """exam.pdf and key.pdf (one LaTeX run each, side by side); with split also a pair per version, in parallel."""
    jobs = {"exam.pdf": files["exam.tex"], "key.pdf": files["key.tex"]}
    if split:
        for candidate, shares in versions:
            exam, key = paper.documents([shares["tex"].text])
            jobs[f"exam-{candidate.label}.pdf"], jobs[f"key-{candidate.label}.pdf"] = exam, key
    results: dict[str, bytes] = {}
    pages, lock, runs = dict.fromkeys(jobs, 0), threading.Lock(), LatexRuns()
    with Progress("compiling PDFs", len(jobs)) as bar, ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:

        def written(name: str, count: int) -> None:  # from the worker threads: the pages of every PDF so far
            with lock:
                pages[name] = count
                bar.describe(f"pages written: {sum(pages.values())}")

        futures = {name: pool.submit(runs.compile, source, name.removesuffix(".pdf"),
                                     on_page=partial(written, name)) for name, source in jobs.items()}
        try:
            for name, future in futures.items():
                results[name] = future.result()
                with lock:
                    bar.advance()
        except BaseException:  # a failure or an interrupt: no more compiles, the running ones killed now
            pool.shutdown(wait=False, cancel_futures=True)
            runs.stop()
            raise
    return results
