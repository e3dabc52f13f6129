"""One number of a worked solution, for an author's sentence: `python3 -m symattn.filters.value REF PATH
[--digits N]` prints the answer at PATH (sections[0].queries.love.weights[3], as `check` reads them) of the
built-in example or spec file REF, rounded half-up to N decimals (default 4) from solve's exact decimals, as
check's rule rounds. The Lua filter's inline `PATH`{.symattn ref=REF} runs it. Errors are one line, exit 2."""

from __future__ import annotations

import argparse
import sys

from ..check.claims import parse_path
from ..check.compare import rounded, truth
from ..errors import SpecError, SymattnError, printable
from ..examples import names
from ..pipeline.derive import derive_spec
from ..pipeline.parse import load_example, load_spec
from ..render.answers import answers
from ..spec.fields import parse_digits


def value(ref: str, path: str, digits: int = 4) -> str:
    """The answer at `path` of the example or spec `ref`, rounded to `digits` decimals."""
    spec = load_example(ref) if ref in names() else load_spec(ref)
    exact = truth(answers(derive_spec(spec, steps=False)), parse_path(path, "ref"))
    return "-inf" if exact.is_infinite() else str(rounded(exact, digits))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m symattn.filters.value", description=__doc__.split("\n\n")[0])
    parser.add_argument("ref", help="a built-in example's name or a spec file")
    parser.add_argument("path", help="a path into solve's answers, e.g. sections[0].queries.love.weights[3]")
    parser.add_argument("--digits", default="4", help="decimals (default 4)")
    args = parser.parse_args(argv)
    try:
        print(value(args.ref, args.path, parse_digits(args.digits, "--digits")))
    except SymattnError as exc:
        print(f"symattn: error: {printable(str(exc))}", file=sys.stderr)
        return 2 if isinstance(exc, SpecError) else exc.exit_status
    return 0


if __name__ == "__main__":
    sys.exit(main())
