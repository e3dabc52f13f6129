"""The progress displays: drawn in place on a terminal, quiet (or one closing line) in logs."""

from __future__ import annotations

import io

from symattn.infra.progress import Counter, Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_counter_redraws_its_count_on_a_terminal_and_ends_the_line():
    stream = Terminal()
    with Counter("PDF pages written", stream) as pages:
        for count in (0, 1, 1, 3):
            pages.update(count)
    assert stream.getvalue() == "\rPDF pages written: 1\rPDF pages written: 3\n"


def test_counter_is_silent_in_logs():
    stream = io.StringIO()
    with Counter("PDF pages written", stream) as pages:
        pages.update(7)
    assert stream.getvalue() == ""


def test_progress_bar_on_a_terminal_and_one_line_in_logs():
    terminal, log = Terminal(), io.StringIO()
    for stream in (terminal, log):
        with Progress("versions", 4, stream, width=4) as bar:
            bar.advance(3)
    assert terminal.getvalue().endswith("\rversions [###-] 3/4\n")
    assert log.getvalue() == "versions: 3/4\n"


def test_progress_bar_shows_a_detail_after_its_count_on_a_terminal_only():
    terminal, log = Terminal(), io.StringIO()
    for stream in (terminal, log):
        with Progress("compiling PDFs", 2, stream, width=2) as bar:
            bar.describe("pages written: 5")
            bar.describe("pages written: 5")  # unchanged: not drawn again
            bar.advance()
    assert terminal.getvalue() == ("\rcompiling PDFs [--] 0/2\rcompiling PDFs [--] 0/2, pages written: 5"
                                   "\rcompiling PDFs [#-] 1/2, pages written: 5\n")
    assert log.getvalue() == "compiling PDFs: 1/2\n"
