"""What the review step reads off a report: its turns board by board."""

from __future__ import annotations

from digitise.solve.report_types import Turn
from digitise.solve.reviewed import turns_by_board
from tests import reports


def _turn(page: int, board: int) -> Turn:
    return reports.turn(page, board, "bottom", "move", (3, 1), "8/5 6/5")


def test_boards_set_aside_stand_where_they_are_on_the_note() -> None:
    """A page of another match left out (page 2) was listed after the match's last turn, so j went back."""
    set_aside = "blank board inside a game"
    report = reports.report(
        [reports.game(1, [_turn(1, 7), _turn(1, 8)]), reports.game(2, [_turn(3, 1), _turn(3, 1), _turn(3, 2)])],
        [reports.skipped(2, 2, set_aside), reports.skipped(2, 1, set_aside), reports.skipped(4, 1, set_aside)])
    listed = turns_by_board(report)
    assert [on.key for on in listed] == [(1, 7, 0), (1, 8, 0), (2, 1, 0), (2, 2, 0), (3, 1, 0), (3, 1, 1),
                                          (3, 2, 0), (4, 1, 0)]
    assert [on.action for on in listed] == ["move", "move", "blank", "blank", "move", "move", "move",
                                                      "blank"]
    assert [on.game for on in listed] == [1, 1, None, None, 2, 2, 2, None]
