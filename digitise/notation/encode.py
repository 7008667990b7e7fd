"""The encoder: a game as the boards a recorder writes for it, exactly per NOTATION.md.

One board per turn. Every single-die step writes its die in the square where
the checker lands (bearing off: the mover's off square); dice that cannot be
played go in the centre, crossed. A player on the bar against a closed board
gets no board, nor does a roll thrown and then conceded. A double is an arrow
board; a take writes nothing; a drop writes the points won in the doubler's
result square on the arrow board; a resignation writes the points in the
winner's result square on the board of the game's last recorded action (a
board of its own when nothing was recorded). A game won by bearing off needs
no mark.

This is what ``digitise synth`` draws and what the solver's tests invert.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from digitise.game.position import CHECKERS, OFF, Position, Side
from digitise.game.record import ActionKind, GameRecord, MatchRecord
from digitise.game.rules import Play, Roll, is_closed_out, legal_plays
from digitise.notation.marks import BOARDS_PER_PAGE, BoardMarks, cell_of_point, result_cell


@dataclass(frozen=True, slots=True)
class EncodedBoard:
    """One written board: the game it belongs to, its marks, and the actions it records.

    ``actions`` are indices into that game's :attr:`GameRecord.actions` (a take
    or drop is recorded by the arrow board of its double; a resignation by the
    board its result is written on).
    """

    game: int
    marks: BoardMarks
    actions: tuple[int, ...]


def turn_cells(side: Side, roll: Roll, play: Play | None) -> dict[str, tuple[int, ...]]:
    """The digits a turn writes, cell by cell, in step order; unplayed dice go to ``centre``.

    For a doublet the centre gets one digit per unplayed die.
    """
    cells: dict[str, list[int]] = {}
    unplayed = list(roll.dice)
    if play is not None:
        for step in play.steps:
            cells.setdefault(cell_of_point(side, step.destination), []).append(step.die)
            if step.die in unplayed:
                unplayed.remove(step.die)
    if unplayed:
        cells["centre"] = sorted(unplayed, reverse=True)
    return {name: tuple(digits) for name, digits in cells.items()}


def number_digits(points: int) -> tuple[int, ...]:
    """The digits of a result number as written, most significant first (12 -> (1, 2))."""
    return tuple(int(c) for c in str(max(points, 0)))


def _with_result(marks: BoardMarks, winner: Side, points: int) -> BoardMarks:
    cells = dict(marks.cells)
    cells[result_cell(winner)] = number_digits(points)
    return replace(marks, cells=cells)


def encode_game(game: GameRecord, match_length: int = 0) -> list[EncodedBoard]:
    """The boards of one game, in the order they are written.

    ``match_length`` is accepted for symmetry with the solver; the marks of a
    game do not depend on it.
    """
    del match_length  # the note writes the same marks whatever the match length
    boards: list[EncodedBoard] = []
    pos = Position.initial()  # seen by the bottom player
    cube = 1
    arrow_board: int | None = None  # index in ``boards`` of the latest double
    ended_by_bear_off = False
    ended_by_result = False

    def seen_by(side: Side) -> Position:
        return pos if side is Side.BOTTOM else pos.swap()

    for i, action in enumerate(game.actions):
        side = action.player
        if action.kind is ActionKind.MOVE:
            mine = seen_by(side)
            if action.roll is None or is_closed_out(mine):
                continue  # the closed-out player gets no board
            play = action.play if action.play is not None and action.play.steps else None
            if play is None and legal_plays(mine, action.roll):
                continue  # thrown, then conceded without moving: no board
            cells = turn_cells(side, action.roll, play)
            boards.append(EncodedBoard(game.number, BoardMarks(cells, crossed="centre" in cells), (i,)))
            if play is not None:
                after = play.result
                pos = after if side is Side.BOTTOM else after.swap()
                if after.mine[OFF] == CHECKERS:
                    ended_by_bear_off = True
        elif action.kind is ActionKind.DOUBLE:
            boards.append(EncodedBoard(game.number, BoardMarks(arrow=True), (i,)))
            arrow_board = len(boards) - 1
        elif action.kind in (ActionKind.TAKE, ActionKind.DROP):
            if arrow_board is None:
                continue
            board = boards[arrow_board]
            marks = board.marks
            if action.kind is ActionKind.DROP:
                points = game.points if game.points is not None else cube
                marks = _with_result(marks, side.opponent, points)
                ended_by_result = True
            else:
                cube *= 2
            boards[arrow_board] = EncodedBoard(board.game, marks, board.actions + (i,))
        elif action.kind is ActionKind.RESIGN:
            winner = side.opponent
            # A resignation is worth at least the cube; files cap the last game's points at
            # what the winner needed, but the note records what was won.
            points = max(action.points if action.points is not None else (game.points or cube), cube)
            _write_result(boards, game.number, winner, points, i)
            ended_by_result = True
    if game.winner is not None and not ended_by_bear_off and not ended_by_result:
        # A .mat records a resignation only as its result: write it like one.
        _write_result(boards, game.number, game.winner, max(game.points or cube, cube), None)
    return boards


def _write_result(boards: list[EncodedBoard], game: int, winner: Side, points: int, action: int | None) -> None:
    """Points in the winner's result square of the game's last board, or on a board of its own."""
    extra = (action,) if action is not None else ()
    if boards:
        last = boards[-1]
        boards[-1] = EncodedBoard(last.game, _with_result(last.marks, winner, points), last.actions + extra)
    else:
        boards.append(EncodedBoard(game, _with_result(BoardMarks(), winner, points), extra))


def encode_match(match: MatchRecord) -> list[EncodedBoard]:
    """Every board of the match in order; board ``k`` (0-based) is page ``k // 8 + 1``, index ``k % 8 + 1``."""
    boards: list[EncodedBoard] = []
    for game in match.games:
        boards.extend(encode_game(game, match.length))
    return boards


def board_place(k: int) -> tuple[int, int]:
    """(page, index) of the ``k``-th board (0-based) of a note."""
    return k // BOARDS_PER_PAGE + 1, k % BOARDS_PER_PAGE + 1


__all__ = ["EncodedBoard", "board_place", "encode_game", "encode_match", "number_digits", "turn_cells"]
