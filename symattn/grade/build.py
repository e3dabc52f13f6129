"""`symattn grade`: read exam.json and the responses, mark every student, write grades.csv and the feedback files
as one set (all or none; the inputs are never overwritten)."""

from __future__ import annotations

import csv
import io
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ..infra.output import check_targets, write_set
from ..render.escape import csv_cell
from ..render.pdf import LatexRuns
from .exam import Exam, load_exam
from .feedback import Feedback, points_text
from .mark import Graded, grade
from .responses import read_responses

GRADE_FORMATS = ("md", "pdf")


@dataclass(frozen=True)
class GradeResult:
    written: list[Path]
    graded: list[Graded]
    skipped: tuple[int, ...]
    # rows the class list does not bear out: a student not on it, or graded on another version than theirs
    doubts: tuple[str, ...] = ()


def file_stem(student: str, number: int) -> str:
    """A feedback file's name: its position and the student's name reduced to letters, digits and dashes."""
    slug = re.sub(r"[^\w]+", "-", student, flags=re.UNICODE).strip("-_")[:40] or "student"
    return f"{number:03d}-{slug}"


def grades_csv(graded: list[Graded], exam: Exam | None = None) -> str:
    """grades.csv: student, version, the points of each part (a, b, ...), total; two decimals at most. With a
    class list in exam.json, an `id` column after the student (its id, empty for one not on the list), for
    uploading the marks by id."""
    letters = list(dict.fromkeys(p.letter for g in graded for p in g.version.parts))
    listed = exam is not None and bool(exam.students)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    rows = [["student", *(["id"] if listed else []), "version", *letters, "total"]]
    for g in graded:
        points = {p.letter: points_text(g.points(p)) for p in g.version.parts}
        entry = exam.student(g.response.student) if listed else None
        ids = [entry[0] if entry else ""] if listed else []
        rows.append([g.response.student, *ids, g.version.label, *(points.get(k, "") for k in letters),
                     points_text(g.total)])
    writer.writerows([csv_cell(cell) for cell in row] for row in rows)
    return out.getvalue()


def doubts(exam: Exam, graded: list[Graded]) -> tuple[str, ...]:
    """What the class list says against the rows: a student not on it, or one graded on another version."""
    if not exam.students:
        return ()
    out = []
    for g in graded:
        entry = exam.student(g.response.student)
        if entry is None:
            out.append(f"row {g.response.row}: {g.response.student!r} is not on exam.json's class list")
        elif entry[2] != g.version.label:
            out.append(f"row {g.response.row}: {g.response.student!r} sat version {entry[2]} by the class list, "
                       f"graded on version {g.version.label}")
    return tuple(out)


def grade_exam(exam_path: Path, responses_path: Path, out_dir: Path, formats: tuple[str, ...]) -> GradeResult:
    """Grade every response; write grades.csv and feedback/<nnn>-<name>.md (and .pdf) under out_dir."""
    exam = load_exam(exam_path)
    responses = read_responses(responses_path, exam)
    keep = (exam_path, responses_path)
    check_targets([out_dir / "grades.csv"], keep)
    graded = [grade(r, exam.versions[r.version]) for r in responses.responses]
    feedback = Feedback(exam.lang, exam.digits)
    files: dict[Path, str | bytes] = {out_dir / "grades.csv": grades_csv(graded, exam)}
    stems = [file_stem(g.response.student, k) for k, g in enumerate(graded, start=1)]
    if "md" in formats:
        files.update({out_dir / "feedback" / f"{stem}.md": feedback.markdown(g) for stem, g in zip(stems, graded,
                                                                                                   strict=True)})
    if "pdf" in formats:
        sources = {out_dir / "feedback" / f"{stem}.pdf": feedback.latex(g) for stem, g in zip(stems, graded,
                                                                                            strict=True)}
        files.update(_compile(sources))
    write_set(files, keep)
    return GradeResult(list(files), graded, responses.skipped, doubts(exam, graded))


def _compile(sources: dict[Path, str]) -> dict[Path, bytes]:
    """The PDFs, compiled side by side (one upLaTeX run each); an interrupt or failure stops the others."""
    runs = LatexRuns()
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        futures = {path: pool.submit(runs.compile, source, path.stem) for path, source in sources.items()}
        try:
            return {path: future.result() for path, future in futures.items()}
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            runs.stop()
            raise
