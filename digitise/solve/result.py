"""The solved match and its report, as :func:`digitise.solve.solve` returns them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from digitise.game.record import MatchRecord
from digitise.solve.report_types import Report


@dataclass(frozen=True, slots=True)
class SolveResult:
    """The solved match and the report of every turn (see :func:`solve`).

    ``solved`` is the report as typed values; ``report`` its JSON object, made once from it, to which a scan
    adds keys of its own (the page files, its notes) before writing it.
    """

    match: MatchRecord
    solved: Report
    report: dict[str, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "report", self.solved.to_json())

    @property
    def flagged(self) -> int:
        """How many turns (and boards) are flagged for review."""
        return self.solved.summary.flagged
