"""The self-check page (`--format html`): the worksheet as one self-contained HTML file (the HTML handout's
MathML, the script and its data inline, nothing fetched) with an input box per blank that says, as the student
types, right, carried or wrong (with the likely cause). What each blank is checked against is written here, from
the worksheet's lines: its exact value, and how it follows from the earlier blanks its line uses (the line's
products and divisor; e^{a} from its logit), so that the page recomputes it from the student's own numbers."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any, ClassVar

from sympy import exp

from ..errors import SpecError
from ..exercises.exercise import TOLERANCES, tolerance
from ..features.worksheet.steps import Blank, WorkLines
from ..infra import i18n
from ..numbers.decimals import to_decimal
from ..render.escape import escape_html
from ..render.html import HtmlRenderer
from ..typeset.lines import Line, Operand, decimals_shown
from .page_script import SCRIPT, STYLE
from .paper import WorksheetTitles
from .sheet import Sheets

CAUSES = ("no_scaling", "scaled_by_d_k", "too_few_decimals", "rounded_intermediates", "rounding", "typo",
          "unknown")  # check's names the page can tell
WORDS = ("right", "carried", "wrong", "not_a_number", "show", "progress", "cause", "answer_is")


class SelfCheckHtml(WorksheetTitles, HtmlRenderer):
    """The worksheet as HTML: each blank a numbered box in the math, and under each computation its inputs."""

    default_settings: ClassVar[dict[str, Any]] = {**HtmlRenderer.default_settings, "key": False, "version": None}

    def __init__(self, numbers: dict[str, int], **settings: Any) -> None:
        super().__init__(**settings)
        self.blank_numbers = numbers

    def blank_box(self, blank: Blank, filled: bool) -> str:
        return rf"\boxed{{\text{{{self.blank_numbers[blank.id]}}}}}"

    def _print_WorkLines(self, step: WorkLines) -> str:
        rows = []
        for name, blank in zip(self.line_names(step), step.results, strict=True):
            if blank is None:
                continue
            n = self.blank_numbers[blank.id]
            label = self.text("worksheet.page.answer_label", {"n": n})
            rows.append(f'<div class="blank"><label for="b{n}">{escape_html(label)} '
                        f'{self.mathml(name.split("&")[0], "inline")}</label> '
                        f'<input id="b{n}" data-n="{n}" type="text" inputmode="decimal" autocomplete="off" '
                        f'spellcheck="false" size="{len(blank.text) + 3}" aria-describedby="m{n}">'
                        f' <output id="m{n}" class="mark" aria-live="polite"></output>'
                        f' <span id="a{n}" class="answer"></span></div>')
        numbers = " ".join(str(self.blank_numbers[b.id]) for b in step.results if b is not None)
        button = (f'<button type="button" class="show" data-blanks="{numbers}">'
                  f'{escape_html(self.text("worksheet.page.show"))}</button>') if rows else ""
        return super()._print_WorkLines(step) + (f'<div class="answers">{"".join(rows)}{button}</div>' if rows else "")


def self_check_page(sheets: Sheets, version: int | None = None) -> str:
    """The page's complete HTML; SpecError for a worksheet whose blanks hold symbols (the page checks numbers)."""
    derivation = sheets.worksheet
    if derivation.symbolic:
        raise SpecError("--format", "html: the self-check page checks numbers, and this spec's blanks hold symbols "
                                    "(leave out html: the PDF worksheet takes them)")
    numbers = {blank.id: n for n, blank in enumerate(sheets.blanks, 1)}
    renderer = SelfCheckHtml(numbers, lang=derivation.lang, digits=derivation.digits, version=version)
    html = renderer.document(derivation)
    data = {"blanks": _checks(sheets, numbers), "words": _words(derivation.lang)}
    payload = json.dumps(data, ensure_ascii=False, sort_keys=True).replace("</", "<\\/")
    note = escape_html(i18n.text(derivation.lang, "worksheet.page.self_study"))
    head = f'<p class="selfstudy">{note}</p>\n<p id="progress" role="status" aria-live="polite"></p>\n'
    html = html.replace("</style>", STYLE + "</style>", 1)
    html = html.replace("</p>\n", "</p>\n" + head, 1)  # after the subtitle
    script = f'<script type="application/json" id="checks">{payload}</script>\n<script>{SCRIPT}</script>\n'
    return html.replace("</body>", script + "</body>", 1)


def _words(lang: str) -> dict[str, str]:
    words = {word: i18n.text(lang, f"worksheet.page.{word}") for word in WORDS}
    words.update({f"cause.{cause}": i18n.text(lang, f"grade.cause.{cause}") for cause in CAUSES})
    return words


def _checks(sheets: Sheets, numbers: dict[str, int]) -> list[dict[str, Any]]:
    """For each blank: its number, stage, exact value (20 significant digits), the text the key shows, its
    tolerance and how it is recomputed from the earlier blanks (`from`)."""
    lines: dict[str, tuple[Line, tuple[Blank | None, ...]]] = {}
    for step in sheets.worksheet.steps:
        if isinstance(step, WorkLines):
            for line, blank, operands in zip(step.lines, step.results, step.operands, strict=True):
                if blank is not None:
                    lines[blank.id] = (line, operands)
    out = []
    for blank in sheets.blanks:
        line, operands = lines[blank.id]
        places = decimals_shown(blank.text)
        out.append({"n": numbers[blank.id], "stage": blank.stage, "value": _decimal(blank.value),
                    "answer": blank.text, "decimals": places, "tolerance": _tolerance(blank.stage, places),
                    "from": _recomputed(blank, line, operands, numbers, sheets.blanks)})
    return out


def _tolerance(stage: str, places: int) -> str:
    """The exam's tolerance of the stage at the decimals shown (TOLERANCES), at least one unit of the last one:
    the worksheet's operands are rounded, and a student's value may be one unit off from the exact one."""
    tol = Decimal(tolerance(places, stage if stage in TOLERANCES else "scores"))
    return format(max(tol, Decimal(1).scaleb(-places)).normalize(), "f")


def _recomputed(blank: Blank, line: Line, operands: tuple[Blank | None, ...], numbers: dict[str, int],
                blanks: tuple[Blank, ...]) -> dict[str, Any] | None:
    """How the page recomputes the blank from the student's earlier numbers: {"terms": [[operand, ...], ...],
    "divisor": operand} (an operand {"b": n}, a blank, or {"v": "decimal"}, shown) or {"exp": n} (e^{a} of blank
    n); None: from no blank."""
    if not line.terms:
        logit = next((b for b in reversed(blanks[:blanks.index(blank)]) if b.stage != blank.stage
                      and abs(to_decimal(exp(b.value), 20) - to_decimal(blank.value, 20)) < Decimal("1e-15")), None) \
            if blank.stage == "exp" else None
        return {"exp": numbers[logit.id]} if logit is not None else None
    if not any(operands):
        return None
    given = iter(operands)

    def operand(o: Operand) -> dict[str, Any]:
        b = next(given)
        return {"b": numbers[b.id]} if b is not None else {"v": _decimal(o.value)}

    terms = [[operand(o) for o in term] for term in line.terms]
    return {"terms": terms, "divisor": operand(line.divisor) if line.divisor is not None else None}


def _decimal(value: Any) -> str:
    return format(to_decimal(value, 20), "f")
