"""Compiling LaTeX to PDF with upLaTeX and dvipdfmx: no shell escape, file reads restricted, log excerpts on error."""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ..errors import LatexError, TexNotFoundError
from ..infra.output import process_alive

# upLaTeX typesets (Japanese natively, in C: several times faster than LuaLaTeX + luatexja); dvipdfmx turns its DVI
# into the PDF, embedding the fonts.
ENGINE, DVI_TO_PDF = "uplatex", "dvipdfmx"
INSTALL_HINT = ("install TeX Live to get the PDF, e.g. on Debian/Ubuntu: apt-get install texlive-lang-japanese "
                "texlive-latex-recommended texlive-latex-extra lmodern")
_ERROR_LINE = re.compile(r"^(! |.*:\d+: )")


def tex_available() -> bool:
    """Whether uplatex and dvipdfmx are on the PATH."""
    return not _missing_tools()


def tex_missing(consequence: str = "") -> str:
    """The one-line message for a missing TeX: what is missing, what that means (`consequence`), how to get it."""
    missing = " and ".join(_missing_tools() or [ENGINE, DVI_TO_PDF])
    return f"no TeX engine found ({missing} not on the PATH){consequence}; {INSTALL_HINT}"


def _missing_tools() -> list[str]:
    return [tool for tool in (ENGINE, DVI_TO_PDF) if shutil.which(tool) is None]


def latex_environment(folder: Path) -> dict[str, str]:
    """The environment LaTeX runs in: kpathsea may read and write only below the working directory, and the
    temporary files of TeX and dvipdfmx go to the build folder, removed with it (a killed dvipdfmx left its
    dvipdfmx.* file in $TMPDIR)."""
    env = dict(os.environ)
    env.update({"openin_any": "p", "openout_any": "p", "shell_escape": "f", "TMPDIR": str(folder)})
    return env


def compile_pdf(tex_source: str, jobname: str = "document", timeout: float = 600,
                on_page: Callable[[int], None] | None = None) -> bytes:
    """Compile a complete .tex source and return the PDF's bytes; raise LatexError with the log's errors.
    `on_page(n)` is told the pages written so far while LaTeX runs (LatexRun.finish)."""
    return compile_with_log(tex_source, jobname, timeout, on_page)[0]


def compile_with_log(tex_source: str, jobname: str = "document", timeout: float = 600,
                     on_page: Callable[[int], None] | None = None) -> tuple[bytes, str]:
    """Like compile_pdf, and also the LaTeX log (for checks such as overfull boxes)."""
    with LatexRun(jobname) as run:
        return run.finish(tex_source, timeout, on_page)


# upLaTeX's first file: wait for one line on standard input (written once the document is ready; end of file, as
# when symattn fails or is killed, stops TeX at once), then read the document in nonstop mode; print a mark on the
# terminal after each page written, which LatexRun counts for the progress display.
_DOCUMENT = "symattn-document.tex"
_PAGE_MARK = "@symattn-page"
_START = (rf"\read16 to \symattngo \nonstopmode \AddToHook{{shipout/after}}{{\immediate\write16{{{_PAGE_MARK}}}}}"
          rf"\input{{{_DOCUMENT}}}" + "\n")


# A build folder is named after the process that made it, so that a later run can delete the folders of processes
# killed with SIGKILL (the one signal that leaves no chance to clean up).
_FOLDER_PREFIX = "symattn-"
_PR_SET_PDEATHSIG = 1


def _libc_prctl():
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux: no parent-death signal; the stdin EOF still stops TeX early
        return None


_PRCTL = _libc_prctl() if os.name == "posix" else None


def _child_setup() -> None:
    """In the forked child before exec: die with the parent (Linux), even when the parent is SIGKILLed."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _child_options() -> dict:
    """Popen options for TeX and dvipdfmx: their own process group (a terminal's Ctrl-C is symattn's to handle,
    and killing the group ends every helper they start), dying with symattn where the system allows it."""
    return {"start_new_session": True, "preexec_fn": _child_setup} if os.name == "posix" else {}


def sweep_stale_folders(parent: str | None = None) -> None:
    """Delete the build folders left by symattn processes that no longer run (killed with SIGKILL)."""
    root = Path(parent or tempfile.gettempdir())
    try:
        entries = list(root.glob(f"{_FOLDER_PREFIX}*-*"))
    except OSError:
        return
    for folder in entries:
        pid = folder.name[len(_FOLDER_PREFIX):].split("-", 1)[0]
        try:
            if not pid.isdigit() or folder.stat().st_uid != os.getuid() or process_alive(int(pid)):
                continue
        except OSError:
            continue
        shutil.rmtree(folder, ignore_errors=True)


class LatexRun:
    """One upLaTeX pass and one dvipdfmx, started before the document exists: TeX loads its format while Python
    computes the document. Use it as a context manager: leaving the block ends the run."""

    def __init__(self, jobname: str = "document") -> None:
        if not tex_available():
            raise TexNotFoundError(tex_missing())
        self.jobname = jobname
        self._build = tempfile.TemporaryDirectory(prefix=f"{_FOLDER_PREFIX}{os.getpid()}-")
        self.folder = Path(self._build.name)
        start = self.folder / "symattn-start.tex"
        start.write_text(_START, encoding="utf-8")
        # One pass is enough: symattn's documents have no cross-references. (The start file switches to nonstop
        # mode after its \read: in nonstop mode from the start, TeX may not read the terminal.)
        command = [ENGINE, "-no-shell-escape", "-halt-on-error", "-file-line-error", f"-jobname={jobname}",
                   start.name]
        with open(self.folder / "terminal.txt", "wb") as terminal:  # a file, not a pipe nobody reads yet
            self._process = subprocess.Popen(command, cwd=self.folder, env=latex_environment(self.folder),
                                             stdin=subprocess.PIPE, stdout=terminal, stderr=subprocess.STDOUT,
                                             **_child_options())

    def finish(self, tex_source: str, timeout: float = 600,
               on_page: Callable[[int], None] | None = None) -> tuple[bytes, str]:
        """Hand over the complete .tex source; return the PDF's bytes and the log, or raise LatexError.
        `on_page(n)` is told the number of pages written so far, a few times a second while TeX runs."""
        (self.folder / _DOCUMENT).write_text(tex_source, encoding="utf-8")
        try:
            self._process.stdin.write(b"go\n")
            self._process.stdin.close()
        except BrokenPipeError:  # TeX has already stopped: its log says why
            pass
        deadline = time.monotonic() + timeout
        self._wait(deadline, timeout, on_page or (lambda pages: None))
        dvi, log = self.folder / f"{self.jobname}.dvi", self.folder / f"{self.jobname}.log"
        text = log.read_text(encoding="utf-8", errors="replace") if log.is_file() else ""
        if self._process.returncode != 0 or not dvi.is_file():
            text = text or (self.folder / "terminal.txt").read_text(encoding="utf-8", errors="replace")
            raise LatexError("LaTeX failed: " + log_excerpt(text))
        return self._dvi_to_pdf(dvi, deadline, timeout), text

    def _dvi_to_pdf(self, dvi: Path, deadline: float, timeout: float) -> bytes:
        """The PDF of the DVI, from dvipdfmx; LatexError with its messages if it fails."""
        pdf = dvi.with_suffix(".pdf")
        self._process = subprocess.Popen([DVI_TO_PDF, "-q", "-o", pdf.name, dvi.name], cwd=self.folder,
                                         env=latex_environment(self.folder), stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT, **_child_options())
        try:
            output = self._process.communicate(timeout=max(deadline - time.monotonic(), 1))[0]
        except subprocess.TimeoutExpired:
            raise LatexError(f"LaTeX did not finish within {timeout:.0f} s") from None
        if self._process.returncode != 0 or not pdf.is_file():
            text = output.decode("utf-8", errors="replace")
            messages = " | ".join(line.strip() for line in text.splitlines() if line.strip())
            raise LatexError(f"{DVI_TO_PDF} failed: {messages[-600:] or 'no message'}")
        return pdf.read_bytes()

    def _wait(self, deadline: float, timeout: float, on_page: Callable[[int], None]) -> None:
        """Wait for TeX to end, telling `on_page` the pages written so far; LatexError after the deadline.
        A thread waits for the process, so its end is seen at once (Popen.wait with a timeout polls)."""
        pages, mark, tail = 0, _PAGE_MARK.encode(), b""
        waiter = threading.Thread(target=self._process.wait, daemon=True)
        waiter.start()
        with open(self.folder / "terminal.txt", "rb") as terminal:
            while True:
                waiter.join(max(min(0.25, deadline - time.monotonic()), 0))
                text = tail + terminal.read()
                pages, tail = pages + text.count(mark), text[-(len(mark) - 1):]  # a mark cut in two is counted once
                on_page(pages)
                if not waiter.is_alive():
                    return
                if time.monotonic() >= deadline:
                    raise LatexError(f"LaTeX did not finish within {timeout:.0f} s")

    def kill(self) -> None:
        """Stop TeX (or dvipdfmx) and every process it started, now; safe from another thread."""
        process = self._process
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGKILL) if os.name == "posix" else process.kill()
            except OSError:  # already gone
                pass

    def close(self) -> None:
        """Stop TeX if it still runs, and delete its folder."""
        self.kill()
        self._process.wait()
        if self._process.stdin:
            with contextlib.suppress(OSError):
                self._process.stdin.close()
        self._build.cleanup()

    def __enter__(self) -> LatexRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LatexRuns:
    """The LaTeX runs of one build, compiled from several threads: `stop()` (on an interrupt) kills the running
    ones at once and makes those not yet started fail, so that the build ends within moments."""

    def __init__(self) -> None:
        self._lock, self._runs, self.stopped = threading.Lock(), set(), False

    def compile(self, tex_source: str, jobname: str = "document",
                on_page: Callable[[int], None] | None = None) -> bytes:
        """Like compile_pdf; LatexError at once after stop()."""
        return self.compile_logged(tex_source, jobname, on_page)[0]

    def compile_logged(self, tex_source: str, jobname: str = "document",
                       on_page: Callable[[int], None] | None = None) -> tuple[bytes, str]:
        """Like compile_with_log: the PDF and TeX's log; LatexError at once after stop()."""
        with self._lock:
            if self.stopped:
                raise LatexError("LaTeX stopped: the build was interrupted")
            run = LatexRun(jobname)
            self._runs.add(run)
        try:
            return run.finish(tex_source, on_page=on_page)
        finally:
            with self._lock:
                self._runs.discard(run)
            run.close()

    def stop(self) -> None:
        with self._lock:
            self.stopped = True
            for run in self._runs:
                run.kill()


def overfull_boxes(log: str, tolerance_pt: float = 1.0) -> list[str]:
    """The 'Overfull \\hbox (12.3pt too wide)' and 'Overfull \\vbox (4.5pt too high)' lines of a log beyond the
    tolerance: text running off the page's side or past its foot."""
    found = re.finditer(r"Overfull \\[hv]box \((\d+(?:\.\d+)?)pt too (?:wide|high)\)[^\n]*", log)
    return [match.group(0) for match in found if float(match.group(1)) > tolerance_pt]


def log_excerpt(log: str, context: int = 2, limit: int = 3) -> str:
    """The error lines of a TeX log (with a little context), joined into one readable line."""
    lines = log.splitlines()
    found: list[str] = []
    for i, line in enumerate(lines):
        if _ERROR_LINE.match(line):
            found.append(" | ".join(part.strip() for part in lines[i:i + 1 + context] if part.strip()))
            if len(found) == limit:
                break
    return " || ".join(found) if found else "no error line in the log; last lines: " + " | ".join(lines[-5:])
