"""Every output format's escaping, in one place: LaTeX, LaTeX inside MathJax, Markdown, HTML and Moodle cloze."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from pylatex.utils import escape_latex

# ------------------------------------------------------------ LaTeX

# Zero-width and other invisible format characters, which no font of the document has: left out of the LaTeX.
_INVISIBLE = re.compile("[\u200b-\u200f\u2060-\u2064\ufeff]")


@lru_cache(maxsize=1 << 12)  # language strings and token names, over and over
def escape(text: str) -> str:
    """User or language text made safe for LaTeX: every special character printed literally, accents composed
    (NFC: a decomposed é as macOS pastes it is é), Latin letters that LaTeX's tables lack as accent commands, and
    invisible format characters (zero-width space, byte order mark) left out."""
    text = _INVISIBLE.sub("", unicodedata.normalize("NFC", text))
    return accented(_LIGATURES.sub(_literal, escape_latex(text)))


# What escape_latex leaves to TeX's ligatures and accents: ` and ' (‘ ’, `` '' as “ ”, ?` !` as ¿ ¡), ^ as \^{}
# (a circumflex accent: x^2 printed xˆ2), < and > (<< >> are « » in T1), ,, („ in T1). Each is printed as its
# ASCII character instead (\textasciigrave and \textquotesingle are textcomp's, in the LaTeX kernel since 2020);
# escape_latex already writes every - as {-} (no -- or --- dash) and " is T1's straight quote.
_LIGATURE_TEXT = {"`": r"\textasciigrave{}", "'": r"\textquotesingle{}", "<": r"\textless{}", ">": r"\textgreater{}",
                  r"\^{}": r"\textasciicircum{}", ",": ",{}"}
_LIGATURES = re.compile(r"[`'<>]|\\\^\{\}|,(?=,)")


def _literal(match: re.Match) -> str:
    return _LIGATURE_TEXT[match.group(0)]


# Combining accents and the LaTeX text accents that set them (Latin Modern has them all in T1).
_ACCENTS = {"\u0300": "`", "\u0301": "'", "\u0302": "^", "\u0303": "~", "\u0304": "=", "\u0306": "u",
            "\u0307": ".", "\u0308": '"', "\u030a": "r", "\u030b": "H", "\u030c": "v", "\u0323": "d",
            "\u0327": "c", "\u0328": "k", "\u0331": "b"}
_BELOW = {"\u0323", "\u0327", "\u0328", "\u0331"}
# A letter that LaTeX's tables may lack: an accented one beyond Latin Extended-A (Latin Extended-B: pinyin ǎ;
# Latin Extended Additional: Vietnamese ế), or a Latin letter with combining marks that have no precomposed form.
_ACCENTED = re.compile("[A-Za-z][\u0300-\u036f]+|[\u0180-\u024f\u1e00-\u1eff]")


def accented(text: str) -> str:
    """Latin letters with accents that LaTeX's tables lack written as accent commands (ế -> \\'{\\^{e}}); any
    other character is left to LaTeX, or to the Japanese font (see preamble-common.tex)."""
    return _ACCENTED.sub(_accent_commands, text)


def _accent_commands(match: re.Match) -> str:
    letters = unicodedata.normalize("NFD", match.group(0))
    base, marks = letters[0], letters[1:]
    if not (base.isascii() and base.isalpha() and marks and all(mark in _ACCENTS for mark in marks)):
        return match.group(0)
    latex = base
    if base in "ij" and not set(marks) <= _BELOW:  # an accent above i or j replaces its dot
        latex = "\\" + base
    # Accents above first: T1 has ê as a glyph, which takes another accent above (ế) or below (ệ); an accent above
    # a letter built with one below (ẹ) would land beside it.
    for mark in sorted(marks, key=lambda mark: mark in _BELOW):
        latex = f"\\{_ACCENTS[mark]}{{{latex}}}"
    return latex


@lru_cache(maxsize=1 << 12)  # token names, in every formula
def mathjax_text(text: str) -> str:
    """User text inside \\text{} for MathJax and KaTeX: LaTeX's specials escaped, letters as they are (their
    \\text{} has no accent commands), on one line. < and > leave the \\text{} for math's \\lt and \\gt
    ({\\lt}: an ordinary symbol, no relation spacing): both KaTeX and MathJax know them, and no < is left for a
    Markdown renderer that passes math through to the HTML page unparsed (where <img ...> would be a tag). An
    entity (&lt;) would print as typed in a renderer that hands the math to KaTeX itself; MathJax's \\text{} knows
    no \\textless."""
    return _MATH_ANGLES.sub(lambda m: _MATH_ANGLE[m.group(0)], escape_latex(_LINE_BREAKS.sub(" ", text)))


# ... and a ] before ( or [ gets an empty group after it, so that a Markdown renderer without math reads no link
# or image ([click](http://…)) in a token's name; the group prints as nothing.
_MATH_ANGLE = {"<": r"}{\lt}\text{", ">": r"}{\gt}\text{", "](": "]{}(", "][": "]{}["}
_MATH_ANGLES = re.compile(r"[<>]|\][(\[]")


# ------------------------------------------------------------ Markdown

# & too: &lt; or &#60; would be read as the character it names.
_MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]<>#+!|~$&])")
# A line break in user text (a title) would end a heading or a table row, or open an HTML block on the next line.
_LINE_BREAKS = re.compile("\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")
_BACKTICKS = re.compile("`+")


def escape_markdown(text: str) -> str:
    """Text on one line, with every character that Markdown (or its math) would read as markup backslash-escaped
    (CommonMark: any ASCII punctuation may be; < as \\< is never the start of a tag, & as \\& never an entity)."""
    return _MARKDOWN_SPECIALS.sub(r"\\\1", _LINE_BREAKS.sub(" ", text))


# What makes a line a list item, a rule or a heading's underline when it starts the line: - or = (+, # and > are
# escaped everywhere), or a number followed by . or ).
_MARKDOWN_LINE_START = re.compile(r"^(?:(?=[-=])|([0-9]+)(?=[.)]))")


def markdown_line_start(text: str) -> str:
    """Escaped Markdown text that starts a line (a paragraph, a list item): its first character backslash-escaped
    when it would make the line a list item or a rule ("- a", "1. a", "---")."""
    return _MARKDOWN_LINE_START.sub(lambda m: (m.group(1) or "") + "\\", text, count=1)


def markdown_code(text: str) -> str:
    """Text as inline code on one line, fenced as CommonMark reads it back: by one backtick more than the longest
    run inside, with a space inside each fence when the text starts or ends with a backtick (which would lengthen
    the fence) or with spaces at both ends (one of which CommonMark strips). A | stays: in a table cell
    markdown_table_cell escapes it (outside a table `a\\|b` would show its backslash)."""
    code = _LINE_BREAKS.sub(" ", text)
    fence = "`" * (max(map(len, _BACKTICKS.findall(code)), default=0) + 1)
    pad = code.startswith("`") or code.endswith("`") or (code[:1] == code[-1:] == " " and code.strip(" "))
    return f"{fence} {code} {fence}" if pad else f"{fence}{code}{fence}"


def markdown_table_cell(cell: str) -> str:
    r"""A rendered cell for a GFM table row: each | inside a code span as \| (the table reads every unescaped |
    as the cell's end, in code too, and gives the code its | back). Text outside code has its | escaped already
    (escape_markdown) and math writes \vert, so the code spans are the backtick runs not escaped by a \."""
    out, fence, i = [], None, 0
    while i < len(cell):
        char = cell[i]
        if char == "\\" and fence is None:  # an escape outside code: the pair as it is
            out.append(cell[i:i + 2])
            i += 2
            continue
        if char == "`":
            run = _BACKTICKS.match(cell, i).group(0)
            fence = run if fence is None else None if run == fence else fence
            out.append(run)
            i += len(run)
            continue
        out.append("\\|" if char == "|" and fence is not None else char)
        i += 1
    return "".join(out)


# ------------------------------------------------------------ HTML
# What html.escape does, without importing the html package (and its table of entities) into every command; by
# str.replace, which runs ~20 times faster than str.translate on math with Japanese letters (every formula of an
# exam's Moodle feedback is escaped).


def escape_html(text: str) -> str:
    """Running text of an HTML page (quotes stay: no attribute holds it)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def escape_attribute(text: str) -> str:
    """Text anywhere in HTML, attributes included."""
    return escape_html(text).replace('"', "&quot;").replace("'", "&#x27;")


def safe(text: str) -> str:
    """Moodle cloze text: HTML-escaped, and cloze's own braces neutralised (a brace would start a blank)."""
    return escape_attribute(text).replace("{", "&#123;").replace("}", "&#125;")


# ------------------------------------------------------------ CSV

_FORMULA = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet reads a cell starting so as a formula


def csv_cell(text: str) -> str:
    """A cell of a CSV symattn writes, as a spreadsheet shows it as text: one starting with =, +, -, @, a tab or a
    carriage return gets a ' before it. Every cell of every CSV goes through here (header and numbers included:
    symattn's points are never negative, so no number is changed)."""
    return "'" + text if text.startswith(_FORMULA) else text
