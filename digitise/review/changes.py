"""Re-solving under review: the solver a session runs (with the players and length the scan was told), and what
a re-solve changed, each turn described, an alternative given as the correction that picks it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from digitise.solve import solve
from digitise.solve.corrections import MatchHeader
from digitise.solve.reviewed import turns_by_board

#: solve(readings, corrections, header) -> (match, report): the solver, injectable for tests.
Solver = Callable[[Any, Mapping[tuple[int, int], str], MatchHeader], tuple[Any, Mapping[str, Any]]]


def describe_turn(turn: Mapping[str, Any]) -> str:
    """A turn in a few words: ``bottom 64: 24/18 13/9``, ``top double``."""
    who = turn.get("player") or ""
    action = turn.get("action", "?")
    if action == "move":
        dice = turn.get("dice") or []
        roll = "".join(str(d) for d in dice)
        text = f"{who} {roll}: {turn.get('move') or '(no play)'}"
    elif action == "resign":
        text = f"{who} resigns {turn.get('points') or ''}".rstrip()
    else:
        text = f"{who} {action}"
    return text.strip()


def candidate_correction(candidate: Mapping[str, Any]) -> str | None:
    """The correction string that forces a solver candidate on its board (None for letters)."""
    action = candidate.get("action")
    result = candidate.get("result") or {}
    wins = f"{result['winner']} wins {result['points']}" if result.get("winner") and result.get("points") else ""
    answer = candidate.get("answer") if candidate.get("answer") in ("take", "drop") else None
    if action == "move" and candidate.get("dice"):
        player = candidate.get("player")
        a, b = candidate["dice"]
        text = f"{player + ' ' if player else ''}{a}{b}: {candidate.get('move') or ''}".rstrip()
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


def report_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The turns whose reading differs between two reports, board by board."""
    before = dict(turns_by_board(old))
    after = dict(turns_by_board(new))
    changes = []
    for key in sorted(set(before) | set(after)):
        a, b = before.get(key), after.get(key)
        old_text = describe_turn(a) if a else None
        new_text = describe_turn(b) if b else None
        flag_changed = bool(a and b and bool(a.get("flagged")) != bool(b.get("flagged")))
        if old_text != new_text or flag_changed:
            changes.append(
                {
                    "page": key[0],
                    "board": key[1],
                    "before": old_text,
                    "after": new_text,
                    "flagged_before": bool(a and a.get("flagged")),
                    "flagged_after": bool(b and b.get("flagged")),
                }
            )
    return changes


def scan_header(report: Mapping[str, Any]) -> MatchHeader:
    """The players and length the scan was told (command line or corrections file); None where it read them."""
    summary = report.get("summary") or {}
    players = report.get("players") or summary.get("players")
    length = report.get("length", summary.get("length"))
    return MatchHeader(
        (str(players[0]), str(players[1])) if isinstance(players, list) and len(players) == 2 else None,
        length if isinstance(length, int) and not isinstance(length, bool) else None,
    )


def default_solver(report: Mapping[str, Any]) -> Solver:
    """The real solver, run with the players and length the report was made with.

    The reviewer's names and length, when set, win over the scan's.
    """
    told = scan_header(report)
    entrants = report.get("roster")
    roster = tuple(str(name) for name in entrants) if isinstance(entrants, list) else ()

    def run(readings: Any, corrections: Mapping[tuple[int, int], str],
            header: MatchHeader) -> tuple[Any, Mapping[str, Any]]:
        players, length = header.over(told.players, told.length)
        result = solve(readings, players=players, length=length, corrections=dict(corrections) or None,
                       roster=roster)
        return result.match, result.report

    return run
