"""Every move of every real match in ../shared/data/matches is legal in the engine.

GNU Backgammon reads the files (its own parser, not ours) and hands over each
game's rolls and single-die steps (``gnubg.match()``: bar 25, off 0, in the
mover's numbering; a checker's steps are sometimes joined, ``4/0`` for ``4/1 1/0``);
the engine replays them from the start of each game.
"""

from __future__ import annotations

from typing import Any

import pytest

from digitise.game.match import MatchState, Score
from digitise.game.position import CHECKERS, OFF, Position, Side
from digitise.game.rules import Roll, game_value, legal_plays, play_from_moves
from tests.conftest import real_matches
from tests.gnubg_driver import import_mats


@pytest.fixture(scope="module")
def gnubg_matches() -> list[tuple[str, dict[str, Any]]]:
    paths = real_matches()
    if not paths:
        pytest.skip("../shared/data/matches not found")
    from tests.conftest import GNUBG

    if GNUBG is None:
        pytest.skip("GNU Backgammon is not installed (apt-get install gnubg)")
    imported = import_mats(paths, gnubg=GNUBG, export=False)
    assert all(result.match is not None for result in imported)
    return [(result.path.name, result.match) for result in imported if result.match is not None]


def replay_game(game: list[dict[str, Any]]) -> tuple[int, int, Position | None, int]:
    """Replays a game's moves; returns (moves, dances, the final position seen by its mover, cube)."""
    board = {"X": Position.initial(), "O": Position.initial()}  # each seen by that player
    moves = dances = 0
    cube = 1
    last: Position | None = None
    for action in game:
        kind, player = action.get("action"), str(action.get("player"))
        if kind == "take":
            cube *= 2
        if kind != "move":
            continue
        other = "O" if player == "X" else "X"
        position, roll = board[player], Roll(*action["dice"])
        steps = [tuple(step) for step in action["move"]]
        if not steps:
            assert legal_plays(position, roll) == (), f"{roll} written as a dance but playable"
            dances += 1
            continue
        play = play_from_moves(position, roll, [(a, b) for a, b in steps])
        assert play is not None, f"illegal {roll}: {steps} from {position!r}"
        board[player], board[other] = play.result, play.result.swap()
        last = play.result
        moves += 1
    return moves, dances, last, cube


@pytest.mark.gnubg
def test_every_move_of_every_real_match_is_legal(gnubg_matches: list[tuple[str, dict[str, Any]]]) -> None:
    total_moves = total_dances = bear_off_ends = 0
    for name, match in gnubg_matches:
        length = match["match-info"].get("match-length", 0)
        for number, game in enumerate(match["games"], start=1):
            info = game["info"]
            try:
                moves, dances, last, cube = replay_game(game["game"])
            except AssertionError as exc:
                raise AssertionError(f"{name} game {number}: {exc}") from exc
            total_moves += moves
            total_dances += dances
            if last is not None and last.mine[OFF] == CHECKERS:
                # Borne off: the points are the game's value times the cube, capped by the match.
                value = game_value(last)
                assert value is not None
                winner = Side.BOTTOM if info["winner"] == "X" else Side.TOP
                # X is the left column of the file: the bottom player.
                state = MatchState(length, Score(info["score-X"], info["score-O"]))
                points = int(value) * cube
                assert info["points-won"] in (points, state.capped(winner, points)), f"{name} game {number}"
                bear_off_ends += 1
    assert total_moves > 10_000 and total_dances > 0 and bear_off_ends > 50
