"""`symattn worksheet`: the options read and checked, every version's worksheet and key made in each language, and
the files written as one set (nothing written on any error)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from ..errors import SpecError
from ..infra.output import check_targets, write_set
from ..pipeline.derive import derive_spec
from ..pipeline.parse import example_data, parse_spec, spec_file_data
from ..render.build import output_stem
from ..spec.model import Spec
from .sheet import Sheets, worksheet
from .stages import parse_blanks
from .versions import check_versions, redrawn

FORMATS = ("pdf", "tex", "html")


def run(args: argparse.Namespace, parse_list: Callable[..., tuple[str, ...]],
        whole: Callable[[str | None, str], int | None], require_tex: Callable[[], None]) -> list[Path]:
    """Make and write the worksheets the arguments ask for; the paths written, in order. The command line's
    readers of a list option and of a whole number, and its check that TeX is installed, are passed in."""
    if (args.spec is None) == (args.example is None):
        raise SpecError("worksheet", "give either a SPEC file or --example NAME (see `symattn examples`)")
    data = example_data(args.example) if args.example else spec_file_data(args.spec)
    name = args.example or Path(args.spec).stem
    spec = parse_spec(data, name=name)
    stages = parse_blanks(args.blanks, spec)
    formats = parse_list(args.formats, FORMATS)
    langs = parse_list(args.lang, ("ja", "en"), "--lang") if args.lang else (spec.lang or "ja",)
    count, seed = whole(args.versions, "--versions"), whole(args.seed, "--seed") or 0
    check_versions(count)
    if "pdf" in formats:
        require_tex()
    out = Path(args.out)
    specs = [spec] if count is None else redrawn(data, name, count, seed)
    stem = output_stem(spec.name)
    files: dict[Path, str | bytes] = {}
    plan = [(lang, n, version) for lang in langs for n, version in enumerate(specs, 1)]
    names = [_names(stem, lang if len(langs) > 1 else None, n if count is not None else None)
             for lang, n, _ in plan]
    keep = (Path(args.spec),) if args.spec else ()
    check_targets([out / f"{base}.{fmt}" for pair in names for base in pair for fmt in formats], keep, folder=out)
    for (lang, n, version), (paper, key) in zip(plan, names, strict=True):
        sheets = _sheets(version, lang, stages)
        files.update(_outputs(sheets, out, paper, key, formats, n if count is not None else None))
    write_set(files, keep, folder=out)
    return list(files)


def _names(stem: str, lang: str | None, version: int | None) -> tuple[str, str]:
    """The worksheet's and the key's file names without suffix: mt-worksheet(-en)(-07), mt-worksheet-key..."""
    tail = (f"-{lang}" if lang else "") + (f"-{version:02d}" if version is not None else "")
    return f"{stem}-worksheet{tail}", f"{stem}-worksheet-key{tail}"


def _sheets(spec: Spec, lang: str, stages: frozenset[str]) -> Sheets:
    sheets = worksheet(derive_spec(spec, lang=lang), stages)
    if not sheets.blanks:
        raise SpecError("--blanks", f"no value of {', '.join(sorted(stages))} is computed in this spec's worked "
                                    "solution (the stage is given, or shown without its computation)")
    return sheets


def _outputs(sheets: Sheets, out: Path, paper: str, key: str, formats: tuple[str, ...],
             version: int | None) -> dict[Path, str | bytes]:
    from .paper import worksheet_latex

    files: dict[Path, str | bytes] = {}
    texts = {paper: worksheet_latex(sheets.worksheet, version=version),
             key: worksheet_latex(sheets.key, key=True, version=version)}
    for base, tex in texts.items():
        if "tex" in formats:
            files[out / f"{base}.tex"] = tex
        if "pdf" in formats:
            from ..render.pdf import compile_pdf

            files[out / f"{base}.pdf"] = compile_pdf(tex, base)
    if "html" in formats:
        from .page import self_check_page

        files[out / f"{paper}.html"] = self_check_page(sheets, version=version)
    return files
