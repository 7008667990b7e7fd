"""A written cell cut out of the page as the cell reader wants it (upright, 10 px/mm, its own strokes only), and the
neighbouring squares its writing runs over."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from digitise.notation.readings import POINT_NEIGHBOURS
from digitise.notation.template import BoardGeometry
from digitise.vision.grid import board_lines, mirrored
from digitise.vision.images import darkest_channel
from digitise.vision.ink import CELL_MARGIN_MM, CELL_PX_PER_MM, extract_ink

#: Margin (mm) of the larger cut used to decide which strokes are a cell's own.
CUT_MARGIN_MM = 4.0


def cell_lines(board: BoardGeometry, name: str, margin_mm: float = CELL_MARGIN_MM) -> tuple[list[Any], list[Any]]:
    """Printed line positions in the cell image of ``name``: rows and columns in px (segments for stubs)."""
    rect = board.cells[name]
    p, m = CELL_PX_PER_MM, margin_mm
    height = (rect.h + 2 * m) * p
    rows: list[Any] = [m * p, (m + rect.h) * p]
    cols: list[Any] = [m * p, (m + rect.w) * p]
    if name == "centre":
        # The point columns' lines end at the centre strip: only stubs in the margins above and below.
        lines = board_lines(board)
        for x in lines.xs[2:-2]:
            pos = (x - rect.x + m) * p
            cols.append((pos, 0.0, m * p + 2))
            cols.append((pos, (m + rect.h) * p - 2, height))
    return rows, cols


def cut_cell(grey: np.ndarray, quad: np.ndarray, rect_w: float, rect_h: float, margin_mm: float = CELL_MARGIN_MM) -> np.ndarray:
    """The cell with corners ``quad`` (image px) as an upright image at 10 px/mm with a margin."""
    p, m = CELL_PX_PER_MM, margin_mm
    src = np.array([[0, 0], [rect_w, 0], [rect_w, rect_h], [0, rect_h]], np.float32)
    to_image = cv2.getPerspectiveTransform(src, quad.astype(np.float32))
    local = np.array([[1.0 / p, 0.0, -m], [0.0, 1.0 / p, -m], [0.0, 0.0, 1.0]])
    size = (round((rect_w + 2 * m) * p), round((rect_h + 2 * m) * p))
    return cv2.warpPerspective(grey, to_image @ local, size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                               borderMode=cv2.BORDER_REPLICATE)


def _outer_sides(name: str, mirrored: bool = False) -> tuple[bool, bool, bool, bool]:
    """Which sides of cell ``name`` are the board's outer edge: left, top, right, bottom (of a board printed
    ``mirrored``, the off squares are on the left)."""
    top = name.startswith("B") and name != "centre"
    bottom = name.startswith("W")
    left, right = name in ("Bres", "Wres"), name in ("Boff", "Woff")
    return (right, top, left, bottom) if mirrored else (left, top, right, bottom)


def cell_ink(image: np.ndarray, quad: np.ndarray, board: BoardGeometry, name: str, *, closed: bool = False) -> np.ndarray:
    """The handwriting of one cell of ``image`` (grey or BGR) as the cell reader wants it.

    10 px/mm, 1.5 mm margin, its own strokes only.

    The cell is cut with a wider margin first, so a stroke crossing a line is
    seen whole and goes to the square holding most of it; beyond the board's
    outer edge there is no other square, so strokes there are this one's --
    unless ``closed``: a print that writes point numbers or labels beside its
    squares, whose strokes there are print.
    """
    rect = board.cells[name]
    p, big = CELL_PX_PER_MM, CUT_MARGIN_MM
    # Cut from the page as it is (colour or grey), then keep the darkest channel of the cut only.
    patch = darkest_channel(cut_cell(image, quad, rect.w, rect.h, big))
    rows, cols = cell_lines(board, name, big)
    height, width = patch.shape[:2]
    left, top, right, bottom = (False, False, False, False) if closed else _outer_sides(name, mirrored(board))
    own = (0 if left else round(big * p), 0 if top else round(big * p),
           width if right else round((big + rect.w) * p), height if bottom else round((big + rect.h) * p))
    # The printed locating dots are not handwriting: paper them over before looking for strokes.
    for dx, dy in board.dots:
        cx, cy = (dx - rect.x + big) * p, (dy - rect.y + big) * p
        if -10 <= cx <= width + 10 and -10 <= cy <= height + 10:
            cv2.circle(patch, (round(cx), round(cy)), round(0.65 * p), int(np.max(patch)), -1)
    ink = extract_ink(patch, rows, cols, own=own)
    trim = round((big - CELL_MARGIN_MM) * p)
    return np.ascontiguousarray(ink[trim:height - trim, trim:width - trim])


#: Writing counts as on or over a square's side when this much ink (mm^2) lies beyond the side or
#: within SIDE_INSIDE_MM inside it: a "1" down the side, not the tip of a digit grazing it.
SIDE_INK_MM2 = 0.3
SIDE_INSIDE_MM = 0.3


def sides_crossed(name: str, ink: np.ndarray) -> tuple[str, ...]:
    """The point squares beside point square ``name`` on whose shared side its writing lies (``ink``
    as :func:`cell_ink` gives it: its own strokes only, with the margin).

    The reader gives a stroke to the square that holds most of it; one
    written over the side may have been meant for the square beyond, and the
    solver prices that slip lower where the reader saw the writing run over.
    A point square's left side faces the point numbered one higher.
    """
    if name not in POINT_NEIGHBOURS:
        return ()
    p = CELL_PX_PER_MM
    zone = round((CELL_MARGIN_MM + SIDE_INSIDE_MM) * p)
    bar = SIDE_INK_MM2 * p * p
    row, number = name[0], int(name[1:])
    out = []
    if float(ink[:, :zone].sum()) >= bar and number < 12:
        out.append(f"{row}{number + 1}")
    if float(ink[:, ink.shape[1] - zone:].sum()) >= bar and number > 1:
        out.append(f"{row}{number - 1}")
    return tuple(out)
