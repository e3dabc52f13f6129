"""What a kind of section is: the protocol every kind module implements once, as an instance the registry files."""

from __future__ import annotations

import importlib
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from sympy import ImmutableMatrix

from ..document.size import Size as Size
from ..document.steps import FlowFigure, Step
from ..spec.model import Section

if TYPE_CHECKING:  # the exam modules are loaded only when an exam asks for them
    from ..exercises.exercise import Asked
    from ..exercises.levels import Level
    from ..numbers.certify import Bound


@dataclass(frozen=True)
class Carried:
    """Rows a section passes on to a later one: its tokens and one exact row per token (a SymPy matrix)."""

    tokens: tuple[str, ...]
    rows: ImmutableMatrix


@dataclass(frozen=True)
class Referenced:
    """An earlier section a key of a later one names (Kind.references): its name, its Section and its computed
    result, as symattn.pipeline.chain resolves the reference."""

    name: str
    section: Section
    result: Any


class Kind:
    """One kind of section (self-attention, cross-attention, multi-head, ...): its spec type and keys, how it is
    parsed, computed, laid out as steps and answered; and, if it can be examined, how its exam problems are drawn,
    checked and asked. A kind module defines a subclass and one instance of it."""

    name: str = ""
    keys: frozenset[str] = frozenset()  # the section keys it accepts, "kind" included
    # The keys whose value names an earlier section (`from = "NAME"`): the chain puts that section itself, computed,
    # into the data as a Referenced (a backward pass reads the forward section it differentiates).
    references: frozenset[str] = frozenset()
    examinable: bool = False  # whether `symattn exam --kind NAME` can draw problems of it
    # Its language strings, {lang: {dotted key: text}}, for a kind defined outside the package: registering it adds
    # them to symattn.infra.i18n (every language, the same keys). The package's own kinds keep theirs in locales/*.toml.
    strings: ClassVar[dict[str, dict[str, str]]] = {}
    # Its printers, for a kind defined outside the package: classes with a `_print_<Step>` method for each step type
    # it brings (render/composed.py mixes them into every format). The package's kinds name theirs in their folder's
    # printers.py (PRINTERS).
    printers: ClassVar[tuple[type, ...]] = ()

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

    def answers(self, section: Section, result: Any) -> dict[str, Any] | None:
        """The section's answers as plain data (the JSON schema of `symattn solve`); None for a section that has
        none (a text block), which the JSON leaves out."""
        raise NotImplementedError

    def figure(self, section: Section) -> FlowFigure | None:
        """The flow figure of the section's kind (unnumbered), placed where its first section begins; None: none."""
        return None

    def stage(self, section: Section) -> str | None:
        """The section's box in a chain's block figure: a `figure.block_<stage>` string ("self", "masked",
        "cross", "ffn", ...), by default its flow figure's flavour; None: the kind has no box."""
        figure = self.figure(section)
        return None if figure is None else figure.flavour

    def outputs(self, section: Section, result: Any) -> Carried | None:
        """What a later section's `"from:NAME"` reads: the section's tokens and its output rows, one per token,
        exact (symattn.pipeline.chain rounds them as the spec's `carry` says). None: the kind passes nothing on."""
        return None

    def inputs(self, section: Section, result: Any) -> Carried | None:
        """What `"input:NAME"` reads: the tokens and the rows the section starts from (X after any positional
        encoding). None: the kind has no such input."""
        return None

    def error_bound(self, section: Section, result: Any, errors: dict[str, float]) -> Bound:
        """How far the values the section prints may be from the true chain's, when each carried matrix (by field:
        X, Y, memory) is within `errors` of it, entry by entry (symattn.numbers.certify). A kind whose X may be carried
        defines it."""
        raise NotImplementedError(f"the {self.name} kind takes no carried rows")

    def size(self, section: Section) -> Size:
        """What the section's document will show, from its spec alone (nothing computed): `render` refuses a
        document beyond MAX_STEPS or MAX_MATRIX before any work. A kind that does not say is not limited."""
        return Size()

    # ------------------------------------------------------------ worksheets (`symattn worksheet --blanks`)
    stages: tuple[str, ...] = ()  # the stages a worksheet may leave blank, in the order they are computed

    def stage_of(self, step: Step) -> str | None:
        """The stage whose results a computation step of the section writes (its checked lines' results), or None
        (given values, text). A softmax's e^{a} and Z lines belong to the stage "exp" where the kind has one."""
        return None

    # ------------------------------------------------------------ exams (examinable kinds only)
    # A kind may keep its exam hooks in a module of its own, `exam_module` (a module beside the kind's own, in its
    # folder: "exam" for kinds/<name>/exam.py, defining the functions draw, plausible, friendly and exercise as
    # below), loaded only when an exam asks.
    exam_module: str = ""

    def exam_hooks(self) -> Any:
        """The module of the kind's exam hooks (exam_module)."""
        folder = type(self).__module__.rpartition(".")[0]
        return importlib.import_module(f"{folder}.{self.exam_module}")

    def draw(self, rng: random.Random, level: Level, lang: str) -> dict[str, Any]:
        """A random section's data (exact strings) at a difficulty level."""
        if self.exam_module:
            return self.exam_hooks().draw(rng, level, lang)
        raise NotImplementedError

    def plausible(self, data: dict[str, Any]) -> bool:
        """A quick check of drawn data, before the exact computation, that rejects only what `friendly` would."""
        return self.exam_hooks().plausible(data) if self.exam_module else True

    def friendly(self, section: Section, result: Any) -> bool:
        """Whether the computed problem is fair to solve by hand."""
        return self.exam_hooks().friendly(section, result) if self.exam_module else True

    def hand_products(self, data: dict[str, Any]) -> int | None:
        """The products a student works by hand in a drawn problem, neither factor 0 or ±1 (exercises.work); None:
        not counted. The exam draws its versions with a count within work_band."""
        hooks = self.exam_hooks() if self.exam_module else None
        return hooks.hand_products(data) if hooks is not None and hasattr(hooks, "hand_products") else None

    def work_band(self, difficulty: str) -> tuple[int, int] | None:
        """The counts of hand_products a version of this difficulty is drawn within (None: any)."""
        hooks = self.exam_hooks() if self.exam_module else None
        return getattr(hooks, "WORK_BAND", {}).get(difficulty) if hooks is not None else None

    def exercise(self, section: Section, result: Any, digits: int) -> Asked:
        """What an exam asks of the section: its given inputs and its parts with answers (exercises.exercise)."""
        if self.exam_module:
            return self.exam_hooks().exercise(section, result, digits)
        raise NotImplementedError
