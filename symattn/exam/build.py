"""`symattn exam`: generate the versions, make each an Exercise, let the drivers write their files, compile PDFs."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import lru_cache, partial
from pathlib import Path

from ..errors import SpecError
from ..exercises.exercise import Exercise, with_tolerances
from ..infra import i18n
from ..infra.output import check_targets, write_set
from ..infra.progress import Progress
from ..pipeline.derive import derive_spec
from ..render.pdf import LatexRuns, sweep_stale_folders
from ..spec.model import integer_sqrt
from ..typeset.layout import PAPERS as PAPER_SIZES
from .drivers import DRIVERS, Driver, Share
from .drivers.paper import PaperDriver
from .examiners import exam_kinds, examiner_of
from .exptable import exp_table, on_table
from .generate import Candidate, Version, check, check_request, generate, search
from .heading import check_heading
from .options import ExamOptions
from .paging import check_counts, page_counts, with_counts
from .points import EXP_PARTS, asked_parts, check_points, needed, parse_parts
from .students import Student, check_class
from .workers import ordered_map

WORKED = {"tex", "moodle"}  # the drivers that print the worked solution: the derivation is made with its steps
EXAM_FORMATS = ("pdf", *DRIVERS)  # pdf: exam.pdf, key.pdf and solutions.pdf, compiled from the drivers' .tex
COMPILED = {"tex", "solutions"}  # the drivers whose .tex pdf compiles


def exercise(version: Version, options: ExamOptions, steps: bool = True) -> Exercise:
    """A version as an Exercise: derived (with steps for the worked solution), and asked by its kind: the parts
    of options.parts with their points, and the fixed e^x table when a part needs it."""
    derivation = derive_spec(version.spec, lang=options.lang, digits=options.digits, steps=steps,
                             results=version.results)
    section = version.spec.sections[0]
    asked = examiner_of(version.data["sections"][0]).exercise(section, version.results[0], options.digits)
    if not all(on_table(options.difficulty, scaled) for scaled in asked.scaled):  # by construction of the level
        raise AssertionError(f"version {version.label}: a scaled score is not on the {options.difficulty} e^x table")
    parts = asked_parts(asked.parts, options.parts, options.points)
    table = (exp_table(options.difficulty, options.digits)  # when the weights (e^x) are asked or needed, from
             if integer_sqrt(asked.d_k) is not None and asked.softmax  # scaled scores a table can hold
             and any(p.key in EXP_PARTS for p in needed(asked.parts, options.parts)) else None)
    return Exercise(version.label, version.data, version.spec, derivation, asked.intro, asked.given, asked.focus,
                    asked.d_k, with_tolerances(parts, asked.d_k, options.digits), table,
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
        work = exercise(version, self.options, steps=bool(WORKED & set(self.drivers)))
        return {name: Share(work.label, work.points, driver.version(work))
                for name, driver in drivers(self.options, self.drivers).items()}


@lru_cache
def drivers(options: ExamOptions, names: tuple[str, ...]) -> dict[str, Driver]:
    """The drivers of an exam, made once per process."""
    return {name: DRIVERS[name](options) for name in names}


def build_exam(options: ExamOptions, out_dir: Path, formats: tuple[str, ...], split: bool = False,
               jobs: int = 1, langs: tuple[str, ...] = (), keep: Iterable[Path] = ()) -> list[Path]:
    """Write the requested files: everything is computed and compiled first, then the whole set is written
    (write_set: all files or none). The versions are checked and rendered in `jobs` processes; the files are
    the same for any number of them. `langs`: the papers of the same exam in each language, every file named
    with its language (exam-ja.pdf, key-en.tex, moodle-ja.xml, exam-en-07.pdf); () or one: options.lang's.
    A file in `keep` (the class list) is never overwritten; the files of the previous exam in out_dir that this
    one does not write again are removed (write_set's set "exam")."""
    check_request(options.count, options.kind, options.difficulty, options.digits, options.tokens, options.d_k)
    if options.paper not in PAPER_SIZES:
        raise SpecError("--paper", f"expected {' or '.join(PAPER_SIZES)}, got {options.paper!r}")
    if options.parts is not None:
        parse_parts(",".join(options.parts))  # ExamOptions made in Python: the same check as --parts
    if options.points is not None:
        check_points(options.points, options.parts)
        for kind in (exam_kinds() if options.kind == "mixed" else (options.kind,)):  # every asked part given:
            exercise(generate(1, options.seed, kind, options.difficulty, options.lang)[0], options, steps=False)
    check_class(options.count, options.students)
    check_heading(options)
    langs = tuple(dict.fromkeys(langs)) or (options.lang,)
    named = (lambda name, lang: name) if len(langs) == 1 else lang_name
    keep = tuple(keep)
    check_targets([out_dir / named("exam.json", langs[0])], keep, folder=out_dir)  # fails before the work
    sweep_stale_folders()  # build folders of earlier runs killed with SIGKILL
    drivers(options, driver_names(formats))  # a driver that cannot run (qti without text2qti) fails before the work
    outputs: dict[Path, str | bytes] = {}
    for lang in langs:
        paper = exam_files(replace(options, lang=lang), formats, split, jobs)
        outputs.update({out_dir / named(name, lang): content for name, content in paper.items()})
    write_set(outputs, keep, folder=out_dir, name="exam")
    return list(outputs)


def lang_name(name: str, lang: str) -> str:
    """A file's name with its language after the first word: exam.pdf -> exam-ja.pdf, exam-07.pdf -> exam-ja-07.pdf."""
    cut = min(i for i in (name.find("-"), name.find("."), len(name)) if i >= 0)
    return f"{name[:cut]}-{lang}{name[cut:]}"


def driver_names(formats: tuple[str, ...]) -> tuple[str, ...]:
    """The drivers that write the formats asked for (pdf: those whose .tex is compiled)."""
    return tuple(name for name in DRIVERS if name in formats or (name in COMPILED and "pdf" in formats))


def exam_files(options: ExamOptions, formats: tuple[str, ...], split: bool, jobs: int) -> dict[str, str | bytes]:
    """The requested files of an exam in one language, by name."""
    names = driver_names(formats)
    versions: list[tuple[Candidate, dict[str, Share]]] = []
    i18n.strings(options.lang)  # parsed once here, which the files need too, rather than in every worker (~30 ms)
    with (Progress("generating versions", options.count) as bar,
          ordered_map(RenderVersion(options, names), jobs, options.count) as run):
        for version in search(options.count, options.seed, options.kind, options.difficulty, options.lang, run,
                              options.tokens, options.d_k):
            versions.append(version)
            bar.advance()
    files: dict[str, str | bytes] = {}
    for name, driver in drivers(options, names).items():
        files.update(driver.files([shares[name] for _, shares in versions]))
    sources = {name: text for name, text in files.items()  # pdf: every .tex; solutions: solutions.pdf alone
               if name.endswith(".tex") and ("pdf" in formats or name == "solutions.tex")}
    split_names = {c.label: split_stem(c.label, s) for c, s in zip([c for c, _ in versions],
                                                                   options.students or [None] * len(versions))}
    pdfs = _compile(drivers(options, names).get("tex"), versions, sources, split_names if split else None) \
        if sources else {}
    return {name: content for name, content in [*files.items(), *pdfs.items()]
            if not (name.endswith(".tex") and "tex" not in formats)}


PAPERS = ("exam.pdf", "key.pdf")  # the PDFs whose versions count their pages ("Page i of n")


def split_stem(label: str, student: Student | None) -> str:
    """What follows exam- and key- in a version's own PDF: its label, then with a class list the student's id
    and name (letters, digits and dashes of any script: exam-07-s001-Ada-Lovelace.pdf)."""
    if student is None:
        return label
    slug = re.sub(r"[^\w]+", "-", f"{student.id} {student.name}", flags=re.UNICODE).strip("-_")[:60]
    return f"{label}-{slug}" if slug else label


def whole_paper(name: str) -> str:
    """The whole paper a PDF's pages are those of: exam-07.pdf -> exam.pdf (and exam.pdf itself)."""
    return re.split(r"[-.]", name, maxsplit=1)[0] + ".pdf"


def _compile(paper: PaperDriver | None, versions: list[tuple[Candidate, dict[str, Share]]],
             sources: dict[str, str], split: dict[str, str] | None) -> dict[str, bytes]:
    """A PDF of every .tex, side by side: exam.pdf and key.pdf in two LaTeX runs (the first counts each version's
    pages, see paging.py), solutions.pdf in one; with split also a pair per version, in parallel, with the
    counts of the whole papers."""
    jobs = {name.removesuffix(".tex") + ".pdf": source for name, source in sources.items()}
    if split is not None and paper is not None:
        for candidate, shares in versions:
            exam, key = paper.documents([shares["tex"].text])
            stem = split[candidate.label]
            jobs[f"exam-{stem}.pdf"], jobs[f"key-{stem}.pdf"] = exam, key
    results: dict[str, bytes] = {}
    pages, lock, runs = dict.fromkeys(jobs, 0), threading.Lock(), LatexRuns()
    with Progress("compiling PDFs", len(jobs)) as bar, ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:

        def written(name: str, count: int) -> None:  # from the worker threads: the pages of every PDF so far
            with lock:
                pages[name] = count
                bar.describe(f"pages written: {sum(pages.values())}")

        try:
            counted = {name: pool.submit(runs.compile_logged, jobs[name], name.removesuffix(".pdf"),
                                         on_page=partial(written, f"{name}, first pass"))
                       for name in PAPERS if name in jobs}
            counts = {name: page_counts(future.result()[1]) for name, future in counted.items()}
            own = {name: counts.get(whole_paper(name), {}) for name in jobs}
            futures = {name: pool.submit(runs.compile_logged, with_counts(source, own[name]),
                                         name.removesuffix(".pdf"), on_page=partial(written, name))
                       for name, source in jobs.items()}
            for name, future in futures.items():
                results[name], log = future.result()
                check_counts(name, log, own[name])
                with lock:
                    bar.advance()
        except BaseException:  # a failure or an interrupt: no more compiles, the running ones killed now
            pool.shutdown(wait=False, cancel_futures=True)
            runs.stop()
            raise
    return results
