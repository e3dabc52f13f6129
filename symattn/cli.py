"""The command line: argument parsing and messages only (no SymPy import on the way to --help)."""

from __future__ import annotations

import argparse
import contextlib
import gc
import re
import signal
import sys
from pathlib import Path

from .arguments import PROG, build_parser
from .errors import printable

_WHOLE = re.compile(r"-?[0-9]{1,18}")  # an option's whole number (a seed may be negative)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C's KeyboardInterrupt, so that both take the same cleanup
    path (temporary files removed, TeX killed); the exit status is 143 rather than 130."""


def interrupt_status(exc: KeyboardInterrupt) -> int:
    """The exit status of an interrupted command: 143 for SIGTERM, 130 for Ctrl-C (128 + the signal)."""
    return 143 if isinstance(exc, Terminated) else 130


def terminate(signum: int, frame: object) -> None:
    """A SIGTERM handler: raise Terminated in the main thread."""
    raise Terminated()


@contextlib.contextmanager
def _sigterm_raises():
    """SIGTERM raises Terminated while the command runs (main thread only); the old handler is put back."""
    try:
        previous = signal.signal(signal.SIGTERM, terminate)
    except ValueError:  # not the main thread: signals are not ours to handle
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run() -> None:
    """The `symattn` command and `python -m symattn`: main() with the process's signals. SIGTERM raises
    Terminated from the first line on; a Ctrl-C or SIGTERM that arrives as the command starts (its arguments being
    read) or returns (its files all in place, or none replaced) ends in the one line and status of an interrupt,
    not in a traceback or a kill."""
    try:
        try:
            signal.signal(signal.SIGTERM, terminate)
            status = main()
        except KeyboardInterrupt as exc:  # outside main()'s own handling: say it as main() does
            status = interrupted(exc)
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    except KeyboardInterrupt as exc:  # a second signal while the first was handled
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        status = interrupt_status(exc)
    gc.freeze()  # the exit's last collection need not walk the finished command's objects
    sys.exit(status)


def interrupted(exc: KeyboardInterrupt) -> int:
    """`symattn: interrupted` (or terminated) on stderr; the exit status of the interrupt."""
    print(f"{PROG}: {'terminated' if isinstance(exc, Terminated) else 'interrupted'}", file=sys.stderr)
    return interrupt_status(exc)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    collecting, frozen = gc.isenabled(), gc.get_freeze_count()
    gc.disable()  # a command's imports make long-lived objects only (~0.1 s of collection): _settle() resumes it
    try:
        with _sigterm_raises():
            if args.command == "examples":
                return _examples(args)
            if args.command == "solve":
                return _solve(args)
            if args.command == "exam":
                return _exam(args)
            if args.command == "grade":
                return _grade(args)
            if args.command == "worksheet":
                return _worksheet(args)
            if args.command == "check":
                from .check.command import run as check

                _settle()
                return check(args, parse_formats)
            return _render(args)
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM, after the cleanup: nothing of the old set replaced
        return interrupted(exc)
    except Exception as exc:  # user errors are one line; anything else is a bug with a traceback
        from .errors import SymattnError

        if isinstance(exc, SymattnError):  # user text in it is shown, never acted on by the terminal
            print(f"{PROG}: error: {printable(str(exc))}", file=sys.stderr)
            return exc.exit_status
        raise
    finally:
        (gc.enable if collecting else gc.disable)()  # as the caller had it (main() also runs inside tests)
        if not frozen:  # nothing left frozen that it froze (_settle): a later batch's leftovers stay collectable
            gc.unfreeze()


def parse_formats(text: str, allowed: tuple[str, ...], option: str = "--format") -> tuple[str, ...]:
    """--format 'tex,pdf' -> ('tex', 'pdf'), each checked against the values allowed (also --lang 'ja,en')."""
    from .errors import SpecError

    what = "format" if option == "--format" else "value"
    formats = tuple(dict.fromkeys(part.strip().lower() for part in text.split(",") if part.strip()))
    if not formats:
        raise SpecError(option, f"expected one or more of {', '.join(allowed)}")
    for fmt in formats:
        if fmt not in allowed:
            raise SpecError(option, f"unknown {what} {fmt!r} (expected {', '.join(allowed)})")
    return formats


def whole_option(text: str | None, option: str) -> int | None:
    """An option's whole number, written in ASCII digits (int() would also read "٤" and "７"); None stays None."""
    from .errors import SpecError

    if text is None:
        return None
    if not _WHOLE.fullmatch(text.strip()):
        raise SpecError(option, f"expected a whole number written with the digits 0-9 (at most 18 of them), "
                                f"got {text!r}")
    return int(text)


def _note(message: str) -> None:
    print(f"{PROG}: {printable(message)}", file=sys.stderr, flush=True)


def _examples(args: argparse.Namespace) -> int:
    from . import examples

    if args.show:
        if args.show not in examples.names():
            from .errors import SpecError
            from .spec.files import unknown_example

            raise SpecError("--show", unknown_example(args.show))
        sys.stdout.write(examples.source(args.show))
        return 0
    width = max(map(len, examples.names()))  # the names in one column, however long the longest
    for name in examples.names():
        print(f"{name:{width}}  {examples.describe(name)}")
    return 0


def _load(args: argparse.Namespace):
    """The spec named on the command line: a file or a built-in example."""
    from .errors import SpecError

    if (args.spec is None) == (args.example is None):
        raise SpecError(args.command, "give either a SPEC file or --example NAME (see `symattn examples`)")
    from .pipeline.parse import load_example, load_spec

    return load_example(args.example) if args.example else load_spec(args.spec)


def _exam(args: argparse.Namespace) -> int:
    from .errors import SpecError
    from .exam.build import EXAM_FORMATS, build_exam
    from .exam.generate import MAX_COUNT, check_request
    from .exam.options import ExamOptions
    from .exam.points import check_points, parse_parts, parse_points
    from .exam.students import read_students, unprinted_names
    from .exam.workers import default_jobs
    from .numbers.display import DEFAULT_DIGITS
    from .spec.fields import parse_digits

    _settle()
    for option in ("count", "seed", "tokens", "d_k", "jobs"):  # whole numbers in ASCII digits (not ٤ or ７)
        setattr(args, option, whole_option(getattr(args, option), f"--{option.replace('_', '-')}"))
    digits = parse_digits(args.digits, "--digits") if args.digits is not None else DEFAULT_DIGITS
    langs = parse_formats(args.lang, ("ja", "en"), "--lang")
    students = read_students(Path(args.students), MAX_COUNT) if args.students is not None else ()
    count = len(students) if students and args.count is None else 10 if args.count is None else args.count
    check_request(count, args.kind, args.difficulty, digits, args.tokens, args.d_k)
    if args.jobs is not None and args.jobs < 1:
        raise SpecError("--jobs", f"expected a whole number of processes, 1 or more, got {args.jobs}")
    formats = parse_formats(args.formats, EXAM_FORMATS)
    if args.split and "pdf" not in formats:
        raise SpecError("--split", "makes one PDF per version: add pdf to --format")
    parts, points = parse_parts(args.parts), parse_points(args.points)
    check_points(points, parts)
    options = ExamOptions(count, args.seed, args.kind, args.difficulty, langs[0], digits, args.tokens,
                          args.d_k, parts, title=args.title, points=points, paper=args.paper,
                          course=args.course, date=args.date, time_allowed=args.time_allowed, students=students)
    if "pdf" in formats or "solutions" in formats:  # solutions.pdf is compiled too
        _require_tex()
        for warning in unprinted_names(students, str(args.students)):
            _note(f"warning: {warning}")
    jobs = args.jobs if args.jobs is not None else default_jobs()
    keep = (Path(args.students),) if args.students is not None else ()  # the class list is never overwritten
    for path in build_exam(options, Path(args.out), formats, split=args.split, jobs=jobs, langs=langs, keep=keep):
        print(printable(f"wrote {path}"))
    return 0


def _grade(args: argparse.Namespace) -> int:
    from .grade.build import GRADE_FORMATS, grade_exam, parse_below
    from .render.pdf import tex_available

    _settle()
    if args.formats is None:
        formats = ("md", "pdf") if tex_available() else ("md",)
        if not tex_available():
            _note("no TeX found: the feedback is written as Markdown only")
    else:
        formats = parse_formats(args.formats, GRADE_FORMATS)
        if "pdf" in formats:
            _require_tex()
    below = parse_below(args.below) if args.below is not None else None
    result = grade_exam(Path(args.exam_json), Path(args.responses), Path(args.out), formats, below)
    if result.skipped:
        _note(f"skipped {len(result.skipped)} rows without an attempt (rows {', '.join(map(str, result.skipped))})")
    for doubt in result.doubts:
        _note(f"warning: {doubt}")
    feedback = sum(1 for path in result.written if path.parent.name == "feedback")
    not_graded = f", {len(result.unread)} not graded (see grades.csv)" if result.unread else ""
    print(printable(f"graded {len(result.graded)} students{not_graded}; wrote {Path(args.out) / 'grades.csv'}, "
                    f"moodle-grades.csv, canvas-grades.csv, the class report and {feedback} feedback files"))
    return 0


def _worksheet(args: argparse.Namespace) -> int:
    from .worksheet.command import run as worksheet

    _settle()
    for path in worksheet(args, parse_formats, whole_option, _require_tex):
        print(printable(f"wrote {path}"))
    return 0


def _require_tex() -> None:
    from .errors import TexNotFoundError
    from .render.pdf import tex_available, tex_missing

    if not tex_available():
        raise TexNotFoundError(tex_missing() + ", or leave out pdf")


def _latex_started(formats: str | None) -> contextlib.AbstractContextManager:
    """A LaTeX run started now, before SymPy is imported, when the PDF (a format compiled with LaTeX) may be asked
    for: TeX loads its format while Python computes. Otherwise a null context."""
    from .render.formats import uses_latex
    from .render.pdf import LatexRun, tex_available

    if (formats is None or uses_latex(part.strip().lower() for part in formats.split(","))) and tex_available():
        return LatexRun()
    return contextlib.nullcontext()


def _settle() -> None:
    """Called once a command's modules are imported: what the imports made (SymPy's classes and caches, hundreds of
    thousands of objects) is left out of the cyclic collector's passes, which a large derivation makes again and
    again (gc.freeze; forked exam workers then share it too), and collection, off during the imports, resumes."""
    gc.freeze()
    gc.enable()


def _solve(args: argparse.Namespace) -> int:
    from .pipeline.derive import derive_spec
    from .render.answers import render_json

    _settle()
    sys.stdout.write(render_json(derive_spec(_load(args), steps=False)))
    return 0


def _slide_options(args: argparse.Namespace, formats: tuple[str, ...]) -> dict:
    """--handout and --theme, for the formats that take them (the slides); an error where none is asked for."""
    from .errors import SpecError
    from .render.formats import format_of
    from .render.slides import check_theme

    given = {"--handout": args.handout, "--theme": args.theme is not None}
    takers = [fmt for fmt in formats if format_of(format_of(fmt).compiled_from or fmt).options]
    for option, used in given.items():
        if used and not takers:
            raise SpecError(option, "only the slides take it: add --format slides")
    return {"handout": args.handout, "theme": check_theme(args.theme if args.theme is not None else "default")}


def _render(args: argparse.Namespace) -> int:
    with _latex_started(args.formats) as latex:
        from .render.build import build
        from .render.formats import DEFAULT, names
        from .spec.fields import parse_digits

        _settle()
        formats = parse_formats(",".join(DEFAULT) if args.formats is None else args.formats, names())
        digits = parse_digits(args.digits, "--digits") if args.digits is not None else None
        spec = _load(args)
        keep = (Path(args.spec),) if args.spec else ()  # the input is never overwritten by an output
        result = build(spec, Path(args.out), formats, lang=args.lang, digits=digits, exact=args.exact,
                       pdf_required=args.formats is not None, notify=_note, latex=latex, keep=keep,
                       prose=args.prose, options=_slide_options(args, formats))
    for path in result.written:
        print(printable(f"wrote {path}"))
    if result.warning:
        _note(result.warning)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
