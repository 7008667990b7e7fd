"""The encoder writes a game's boards exactly as NOTATION.md says."""

from __future__ import annotations

from pathlib import Path

import pytest

from digitise.game.match import Score
from digitise.game.position import Position, Side
from digitise.game.record import Action, ActionKind, GameRecord, MatchRecord
from digitise.game.rules import Play, Roll, Step, legal_plays
from digitise.notation.encode import board_place, encode_game, encode_match, turn_cells
from digitise.notation.mat import read_mat
from tests.conftest import real_matches

START = Position.initial()


def _play(pos: Position, roll: Roll, *steps: tuple[int, int, int]) -> Play:
    """The legal play of ``roll`` reaching what ``steps`` reach, with exactly those steps."""
    me = list(pos.mine)
    for source, dest, _ in steps:
        me[source] -= 1
        me[dest] += 1
    matches = [p for p in legal_plays(pos, roll) if p.result.mine == tuple(me)]
    assert matches, f"{steps} is not legal"
    return Play(tuple(Step(s, d, die) for s, d, die in steps), matches[0].result)


def _move(side: Side, pos: Position, roll: Roll, *steps: tuple[int, int, int]) -> tuple[Action, Position]:
    play = _play(pos, roll, *steps)
    return Action(side, ActionKind.MOVE, roll=roll, play=play), play.result.swap()


def test_each_step_writes_its_die_where_it_lands() -> None:
    # NOTATION.md: 6-4 from B1 writes "6" in B7 and "4" in B11.
    first, pos = _move(Side.BOTTOM, START, Roll(6, 4), (24, 18, 6), (18, 14, 4))
    second, _ = _move(Side.TOP, pos, Roll(3, 1), (8, 5, 3), (6, 5, 1))
    boards = encode_game(GameRecord(1, Score(), (first, second)))
    assert [dict(b.marks.cells) for b in boards] == [{"B7": (6,), "B11": (4,)}, {"B5": (3, 1)}]
    assert [b.actions for b in boards] == [(0,), (1,)]
    assert not any(b.marks.crossed or b.marks.arrow for b in boards)


def test_unplayable_dice_go_crossed_into_the_centre() -> None:
    # Bottom on the bar against top's points 2-6 made: 6-6 cannot enter at all.
    theirs = (0, 0, 2, 2, 2, 2, 2, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    mine = (0, 0, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)
    pos = Position(mine, theirs)
    assert legal_plays(pos, Roll(6, 6)) == ()
    assert turn_cells(Side.BOTTOM, Roll(6, 6), None) == {"centre": (6, 6, 6, 6)}
    assert turn_cells(Side.TOP, Roll(5, 3), None) == {"centre": (5, 3)}
    # Only the 1 enters; the 6 stays unplayed and is crossed in the centre.
    entered = Play((Step(25, 24, 1, True),), pos)
    assert turn_cells(Side.BOTTOM, Roll(6, 1), entered) == {"B1": (1,), "centre": (6,)}


def test_cube_actions_and_results() -> None:
    opening, pos = _move(Side.BOTTOM, START, Roll(3, 1), (8, 5, 3), (6, 5, 1))
    actions = (opening, Action(Side.TOP, ActionKind.DOUBLE, cube=2), Action(Side.BOTTOM, ActionKind.DROP))
    boards = encode_game(GameRecord(1, Score(), actions, Side.TOP, 1))
    assert len(boards) == 2
    arrow = boards[1]
    assert arrow.marks.arrow and dict(arrow.marks.cells) == {"Bres": (1,)} and arrow.actions == (1, 2)
    taken = (opening, Action(Side.TOP, ActionKind.DOUBLE, cube=2), Action(Side.BOTTOM, ActionKind.TAKE))
    after_take, _ = _move(Side.TOP, pos, Roll(6, 5), (24, 18, 6), (18, 13, 5))
    boards = encode_game(GameRecord(1, Score(), taken + (after_take, Action(Side.BOTTOM, ActionKind.RESIGN, points=4)),
                                    Side.TOP, 4))
    # A take writes nothing; the resignation goes on the last board, in the winner's square.
    assert [b.marks.arrow for b in boards] == [False, True, False]
    assert dict(boards[2].marks.cells) == {"W7": (6,), "W12": (5,), "Bres": (4,)}


def test_a_game_conceded_before_any_roll_gets_a_board_of_its_own() -> None:
    game = GameRecord(1, Score(), (Action(Side.BOTTOM, ActionKind.RESIGN, points=1),), Side.TOP, 1)
    boards = encode_game(game)
    assert len(boards) == 1 and dict(boards[0].marks.cells) == {"Bres": (1,)}


def test_a_roll_thrown_then_conceded_gets_no_board() -> None:
    opening, _ = _move(Side.BOTTOM, START, Roll(3, 1), (8, 5, 3), (6, 5, 1))
    thrown = Action(Side.TOP, ActionKind.MOVE, roll=Roll(6, 5))
    boards = encode_game(GameRecord(1, Score(), (opening, thrown), Side.BOTTOM, 1))
    assert len(boards) == 1 and dict(boards[0].marks.cells) == {"W5": (3, 1), "Wres": (1,)}


def test_board_places() -> None:
    assert [board_place(k) for k in (0, 7, 8, 17)] == [(1, 1), (1, 8), (2, 1), (3, 2)]


@pytest.mark.parametrize("path", real_matches()[:10], ids=lambda p: p.name)
def test_real_matches_encode_to_well_formed_boards(path: Path) -> None:
    match: MatchRecord = read_mat(path).match
    boards = encode_match(match)
    assert boards
    for board in boards:
        marks = board.marks
        assert marks.arrow or marks.cells, "every board records something"
        for name, digits in marks.cells.items():
            assert all(1 <= d <= 6 for d in digits) or name in ("Bres", "Wres")
        assert marks.crossed == ("centre" in marks.cells)
    doubles = sum(1 for g in match.games for a in g.actions if a.kind is ActionKind.DOUBLE)
    assert sum(1 for b in boards if b.marks.arrow) == doubles
