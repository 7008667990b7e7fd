"""Re-solving under review: the solver a session runs (with the players and length the scan was told), and what
a re-solve changed, each turn described, an alternative given as the correction that picks it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from digitise.review.scanned import Scanned
from digitise.solve import solve
from digitise.solve.corrections import MatchHeader
from digitise.solve.report_types import Candidate, Report
from digitise.solve.reviewed import OnBoard, turns_by_board

#: solve(readings, corrections, header) -> (match, report): the solver, injectable for tests.
Solver = Callable[[Any, Mapping[tuple[int, int], str], MatchHeader], tuple[Any, Report]]


def describe_turn(turn: OnBoard) -> str:
    """A turn in a few words: ``bottom 64: 24/18 13/9``, ``top double``."""
    who = turn.player or ""
    played = turn.turn
    if played is None:
        return f"{who} blank".strip()
    if played.action == "move":
        roll = "".join(str(d) for d in played.dice or ())
        text = f"{who} {roll}: {played.move or '(no play)'}"
    elif played.action == "resign":
        text = f"{who} resigns {played.points or ''}".rstrip()
    else:
        text = f"{who} {played.action}"
    return text.strip()


def candidate_correction(candidate: Candidate) -> str | None:
    """The correction string that forces a solver candidate on its board (None for letters)."""
    action = candidate.action
    result = candidate.result
    wins = f"{result.winner} wins {result.points}" if result is not None and result.winner and result.points else ""
    answer = candidate.answer
    if action == "move" and candidate.dice:
        player = candidate.player
        a, b = candidate.dice
        text = f"{player + ' ' if player else ''}{a}{b}: {candidate.move or ''}".rstrip()
        if answer:
            # The answer to the double before is part of the choice: "take; 52: ..." and "drop; 52: ..."
            # (a new game opening with the same play) are two.
            text = f"{answer}; {text}"
    elif action == "double":
        # Answered on its own board ("double; drop"): a decision of its own, apart from a double the
        # next board answers. Taken and at once conceded, the result says it all.
        text = f"double; {answer}" if answer and not wins else "double"
    elif action == "resign" and wins:
        return wins
    elif action == "blank":
        return "blank"
    else:
        return None
    return f"{text}; {wins}" if wins else text


@dataclass(frozen=True, slots=True)
class Change:
    """A turn read otherwise after a re-solve (or flagged otherwise): its board, and the turn before and after."""

    page: int
    board: int
    #: The turn in a few words (:func:`describe_turn`), None where there was or is none.
    before: str | None
    after: str | None
    flagged_before: bool
    flagged_after: bool

    def to_json(self) -> dict[str, Any]:
        """As the page gets it."""
        return {"page": self.page, "board": self.board, "before": self.before, "after": self.after,
                "flagged_before": self.flagged_before, "flagged_after": self.flagged_after}


def report_changes(old: Report, new: Report) -> list[Change]:
    """The turns whose reading differs between two reports, board by board."""
    before = {on.key: on for on in turns_by_board(old)}
    after = {on.key: on for on in turns_by_board(new)}
    changes = []
    for key in sorted(set(before) | set(after)):
        a, b = before.get(key), after.get(key)
        old_text = describe_turn(a) if a else None
        new_text = describe_turn(b) if b else None
        flag_changed = bool(a and b and a.flagged != b.flagged)
        if old_text != new_text or flag_changed:
            changes.append(Change(key[0], key[1], old_text, new_text, bool(a and a.flagged), bool(b and b.flagged)))
    return changes


def default_solver(scanned: Scanned) -> Solver:
    """The real solver, run with the players, length and roster the report was made with.

    The reviewer's names and length, when set, win over the scan's.
    """
    told = scanned.header

    def run(readings: Any, corrections: Mapping[tuple[int, int], str], header: MatchHeader) -> tuple[Any, Report]:
        players, length = header.over(told.players, told.length)
        result = solve(readings, players=players, length=length, corrections=dict(corrections) or None,
                       roster=scanned.roster)
        return result.match, result.solved

    return run
