"""What a kind of section is: the protocol every kind module implements once, as an instance the registry files."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, ClassVar

from ..model import Step
from ..spec.model import Section

if TYPE_CHECKING:  # the exam modules are loaded only when an exam asks for them
    from ..exam.exercise import Asked
    from ..exam.levels import Level


class Kind:
    """One kind of section (self-attention, cross-attention, multi-head, ...): its spec type and keys, how it is
    parsed, computed, laid out as steps and answered; and, if it can be examined, how its exam problems are drawn,
    checked and asked. A kind module defines a subclass and one instance of it."""

    name: str = ""
    keys: frozenset[str] = frozenset()  # the section keys it accepts, "kind" included
    examinable: bool = False  # whether `symattn exam --kind NAME` can draw problems of it
    # Its language strings, {lang: {dotted key: text}}, for a kind defined outside the package: registering it adds
    # them to symattn.i18n (every language, the same keys). The package's own kinds keep theirs in locales/*.toml.
    strings: ClassVar[dict[str, dict[str, str]]] = {}

    def parse(self, data: dict[str, Any], field: str) -> Section:
        """The section's spec from its parsed data (keys already checked); SpecError names the field."""
        raise NotImplementedError

    def compute(self, section: Section) -> Any:
        """The engine's exact result for the section."""
        raise NotImplementedError

    def steps(self, section: Section, result: Any) -> list[Step]:
        """The worked solution of the section, as steps."""
        raise NotImplementedError

    def symbolic(self, result: Any) -> bool:
        """Whether the result holds symbols (then nothing is rounded)."""
        raise NotImplementedError

    def answers(self, section: Section, result: Any) -> dict[str, Any]:
        """The section's answers as plain data (the JSON schema of `symattn solve`)."""
        raise NotImplementedError

    # ------------------------------------------------------------ exams (examinable kinds only)

    def draw(self, rng: random.Random, level: Level, lang: str) -> dict[str, Any]:
        """A random section's data (exact strings) at a difficulty level."""
        raise NotImplementedError

    def plausible(self, data: dict[str, Any]) -> bool:
        """A quick check of drawn data, before the exact computation, that rejects only what `friendly` would."""
        return True

    def friendly(self, section: Section, result: Any) -> bool:
        """Whether the computed problem is fair to solve by hand."""
        return True

    def exercise(self, section: Section, result: Any, digits: int) -> Asked:
        """What an exam asks of the section: its given inputs and its parts with answers (exam.exercise)."""
        raise NotImplementedError
