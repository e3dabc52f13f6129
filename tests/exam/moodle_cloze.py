"""A port of Moodle's cloze (multianswer) parsing and marking, to replay what Moodle makes of moodle.xml.

From moodle/moodle: question/type/multianswer/questiontype.php (ANSWER_REGEX and its parts,
qtype_multianswer_extract_question: a blank's weight is its {N:...}, 1 when empty; the question's mark is the sum),
question/type/multianswer/question.php (grade_response: the blanks' fractions weighted by their marks) and
question/type/numerical/question.php (qtype_numerical_answer: a nominal tolerance, inclusive, widened by
10^-precision). Python's lookbehinds have one width each, so Moodle's (?<!\\\\|&|&amp;) is three of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FRACTION = r"=|%(-?[0-9]+(?:[.,][0-9]*)?)%"
ANSWER = r".+?(?<!\\)(?<!&)(?<!&amp;)(?=[~#}]|$)"
FEEDBACK = r".*?(?<!\\)(?=[~}]|$)"
ALTERNATIVE = f"({FRACTION})?({ANSWER})(#({FEEDBACK}))?"
NUMBER = r"-?(([0-9]+[.,]?[0-9]*|[.,][0-9]+)([eE][-+]?[0-9]+)?)"
NUMERICAL_ALTERNATIVE = re.compile(f"^({NUMBER})(:{NUMBER})?$", re.S)
TYPES = ("(NUMERICAL|NM)|(MULTICHOICE|MC)|(MULTICHOICE_V|MCV)|(MULTICHOICE_H|MCH)|(SHORTANSWER|SA|MW)|"
         "(SHORTANSWER_C|SAC|MWC)|(MULTICHOICE_S|MCS)|(MULTICHOICE_VS|MCVS)|(MULTICHOICE_HS|MCHS)|(MULTIRESPONSE|MR)|"
         "(MULTIRESPONSE_H|MRH)|(MULTIRESPONSE_S|MRS)|(MULTIRESPONSE_HS|MRHS)")
BLANK = re.compile(r"\{([0-9]*):(" + TYPES + "):(" + ALTERNATIVE + "(~" + ALTERNATIVE + r")*)\}", re.S)
NORM, TYPE_NUMERICAL, ALTERNATIVES = 1, 3, 16
ALT_FRACTION, ALT_ANSWER = 1, 3
PRECISION = 14  # PHP's ini precision


@dataclass
class Blank:
    mark: float
    numerical: bool
    answers: list[tuple[float, str, float]]  # (fraction, answer, tolerance)

    def fraction(self, response: float) -> float:
        """qtype_numerical: the first answer whose interval holds the response."""
        epsilon = 10.0 ** -PRECISION
        for fraction, answer, tolerance in self.answers:
            value, tol = float(answer), float(tolerance)
            tol += epsilon * max(abs(tol), abs(value), epsilon)
            if value - tol <= response <= value + tol:
                return fraction
        return 0.0


def extract(text: str) -> tuple[list[Blank], float, str]:
    """qtype_multianswer_extract_question: the blanks, the question's default mark and the text left."""
    blanks, mark, position = [], 0.0, 1
    while (match := BLANK.search(text)) is not None:
        norm = match.group(NORM)
        blank = Blank(float(norm) if norm != "" else 1.0, bool(match.group(TYPE_NUMERICAL)), [])
        remaining = match.group(ALTERNATIVES)
        while (alt := re.search("~?" + ALTERNATIVE, remaining, re.S)) is not None:
            fraction = 1.0 if alt.group(ALT_FRACTION) == "=" else 0.0
            number = NUMERICAL_ALTERNATIVE.search(alt.group(ALT_ANSWER)) if blank.numerical else None
            if number is not None:
                blank.answers.append((fraction, number.group(1), float(number.group(6) or 0)))
            remaining = remaining.split(alt.group(0), 1)[1]
        mark += blank.mark
        blanks.append(blank)
        text = text.replace(match.group(0), f"{{#{position}}}", 1)
        position += 1
    return blanks, mark, text


def grade(blanks: list[Blank], responses: list[float]) -> float:
    """qtype_multianswer_question::grade_response: Σ fraction × mark / Σ mark."""
    total = sum(b.mark for b in blanks)
    return sum(b.fraction(r) * b.mark for b, r in zip(blanks, responses, strict=True)) / total
