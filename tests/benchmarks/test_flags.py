"""How benchmarks/flags.py sorts the flagged turns."""

from __future__ import annotations

from dataclasses import replace

from benchmarks.flags import (
    INSERTED_FOR_MISSING,
    Turn,
    band,
    first_errors_by_kind,
    kind_band,
    reason_kind,
    report_turns,
    tally,
)
from tests import reports
from tests.test_end_to_end import PLACEHOLDER


def _turn(confidence: float, reasons: tuple[str, ...], right: bool, flagged: bool = True) -> Turn:
    return Turn("heavy", "m9000", 1, 1, confidence, flagged, False, reasons, right, "")


def test_a_reason_loses_its_particulars() -> None:
    assert reason_kind("12 later turns rest on this board, and it is not sure enough for that") \
        == "later turns rest on it"
    assert reason_kind("illegal move recorded: the marks show 44") == "illegal move recorded"
    assert reason_kind("low confidence") == "low confidence"


def test_bands_are_cut_at_0_9_and_at_the_review_bar() -> None:
    assert band(0.5, 0.98) == "< 0.9"
    assert band(0.95, 0.98) == "0.9 - 0.98"
    assert band(0.99, 0.98) == ">= 0.98"
    # A bar below 0.9 leaves no middle band.
    assert band(0.85, 0.85) == ">= 0.85"
    assert band(0.8, 0.85) == "< 0.85"


def test_flagged_turns_are_counted_by_band_and_reasons_with_the_wrong_ones() -> None:
    turns = [
        _turn(0.95, ("low confidence",), right=True),
        _turn(0.96, ("low confidence",), right=False),
        _turn(0.5, ("unreadable centre", "low confidence"), right=False),
        _turn(0.999, ("3 later turns rest on this board, and it is not sure enough for that",), right=True),
        _turn(0.5, (), right=False, flagged=False),  # not flagged: not counted
    ]
    got = tally(turns, 0.98)
    assert got == {
        ("heavy", "< 0.9", "low confidence + unreadable centre"): (1, 1),
        ("heavy", "0.9 - 0.98", "low confidence"): (2, 1),
        ("heavy", ">= 0.98", "later turns rest on it"): (1, 0),
    }
    assert list(got) == [("heavy", "< 0.9", "low confidence + unreadable centre"),
                         ("heavy", "0.9 - 0.98", "low confidence"),
                         ("heavy", ">= 0.98", "later turns rest on it")]


def test_a_dance_no_board_records_is_counted_without_a_board() -> None:
    """The .mat's dances that no board records (a closed-out player's, one filled in for a missing board) are
    placeholders in the aligned report, without page or confidence: counted, not a KeyError."""
    report = reports.report([reports.game(1, [
        reports.turn(3, 2, "bottom", "move", (3, 1), "8/5 6/5", confidence=0.97, flagged=True,
                     reasons=["low confidence"]),
        replace(PLACEHOLDER, flagged=True),
        PLACEHOLDER,
    ])])
    turns = report_turns("medium", "m9137", [(0, 0, True), (0, 1, False), (0, 2, True)], report)
    assert [(t.page, t.board, t.flagged, t.reasons, t.right) for t in turns] == [
        (3, 2, True, ("low confidence",), True),
        (None, None, True, (INSERTED_FOR_MISSING,), False),
        (None, None, False, (), True),
    ]
    assert tally(turns, 0.98) == {("medium", "0.9 - 0.98", "low confidence"): (1, 0),
                                  ("medium", ">= 0.98", INSERTED_FOR_MISSING): (1, 1)}


def test_first_errors_are_counted_by_kind_and_band_leaving_out_turns_after_an_error() -> None:
    def turn(game: int, confidence: float, move: str, right: bool, action: str = "move",
             reasons: tuple[str, ...] = ()) -> Turn:
        return Turn("heavy", "m9000", 1, 1, confidence, False, False, reasons, right, move, game, action)

    turns = [
        turn(0, 0.96, "8/5 6/5", right=False),     # a first error: a move at 0.95-0.98
        turn(0, 0.999, "13/7 13/9", right=False),  # after it: its position may be wrong, left out
        turn(0, 0.999, "6/0 5/0", right=True),     # still after a wrong turn: left out
        turn(0, 0.97, "", right=True),             # the position before was right again: a dance
        turn(1, 1.0, "", right=True, action="double"),  # a new game starts right
        turn(1, 0.5, "24/18", right=False, reasons=("low confidence", "no legal play explains the marks")),
        turn(2, 0.93, "3/0 2/1", right=False),     # and another: a bear-off's first error
    ]
    assert first_errors_by_kind(turns) == {
        ("heavy", "bear-off", "0.9 - 0.95"): (1, 1),
        ("heavy", "dance", "0.95 - 0.98"): (1, 0),
        ("heavy", "double", ">= 0.995"): (1, 0),
        ("heavy", "move", "0.95 - 0.98"): (1, 1),
    }
    assert [kind_band(c) for c in (0.5, 0.9, 0.97, 0.99, 0.995)] == \
        ["< 0.9", "0.9 - 0.95", "0.95 - 0.98", "0.98 - 0.995", ">= 0.995"]
