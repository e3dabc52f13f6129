"""Jupyter's `%%symattn` cell magic: `%load_ext symattn.render.magic`, then a cell

    %%symattn --lang en --digits 3
    example = "mt"            # or a whole spec in TOML

shows its worked solution (the Derivation it returns displays itself: render/notebook.py). A spec symattn refuses
prints its one-line error instead of a traceback."""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

from ..errors import SymattnError, printable
from ..examples import names
from ..pipeline.derive import derive_spec
from ..pipeline.parse import load_example, parse_spec
from ..spec.fields import parse_digits
from ..spec.files import read_spec_text
from .notebook import register


def _options(line: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="%%symattn", add_help=False)
    parser.add_argument("--lang", choices=("ja", "en"))
    parser.add_argument("--digits")
    parser.add_argument("--prose", choices=("full", "plain", "none"))
    return parser.parse_args(shlex.split(line))


def symattn_cell(line: str, cell: str) -> Any:
    """The cell's spec (TOML; `example = "NAME"` alone: a built-in example) derived with the line's options."""
    try:
        options = _options(line)
        data = read_spec_text(cell, "toml", "cell")
        example = data.get("example") if set(data) == {"example"} else None
        spec = load_example(example) if example in names() else parse_spec(data, "cell")
        digits = parse_digits(options.digits, "--digits") if options.digits is not None else None
        register()
        return derive_spec(spec, lang=options.lang, digits=digits, prose=options.prose)
    except SymattnError as exc:
        print(f"symattn: error: {printable(str(exc))}", file=sys.stderr)
        return None


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext symattn.render.magic`: registers %%symattn."""
    ipython.register_magic_function(symattn_cell, magic_kind="cell", magic_name="symattn")
