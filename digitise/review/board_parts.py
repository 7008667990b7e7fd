"""A board's parts as the page corrects them: which part each action corrects, the other turns of a board a
correction keeps, why a player could not double, and a board's reading as the page shows it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from digitise.game.match import Cube, MatchState
from digitise.game.position import Side
from digitise.solve.report_types import Report, Turn

#: The part of a board each of the page's per-turn actions corrects (a board may hold a move and a
#: resignation, or a double and its answer).
ACTION_PARTS = {"move": "move", "double": "cube", "take": "cube", "drop": "cube", "resign": "resign"}


def board_parts(turns: Sequence[Turn]) -> dict[str, str]:
    """A board's turns as correction text, by part: ``move``, ``cube``, ``resign``."""
    parts: dict[str, str] = {}
    for turn in turns:
        action = turn.action
        if action == "move" and turn.dice:
            high, low = sorted(turn.dice)[::-1]
            parts["move"] = f"{turn.player} {high}{low}: {turn.move or ''}".rstrip()
        elif action == "double":
            parts.setdefault("cube", "double")
        elif action in ("take", "drop"):
            parts["cube"] = f"double; {action}"
        elif action == "resign" and turn.points is not None and turn.points >= 1:
            parts["resign"] = f"resign {turn.points}"
    return parts


def with_other_turns(text: str, part: str, turns: Sequence[Turn]) -> str:
    """The correction ``text`` of one part of a board, with the board's other parts as they are now.

    Marking the resignation on a board that also holds the opponent's last
    move must not take that move off the match, nor correcting the move its
    resignation. A double is a board of its own (NOTATION.md): marking one
    replaces what the board was read as, its result included (a drop ends
    the game by itself).
    """
    others = board_parts(turns)
    if part == "cube":
        return text
    others.pop(part, None)
    if part == "move":
        others.pop("cube", None)
    if not others:
        return text
    return "; ".join(text if name == part else others[name] for name in ("cube", "move", "resign")
                     if name == part or name in others)


def named_side(players: Sequence[str] | None, side: str | None) -> str:
    """A side as the page names it: "Alice (bottom)" (the side alone means little to the person who recorded it)."""
    if players and len(players) == 2 and side in ("bottom", "top"):
        return f"{players[0 if side == 'bottom' else 1]} ({side})"
    return str(side or "the player on roll")


def no_double_because(report: Report, key: tuple[int, int], text: str, players: Sequence[str] | None,
                      length: int | None) -> str | None:
    """The rule that forbids the double a correction ``text`` puts on board ``key``, if one does.

    The match is replayed from the report (score, Crawford game, cube) up to
    the turn now on that board; its player is the one who would double. None
    when the correction is no double, or the rules allow it there (the marks
    are then what refuse it).
    """
    if not text.strip().lower().startswith("double"):
        return None
    state = MatchState(length if length is not None and length > 0 else 0)
    for game in report.games:
        cube, doubler = Cube(), None
        for number, turn in enumerate(game.turns):
            side = turn.player
            if (turn.page, turn.board) == key:
                me = Side(side)
                if number == 0:
                    return "a game opens with a roll, never a double"
                if state.crawford:
                    return "this is the Crawford game, in which no one may double"
                if cube.owner is me.opponent:
                    return f"{named_side(players, me.opponent.value)} owns the cube: only they may double"
                if state.length and state.needs(me) <= cube.value:
                    return (f"{named_side(players, side)} needs {state.needs(me)} to win the match and the cube is "
                            f"at {cube.value}: a double gains nothing, and GNU Backgammon allows none")
                return None
            if turn.action == "double":
                doubler = Side(side)
            elif turn.action == "take" and doubler is not None:
                cube, doubler = cube.doubled_by(doubler), None
        winner, points = game.winner, game.points
        if winner is None or points is None:
            return None
        state = state.after_game(Side(winner), points)
    return None


def cells_json(reading: Any) -> dict[str, list[dict[str, Any]]]:
    """A board reading's digit candidates for each cell, as the review page's JSON gives them."""
    if reading is None:
        return {}
    return {
        name: [{"digits": list(c.digits), "probability": round(float(c.probability), 4)} for c in candidates]
        for name, candidates in sorted(reading.cells.items())
    }


def marks_json(reading: Any) -> dict[str, float]:
    """A board reading's other marks (crossed out, arrow, letters), as the review page's JSON gives them."""
    if reading is None:
        return {}
    return {"crossed": reading.crossed, "arrow": reading.arrow, "letters": reading.letters}
