"""Separating handwriting from printed lines, dots, specks, shadows and show-through."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from digitise.vision.ink import extract_ink, ink_amount

PAPER = 236
LINE = 130  # the note's mid-grey lines
PEN = 45


def _cell() -> np.ndarray:
    """A 9.75 x 12 mm cell at 10 px/mm with its 1.5 mm margin and printed edges."""
    patch = np.full((150, 128), PAPER, np.uint8)
    for row in (15, 135):
        patch[row - 1:row + 1, :] = LINE
    for col in (15, 112):
        patch[:, col - 1:col + 1] = LINE
    return patch


ROWS = [15.0, 135.0]
COLS = [15.0, 112.0]


def test_printed_lines_go_and_a_crossing_stroke_stays_whole() -> None:
    patch = _cell()
    cv2.line(patch, (4, 70), (60, 70), PEN, 5)
    ink = extract_ink(patch, ROWS, COLS)
    assert ink.dtype == np.float32 and ink.shape == patch.shape
    assert 0.0 <= float(ink.min()) and float(ink.max()) <= 1.0
    # The lines are gone away from the stroke ...
    assert float(ink[40, 14:17].max()) < 0.1
    assert float(ink[14:17, 60].max()) < 0.1
    # ... the stroke is there on both sides of the line and across it.
    assert float(ink[70, 8]) > 0.8 and float(ink[70, 40]) > 0.8
    assert float(ink[70, 14:17].min()) > 0.6


def test_a_dark_stroke_along_a_line_is_kept() -> None:
    patch = _cell()
    cv2.line(patch, (16, 50), (16, 110), PEN, 4)
    ink = extract_ink(patch, ROWS, COLS)
    assert float(ink[80, 14:19].max()) > 0.6
    assert ink_amount(ink) > 1.5


def test_a_one_on_a_side_that_ends_with_the_square_is_kept() -> None:
    # A point square's side runs from the board's edge to the centre strip only: a "1" written on
    # it covers most of what is there of the line (m9244 of the benchmark lost such a "1").
    patch = np.full((150, 128), PAPER, np.uint8)
    for row in (15, 135):
        patch[row - 1:row + 1, :] = LINE
    patch[15:136, 14:16] = LINE
    patch[:, 111:113] = LINE
    cv2.line(patch, (15, 40), (15, 125), PEN, 6)
    ink = extract_ink(patch, ROWS, COLS)
    assert float(ink[80, 12:19].max()) > 0.6
    assert ink_amount(ink) > 2.0
    # The rest of that side is still printed line, and still taken away.
    assert float(ink[25, 12:19].max()) < 0.1


def test_show_through_specks_and_shadow_are_not_ink() -> None:
    patch = _cell().astype(np.float32)
    # A shadow darkening the right half by a fifth, its edge soft over 3 mm (as shadows are).
    patch *= np.interp(np.arange(patch.shape[1]), [50, 80], [1.0, 0.8]).astype(np.float32)[None, :]
    # Mirrored writing from the other side: faint and blurred.
    ghost = np.zeros(patch.shape, np.uint8)
    cv2.putText(ghost, "5", (40, 110), cv2.FONT_HERSHEY_SIMPLEX, 2.4, 255, 6)
    patch -= cv2.GaussianBlur(ghost.astype(np.float32) / 255.0, (9, 9), 3) * 12
    patch = np.clip(patch, 0, 255).astype(np.uint8)
    # Toner specks.
    for x, y in ((30, 30), (90, 100), (70, 45)):
        cv2.circle(patch, (x, y), 2, 20, -1)
    ink = extract_ink(patch, ROWS, COLS)
    assert ink_amount(ink) < 0.05


def test_strokes_of_a_neighbouring_cell_are_left_to_it() -> None:
    patch = _cell()
    # Mostly in the margin beyond the right edge (the neighbour's digit spilling in).
    cv2.line(patch, (108, 60), (127, 60), PEN, 5)
    # This cell's own digit.
    cv2.line(patch, (50, 40), (50, 100), PEN, 5)
    own = (15, 15, 112, 135)
    ink = extract_ink(patch, ROWS, COLS, own=own)
    assert float(ink[60, 120]) == 0.0
    assert float(ink[70, 50]) > 0.8
    # Without an owner box every stroke stays.
    assert float(extract_ink(patch, ROWS, COLS)[60, 120]) > 0.8


@pytest.mark.parametrize(("inside", "kept"), [(0.75, True), (0.5, True), (0.35, False), (0.2, False)])
def test_a_stroke_across_a_side_goes_to_the_square_holding_most_of_it(inside: float, kept: bool) -> None:
    """A "1" written across the right side: this square's when most of it is inside, both squares'
    when it is split about evenly (the solver dismisses the extra reading), the neighbour's otherwise."""
    patch = _cell()
    width = 10
    x0 = round(112 - inside * width)
    cv2.rectangle(patch, (x0, 45), (x0 + width - 1, 105), PEN, -1)
    ink = extract_ink(patch, ROWS, COLS, own=(15, 15, 112, 135))
    assert (ink_amount(ink) > 2.0) is kept


def test_a_faint_pencil_digit_is_found() -> None:
    patch = _cell()
    cv2.putText(patch, "3", (35, 110), cv2.FONT_HERSHEY_SIMPLEX, 2.6, 205, 3)
    ink = extract_ink(patch, ROWS, COLS)
    assert ink_amount(ink) > 2.0


def test_same_input_same_ink() -> None:
    patch = _cell()
    cv2.putText(patch, "6", (35, 110), cv2.FONT_HERSHEY_SIMPLEX, 2.6, PEN, 5)
    assert np.array_equal(extract_ink(patch, ROWS, COLS), extract_ink(patch.copy(), ROWS, COLS))


def test_a_blot_covers_far_more_of_a_cell_than_digits() -> None:
    from digitise.vision.ink import solid_share

    drawn = np.zeros((90, 80), np.uint8)
    cv2.putText(drawn, "53", (12, 60), cv2.FONT_HERSHEY_SIMPLEX, 1.2, 255, 3)
    cell = drawn.astype(np.float32) / 255.0
    written = solid_share(cell)
    cell[10:80, 10:70] = 1.0
    assert written < 0.14
    assert solid_share(cell) > 0.5
