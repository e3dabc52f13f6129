"""The text a spec writes (text blocks, headings): plain text with inline `$…$` math from a safe subset of LaTeX,
checked here once, before anything is rendered; and a table by language ({ ja = "…", en = "…" }) that the
document's language picks from. Every renderer escapes the plain text and sets the checked math its own way."""

from __future__ import annotations

import difflib
import re
import unicodedata
from typing import Any

from ..errors import SpecError
from .fields import key_field
from .model import LANGUAGES, Inline, Math, MathText, Written

# The math commands a spec may write, all known to LaTeX (amsmath, amssymb), KaTeX, MathJax and latex2mathml; any
# other (\input, \write, \def, \catcode, \url, ...) is refused, so that user math can only typeset math.
GREEK = ("alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi varpi rho "
         "varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi "
         "Psi Omega").split()
SYMBOLS = ("cdot times div pm mp ast star circ bullet oplus otimes odot le leq ge geq ne neq approx equiv sim simeq "
           "propto in notin subset subseteq supset supseteq cup cap setminus to rightarrow leftarrow leftrightarrow "
           "Rightarrow Leftarrow Leftrightarrow mapsto infty partial nabla forall exists neg land lor top bot "
           "intercal perp parallel mid prime ell emptyset ldots cdots vdots ddots dots langle rangle lVert rVert "
           "Vert vert lfloor rfloor lceil rceil quad qquad sum prod int lim max min log ln exp sin cos tan det dim "
           "sup inf left right").split()
# Commands followed by arguments in braces: how many (\sqrt may have an [index] first).
ARGUMENTS = {"frac": 2, "sqrt": 1, "text": 1, "mathrm": 1, "mathbf": 1, "mathit": 1, "mathcal": 1, "mathbb": 1,
             "operatorname": 1, "hat": 1, "bar": 1, "vec": 1, "tilde": 1, "dot": 1, "overline": 1, "underline": 1}
COMMANDS = frozenset({*GREEK, *SYMBOLS, *ARGUMENTS})
# The list an error message gives.
ALLOWED = "the Greek letters \\alpha ... \\Omega, " + ", ".join(
    "\\" + c for c in sorted(COMMANDS - set(GREEK), key=str.lower))
# What the one-line error names of them: a few, and where the whole list is (ALLOWED, the README).
ALLOWED_SHORT = (f"Greek letters and {len(COMMANDS - set(GREEK))} commands such as \\frac, \\sqrt, \\cdot, \\sum, "
                 "\\text; all: symattn.spec.textmath.COMMANDS")
# Control symbols: thin, medium, negative and normal spaces, braces, a double bar, a percent sign.
CONTROL_SYMBOLS = frozenset(",;! {}|%")
# What \left and \right may size.
DELIMITERS = frozenset("()[]|./")
DELIMITER_COMMANDS = frozenset({"{", "}", "|", "langle", "rangle", "lVert", "rVert", "Vert", "vert", "lfloor",
                                "rfloor", "lceil", "rceil"})
# Characters math may hold outside \text{}: ASCII letters, digits, spaces and these. Not % (a comment to the end of
# the line), # or & (TeX's parameter and alignment characters), ~, nor any non-ASCII character (write \text{…}).
_MATH_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 +-*/=<>()[],.;:!?'|^_{}")
_COMMAND = re.compile(r"\\([A-Za-z]+|.?)", re.DOTALL)
_SPACES = re.compile(r"\s+")
# Characters no text may hold: control characters but tab and line breaks (which are spaces), lone surrogates.
_FORBIDDEN = {"Cc": "control characters", "Cs": "lone surrogates"}


def _hint(command: str) -> str:
    """' (did you mean \\frac?)' for a near miss; for another word, how a function name is written."""
    close = difflib.get_close_matches(command, sorted(COMMANDS), n=1, cutoff=0.8)
    if close:
        return f" (did you mean \\{close[0]}?)"
    return f" (a function name: \\operatorname{{{command}}})" if command.lower() in FUNCTION_NAMES else ""


# Names of functions a text may mean as commands (\softmax), which LaTeX writes with \operatorname.
FUNCTION_NAMES = frozenset({"softmax", "argmax", "argmin", "relu", "gelu", "sigmoid", "tanh", "diag", "tr",
                            "concat", "attention", "layernorm", "norm", "sgn", "softplus", "mean", "var"})


def written(value: Any, field: str) -> Written:
    """A string, or a table by language giving every language (ja, en); SpecError naming the field otherwise."""
    if isinstance(value, dict):
        for lang in value:
            if lang not in LANGUAGES:
                raise SpecError(key_field(field, lang), f"unknown language (a table by language gives "
                                                   f"{', '.join(LANGUAGES)})")
        missing = [lang for lang in LANGUAGES if lang not in value]
        if missing:
            raise SpecError(field, f"no {missing[0]!r} text (a table by language gives every language: "
                                   f"{', '.join(LANGUAGES)}; or write one string for all)")
        return Written(tuple((lang, inline(value[lang], f"{field}.{lang}")) for lang in LANGUAGES))
    pieces = inline(value, field)
    return Written(tuple((lang, pieces) for lang in LANGUAGES))


def written_list(value: Any, field: str) -> tuple[Written, ...]:
    """A non-empty list of strings (or tables by language)."""
    if not isinstance(value, list) or not value:
        raise SpecError(field, "expected a non-empty list of strings (or tables by language)")
    return tuple(written(item, f"{field}[{i}]") for i, item in enumerate(value))


def inline(value: Any, field: str) -> tuple[Inline, ...]:
    """A string split into plain text and checked `$…$` math; `\\$` is a dollar sign. Line breaks and runs of
    spaces are one space (a string is one paragraph)."""
    if not isinstance(value, str) or not value.strip():
        raise SpecError(field, f"expected text (a non-empty string, or a table by language), got {value!r}")
    for char in value:
        category = unicodedata.category(char)
        if category in _FORBIDDEN and char not in "\t\n\r":
            raise SpecError(field, f"expected text without {_FORBIDDEN[category]} (U+{ord(char):04X})")
    text = _SPACES.sub(" ", unicodedata.normalize("NFC", value)).strip()
    pieces: list[Inline] = []
    plain: list[str] = []
    i = 0
    while i < len(text):
        if text.startswith("\\$", i):
            plain.append("$")
            i += 2
        elif text[i] == "$":
            end = _closing_dollar(text, i + 1)
            if end is None:
                raise SpecError(field, "a lone $ (math is written between two $; write \\$ for a dollar sign)")
            if plain:
                pieces.append("".join(plain))
                plain = []
            pieces.append(math(text[i + 1:end], field))
            i = end + 1
        else:
            plain.append(text[i])
            i += 1
    if plain:
        pieces.append("".join(plain))
    return tuple(pieces)


def _closing_dollar(text: str, start: int) -> int | None:
    """Where the math that starts at `start` ends: the next $ not escaped as \\$."""
    i = start
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == "$":
            return i
        else:
            i += 1
    return None


def math(source: str, field: str) -> Math:
    """Inline math checked against the safe subset: known commands only, each with its arguments in braces,
    balanced braces and \\left…\\right, ^ and _ each with something to set. SpecError naming the field."""
    source = source.strip()
    if not source:
        raise SpecError(field, "empty math $$ (write \\$ for a dollar sign)")
    parts: list[str | MathText] = []
    depth = 0
    lefts = 0
    i = 0
    while i < len(source):
        char = source[i]
        if char == "\\":
            match = _COMMAND.match(source, i)
            command = match.group(1)
            i = match.end()
            if len(command) == 1 and not command.isalpha():
                if command not in CONTROL_SYMBOLS:
                    raise SpecError(field, f"unknown math command \\{command} (allowed control symbols: "
                                           f"{' '.join(chr(92) + c for c in sorted(CONTROL_SYMBOLS))})")
                parts.append("\\" + command)
                continue
            if command not in COMMANDS:
                shown = f"\\{command}" if command else "\\ at the end"
                close = _hint(command) if command else ""
                raise SpecError(field, f"unknown math command {shown}{close} (allowed: {ALLOWED_SHORT})")
            if command == "text":
                content, i = _text_argument(source, i, field)
                parts.append(MathText(content))
                continue
            if command in ("left", "right"):
                i = _delimiter(source, i, command, field)
                lefts += 1 if command == "left" else -1
                if lefts < 0:
                    raise SpecError(field, "a \\right without its \\left")
            elif command in ARGUMENTS:
                _check_arguments(source, i, command, field)
            parts.append(source[match.start():i])
            continue
        if char not in _MATH_CHARS:
            raise SpecError(field, f"unexpected character {char!r} in math (write text as \\text{{…}}, symbols "
                                   "as commands such as \\times)")
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth < 0:
                raise SpecError(field, "unbalanced braces in math: a } without its {")
        elif char in "^_":
            following = source[i + 1:].lstrip()[:1]
            if following in ("", "}", "^", "_"):
                raise SpecError(field, f"{char} needs something to set after it (x{char}2, x{char}{{ij}})")
        parts.append(char)
        i += 1
    if depth:
        raise SpecError(field, "unbalanced braces in math: a { without its }")
    if lefts:
        raise SpecError(field, "a \\left without its \\right")
    _check_scripts(source, field)
    return Math(_joined(parts))


# What ^ or _ may set without braces besides one character: a command that is one symbol in LaTeX, KaTeX and
# latex2mathml alike (x^\alpha, x^\infty). Any other (x^\sqrt{2}, x_\left(, x^\log, x^\,) needs braces.
SCRIPT_COMMANDS = frozenset({*GREEK, "infty", "prime", "ast", "star", "circ", "bullet", "top", "bot", "intercal",
                             "perp", "ell", "partial", "nabla", "cdot", "times", "pm", "mp"})


def _check_scripts(source: str, field: str) -> None:
    """One superscript and one subscript per base, as TeX and latex2mathml demand (x^2^3, x_1_2, x^2' and x'^2'
    are refused: write x^{2^3}, x_{12}); a script without braces is one character or one symbol. The source is
    already checked (known commands, balanced braces); each brace group is a base of its own."""
    stack = [[False, False]]  # per open group: whether the current base has a superscript, a subscript
    i = 0
    while i < len(source):
        char = source[i]
        state = stack[-1]
        if char in "^_":
            which = 0 if char == "^" else 1
            if state[which]:
                raise SpecError(field, f"two {('superscripts', 'subscripts')[which]} on one base in math "
                                       f"{_shown(source)} (write x{char}{{1{char}2}}, or {{x{char}1}}{char}2)")
            i = _script_end(source, _skip_spaces(source, i + 1), char, field)
            state[which] = True
            continue
        if char == "'":  # primes are a superscript, which a ^ right after them joins (x'^2), as in TeX
            if state[0]:
                raise SpecError(field, f"a prime after a superscript in math {_shown(source)} (write "
                                       f"x^{{2\\prime}}, or x'^2)")
            while source.startswith("'", i):
                i += 1
            after = _skip_spaces(source, i)
            if source.startswith("^", after):
                i = _script_end(source, _skip_spaces(source, after + 1), "^", field)
            state[0] = True
            continue
        if char == "\\":
            match = _COMMAND.match(source, i)
            i = match.end()
            if match.group(1) == "text":
                i = source.find("}", i) + 1  # plain text, no braces inside (checked)
            elif match.group(1) == "sqrt" and source.startswith("[", _skip_spaces(source, i)):
                start = _skip_spaces(source, i)
                end = source.find("]", start)
                if "[" in source[start + 1:end] or "\\sqrt" in source[start + 1:end]:
                    raise SpecError(field, f"a root's index holds no brackets or root in math {_shown(source)} "
                                           f"(\\sqrt[3]{{x}})")
                i = end + 1
            stack[-1] = [False, False]
            continue
        if char == "{":
            stack.append([False, False])
        elif char == "}":
            stack.pop()
            stack[-1] = [False, False]  # the group is the new base
        elif char != " ":
            stack[-1] = [False, False]
        i += 1


def _script_end(source: str, i: int, sign: str, field: str) -> int:
    """Where the script after ^ or _ (at i) ends: a brace group (its own bases checked), one character or one
    symbol command; SpecError for another command or a prime."""
    if source.startswith("{", i):
        end = _group_end(source, i)
        _check_scripts(source[i + 1:end - 1], field)
        return end
    if source.startswith("\\", i):
        match = _COMMAND.match(source, i)
        if match.group(1) not in SCRIPT_COMMANDS:
            raise SpecError(field, f"\\{match.group(1)} after {sign} needs braces in math {_shown(source)} "
                                   f"(x{sign}{{\\{match.group(1)}…}})")
        return match.end()
    if source.startswith("'", i):
        raise SpecError(field, f"a prime as a script in math {_shown(source)} (write x^{{\\prime}} or x')")
    return i + 1


def _shown(source: str) -> str:
    """Math quoted in a message as written, $…$, cut to 40 characters."""
    return f"${source if len(source) <= 40 else source[:37] + '...'}$"


def _joined(parts: list[str | MathText]) -> tuple[str | MathText, ...]:
    """Adjacent LaTeX pieces joined into one."""
    out: list[str | MathText] = []
    for part in parts:
        if isinstance(part, str) and out and isinstance(out[-1], str):
            out[-1] += part
        else:
            out.append(part)
    return tuple(out)


def _text_argument(source: str, i: int, field: str) -> tuple[str, int]:
    """The plain text of \\text{…} and where it ends; no braces, backslashes or line breaks inside."""
    i = _skip_spaces(source, i)
    if not source.startswith("{", i):
        raise SpecError(field, "\\text needs its text in braces: \\text{…}")
    end = source.find("}", i + 1)
    if end < 0:
        raise SpecError(field, "unbalanced braces in math: a { without its }")
    content = source[i + 1:end]
    if "{" in content or "\\" in content:
        raise SpecError(field, "\\text{…} holds plain text: no \\ or braces inside")
    return content, end + 1


def _delimiter(source: str, i: int, command: str, field: str) -> int:
    """After \\left or \\right: a delimiter; returns where it ends."""
    i = _skip_spaces(source, i)
    if i < len(source) and source[i] in DELIMITERS:
        return i + 1
    match = _COMMAND.match(source, i)
    if match and match.group(1) in DELIMITER_COMMANDS:
        return match.end()
    raise SpecError(field, f"\\{command} needs a delimiter after it: ( ) [ ] | . \\{{ \\}} \\langle \\rangle ...")


def _check_arguments(source: str, i: int, command: str, field: str) -> None:
    """A command's arguments each in braces (\\frac{a}{b}, \\sqrt{x} or \\sqrt[3]{x})."""
    i = _skip_spaces(source, i)
    if command == "sqrt" and source.startswith("[", i):
        end = source.find("]", i)
        if end < 0:
            raise SpecError(field, "\\sqrt[ needs its closing ]")
        i = _skip_spaces(source, end + 1)
    for _ in range(ARGUMENTS[command]):
        if not source.startswith("{", i):
            count = ARGUMENTS[command]
            raise SpecError(field, f"\\{command} needs {count} argument{'s' * (count > 1)} in braces "
                                   f"(\\{command}{'{…}' * count})")
        i = _skip_spaces(source, _group_end(source, i))


def _group_end(source: str, i: int) -> int:
    """Where the brace group that opens at i ends (after its }); the length of the source if it never closes
    (the brace count reports it)."""
    depth = 0
    while i < len(source):
        if source[i] == "\\":
            i += 2
            continue
        depth += {"{": 1, "}": -1}.get(source[i], 0)
        i += 1
        if depth == 0:
            return i
    return len(source)


def _skip_spaces(source: str, i: int) -> int:
    while i < len(source) and source[i] == " ":
        i += 1
    return i
