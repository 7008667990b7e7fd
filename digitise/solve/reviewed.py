"""Applying corrections: what each one says is written on its board, and solving with them.

The solver takes corrections as hard constraints, but it builds its candidate
explanations of a board from that board's marks: a correction whose roll the
misread digits never suggest could not be chosen. So a corrected board is
also *read* as the correction says, with certainty (:func:`corrected_readings`),
the marks the reviewer vouches for. :func:`solve_with_corrections` does both,
for ``digitise scan --corrections`` exactly as for the review page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from digitise.game.position import Position, Side
from digitise.game.rules import play_from_moves
from digitise.notation.encode import number_digits, turn_cells
from digitise.notation.marks import result_cell
from digitise.notation.readings import BoardReading, CellReading, Readings
from digitise.solve.correction_text import parse_correction
from digitise.solve.corrections import absent_boards, check_fit, unfitting
from digitise.solve.reasons import Flag
from digitise.solve.report_types import Candidate, Report, Skipped, Turn, json_of
from digitise.solve.solver import solve

if TYPE_CHECKING:
    from digitise.solve.result import SolveResult


@dataclass(frozen=True, slots=True)
class OnBoard:
    """A turn where it stands on the note, or a board set aside there (listed as a turn of action ``blank``)."""

    page: int
    board: int
    #: The n-th turn on its board (a move and a resignation may share one).
    n: int
    #: The game's number; None for a board set aside.
    game: int | None
    entry: Turn | Skipped

    @property
    def key(self) -> tuple[int, int, int]:
        """(page, board, n): where the page and the changes find it."""
        return self.page, self.board, self.n

    @property
    def turn(self) -> Turn | None:
        """The turn, or None for a board set aside."""
        return self.entry if isinstance(self.entry, Turn) else None

    @property
    def action(self) -> str:
        """The turn's action, ``blank`` for a board set aside."""
        return self.entry.action if isinstance(self.entry, Turn) else "blank"

    @property
    def player(self) -> str | None:
        """Whose turn it is (None for a board set aside)."""
        return self.entry.player if isinstance(self.entry, Turn) else None

    @property
    def position_before(self) -> str | None:
        """The position the turn is played from (None for a board set aside)."""
        return self.entry.position_before if isinstance(self.entry, Turn) else None

    @property
    def flagged(self) -> bool:
        """Whether the turn or board is flagged for review."""
        return self.entry.flagged

    @property
    def reasons(self) -> tuple[Flag, ...]:
        """Why it is flagged."""
        return self.entry.reasons

    @property
    def candidates(self) -> tuple[Candidate, ...]:
        """The solver's best few decisions for the board (none for a board set aside)."""
        return self.entry.candidates if isinstance(self.entry, Turn) else ()

    def to_json(self) -> dict[str, Any]:
        """As the review page gets it: the turn's JSON (a board set aside's as a blank turn's) and its game."""
        if isinstance(self.entry, Turn):
            return {**json_of(self.entry), "game": self.game}
        return {"action": "blank", "player": None, "dice": None, "move": "", "confidence": 0.0, "candidates": [],
                "position_before": None, "position_after": None, **json_of(self.entry), "game": None}


def turns_by_board(report: Report) -> list[OnBoard]:
    """Turns keyed by (page, board, n-th turn on that board), in match order.

    Flagged boards the solver skipped (blank boards inside a game, a page of
    another match) are listed too, as turns of action ``blank`` where they
    stand on the note (before the first turn written after them), so a
    reviewer can say what they hold.
    """
    seen: dict[tuple[int, int], int] = {}
    keyed: list[OnBoard] = []

    def add(entry: Turn | Skipped, game: int | None) -> None:
        n = seen.get((entry.page, entry.board), 0)
        seen[(entry.page, entry.board)] = n + 1
        keyed.append(OnBoard(entry.page, entry.board, n, game, entry))

    blanks = sorted(report.skipped, key=lambda skipped: (skipped.page, skipped.board))
    for game in report.games:
        for turn in game.turns:
            while blanks and (blanks[0].page, blanks[0].board) < (turn.page, turn.board):
                add(blanks.pop(0), None)
            add(turn, game.number)
    for skipped in blanks:
        add(skipped, None)
    return keyed


def corrected_cells(text: str, turn: Turn | OnBoard | None) -> dict[str, tuple[int, ...]]:
    """What the corrected board has written in each cell (NOTATION.md), for the learning crops.

    A move writes each die where its checker lands and unplayable dice in the
    centre (the encoder's :func:`turn_cells`); a result writes the points in
    the winner's result square. A double's arrow is not a digit: no label.
    Raises ``ValueError`` when the correction does not say the whole board.
    """
    forced = parse_correction(text)
    player = forced.player or Side((turn.player if turn is not None else None) or "bottom")
    cells: dict[str, tuple[int, ...]] = {}
    if forced.roll is not None:
        if forced.moves is None or turn is None or not turn.position_before:
            raise ValueError("the play is not known")
        position = Position.from_position_id(turn.position_before)
        play = play_from_moves(position, forced.roll, forced.moves, forced.hits) if forced.moves else None
        if forced.moves and play is None:
            raise ValueError(f"{text!r} is not a legal play from the position before")
        cells.update(turn_cells(player, forced.roll, play))
    if forced.points is not None:
        winner = forced.winner or player.opponent
        cells[result_cell(winner)] = number_digits(forced.points)
    return cells


def turn_at(report: Report, page: int, board: int) -> OnBoard | None:
    """The first turn (or board set aside) ``report`` places on (page, board), or None."""
    return next((on for on in turns_by_board(report) if on.key == (page, board, 0)), None)


def corrected_reading(reading: BoardReading, text: str, turn: OnBoard | None) -> BoardReading | None:
    """``reading`` replaced by what correction ``text`` says the board holds, for certain; None if unsure.

    A move needs the turn's player and position (from a report) to know where
    each die landed; a blank board is empty; a double is an arrow (keeping
    any result square as read).
    """
    forced = parse_correction(text)
    if forced.blank:
        return replace(reading, cells={}, crossed=0.0, arrow=0.0, letters=0.0)
    if forced.roll is not None and (turn is None or turn.action != "move"):
        return None
    if forced.roll is not None and forced.player is not None and forced.player.value != (turn and turn.player):
        return None
    if forced.roll is None and not forced.double:
        return None
    try:
        cells = corrected_cells(text, turn)
    except ValueError:
        return None
    if forced.points is None:
        # A result the correction does not mention stays as read.
        cells.update({k: reading.cells[k][0].digits for k in ("Bres", "Wres") if reading.cells.get(k)})
    certain = {name: (CellReading(tuple(digits), 1.0),) for name, digits in cells.items() if digits}
    return replace(reading, cells=certain, crossed=1.0 if "centre" in certain else 0.0,
                   arrow=1.0 if forced.double else 0.0, letters=0.0)


def corrected_readings(readings: Readings, corrections: Mapping[tuple[int, int], str],
                       report: Report) -> Readings:
    """``readings`` with each corrected board read as its correction says, for certain.

    ``report`` (a solve of these readings) gives each corrected board's
    player and position before; boards it cannot place keep their readings.
    """
    if not corrections:
        return readings
    pages = []
    for page in readings.pages:
        boards = []
        for board in page.boards:
            text = corrections.get((page.page, board.index))
            implied = None
            if text is not None:
                implied = corrected_reading(board, text, turn_at(report, page.page, board.index))
            boards.append(implied or board)
        pages.append(replace(page, boards=tuple(boards)))
    return replace(readings, pages=tuple(pages))


def solve_with_corrections(
    readings: Readings,
    corrections: Mapping[tuple[int, int], str],
    *,
    players: tuple[str, str] | None = None,
    length: int | None = None,
    path: str | Path | None = None,
    roster: Sequence[str] = (),
) -> SolveResult:
    """Solve ``readings`` with ``corrections`` as hard constraints.

    Solves once; when a correction is not honoured (its marks were misread
    beyond what the solver tries), reads the corrected boards as the
    corrections say and solves again. Raises :class:`InputError` naming
    ``path`` when corrections still do not fit (a file made for other pages).
    """
    absent_boards(corrections, {(page.page, board.index) for page in readings.pages for board in page.boards},
                  path or "corrections")
    result = solve(readings, players=players, length=length, corrections=dict(corrections) or None, roster=roster)
    if corrections and unfitting(result.solved, corrections):
        fixed = corrected_readings(readings, corrections, result.solved)
        result = solve(fixed, players=players, length=length, corrections=dict(corrections), roster=roster)
    if corrections:
        check_fit(result.solved, corrections, path or "corrections")
    return result
