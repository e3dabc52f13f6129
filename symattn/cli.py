"""The command line: argument parsing and messages only (no SymPy import on the way to --help)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

PROG = "symattn"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Exact, step-by-step worked solutions of Transformer attention, as LaTeX and PDF.",
        epilog="Example: python -m symattn render --example mt   (writes output/mt.tex and output/mt.pdf)",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    render = commands.add_parser(
        "render", help="write the worked solution of a spec file or a built-in example",
        description="Compute the attention pipeline exactly and write its worked solution.",
    )
    source = render.add_argument_group("input (one of)")
    source.add_argument("spec", nargs="?", metavar="SPEC", help="a spec file (.toml or .json)")
    source.add_argument("--example", metavar="NAME", help="a built-in example (see `symattn examples`)")
    render.add_argument("--lang", choices=("ja", "en"), help="language of the text (default: the spec's, else ja)")
    render.add_argument("--format", dest="formats", metavar="LIST",
                        help="comma-separated output formats: tex, pdf (default: tex,pdf)")
    render.add_argument("--out", metavar="DIR", default="output", help="output folder (default: output)")
    render.add_argument("--digits", metavar="N",
                        help="decimals shown for rounded values (default: the spec's, else 4)")

    examples = commands.add_parser("examples", help="list the built-in examples",
                                   description="List the built-in examples, or print one as a spec file.")
    examples.add_argument("--show", metavar="NAME", help="print the spec file of one example")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        if args.command == "examples":
            return _examples(args)
        return _render(args)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # user errors are one line; anything else is a bug with a traceback
        from .errors import SymattnError

        if isinstance(exc, SymattnError):
            print(f"{PROG}: error: {exc}", file=sys.stderr)
            return exc.exit_status
        raise


def _note(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr, flush=True)


def _examples(args: argparse.Namespace) -> int:
    from . import examples

    if args.show:
        if args.show not in examples.names():
            from .errors import SpecError

            raise SpecError("--show", f"unknown example {args.show!r} (known: {', '.join(examples.names())})")
        sys.stdout.write(examples.source(args.show))
        return 0
    for name in examples.names():
        print(f"{name:12} {examples.describe(name)}")
    return 0


def _render(args: argparse.Namespace) -> int:
    from .errors import SpecError

    if (args.spec is None) == (args.example is None):
        raise SpecError("render", "give either a SPEC file or --example NAME (see `symattn examples`)")
    from .build import build, parse_formats
    from .load import load_example, load_spec
    from .validate import parse_digits

    formats = parse_formats(args.formats or "tex,pdf")
    digits = parse_digits(args.digits, "--digits") if args.digits is not None else None
    spec = load_example(args.example) if args.example else load_spec(args.spec)
    result = build(spec, Path(args.out), formats, lang=args.lang, digits=digits,
                   pdf_required=args.formats is not None, notify=_note)
    for path in result.written:
        print(f"wrote {path}")
    if result.warning:
        print(f"{PROG}: {result.warning}", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
