"""How benchmarks/flags.py sorts the flagged turns."""

from __future__ import annotations

from benchmarks.flags import INSERTED_FOR_MISSING, Turn, band, reason_kind, report_turns, tally


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
    report = {"games": [{"turns": [
        {"page": 3, "board": 2, "confidence": 0.97, "flagged": True, "follows": None,
         "reasons": ["low confidence"], "move": "8/5 6/5"},
        {"flagged": True, "inserted": True},
        {"flagged": False, "inserted": True},
    ]}]}
    turns = report_turns("medium", "m9137", [(0, 0, True), (0, 1, False), (0, 2, True)], report)
    assert [(t.page, t.board, t.flagged, t.reasons, t.right) for t in turns] == [
        (3, 2, True, ("low confidence",), True),
        (None, None, True, (INSERTED_FOR_MISSING,), False),
        (None, None, False, (), True),
    ]
    assert tally(turns, 0.98) == {("medium", "0.9 - 0.98", "low confidence"): (1, 0),
                                  ("medium", ">= 0.98", INSERTED_FOR_MISSING): (1, 1)}
