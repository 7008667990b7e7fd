"""What a scan of one match is asked for (:class:`ScanOptions`) and what it tells (:class:`ScanSummary`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from digitise.errors import ExitCode
from digitise.game.record import MatchOutcome
from digitise.game.record import outcome as match_outcome

if TYPE_CHECKING:
    from digitise.solve import SolveResult
    from digitise.solve.reasons import Flag


@dataclass(frozen=True, slots=True)
class ScanOptions:
    """What ``digitise scan`` was asked for, beyond the pages."""

    players: tuple[str, str] | None = None
    length: int | None = None
    template: str | None = None
    #: "given": pages in the order given; "header": by the page number written on each.
    order: str = "given"
    corrections: Path | None = None
    overwrite: bool = False
    #: A report and readings without their ``.mat`` (an earlier run stopped) may be replaced (batch).
    leftovers: bool = False
    #: The tournament's entrants (``--roster``): names read from the headers are taken as the one they spell.
    roster: tuple[str, ...] = ()
    #: The file the roster was read from (an input: never written over).
    roster_file: Path | None = None
    #: Learn the recorder's hand from the match's sure turns and read the rest again (``--no-adapt``: off).
    adapt: bool = True
    #: A batch's shared page memory (:class:`PageBudget`): its lock file and its bytes. None: not shared.
    page_memory: tuple[Path, int] | None = None


@dataclass(frozen=True, slots=True)
class ScanSummary:
    """What a scan produced, for the summary line and the batch summary."""

    output: str
    report: str | None
    pages: int
    games: int
    turns: int
    flagged: int
    #: Of ``flagged``, the boards set aside (recording no turn of the match: a blank board inside a game, a
    #: page of another match); the rest are turns.
    set_aside: int = 0
    #: Pages that could not be read: "file: page N: reason".
    page_errors: tuple[str, ...] = ()
    #: Doubts about the whole match (a length or names made up, nothing recorded).
    notes: tuple[str, ...] = ()
    #: Turns of a player closed out on the bar: on no board, so written as dances of 21 (docs/notation.md).
    closed_out: int = 0
    #: Players, length, final score and winner of the match written.
    outcome: MatchOutcome | None = None

    @property
    def exit_code(self) -> ExitCode:
        """FLAGGED when a person should look at the result, else OK."""
        return ExitCode.FLAGGED if self.flagged or self.page_errors or self.notes else ExitCode.OK

    @classmethod
    def of(cls, output: Path, report: Path | None, pages: int, result: SolveResult,
           page_errors: tuple[str, ...] = (), scan_notes: Sequence[Flag] = ()) -> ScanSummary:
        """The summary of a solved match (a :class:`~digitise.solve.SolveResult`), the scan's own notes after
        the solve's (as its report lists them)."""
        summary = result.solved.summary
        return cls(output=str(output), report=str(report) if report else None, pages=pages,
                   games=summary.games, turns=summary.turns,
                   # Turns and boards set aside alike: what the review page will list.
                   flagged=summary.flagged, set_aside=summary.set_aside, page_errors=page_errors,
                   notes=tuple(flag.text for flag in (*result.solved.notes, *scan_notes)),
                   closed_out=result.solved.closed_out, outcome=match_outcome(result.match))
