"""Solving with corrections as `digitise scan --corrections` does: the same match as the review page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from digitise.errors import InputError
from digitise.game.position import Side
from digitise.notation.mat import format_mat
from digitise.notation.readings import load_readings
from digitise.solve import solve
from digitise.solve.corrections import corrections_path, load_corrections, save_corrections
from digitise.solve.reasons import Reason
from digitise.solve.report_types import Report
from digitise.solve.reviewed import corrected_reading, solve_with_corrections, turn_at
from tests import reports


def test_scan_with_the_corrections_file_gives_the_corrected_match(solved_sample: tuple[Path, str]) -> None:
    report, truth = solved_sample
    readings = load_readings(report.parent / "match.readings.json")
    path = save_corrections(corrections_path(report), {(1, 3): "51: 22/21 8/3"}, report.name)
    corrections = load_corrections(path)
    # A correction is a hard constraint: the solver honours it even though the
    # misread digits never suggest 51.
    alone = solve(readings, players=("Alice", "Bob"), length=5, corrections=corrections)
    turn = turn_at(alone.solved, 1, 3)
    assert turn is not None and turn.turn is not None and turn.turn.dice == (5, 1)
    assert Reason.CORRECTION_MISFIT not in {flag.reason for flag in turn.reasons}
    result = solve_with_corrections(readings, corrections, players=("Alice", "Bob"), length=5, path=path)
    assert format_mat(result.match) == truth
    assert result.report["summary"]["flagged"] == 0


def test_corrections_for_other_pages_are_a_clear_error(solved_sample: tuple[Path, str]) -> None:
    report, _ = solved_sample
    readings = load_readings(report.parent / "match.readings.json")
    with pytest.raises(InputError, match=r"^c\.json: corrections that no longer fit this scan: page 7 board 1"):
        solve_with_corrections(readings, {(7, 1): "double"}, path="c.json")


def test_corrected_reading_is_the_marks_of_the_play(solved_sample: tuple[Path, str]) -> None:
    report, _ = solved_sample
    readings = load_readings(report.parent / "match.readings.json")
    board = readings.pages[0].boards[2]
    turn = turn_at(Report.from_json(json.loads(report.read_text())), 1, 3)
    assert turn is not None and turn.player == "bottom"
    fixed = corrected_reading(board, "51: 22/21 8/3", turn)
    assert fixed is not None and fixed.box == board.box
    assert {k: [(c.digits, c.probability) for c in v] for k, v in fixed.cells.items()} == {
        "B4": [((1,), 1.0)], "W3": [((5,), 1.0)]}
    assert corrected_reading(board, "top 51: 22/21 8/3", turn) is None  # another player's turn: unsure
    blank = corrected_reading(board, "blank", None)
    assert blank is not None and not blank.cells and blank.arrow == 0.0
    double = corrected_reading(board, "double", None)
    assert double is not None and double.arrow == 1.0 and not double.cells


def test_a_corrections_hit_marks_choose_between_plays_that_end_alike() -> None:
    """6/5* 5/3 and 6/4* 4/3 move my checkers alike; the * says which, in the cells and for the solver."""
    from digitise.game.rules import Roll, legal_plays
    from digitise.notation.encode import turn_cells
    from digitise.solve import parse_correction
    from digitise.solve.reviewed import corrected_cells
    from tests.game.boards import position

    # Blots of the opponent on my 5 and 4 points (their 20 and 21).
    before = position({6: 5, 8: 3, 13: 5, 24: 2}, {20: 1, 21: 1, 6: 5, 8: 3, 13: 3, 24: 2})
    turn = reports.turn(1, 1, "bottom", "move", (2, 1), "6/5* 5/3", before=before.position_id())
    plays = {str(p): p for p in legal_plays(before, Roll(2, 1))}
    for text, play in (("21: 6/5* 5/3", "6/5* 5/3"), ("21: 6/4* 4/3", "6/4* 4/3")):
        assert corrected_cells(text, turn) == turn_cells(Side.BOTTOM, Roll(2, 1), plays[play])
    assert corrected_cells("21: 6/5* 5/3", turn) != corrected_cells("21: 6/4* 4/3", turn)
    assert parse_correction("21: 6/5* 5/3").hits == frozenset({5})
    # No * written: the marks decide, as before.
    assert parse_correction("21: 6/3").hits is None and parse_correction("21:").hits is None
