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
                        help="comma-separated output formats: tex, pdf, json (default: tex,pdf)")
    render.add_argument("--out", metavar="DIR", default="output", help="output folder (default: output)")
    render.add_argument("--digits", metavar="N",
                        help="decimals shown for rounded values (default: the spec's, else 4)")
    render.add_argument("--exact", action="store_true",
                        help="show exact values (fractions, surds, e^{a}) beside the rounded decimals")

    solve = commands.add_parser(
        "solve", help="print the answers of a spec as JSON (for graders, answer keys, scripts)",
        description="Compute the attention pipeline exactly and print every answer as JSON on stdout: decimals "
                    "to 30 significant digits and exact values as LaTeX.",
    )
    solve_source = solve.add_argument_group("input (one of)")
    solve_source.add_argument("spec", nargs="?", metavar="SPEC", help="a spec file (.toml or .json)")
    solve_source.add_argument("--example", metavar="NAME", help="a built-in example (see `symattn examples`)")

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
        if args.command == "solve":
            return _solve(args)
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


def _load(args: argparse.Namespace):
    """The spec named on the command line: a file or a built-in example."""
    from .errors import SpecError

    if (args.spec is None) == (args.example is None):
        raise SpecError(args.command, "give either a SPEC file or --example NAME (see `symattn examples`)")
    from .load import load_example, load_spec

    return load_example(args.example) if args.example else load_spec(args.spec)


def _solve(args: argparse.Namespace) -> int:
    from .derive import derive_spec
    from .render.answers import render_json

    sys.stdout.write(render_json(derive_spec(_load(args))))
    return 0


def _render(args: argparse.Namespace) -> int:
    from .build import build, parse_formats
    from .validate import parse_digits

    formats = parse_formats(args.formats or "tex,pdf")
    digits = parse_digits(args.digits, "--digits") if args.digits is not None else None
    spec = _load(args)
    result = build(spec, Path(args.out), formats, lang=args.lang, digits=digits, exact=args.exact,
                   pdf_required=args.formats is not None, notify=_note)
    for path in result.written:
        print(f"wrote {path}")
    if result.warning:
        _note(result.warning)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
