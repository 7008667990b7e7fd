"""Training cells for the whole-cell reader: real pages, cut by the real code, labelled from the truth."""

from __future__ import annotations

import numpy as np
import pytest

from digitise.training.celldata import SEED_LIMIT, generate, label, match_cells
from digitise.vision.cellnet import CENTRE_SHAPE, POINT_SHAPE


def test_labels_come_from_the_truth_board() -> None:
    board = {"cells": {"B7": [6, 6], "centre": [3, 5]}, "crossed": True, "arrow": False, "letters": {}}
    counts, marks = label(board, "B7")
    assert counts.tolist() == [0, 0, 0, 0, 0, 2] and marks.tolist() == [0, 0, 0]
    counts, marks = label(board, "centre")
    assert counts.tolist() == [0, 0, 1, 0, 1, 0] and marks.tolist() == [0, 1, 0]
    # Cut but empty in the truth: empty (residue, a neighbour's stroke).
    counts, marks = label(board, "W3")
    assert counts.sum() == 0 and marks.sum() == 0
    names = {"cells": {}, "crossed": False, "arrow": False, "letters": {"B1": "Ann"}}
    assert label(names, "B2")[1].tolist() == [1, 0, 0]
    arrow = {"cells": {}, "crossed": False, "arrow": True, "letters": {}}
    assert label(arrow, "centre")[1].tolist() == [0, 0, 1]


def test_benchmark_seeds_are_refused() -> None:
    with pytest.raises(ValueError, match="below 9000"):
        match_cells((SEED_LIMIT, "light", False, "fit", "centre"))
    with pytest.raises(ValueError, match="unknown board selection"):
        match_cells((1003, "light", False, "fit", "corners"))


def test_cells_of_a_rendered_match_are_labelled_like_its_truth() -> None:
    from tests.conftest import DIGITS_PNG

    if not DIGITS_PNG.is_file():
        pytest.skip(f"../shared/data/digits.png not found at {DIGITS_PNG}")
    # Only the boards with a written centre: one or two pages, a second or two.
    out = generate([1003], "fit", only="centre", glyphs=DIGITS_PNG, jobs=1)
    point, centre = out["point"], out["centre"]
    assert point.inputs.shape[1:] == POINT_SHAPE and centre.inputs.shape[1:] == CENTRE_SHAPE
    assert len(centre) >= 4
    # Every centre of these boards holds unplayed dice or an arrow; crossed dice are crossed.
    assert ((centre.counts.sum(axis=1) > 0) | (centre.marks[:, 2] == 1)).mean() > 0.9
    assert (centre.marks[centre.counts.sum(axis=1) > 0, 1] == 1).all()
    # Point squares hold one to four digits, or nothing when only residue was cut.
    assert point.counts.sum(axis=1).max() <= 4 and (point.counts.sum(axis=1) >= 1).mean() > 0.8
    assert centre.inputs.dtype == np.uint8 and centre.inputs.max() == 255
    # Deterministic: the same seed gives the same cells, byte for byte, in worker processes too.
    again = generate([1003], "fit", only="centre", glyphs=DIGITS_PNG, jobs=2)
    assert again["centre"].inputs.tobytes() == centre.inputs.tobytes()


def test_many_digit_boards_give_the_point_model_squares_of_two_digits_or_more() -> None:
    from tests.conftest import DIGITS_PNG

    if not DIGITS_PNG.is_file():
        pytest.skip(f"../shared/data/digits.png not found at {DIGITS_PNG}")
    point = generate([5001], "fit", only="multi", glyphs=DIGITS_PNG, jobs=1)["point"]
    whole = generate([5001], "fit", glyphs=DIGITS_PNG, jobs=1)["point"]
    written = point.counts.sum(axis=1)
    # Every board rendered holds such a square, so they are far commoner than in a whole match.
    assert (written >= 2).sum() >= 10
    assert (written >= 2).mean() > 2 * (whole.counts.sum(axis=1) >= 2).mean()
    assert len(point) < len(whole)
