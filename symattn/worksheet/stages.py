"""--blanks: the stage names a spec's kinds declare (Kind.stages), read from the option and checked."""

from __future__ import annotations

from ..errors import SpecError
from ..kinds import kind_of
from ..spec.model import Spec


def declared(spec: Spec) -> tuple[str, ...]:
    """Every stage the spec's sections can leave blank, in the order of the sections and their kinds' stages."""
    return tuple(dict.fromkeys(stage for section in spec.sections for stage in kind_of(section.kind).stages))


def parse_blanks(text: str, spec: Spec) -> frozenset[str]:
    """`scores,weights` or `all` -> the stages; a one-line SpecError naming --blanks for an unknown one."""
    valid = declared(spec)
    if not valid:
        raise SpecError("--blanks", "this spec has no section a worksheet can leave blank (only text)")
    names = [part.strip().lower() for part in text.split(",") if part.strip()]
    if not names:
        raise SpecError("--blanks", f"expected stage names or all (this spec's stages: {', '.join(valid)})")
    if "all" in names:
        return frozenset(valid)
    for name in names:
        if name not in valid:
            raise SpecError("--blanks", f"unknown stage {name!r} (this spec's stages: {', '.join(valid)}, or all)")
    return frozenset(names)
