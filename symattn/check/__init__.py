"""symattn check: compare the numbers a document or a student printed with the exact derivation and diagnose each
wrong one (claims, compare, hypotheses, diagnose, document, report). check() is the entry of the command;
diagnose.diagnose() the one `grade` reuses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .claims import Claim
from .diagnose import Finding, answers_of, diagnose


@dataclass(frozen=True)
class Checked:
    """The outcome of a check: how many numbers were claimed, how many hold, and the findings (the wrong ones);
    for a document, the coverage of its reading (check.matching.Coverage: what was matched, how, and what not)."""

    claims: int
    wrong: tuple[Finding, ...]
    coverage: Any = None
    partial: bool = False  # --partial: a document read only in part may still hold

    @property
    def unmatched(self) -> tuple:
        return () if self.coverage is None else self.coverage.unmatched

    @property
    def passed(self) -> bool:
        """Every claim holds, something was checked, and (unless partial) every group read was matched."""
        return self.claims > 0 and not self.wrong and (self.partial or not self.unmatched)

    @property
    def holding(self) -> int:
        return self.claims - len(self.wrong)

    def as_json(self) -> dict[str, Any]:
        """The --json shape: {"claims", "holding", "wrong": [{"at", "printed", "correct", "cause", "explanation"}
        and for a document "line", "column", "text": where it was read}], "passed"}, and for a document "coverage" (check.matching.Coverage.as_json)."""
        out = {"claims": self.claims, "holding": self.holding, "wrong": [self._placed(f) for f in self.wrong],
               "passed": self.passed}
        if self.coverage is not None:
            out["coverage"] = self.coverage.as_json()
        return out


    def place(self, finding: Finding) -> Any:
        """Where in the document a wrong number was read: (line, column, the text of its line), or None."""
        return None if self.coverage is None else self.coverage.place(finding.claim.at, finding.claim.printed)

    def _placed(self, finding: Finding) -> dict[str, Any]:
        out = finding.as_json()
        place = self.place(finding)
        if place is not None:
            out.update(line=place[0], column=place[1], text=place[2])
        return out


def check(spec: Any, claims: list[Claim], answers: dict[str, Any] | None = None, coverage: Any = None,
          partial: bool = False) -> Checked:
    """Claims checked against a parsed spec (bad claims raise SpecError); `coverage`: a document's reading."""
    return Checked(len(claims), tuple(diagnose(spec, claims, answers_of(spec) if answers is None else answers)),
                   coverage, partial)


__all__ = ["Checked", "Claim", "Finding", "check", "diagnose"]
