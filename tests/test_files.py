"""Files and data loss (issue 30): inputs never overwritten, a set is what one run wrote, concurrent runs, links
out of --out, temporary names, early interrupts, bounded input files, a read-only --out."""

from __future__ import annotations

import csv
import os
import resource
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import symattn.infra.output as output
from symattn.errors import SpecError
from symattn.infra.inputs import MAX_INPUT_BYTES, read_input
from symattn.infra.output import TEMP_PREFIX, write_set

from .grade.exams import HAND, correct, write_csv, write_exam

ROOT = Path(__file__).parent.parent
needs_tex = pytest.mark.skipif(shutil.which("uplatex") is None, reason="no TeX")


def symattn(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """The command in a process of its own, its memory bounded (a command reading /dev/zero fails, not the host)."""
    def bounded() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    return subprocess.run([sys.executable, "-m", "symattn", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, preexec_fn=bounded, env={**os.environ, "PYTHONPATH": str(ROOT)})


def one_line_error(result: subprocess.CompletedProcess, *words: str) -> None:
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("symattn: error: "), result.stderr
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in result.stderr, result.stderr


def names(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


# 1. inputs are never overwritten

def test_exam_never_overwrites_its_class_list(tmp_path):
    out = tmp_path / "ek"
    out.mkdir()
    students = out / "exam.json"
    students.write_text("id,name\ns1,Ann\ns2,Bob\n", encoding="utf-8")
    result = symattn("exam", "--students", str(students), "--format", "json", "--out", str(out))
    one_line_error(result, "--out: would overwrite the input", str(students))
    assert students.read_text(encoding="utf-8") == "id,name\ns1,Ann\ns2,Bob\n"
    assert names(out) == ["exam.json"]


# 2. a set is what one run wrote

def test_an_exam_in_one_language_removes_the_earlier_exams_files_only(tmp_path):
    """exam-ja.json and exam-en.json, then an exam in one language: the earlier pair goes (it would be read as the
    current exam), the user's own files stay, and so does a file of the earlier set the user has changed since."""
    out = tmp_path / "out"
    assert symattn("exam", "--count", "2", "--lang", "ja,en", "--format", "json,tex", "--out", str(out)).returncode == 0
    assert names(out) == [".symattn-sets.json", "exam-en.json", "exam-en.tex", "exam-ja.json", "exam-ja.tex",
                          "key-en.tex", "key-ja.tex"]
    (out / "exam-03.pdf").write_bytes(b"the user's own")
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    with (out / "key-en.tex").open("a", encoding="utf-8") as edited:
        edited.write("% corrected by hand\n")
    result = symattn("exam", "--count", "1", "--seed", "9", "--format", "json", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert names(out) == [".symattn-sets.json", "exam-03.pdf", "exam.json", "key-en.tex", "notes.txt"]
    assert (out / "exam-03.pdf").read_bytes() == b"the user's own"


@needs_tex
def test_a_split_exam_of_fewer_versions_leaves_no_stale_version(tmp_path):
    out = tmp_path / "sp"
    assert symattn("exam", "--count", "3", "--split", "--format", "pdf,json", "--out", str(out),
                   timeout=300).returncode == 0
    assert "exam-03.pdf" in names(out) and "key-03.pdf" in names(out)
    result = symattn("exam", "--count", "2", "--seed", "9", "--split", "--format", "pdf,json", "--out", str(out),
                     timeout=300)
    assert result.returncode == 0, result.stderr
    assert names(out) == [".symattn-sets.json", "exam-01.pdf", "exam-02.pdf", "exam.json", "exam.pdf",
                          "key-01.pdf", "key-02.pdf", "key.pdf", "solutions.pdf"]


def grade_class(tmp_path: Path, exam: Path, students: list[str], out: Path) -> subprocess.CompletedProcess:
    rows = [(name, "01", correct(exam, "01")) for name in students]
    responses = write_csv(tmp_path / f"r{len(students)}.csv", exam, rows)
    return symattn("grade", str(exam), str(responses), "--out", str(out), "--format", "md")


def test_regrading_a_smaller_class_removes_the_earlier_feedback(tmp_path):
    exam = write_exam(tmp_path, [HAND])
    out = tmp_path / "grades"
    assert grade_class(tmp_path, exam, ["Ann", "Bob", "Cy", "Dee"], out).returncode == 0
    assert len(list((out / "feedback").iterdir())) == 4
    (out / "feedback" / "my-notes.md").write_text("mine", encoding="utf-8")
    assert grade_class(tmp_path, exam, ["Ann", "Bob"], out).returncode == 0
    left = sorted(p.name for p in (out / "feedback").iterdir())
    assert len(left) == 3 and "my-notes.md" in left
    assert [row["student"] for row in csv.DictReader((out / "grades.csv").open(encoding="utf-8"))] == ["Ann", "Bob"]


def test_a_render_in_fewer_formats_removes_the_earlier_formats_of_that_document_only(tmp_path):
    """render's set is one spec's document: its formats from the run before that this run does not write go (an
    mt.html beside a new mt.md would show the old spec); another spec's document, the user's files and a file of
    the earlier set edited since stay."""
    out = tmp_path / "out"
    assert symattn("render", "--example", "mt", "--format", "md,html,json", "--out", str(out)).returncode == 0
    assert symattn("render", "--example", "matrix", "--format", "md,json", "--out", str(out)).returncode == 0
    (out / "mt.tex").write_text("the user's own", encoding="utf-8")  # a name of the set, never written by it
    with (out / "mt.json").open("a", encoding="utf-8") as edited:
        edited.write("\n")
    result = symattn("render", "--example", "mt", "--format", "md", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert names(out) == [".symattn-sets.json", "matrix.json", "matrix.md", "mt.json", "mt.md", "mt.tex"]
    assert (out / "mt.tex").read_text(encoding="utf-8") == "the user's own"


def test_a_check_report_in_fewer_formats_removes_the_earlier_report_formats(tmp_path):
    """check's report is a document too (mt-check.*): the next report replaces the whole earlier one, and leaves
    the document it checked."""
    out = tmp_path / "out"
    assert symattn("render", "--example", "mt", "--format", "md", "--out", str(out)).returncode == 0
    document = (out / "mt.md").read_bytes()
    for formats in ("md,html", "md"):
        result = symattn("check", "--example", "mt", "--from", str(out / "mt.md"), "--format", formats,
                         "--out", str(out))
        assert result.returncode == 0, result.stderr
    assert names(out) == [".symattn-sets.json", "mt-check.md", "mt.md"]
    assert (out / "mt.md").read_bytes() == document


def test_a_tampered_manifest_deletes_nothing_outside_the_folder(tmp_path):
    outside = tmp_path / "precious.txt"
    outside.write_text("a", encoding="utf-8")  # the bytes recorded for a.txt
    out = tmp_path / "out"
    write_set({out / "a.txt": "a"}, folder=out, name="exam")
    manifest = out / ".symattn-sets.json"
    text = manifest.read_text(encoding="utf-8").replace('"a.txt"', '"../precious.txt"')
    manifest.write_text(text, encoding="utf-8")
    write_set({out / "b.txt": "b"}, folder=out, name="exam")
    assert outside.read_text(encoding="utf-8") == "a" and (out / "a.txt").exists()


# 3. concurrent runs into one folder

def test_of_two_sets_written_at_once_one_whole_set_wins(tmp_path, monkeypatch):
    """Two sets of the same 12 files written by two threads on a slow file system (each rename 20 ms): every file
    is then of one run, never a mix."""
    out = tmp_path / "out"
    out.mkdir()
    replace = os.replace

    def slow(source, target):
        time.sleep(0.02)
        replace(source, target)

    monkeypatch.setattr(output.os, "replace", slow)
    order = {"A": range(12), "B": range(11, -1, -1)}  # one forwards, one backwards: unlocked, they would mix
    runs = [threading.Thread(target=write_set, args=({out / f"f{i:02d}": run for i in order[run]},))
            for run in order]
    for thread in runs:
        thread.start()
    for thread in runs:
        thread.join()
    assert len({(out / f"f{i:02d}").read_text(encoding="utf-8") for i in range(12)}) == 1


def test_a_folder_another_run_creates_meanwhile_is_shared(tmp_path, monkeypatch):
    """Two runs creating the same new --out: the other one's mkdir lands between this one's look and its own."""
    out = tmp_path / "new" / "out"
    mkdir = Path.mkdir

    def raced(self, *args, **kwargs):
        if self == out and not self.exists():
            mkdir(self)  # the other run
        return mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", raced)
    write_set({out / "a.txt": "a"})
    assert (out / "a.txt").read_text(encoding="utf-8") == "a"


def test_two_grade_runs_at_once_leave_one_whole_set(tmp_path):
    exam = write_exam(tmp_path, [HAND])
    out = tmp_path / "new" / "grades"
    classes = [[f"s{i}" for i in range(12)], ["Ann", "Bob"]]
    responses = [write_csv(tmp_path / f"r{k}.csv", exam, [(n, "01", correct(exam, "01")) for n in names_])
                 for k, names_ in enumerate(classes)]
    runs = [subprocess.Popen([sys.executable, "-m", "symattn", "grade", str(exam), str(r), "--out", str(out),
                              "--format", "md"], stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT)}) for r in responses]
    for run in runs:
        assert run.wait(120) == 0, run.stderr.read()
    graded = [row["student"] for row in csv.DictReader((out / "grades.csv").open(encoding="utf-8"))]
    assert graded in classes
    assert len(list((out / "feedback").iterdir())) == len(graded)


# 4. links out of --out, temporary names, early interrupts

def test_a_feedback_folder_linked_out_of_out_is_refused(tmp_path):
    exam = write_exam(tmp_path, [HAND])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "grades"
    out.mkdir()
    (out / "feedback").symlink_to(elsewhere)
    rows = [("Ann", "01", correct(exam, "01"))]
    result = symattn("grade", str(exam), str(write_csv(tmp_path / "r.csv", exam, rows)), "--out", str(out),
                     "--format", "md")
    one_line_error(result, "--out:", "feedback is a symbolic link")
    assert list(elsewhere.iterdir()) == [] and names(out) == []


def test_errors_name_the_target_never_the_temporary_file(tmp_path):
    write_set({tmp_path / ("a" * 250 + ".txt"): "fits"})  # the name fits; the temporary one must too
    assert (tmp_path / ("a" * 250 + ".txt")).read_text(encoding="utf-8") == "fits"
    with pytest.raises(SpecError) as error:
        write_set({tmp_path / ("b" * 300 + ".txt"): "too long"})
    assert TEMP_PREFIX not in str(error.value) and "b" * 300 in str(error.value)
    assert [p.name for p in tmp_path.iterdir()] == ["a" * 250 + ".txt"]


INTERRUPTED = """
import runpy, sys
MODULE = sys.argv[1]
class Interrupt:  # Ctrl-C as the module named loads
    def find_spec(self, name, path=None, target=None):
        if name == MODULE:
            raise KeyboardInterrupt
sys.meta_path.insert(0, Interrupt())
sys.argv = ["symattn", "examples"]
runpy.run_module("symattn", run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize("module", ["argparse", "symattn.render.formats", "symattn.examples"])
def test_ctrl_c_while_starting_is_one_line_and_130(module):
    """While symattn.cli is imported, while the parser is built, and as the command runs."""
    result = subprocess.run([sys.executable, "-c", INTERRUPTED, module], capture_output=True, text=True,
                            timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert (result.returncode, result.stderr) == (130, "symattn: interrupted\n")


# 8. input files: regular, bounded

@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe.csv"
    os.mkfifo(path)
    return path


def test_special_files_are_refused_before_reading(tmp_path, fifo):
    (tmp_path / "zero.toml").symlink_to("/dev/zero")
    fifo.rename(tmp_path / "pipe.toml")
    os.mkfifo(fifo)
    exam = write_exam(tmp_path, [HAND])
    for args, words in [
            (["render", "zero.toml", "--format", "tex"], ("zero.toml: the file is a device",)),
            (["render", "pipe.toml", "--format", "tex"], ("pipe.toml: the file is a pipe",)),
            (["check", "--example", "mt", "--from", "/dev/zero"], ("--from: /dev/zero is a device",)),
            (["check", "--example", "mt", "--from", str(fifo)], ("--from:", "is a pipe")),
            (["check", "--example", "mt", "--from", str(tmp_path)], ("--from:", "is a folder")),
            (["check", "--example", "mt", "zero.toml"], ("zero.toml",)),
            (["grade", str(exam), "/dev/zero"], ("/dev/zero: the file is a device",)),
            (["grade", "zero.toml", str(exam)], ("zero.toml: the file is a device",)),
            (["exam", "--students", str(fifo), "--format", "json"], ("--students:", "is a pipe")),
            (["exam", "--students", "/dev/zero", "--format", "json"], ("--students: /dev/zero is a device",))]:
        started = time.monotonic()
        one_line_error(symattn(*args, cwd=tmp_path, timeout=30), *words)
        assert time.monotonic() - started < 20
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exam.json", "pipe.csv", "pipe.toml", "zero.toml"]


def test_input_files_over_the_limit_are_refused_unread(tmp_path):
    for name in ("big.toml", "big.md", "big.csv"):
        with (tmp_path / name).open("wb") as handle:
            handle.truncate(MAX_INPUT_BYTES + 1)  # sparse: no disk used, and reading it would take long
    exam = write_exam(tmp_path, [HAND])
    for args, field in [(["render", "big.toml", "--format", "tex"], "big.toml"),
                        (["check", "--example", "mt", "--from", "big.md"], "--from"),
                        (["exam", "--students", "big.csv", "--format", "json"], "--students"),
                        (["grade", str(exam), "big.csv"], "big.csv")]:
        one_line_error(symattn(*args, cwd=tmp_path, timeout=30), f"{field}: ", "16,777,217 bytes: at most 16 MB")
    # the responses are refused before exam.json is read (a 1,000-version exam.json took 7 s to load first)
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    one_line_error(symattn("grade", "broken.json", "big.csv", cwd=tmp_path, timeout=30), "big.csv: ",
                   "16,777,217 bytes")


def test_one_reader_for_every_input(tmp_path):
    path = tmp_path / "a.csv"
    path.write_bytes(b"id,name\n")
    assert read_input(path, "--students") == b"id,name\n"
    with pytest.raises(SpecError, match=r"^--students: .*a.csv holds 8 bytes: at most 0 MB are read$"):
        read_input(path, "--students", limit=7)


# 19. a read-only --out

def test_a_read_only_exam_out_is_one_line(read_only_out):
    out = read_only_out
    result = symattn("exam", "--count", "2", "--format", "json", "--out", str(out))
    one_line_error(result, f"--out: cannot write {out}: permission denied")
    assert TEMP_PREFIX not in result.stderr and list(out.iterdir()) == []



# 10. progress for long work

def test_grade_shows_its_progress_on_stderr(tmp_path):
    """Off a terminal, one closing line per phase (on a terminal the bar is redrawn in place)."""
    exam = write_exam(tmp_path, [HAND])
    rows = [(name, "01", correct(exam, "01")) for name in ("Ann", "Bob")]
    formats = "md,pdf" if shutil.which("uplatex") else "md"
    result = symattn("grade", str(exam), str(write_csv(tmp_path / "r.csv", exam, rows)), "--out",
                     str(tmp_path / "g"), "--format", formats)
    assert result.returncode == 0, result.stderr
    assert "grading: 2/2\n" in result.stderr
    # two feedback files and the class report
    assert ("compiling PDFs: 3/3\n" in result.stderr) == ("pdf" in formats)
