"""Complete reports made by hand for tests: typed values, every field the report has, the summary counted.

A test that needs a report in a shape the solver does not easily give (a
double on a given board, a board set aside) builds it here, so it is a
report :meth:`Report.from_json` reads, as every real one is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from digitise.solve.reasons import Flag, reason_of
from digitise.solve.report_types import (
    Candidate,
    Game,
    Report,
    Result,
    SideName,
    Skipped,
    Summary,
    Turn,
    TurnAction,
)


def flags(*texts: str) -> tuple[Flag, ...]:
    """Reasons (or notes) as the report says them, each told by its text."""
    found = []
    for text in texts:
        reason = reason_of(text)
        assert reason is not None, f"{text!r} is no reason digitise gives"
        found.append(Flag(reason, text))
    return tuple(found)


def candidate(action: str = "move", move: str = "", dice: Sequence[int] | None = None, *,
              player: SideName | None = None, answer: str | None = None, winner: SideName | None = None,
              points: int = 0, probability: float = 0.0, reasons: Sequence[str] = ()) -> Candidate:
    """A solver candidate; ``winner`` (with ``points``) gives it a result."""
    return Candidate(action, move, _dice(dice), player=player, answer=answer,  # type: ignore[arg-type]
                     result=Result(winner, points) if winner is not None else None, probability=probability,
                     reasons=tuple(reasons))


def turn(page: int, board: int, player: SideName, action: TurnAction = "move", dice: Sequence[int] | None = None,
         move: str = "", *, points: int | None = None, confidence: float = 0.99, flagged: bool = False,
         reasons: Sequence[str] = (), candidates: Iterable[Candidate] | None = None,
         before: str | None = None, after: str | None = None) -> Turn:
    """A turn; its only candidate is what it records unless ``candidates`` are given."""
    if candidates is None:
        candidates = [candidate(action if action in ("move", "double", "resign") else "move", move, dice,
                                player=player, probability=confidence)]
    return Turn(page, board, player, action, _dice(dice), move, points, confidence, flagged, flags(*reasons),
                tuple(candidates), None, before, after)


def skipped(page: int, board: int, *reasons: str) -> Skipped:
    """A board set aside, flagged with ``reasons``."""
    return Skipped(page, board, True, flags(*reasons))


def game(number: int, turns: Iterable[Turn], winner: SideName | None = None, points: int | None = None) -> Game:
    """A game of ``turns``; ``winner`` and ``points`` where it ends."""
    return Game(number, tuple(turns), winner, points)


def report(games: Iterable[Game], set_aside: Iterable[Skipped] = (), notes: Sequence[str] = (),
           closed_out: int = 0) -> Report:
    """A report of ``games`` and the boards ``set_aside``, its summary counted from them."""
    games, set_aside = tuple(games), tuple(set_aside)
    turns = [t for g in games for t in g.turns]
    boards = {(t.page, t.board) for t in turns} | {(s.page, s.board) for s in set_aside}
    summary = Summary(len(boards), len(games), len(turns), sum(t.flagged for t in turns) + len(set_aside),
                      len(set_aside), round(sum(t.confidence for t in turns) / len(turns), 4) if turns else 0.0)
    return Report(games, set_aside, summary, notes=flags(*notes), closed_out=closed_out)


def report_json(made: Report, **scan: Any) -> dict[str, Any]:
    """``made`` as its JSON, with the keys a scan adds (``readings``, ``players``, ``mat``, ...)."""
    return {**made.to_json(), **scan}


def _dice(dice: Sequence[int] | None) -> tuple[int, int] | None:
    return None if dice is None else (int(dice[0]), int(dice[1]))
