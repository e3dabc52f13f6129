"""`symattn grade`: read exam.json and the responses, mark every student, write grades.csv, the LMS import CSVs,
the class report and the feedback files as one set (all or none; the inputs are never overwritten)."""

from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from ..errors import SpecError
from ..exam.students import unprinted
from ..infra.output import check_targets, write_set
from ..infra.progress import Progress
from ..render.pdf import LatexRuns
from .exam import Exam, load_exam
from .exports import Row, canvas_csv, grades_csv, moodle_csv, possible
from .feedback import Feedback
from .mark import Graded, grade
from .report import Report
from .responses import Unread, parse_responses, read_responses_text

GRADE_FORMATS = ("md", "pdf")


@dataclass(frozen=True)
class GradeResult:
    written: list[Path]
    graded: list[Graded]
    skipped: tuple[int, ...]
    # what stderr warns of: columns or cells ignored, rows not graded, rows the class list does not bear out
    doubts: tuple[str, ...] = ()
    unread: tuple[Unread, ...] = ()


def parse_below(text: str) -> Fraction:
    """--below: points, a decimal of ASCII digits ("10", "12.5")."""
    if not re.fullmatch(r"[0-9]{1,6}(\.[0-9]{1,6})?", text.strip()):
        raise SpecError("--below", f"expected points, a number such as 10 or 12.5, got {text[:40]!r}")
    return Fraction(text.strip())


def file_stem(student: str, number: int) -> str:
    """A feedback file's name: its position and the student's name reduced to letters, digits and dashes."""
    slug = re.sub(r"[^\w]+", "-", student, flags=re.UNICODE).strip("-_")[:40] or "student"
    return f"{number:03d}-{slug}"


def notes(exam: Exam, written: str, version: str | None, notes: tuple[str, ...] = ()) -> tuple[str, ...]:
    """What grades.csv and the report say of a row: what was set aside on it, and what the class list says
    against it (a student not on it, one graded on another version, a name several students have)."""
    out = list(notes)
    if exam.students:
        entry = exam.student(written)
        if entry is None and exam.namesakes(written) > 1:
            out.append(f"{exam.namesakes(written)} students of the class list have this name: give the id")
        elif entry is None:
            out.append("not on the class list")
        elif version is not None and entry[2] != version:
            out.append(f"sat version {entry[2]} by the class list, graded on version {version}")
    return tuple(out)


def class_rows(exam: Exam, graded: list[Graded], unread: tuple[Unread, ...]) -> list[Row]:
    """Every row of the responses, graded or not, in the responses' order."""
    rows = [Row(g.response.student, g, None, exam.student(g.response.student),
                notes(exam, g.response.student, g.version.label, g.response.notes)) for g in graded]
    rows += [Row(u.student, None, u, exam.student(u.student), (f"not graded: {u.reason}",
                                                                 *notes(exam, u.student, None))) for u in unread]
    return sorted(rows, key=lambda r: r.row)


def grade_exam(exam_path: Path, responses_path: Path, out_dir: Path, formats: tuple[str, ...],
               below: Fraction | None = None) -> GradeResult:
    """Grade every response; write grades.csv, the Moodle and Canvas import CSVs, the class report and
    feedback/<nnn>-<name>.md (and .pdf) under out_dir. `below`: the total under which the report lists a
    student (default: half the paper's points)."""
    text = read_responses_text(responses_path)  # (a file over the input limit refused before exam.json is read)
    exam = load_exam(exam_path)
    responses = parse_responses(text, responses_path.name, exam)
    keep = (exam_path, responses_path)
    stems = [file_stem(r.student, k) for k, r in enumerate(responses.responses, start=1)]
    feedback_files = [out_dir / "feedback" / f"{stem}.{fmt}" for stem in stems for fmt in formats]
    reports = [out_dir / name for name in ("grades.csv", "moodle-grades.csv", "canvas-grades.csv")]
    reports += [out_dir / f"report.{fmt}" for fmt in formats]
    check_targets([*reports, *feedback_files], keep, folder=out_dir)  # before the work
    graded = []
    with Progress("grading", len(responses.responses)) as bar:  # on stderr: a class of 1,000 takes a while
        for response in responses.responses:
            graded.append(grade(response, exam.versions[response.version]))
            bar.advance()
    rows = class_rows(exam, graded, responses.unread)
    item = exam.title or "symattn exam"
    moodle, no_moodle = moodle_csv(rows, item)
    canvas, no_canvas = canvas_csv(rows, item)
    threshold = below if below is not None else Fraction(possible(rows), 2)
    report = Report(exam, rows, threshold, {f: left for f, left in (("moodle-grades.csv", no_moodle),
                                                                     ("canvas-grades.csv", no_canvas)) if left})
    files: dict[Path, str | bytes] = {out_dir / "grades.csv": grades_csv(rows, exam),
                                      out_dir / "moodle-grades.csv": moodle, out_dir / "canvas-grades.csv": canvas}
    feedback = Feedback(exam.lang, exam.digits)
    if "md" in formats:
        files[out_dir / "report.md"] = report.markdown()
        files.update({out_dir / "feedback" / f"{stem}.md": feedback.markdown(g) for stem, g in zip(stems, graded,
                                                                                                   strict=True)})
    if "pdf" in formats:
        sources = {out_dir / "feedback" / f"{stem}.pdf": feedback.latex(g) for stem, g in zip(stems, graded,
                                                                                            strict=True)}
        sources[out_dir / "report.pdf"] = report.latex()
        files.update(_compile(sources))
    write_set(files, keep, folder=out_dir, name="grade")
    warned = [*responses.warnings, *(f"row {r.row}: {r.student!r}: {'; '.join(r.notes)}" for r in rows if r.notes)]
    warned += [f"row {r.row}: {r.student!r}: the PDFs print {letter} as an empty box (TeX here has no font "
               "with it)" for r in rows if "pdf" in formats and (letter := unprinted(r.student))]
    return GradeResult(list(files), graded, responses.skipped, tuple(warned), responses.unread)


def _compile(sources: dict[Path, str]) -> dict[Path, bytes]:
    """The PDFs, compiled side by side (one upLaTeX run each); an interrupt or failure stops the others."""
    runs = LatexRuns()
    with (Progress("compiling PDFs", len(sources)) as bar,
          ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool):
        futures = {path: pool.submit(runs.compile, source, path.stem) for path, source in sources.items()}
        try:
            pdfs = {}
            for path, future in futures.items():
                pdfs[path] = future.result()
                bar.advance()
            return pdfs
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            runs.stop()
            raise
