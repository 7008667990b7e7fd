"""The solved match and its report, as :func:`digitise.solve.solve` returns them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from digitise.game.record import MatchRecord


@dataclass(frozen=True, slots=True)
class SolveResult:
    """The solved match and the report of every turn (see :func:`solve`)."""

    match: MatchRecord
    report: dict[str, Any]

    @property
    def flagged(self) -> int:
        """How many turns (and boards) are flagged for review."""
        return int(self.report["summary"]["flagged"])
