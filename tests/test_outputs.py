"""Nothing lost: the input is never overwritten, outputs stay inside --out, a set of outputs is replaced whole or
not at all, and an interrupt (Ctrl-C, SIGTERM, even SIGKILL) leaves no temporary folder and no TeX behind."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from symattn.cli import main
from symattn.errors import LatexError, SpecError
from symattn.infra.output import TEMP_PREFIX
from symattn.pipeline.parse import load_example
from symattn.render import build as build_module
from symattn.render.build import build

ROOT = Path(__file__).parent.parent
needs_tex = pytest.mark.skipif(shutil.which("uplatex") is None, reason="no TeX")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def snapshot(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir()) if path.is_file()}


def test_the_input_spec_is_never_overwritten(tmp_path, capsys):
    spec = tmp_path / "spec.json"
    assert run(capsys, "examples", "--show", "matrix")[0] == 0  # prints TOML: keep it as a .toml input as well
    spec.write_text('{"sections": [{"kind": "self_attention", "tokens": ["a", "b"], "X": [[1, 0], [0, 1]], '
                    '"W_Q": [[1, 0], [0, 1]], "W_K": [[1, 0], [0, 1]], "W_V": [[1, 0], [0, 1]]}]}', encoding="utf-8")
    before = spec.read_bytes()
    status, out, err = run(capsys, "render", str(spec), "--format", "json", "--out", str(tmp_path))
    assert status == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("symattn: error: --out: ") and "spec.json" in err
    assert spec.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["spec.json"]
    link = tmp_path / "out" / "spec.json"  # the same file by another name (a symbolic link) is refused too
    link.parent.mkdir()
    link.symlink_to(spec)
    assert run(capsys, "render", str(spec), "--format", "json", "--out", str(link.parent))[0] == 2
    assert spec.read_bytes() == before


@pytest.mark.parametrize("name", ["..toml", "...toml", ".hidden.toml"])
def test_an_odd_spec_name_lands_inside_out(tmp_path, capsys, name):
    spec = tmp_path / name
    status, source, _ = run(capsys, "examples", "--show", "matrix")
    spec.write_text(source, encoding="utf-8")
    out = tmp_path / "outdir"
    status, printed, err = run(capsys, "render", str(spec), "--format", "tex,md", "--out", str(out))
    assert status == 0, err
    assert sorted(p.name for p in out.iterdir()) == [".symattn-sets.json", "spec.md", "spec.tex"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([name, "outdir"])


def test_a_compile_failure_through_build_replaces_nothing(tmp_path, monkeypatch):
    """The public build function: a LaTeX failure after the texts are made leaves the old set as it was."""
    spec = load_example("matrix")
    monkeypatch.setattr(build_module, "tex_available", lambda: True)
    monkeypatch.setattr(build_module, "compile_pdf", lambda *args, **kwargs: b"%PDF old")
    build(spec, tmp_path, ("tex", "md", "pdf"), lang="en")
    old = snapshot(tmp_path)
    assert sorted(old) == [".symattn-sets.json", "matrix.md", "matrix.pdf", "matrix.tex"]

    def fail(*args, **kwargs):
        raise LatexError("LaTeX failed: ! Undefined control sequence.")

    monkeypatch.setattr(build_module, "compile_pdf", fail)
    with pytest.raises(LatexError):
        build(spec, tmp_path, ("tex", "md", "pdf"), lang="ja")
    assert snapshot(tmp_path) == old and sorted(p.name for p in tmp_path.iterdir()) == sorted(old)


@needs_tex
def test_a_real_latex_failure_leaves_the_old_set_and_no_temporary_files(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    out = tmp_path / "out"
    assert run(capsys, "render", "--example", "matrix", "--lang", "en", "--format", "tex,md,pdf",
               "--out", str(out))[0] == 0
    old = snapshot(out)
    broken = "\\documentclass{article}\\begin{document}\\undefinedmacro\\end{document}"
    original = build_module.text_renderer
    monkeypatch.setattr(build_module, "text_renderer",
                        lambda fmt: (lambda derivation, **settings: broken) if fmt == "tex" else original(fmt))
    status, _, err = run(capsys, "render", "--example", "matrix", "--format", "tex,md,pdf", "--out", str(out))
    assert status == 2 and "Undefined control sequence" in err and err.count("\n") == 2  # the note, the error
    assert snapshot(out) == old and sorted(p.name for p in out.iterdir()) == sorted(old)
    assert list((tmp_path / "tmp").iterdir()) == []


def test_out_that_is_a_file_or_below_one_is_one_line(tmp_path, capsys):
    blocker = tmp_path / "plain"
    blocker.write_text("keep me", encoding="utf-8")
    for out in (blocker, blocker / "below"):
        status, printed, err = run(capsys, "render", "--example", "matrix", "--format", "tex", "--out", str(out))
        assert status == 2 and printed == "" and err.count("\n") == 1
        assert err.startswith("symattn: error: --out: ") and "is a file, not a folder" in err
    assert blocker.read_text(encoding="utf-8") == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain"]


def test_a_folder_where_an_output_goes_writes_nothing(tmp_path, capsys):
    (tmp_path / "matrix.tex").mkdir()
    status, printed, err = run(capsys, "render", "--example", "matrix", "--format", "md,tex", "--out", str(tmp_path))
    assert status == 2 and printed == "" and err.count("\n") == 1 and "matrix.tex is a folder" in err
    assert [p.name for p in tmp_path.iterdir()] == ["matrix.tex"]


def test_a_read_only_out_is_one_line(read_only_out, capsys):
    """A folder nobody may write in (the read_only_out fixture: permission bits, or chattr +i for root)."""
    out = read_only_out
    status, printed, err = run(capsys, "render", "--example", "matrix", "--format", "tex,md", "--out", str(out))
    assert status == 2 and printed == "" and err.count("\n") == 1 and err.startswith("symattn: error: --out: ")
    assert list(out.iterdir()) == []


def test_write_errors_are_spec_errors_naming_out(tmp_path):
    """The same check through the public API: a SpecError whose field is --out, and no folder created."""
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        build(load_example("matrix"), blocker / "a" / "b", ("md",))
    assert caught.value.field == "--out" and sorted(p.name for p in tmp_path.iterdir()) == ["file"]


# Interrupting real runs: a subprocess with its own TMPDIR, signalled at a few moments.

def start(tmp_path: Path, *argv: str) -> tuple[subprocess.Popen, list[str], threading.Event]:
    """`python -m symattn ARGV` with TMPDIR in tmp_path; its stderr lines collected, an event on 'compiling'."""
    env = dict(os.environ, TMPDIR=str(tmp_path / "tmp"), PYTHONPATH=str(ROOT))
    (tmp_path / "tmp").mkdir(exist_ok=True)
    process = subprocess.Popen([sys.executable, "-m", "symattn", *argv], cwd=tmp_path, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    compiling = threading.Event()

    def read() -> None:
        for line in process.stderr:
            lines.append(line)
            if "compiling" in line or "generating versions:" in line:
                compiling.set()

    threading.Thread(target=read, daemon=True).start()
    return process, lines, compiling


def handling(process: subprocess.Popen) -> None:
    """Wait until symattn handles SIGTERM (its bit in /proc's SigCgt): before that, Python itself is starting
    and a signal tests the interpreter, not symattn."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        status = Path(f"/proc/{process.pid}/status").read_text()
        caught = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), 16)
        if caught >> (signal.SIGTERM - 1) & 1:
            return
        time.sleep(0.01)
    raise AssertionError("symattn never handled SIGTERM")


def processes_in(folder: Path) -> list[int]:
    """Processes (such as uplatex) whose working directory lies in `folder`: TeX left behind."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "cwd").startswith(str(folder / "tmp")):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def no_tex_left(tmp_path: Path) -> None:
    deadline = time.monotonic() + 1
    while processes_in(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_in(tmp_path) == []
    assert [p.name for p in (tmp_path / "tmp").iterdir()] == []


@pytest.fixture(scope="module")
def old_set(tmp_path_factory) -> dict[str, bytes]:
    """A complete earlier run (in English), which an interrupted run must leave whole or replace whole."""
    out = tmp_path_factory.mktemp("old") / "out"
    subprocess.run([sys.executable, "-m", "symattn", "render", "--example", "mt", "--lang", "en", "--out", str(out)],
                   check=True, capture_output=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    return snapshot(out)


@needs_tex
@pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="needs /proc")
@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize("moment", ["random", "random", "compiling"])
def test_an_interrupted_render_cleans_up_and_keeps_a_whole_set(tmp_path, old_set, signum, status, moment):
    """Signalled at a random moment of the run (reading, computing, writing the .tex, TeX, the renames: the mt
    PDF takes about a second) or while TeX compiles; the moment is in every failure message."""
    out = tmp_path / "out"
    out.mkdir()
    for name, data in old_set.items():
        (out / name).write_bytes(data)
    process, lines, compiling = start(tmp_path, "render", "--example", "mt", "--format", "tex,pdf", "--out", "out")
    if moment == "compiling":
        assert compiling.wait(60), "".join(lines)
        time.sleep(0.1)
    else:
        handling(process)
        moment = random.uniform(0, 1.2)
        time.sleep(moment)
    sent = time.monotonic()
    process.send_signal(signum)
    code = process.wait(timeout=10)
    lines.insert(0, f"signalled at {moment}\n")
    assert time.monotonic() - sent < 2, "".join(lines)
    now = snapshot(out)
    assert sorted(now) == sorted(old_set) == [".symattn-sets.json", "mt.pdf", "mt.tex"]
    whole_new = all(now[name] != old_set[name] for name in now)
    if code == 0:  # finished before the signal: the whole new set
        assert whole_new, "".join(lines)
    else:  # the old set, or (a signal as the command returned) the whole new one: never a mix
        assert code == status, "".join(lines)
        assert now == old_set or whole_new, "".join(lines)
    assert sorted(p.name for p in out.iterdir()) == sorted(old_set)  # no temporary file
    no_tex_left(tmp_path)


@needs_tex
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
@pytest.mark.parametrize("moment", ["compiling", "random"])
def test_sigkill_takes_tex_along_and_the_next_run_removes_the_folder(tmp_path, moment):
    """SIGKILL while TeX compiles, or at a random moment of the run: no TeX outlives it, no output folder is
    half-filled (a killed run's temporary files are swept by the next run)."""
    process, lines, compiling = start(tmp_path, "render", "--example", "mt", "--format", "tex,pdf", "--out", "out")
    if moment == "compiling":
        assert compiling.wait(60), "".join(lines)
    else:
        handling(process)
        time.sleep(random.uniform(0, 1.2))
    process.kill()
    process.wait(timeout=5)
    deadline = time.monotonic() + 2
    while processes_in(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_in(tmp_path) == []
    out = tmp_path / "out"
    finished = {p.name for p in out.iterdir() if not p.name.startswith(TEMP_PREFIX)} if out.exists() else set()
    assert finished in (set(), {"mt.tex", "mt.pdf", ".symattn-sets.json"})  # nothing, or the whole set (killed after it was in place)
    again, lines, _ = start(tmp_path, "render", "--example", "matrix", "--format", "tex", "--out", "out")
    assert again.wait(120) == 0, "".join(lines)
    assert sorted(p.name for p in out.iterdir()) == sorted({"matrix.tex", ".symattn-sets.json", *finished})  # temporary files swept
    no_tex_left(tmp_path)


@needs_tex
@pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="needs /proc")
@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupted_split_exam_stops_at_once(tmp_path, signum, status):
    """Signalled at a random moment while the versions are generated and their PDFs compile."""
    process, lines, compiling = start(tmp_path, "exam", "--count", "40", "--split", "--out", "out")
    assert compiling.wait(120), "".join(lines)
    moment = random.uniform(0.05, 2.0)
    time.sleep(moment)
    sent = time.monotonic()
    process.send_signal(signum)
    lines.insert(0, f"signalled {moment} s into the versions\n")
    assert process.wait(timeout=10) == status, "".join(lines)
    assert time.monotonic() - sent < 3
    assert not (tmp_path / "out").exists()
    no_tex_left(tmp_path)


def test_a_full_disk_keeps_the_old_set_and_leaves_no_temporary_file(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(out)], capture_output=True,
                             text=True, check=False) if shutil.which("mount") else None
    if mounted is None or mounted.returncode != 0:  # not root, or no right to mount: CI runs as root and must run it
        reason = f"mount refused: {mounted.stderr.strip() if mounted else 'no mount command'}"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    try:
        spec = tmp_path / "spec.toml"  # the same name both times: the larger set would replace spec.tex
        spec.write_text(run(capsys, "examples", "--show", "matrix")[1], encoding="utf-8")
        assert run(capsys, "render", str(spec), "--format", "tex", "--out", str(out))[0] == 0  # ~26 kB: fits
        old = snapshot(out)
        spec.write_text(run(capsys, "examples", "--show", "mt")[1], encoding="utf-8")
        status, printed, err = run(capsys, "render", str(spec), "--format", "tex,md,html,json", "--exact",
                                   "--out", str(out))  # ~160 kB: the disk fills on the way
        assert status == 2 and printed == "" and err.count("\n") == 1, err
        assert err.startswith("symattn: error: --out: ") and "no space left on the disk" in err
        assert snapshot(out) == old and sorted(os.listdir(out)) == [".symattn-sets.json", "spec.tex"]  # no temporary file either
    finally:
        subprocess.run(["umount", str(out)], check=True)


def test_a_failed_rename_puts_the_earlier_files_of_the_set_back(tmp_path, monkeypatch):
    """If the second of three renames fails (a disk error at the last moment), the first target gets its old file
    back and the third, new, is not left: the old set stays whole, with no temporary file."""
    from symattn.infra.output import write_set

    old = {"a.tex": "old a", "b.md": "old b"}
    for name, text in old.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    real_replace, calls = os.replace, []

    def failing_replace(source, target):
        calls.append(Path(target).name)
        if calls == ["a.tex", "b.md"]:
            raise OSError(28, "No space left on device", str(target))
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(SpecError, match="no space left"):
        write_set({tmp_path / "a.tex": "new a", tmp_path / "b.md": "new b", tmp_path / "c.html": "new c"})
    monkeypatch.undo()
    assert {p.name: p.read_text(encoding="utf-8") for p in tmp_path.iterdir()} == old
