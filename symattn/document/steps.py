"""The Derivation model: ordered, typed steps with exact values; it knows nothing about rendering."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from sympy import Expr, ImmutableMatrix

from ..engine import MatrixForm, Numbers, flat_entries, row_matrices
from ..spec.model import GivenMatrix, Scale, Section, Written
from .figures import Flow

# The sentence parameters, re-exported: steps and renderers import them from here with the steps.
from .phrases import Eq as Eq
from .phrases import Facts, Formula, Name, Param
from .phrases import Num as Num
from .phrases import Phrase as Phrase
from .phrases import Nums as Nums
from .phrases import Phrases as Phrases
from .phrases import SqrtDk as SqrtDk
from .phrases import Token as Token
from .phrases import Tokens as Tokens


@dataclass(frozen=True)
class Shown:
    """A matrix or row vector to show, with the least decimals its entries are written with (0.6 -> 0.60).

    uniform=True writes all entries with one count of decimals, as a table column; False writes each as short
    as it is exact (the article's raw scores: 1.158, 1.6976). written, for an input matrix, says how each entry
    was typed (decimals, or None for a fraction), and each is shown that way. A row taken from a matrix keeps
    the matrix's count of decimals, so K_love reads the same in a product as in the table of all keys.
    """

    values: ImmutableMatrix
    decimals: int = 0
    uniform: bool = True
    written: tuple[int | None, ...] = ()
    whole: tuple[Expr, ...] | None = None  # for a row: the entries of the matrix whose decimals it shares
    known: Numbers | None = field(default=None, compare=False)  # the numbers of the result the values come from

    def __hash__(self) -> int:
        # the compared fields' hash, kept: a Shown is looked up in every step that shows it. A row's `whole` hashes
        # each of its matrix's entries in Python (~14 µs for 36): its hash is found once for all rows (`rows`).
        found = self.__dict__.get("_hash")
        if found is None:
            whole = self.__dict__["_whole_hash"] if "_whole_hash" in self.__dict__ else hash(self.whole)
            found = self.__dict__["_hash"] = hash((self.values, self.decimals, self.uniform, self.written, whole))
        return found

    @classmethod
    def input(cls, given: GivenMatrix) -> Shown:
        """An input matrix as shown: each entry as it was typed."""
        return cls(given.values, given.decimals, written=given.written)

    def row(self, i: int) -> Shown:
        return self.rows[i]

    @cached_property
    def entries(self) -> tuple[Expr, ...]:
        """The entries row by row."""
        return flat_entries(self.values)

    @cached_property
    def rows(self) -> tuple[Shown, ...]:
        """Each row as a Shown (made once: reading a matrix's entries converts each of them)."""
        cols, whole = self.values.cols, self.whole if self.whole is not None else self.entries
        # row_matrices slices the matrix's domain storage and shares its entries: a matrix built from the entries
        # would search a domain, and values[i, :] converts each entry out of the storage again
        rows = tuple(Shown(values, self.decimals, self.uniform, self.written[i * cols:(i + 1) * cols], whole,
                           self.known) for i, values in enumerate(row_matrices(self.values)))
        whole_hash = hash(whole)
        for row in rows:
            row.__dict__["_whole_hash"] = whole_hash
        return rows


@dataclass(frozen=True)
class Step:
    """Base of all steps. `digits`: the decimals its numbers are rounded to when its stage sets them (a spec's
    `digits = { default = 4, result = 3 }`), else None: the document's."""

    digits: int | None = field(default=None, kw_only=True)


@dataclass(frozen=True)
class Heading(Step):
    """A heading from the language file; level 1 is a part (self-attention ...), level 2 a Step."""

    level: int
    key: str
    params: dict[str, Param] = field(default_factory=dict)
    facts: Facts | None = field(default=None, compare=False, repr=False)  # what it was chosen under, if conditional


@dataclass(frozen=True)
class Paragraph(Step):
    """An explanatory sentence from the language file; note=True sets it as an aside; `stage`: the stage whose
    decimals the numbers it prints take (a sentence after a softmax printing its weights: "weights")."""

    key: str
    params: dict[str, Param] = field(default_factory=dict)
    note: bool = False
    facts: Facts | None = field(default=None, compare=False, repr=False)  # what it was chosen under, if conditional
    stage: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True)
class WrittenHeading(Heading):
    """A heading the spec wrote (a text section's, or an attention section's `heading`), in place of the language
    file's `key` ("" for a text section)."""

    text: Written | None = None


@dataclass(frozen=True)
class TextParagraph(Step):
    """A paragraph the spec wrote (plain text and inline math); note=True sets it as an aside."""

    text: Written
    note: bool = False


@dataclass(frozen=True)
class TextTable(Step):
    """A table the spec wrote: a header and rows of cells, each as long as the header."""

    header: tuple[Written, ...]
    rows: tuple[tuple[Written, ...], ...]


@dataclass(frozen=True)
class References(Step):
    """The references the spec wrote, numbered in order."""

    items: tuple[Written, ...]


@dataclass(frozen=True)
class TokenTable(Step):
    """A table with a row per token: header keys (language keys or Names) and one row vector per column;
    `positions`, when given, each token's absolute position (a KV cache's tables), in a column after the tokens."""

    header: tuple[str | Name, ...]
    tokens: tuple[str, ...]
    columns: tuple[Shown, ...]
    positions: tuple[int, ...] = ()


@dataclass(frozen=True)
class DefinitionTable(Step):
    """Q = X W_Q, K = X W_K, V = X W_V with what each means; keys/values come from `source`."""

    query_source: Name
    key_source: Name


@dataclass(frozen=True)
class MatrixEquation(Step):
    """name = the matrix."""

    name: Name
    value: Shown


@dataclass(frozen=True)
class ExactMatrix(Step):
    """name = the matrix with exact entries (sin 1, ...) ≈ the same in decimals."""

    name: Name
    value: Shown


@dataclass(frozen=True)
class VectorEquation(Step):
    """name = [row vector]; with no name, just the vector."""

    name: Name | None
    value: Shown


@dataclass(frozen=True)
class Result(VectorEquation):
    """The output of a section or of one of its queries (z_token, z_final): shown as a VectorEquation, and what
    a notebook displays of a derivation."""


@dataclass(frozen=True)
class VectorList(Step):
    """Several named row vectors, aligned."""

    names: tuple[Name, ...]
    values: tuple[Shown, ...]


@dataclass(frozen=True)
class RowTimesMatrix(Step):
    """result = row · matrix, written out term by term for every entry."""

    result: Name
    row_name: Name
    row: Shown
    matrix_name: Name
    matrix: Shown
    value: Shown
    # result = row · matrix + bias (the feed-forward network's b_1, b_2): a term per entry, left out where it is 0
    bias_name: Name | None = None
    bias: Shown | None = None


@dataclass(frozen=True)
class DotProducts(Step):
    """q·k_j = Σ_i q_i k_ji for every key, written out term by term."""

    query_name: Name
    key_names: tuple[Name, ...]
    query: Shown
    keys: tuple[Shown, ...]
    scores: tuple[Expr, ...]
    known: Numbers | None = field(default=None, compare=False)  # the numbers of the result the values come from


@dataclass(frozen=True)
class Scaling(Step):
    """a_t = s_t / √d_k (or s_t / c for a given c) for every score; t runs over the key tokens."""

    scale: Scale
    d_k: int
    divisor: Expr  # scale.divisor(d_k)
    scores: tuple[Expr, ...]
    scaled: tuple[Expr, ...]
    tokens: tuple[str, ...]
    known: Numbers | None = field(default=None, compare=False)


@dataclass(frozen=True)
class SoftmaxStep(Step):
    """The softmax written out: e^{a_t}, their sum Z, and w_t = e^{a_t} / Z (a masked key's logit is −∞, its
    e^{a_t} and weight exactly 0)."""

    logits: tuple[Expr, ...]
    exps: tuple[Expr, ...]
    total: Expr
    weights: tuple[Expr, ...]
    tokens: tuple[str, ...]
    known: Numbers | None = field(default=None, compare=False)
    # the notation's letters (render/math.py NOTATION) of the logits, the weights and their sum; next-token
    # prediction writes p_j = e^{ℓ_j}/Z
    letters: tuple[str, str, str] = ("a", "w", "Z")
    # the decimals of the logits in softmax([...]) when the scores' stage sets its own (digits.scores): the scores'
    logit_digits: int | None = field(default=None, kw_only=True)


@dataclass(frozen=True)
class WeightedSum(Step):
    """Σ_j w_j v_j, one line per value row, then the result."""

    weights: tuple[Expr, ...]
    values: tuple[Shown, ...]
    output: ImmutableMatrix
    tokens: tuple[str, ...]
    known: Numbers | None = field(default=None, compare=False)


@dataclass(frozen=True)
class MatrixFormStep(Step):
    """All tokens at once: S = QKᵀ, S / √d_k (or / c), A = softmax row by row, A·V. Q and K are None when the
    scores were given (S is then that matrix), V None when no values were (the form ends at A)."""

    Q: Shown | None
    K: Shown | None
    V: Shown | None
    form: MatrixForm
    scale: Scale
    d_k: int
    divisor: Expr  # scale.divisor(d_k)
    known: Numbers | None = field(default=None, compare=False)
    head: int | None = None  # a multi-head section's head h: S^(h) = Q^(h) K^(h)ᵀ, ..., Z^(h) = A^(h) V^(h)
    rotated: bool = False  # Q and K are RoPE's rotated Q̂ and K̂: S = Q̂K̂ᵀ


@dataclass(frozen=True)
class Display(Step):
    """A formula on a line of its own (z = Σ_j w_j v_j, where the symbolic values are too long to write out)."""

    formula: Formula


@dataclass(frozen=True)
class FlowFigure(Step):
    """A numbered figure of one kind's flow, where its first section begins: `drawing`, its boxes and arrows as data,
    built by the kind (or feature) whose flow it is, and the language key of its `caption` (which takes {number} and
    `names`), with the key of a `note` after it (or none). `flavour` names the flow (its kind's stage in a block
    figure: "self", "masked", "cross", "multi", "grouped", "block", or a kind's name)."""

    flavour: str
    drawing: Flow
    caption: str
    note: str = ""
    names: tuple[tuple[str, Name], ...] = ()  # the names the caption and the note take: ("M", Name("M")), ...
    number: int = 1  # Figure 1, 2, ... in the document's order


@dataclass(frozen=True)
class Heatmap(Step):
    """Attention weights as shaded cells with their values: queries down, keys across."""

    queries: tuple[str, ...]
    keys: tuple[str, ...]
    weights: ImmutableMatrix
    known: Numbers | None = field(default=None, compare=False)


@dataclass(frozen=True)
class HeadWeights(Step):
    """(W_Q^{(h)}, W_K^{(h)}, W_V^{(h)}) for h = 1..count."""

    count: int


@dataclass(frozen=True)
class Concat(Step):
    """name = z^{(1)} ‖ z^{(2)} ‖ ... = [all entries]."""

    name: Name
    parts: tuple[Shown, ...]
    value: Shown


@dataclass(frozen=True)
class DerivedSection:
    """One section of a document: its kind's name, the section's spec, the engine's result (the kind's result
    type), its steps, and whether the result holds symbols (then nothing is rounded)."""

    kind: str
    spec: Section
    result: Any
    steps: tuple[Step, ...]
    symbolic: bool = False
    bound: Any = None  # a certify.Bound when a full carry reaches the section: how far its values may be off


@dataclass(frozen=True)
class Derivation:
    """A whole worked solution: title, language, digit budget and its sections in order."""

    title: str | None
    lang: str
    digits: int
    sections: tuple[DerivedSection, ...]
    name: str = "spec"
    opening: tuple[Step, ...] = ()  # steps before the sections (the flow figures are in the sections)

    @property
    def symbolic(self) -> bool:
        """Whether any input holds symbols (then nothing is rounded)."""
        return any(section.symbolic for section in self.sections)

    @property
    def steps(self) -> tuple[Step, ...]:
        return (*self.opening, *(step for section in self.sections for step in section.steps))

    def of_kind(self, kind: str) -> tuple[DerivedSection, ...]:
        """Its sections of one kind, in order (the first self-attention of a document, past the blocks of prose
        before it: of_kind(name)[0])."""
        return tuple(section for section in self.sections if section.kind == kind)
