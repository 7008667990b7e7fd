"""What the review step reads off a report: its turns board by board."""

from __future__ import annotations

from typing import Any

from digitise.solve.reviewed import turns_by_board


def _turn(page: int, board: int) -> dict[str, Any]:
    return {"page": page, "board": board, "player": "bottom", "action": "move", "dice": [3, 1], "move": "8/5 6/5"}


def test_boards_set_aside_stand_where_they_are_on_the_note() -> None:
    """A page of another match left out (page 2) was listed after the match's last turn, so j went back."""
    report = {
        "games": [{"number": 1, "turns": [_turn(1, 7), _turn(1, 8)]},
                  {"number": 2, "turns": [_turn(3, 1), _turn(3, 1), _turn(3, 2)]}],
        "skipped": [{"page": 2, "board": 2, "flagged": True, "reasons": ["x"]},
                    {"page": 2, "board": 1, "flagged": True, "reasons": ["x"]},
                    {"page": 4, "board": 1, "flagged": True, "reasons": ["x"]}],
    }
    listed = turns_by_board(report)
    assert [key for key, _ in listed] == [(1, 7, 0), (1, 8, 0), (2, 1, 0), (2, 2, 0), (3, 1, 0), (3, 1, 1),
                                          (3, 2, 0), (4, 1, 0)]
    assert [turn["action"] for _, turn in listed] == ["move", "move", "blank", "blank", "move", "move", "move",
                                                      "blank"]
    assert [turn["game"] for _, turn in listed] == [1, 1, None, None, 2, 2, 2, None]
