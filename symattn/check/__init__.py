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
    """The outcome of a check: how many numbers were claimed, how many hold, and the findings (the wrong ones)."""

    claims: int
    wrong: tuple[Finding, ...]

    @property
    def holding(self) -> int:
        return self.claims - len(self.wrong)

    def as_json(self) -> dict[str, Any]:
        """The --json shape: {"claims", "holding", "wrong": [{"at", "printed", "correct", "cause", "explanation"}]}."""
        return {"claims": self.claims, "holding": self.holding, "wrong": [f.as_json() for f in self.wrong]}


def check(spec: Any, claims: list[Claim], answers: dict[str, Any] | None = None) -> Checked:
    """Claims checked against a parsed spec (bad claims raise SpecError)."""
    return Checked(len(claims), tuple(diagnose(spec, claims, answers_of(spec) if answers is None else answers)))


__all__ = ["Checked", "Claim", "Finding", "check", "diagnose"]
