"""The `symattn check` command: which spec and which claims the arguments name, the check, and its output
(exit status 0 when every claim holds, 1 when any is wrong, when nothing was checked or when a document has
numbers that match nothing, unless --partial; bad input raises SpecError: 2)."""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import SpecError, printable
from ..infra.inputs import read_input_text
from . import answers_of, check
from .claims import Claim, parse, read


def arguments(args: Any) -> tuple[Any, str | None, str | None]:
    """(the spec, a claims file, a shipped claims name) from `check (SPEC | --example NAME) (CLAIMS | --claims NAME
    | --from FILE)`: with --example the one positional argument is CLAIMS."""
    positional = [p for p in (args.spec, args.claims_file) if p is not None]
    spec = None if args.example else (positional.pop(0) if positional else None)
    if (spec is None) == (args.example is None):
        raise SpecError("check", "give either a SPEC file or --example NAME (see `symattn examples`)")
    claims = positional.pop(0) if positional else None
    if positional:
        raise SpecError("check", f"unexpected argument {positional[0]!r}")
    if sum(x is not None for x in (claims, args.claims, args.source)) != 1:
        raise SpecError("check", "give one of CLAIMS (a claims file), --claims NAME or --from FILE")
    if args.claims is not None and args.example is None:
        raise SpecError("--claims", "names a claims file shipped with a built-in example: use it with --example")
    return spec, claims, args.claims


def shipped(example: str, name: str) -> list[Claim]:
    """A claims file shipped with a built-in example: examples/claims/<example>.<name>.toml."""
    folder = resources.files("symattn.examples") / "claims"
    names = sorted(e.name.removesuffix(".toml").split(".", 1)[1] for e in folder.iterdir()
                   if e.name.startswith(f"{example}.") and e.name.endswith(".toml"))
    if name not in names:
        raise SpecError("--claims", f"no claims {name!r} ship with example {example!r}"
                                    f" (there are: {', '.join(names) or 'none'})")
    return parse((folder / f"{example}.{name}.toml").read_text(encoding="utf-8"), False, f"--claims {name}")


def run(args: Any, parse_formats) -> int:
    """The command (`parse_formats`: the cli's --format reader): the spec is read, the claims are checked, the
    findings printed (and written as a report with --format)."""
    from ..pipeline.parse import load_example, load_spec
    from .document_report import REPORT_FORMATS, write
    from .report import as_json, table

    spec_file, claims_file, name = arguments(args)
    formats = parse_formats(args.formats, REPORT_FORMATS) if args.formats else ()
    spec = load_example(args.example) if args.example else load_spec(spec_file)
    claims = read(Path(claims_file)) if claims_file is not None else shipped(args.example, name) if name else None
    text = _document(Path(args.source)) if claims is None else None
    answers = answers_of(spec)
    coverage = None
    if text is not None:
        from .matching import read_document

        claims, coverage = read_document(text, answers, spec)
    checked = check(spec, claims, answers, coverage, bool(getattr(args, "partial", False)))
    inputs = tuple(Path(f) for f in (spec_file, claims_file, args.source) if f is not None)
    for path in write(spec, checked, formats, Path(args.out), inputs) if formats else ():
        print(printable(f"wrote {path}"), file=sys.stderr)
    sys.stdout.write(as_json(checked) if args.json else table(checked))
    return 0 if checked.passed else 1


def _document(path: Path) -> str:
    """The text of --from's document (read before the derivation: an unreadable file is refused at once)."""
    text = read_input_text(path, "--from")
    if path.suffix.lower() in (".html", ".htm", ".xhtml"):
        from .document import html_text

        return html_text(text)
    return text
