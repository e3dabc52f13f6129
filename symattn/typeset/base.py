"""The base of every renderer: dispatch by step class, settings, and the language strings.

Formats are siblings under it, as SymPy's printers are under Printer; each writes the text around the math its
own way (escape_text, token) and the base fills the language files' strings with it.
"""

from __future__ import annotations

import string
from typing import Any, ClassVar

from ..document.steps import Derivation, Num, Nums, Phrase, Phrases, Step, Token, Tokens
from ..errors import RenderError
from ..infra import i18n
from ..numbers.display import DEFAULT_DIGITS

# How a token is quoted in a sentence of a language (Japanese: 「が」 is a token, not the particle); tables and
# subscripts show tokens unquoted.
TOKEN_QUOTES = {"ja": ("「", "」")}


class Renderer:
    """Walks a Derivation's steps: `_print_<Step class>` for each, found along the step's class hierarchy.

    Every setting is a key of `default_settings`; a subclass extends the dict, and an unknown key is an error."""

    format_name: ClassVar[str] = "base"  # in error messages
    default_settings: ClassVar[dict[str, Any]] = {"lang": "ja", "digits": DEFAULT_DIGITS}

    def __init__(self, **settings: Any) -> None:
        unknown = set(settings) - set(self.default_settings)
        if unknown:
            raise RenderError(f"unknown {self.format_name} renderer setting(s): {', '.join(sorted(unknown))}")
        self.settings: dict[str, Any] = {**self.default_settings, **settings}
        self._templates: dict[str, list[tuple[str, str | None]]] = {}
        self._plain: dict[str, str] = {}  # the strings of no {params}, as text() writes them (half the calls)
        self._printers: dict[type, Any] = {}  # step class -> its _print_ method

    @property
    def lang(self) -> str:
        return self.settings["lang"]

    @property
    def digits(self) -> int:
        return self.settings["digits"]

    # ------------------------------------------------------------ dispatch

    def render(self, step: Step) -> str:
        """The output of one step, found by walking the step's class hierarchy (once per step class)."""
        found = self._printers.get(type(step))
        if found is None:
            for cls in type(step).__mro__:
                found = getattr(type(self), f"_print_{cls.__name__}", None)
                if found is not None:
                    break
            else:
                raise RenderError(f"the {self.format_name} renderer has no method for step type {type(step).__name__}")
            self._printers[type(step)] = found
        return found(self, step)

    # ------------------------------------------------------------ language strings

    def text(self, key: str, params: dict[str, Any] | None = None) -> str:
        """A language string with its literal parts escaped and its {params} rendered; in a language that quotes
        tokens (「が」), the spaces its literals set beside a token go, as the quotes bring their own."""
        plain = self._plain.get(key)
        if plain is not None:
            return plain
        out = []
        quotes = self.lang in TOKEN_QUOTES
        after_token = False
        for literal, field in self.template(key):
            value = None
            if field is not None:
                if params is None or field not in params:
                    raise RenderError(f"string {key!r} needs parameter {field!r}")
                value = params[field]
            token = quotes and isinstance(value, (Token, Tokens))
            if after_token:
                literal = literal.lstrip(" ")
            out.append(literal.rstrip(" ") if token else literal)
            if field is not None:
                out.append(self.param(value))
            after_token = token
        return "".join(out)

    def sentence_token(self, name: str) -> str:
        """A token in running text: in 「」 in Japanese, where a token が would read as the particle."""
        if self.lang in TOKEN_QUOTES:
            opening, closing = TOKEN_QUOTES[self.lang]
            return opening + self.token(name) + closing
        return self.token(name)

    def template(self, key: str) -> list[tuple[str, str | None]]:
        """A language string as (escaped literal, parameter name or None) pieces, parsed once per renderer."""
        pieces = self._templates.get(key)
        if pieces is None:
            pieces = self._templates[key] = [(self.escape_text(literal), field) for literal, field, _spec, _conv
                                             in string.Formatter().parse(i18n.text(self.lang, key))]
            if all(field is None for _, field in pieces):
                self._plain[key] = "".join(literal for literal, _ in pieces)
        return pieces

    def param(self, value: Any) -> str:
        """A parameter of a sentence in the output format (MathRenderer adds the mathematical ones)."""
        if isinstance(value, Token):
            return self.sentence_token(value.name)
        if isinstance(value, Tokens):
            return self.joined([self.text("list.itself") if name == value.itself else self.sentence_token(name)
                                for name in value.names], "list.and")
        if isinstance(value, Phrase):
            return self.text(value.key, dict(value.params))
        if isinstance(value, Phrases):
            return self.joined([self.param(item) for item in value.items], value.last)
        if isinstance(value, Nums):
            return self.joined([self.param(Num(v)) for v in value.values], "list.and_clauses")
        if isinstance(value, (int, str)):
            return self.escape_text(str(value))
        raise RenderError(f"cannot put a {type(value).__name__} into a sentence")

    def joined(self, items: list[str], last: str) -> str:
        """Items as the language lists them: "a", "a and b", "a, b and c" (`last`: the key of the last joint)."""
        if len(items) <= 1:
            return "".join(items)
        return self.text("list.comma").join(items[:-1]) + self.text(last) + items[-1]

    def titles(self, derivation: Derivation) -> tuple[str, str]:
        """The document's title and the line under it (which says how numbers are shown)."""
        title = (self.text("doc.title", {"title": derivation.title}) if derivation.title
                 else self.text("doc.untitled"))
        # the decimals of every stage: "4", or "3–4" when a stage has its own (digits = { default = 4, result = 3 })
        digits = {self.digits, *(step.digits for step in derivation.steps if step.digits is not None)}
        shown = str(min(digits)) if len(digits) == 1 else self.text("doc.range", {"low": min(digits),
                                                                                   "high": max(digits)})
        subtitle = self.text("doc.subtitle_symbolic" if derivation.symbolic else "doc.subtitle", {"digits": shown})
        return title, subtitle

    # ------------------------------------------------------------ what each format defines

    def escape_text(self, text: str) -> str:
        """Literal text made safe for the output format."""
        raise NotImplementedError

    def token(self, name: str) -> str:
        """A token name (user text) in running text or a table cell."""
        raise NotImplementedError
