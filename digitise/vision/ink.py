"""Separating handwriting from what is printed, from noise and from show-through.

Works on one cell image at 10 px per mm, with the cell's printed lines at
known rows and columns (the geometry says where, the refinement made it
true to a fraction of a millimetre). Three things are taken away:

* the printed lines: inside a narrow band around each known line, whatever
  is dark along the line's direction for longer than a stroke is wide is the
  line; it is subtracted, and the strokes that crossed it are bridged again
  (a closing across the band), so a digit spilling over a line stays whole;
* paper tint, uneven light and show-through: darkness is measured against
  the cell's own paper level and a faint level (show-through, pencil ghosts,
  grain) is cut off;
* specks: connected blobs smaller than a pen dot.

The result is float32 in [0, 1], 1 = ink: the input of
:mod:`digitise.vision.cells`.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from digitise.vision.images import histogram

#: Resolution of cell images.
CELL_PX_PER_MM = 10.0
#: Margin around a cell in its image, mm.
CELL_MARGIN_MM = 1.5
#: Half-width of the band around a printed line where line removal acts, mm.
LINE_BAND_MM = 0.8
#: A dark run along a line's direction longer than this (mm) belongs to the line.
LINE_RUN_MM = 1.2
#: Which quantile of a printed line's darkness along its length is taken as the line's own level
#: (what is darker than 1.15 times that is a pen stroke on the line).
LINE_LEVEL_QUANTILE = 0.1
#: Darkness below this is paper, show-through or grain; above HIGH it is full ink.
FAINT = 0.1
HIGH = 0.4
#: The lowest bar for a faint writer.
FAINTEST = 0.06
#: A stroke belongs to a cell when at least this share of its ink lies inside the cell: a digit
#: split about evenly by a line goes to both squares, one mostly on one side to that square only.
#: (Kept strokes along a line: a lower share sent a "1" written a little over a side to both squares.)
SHARED_STROKE = 0.45
#: Blobs smaller than this (mm^2) are specks, not handwriting.
SPECK_MM2 = 0.12
#: Compact blobs no wider or taller than DOT_MM with less ink than DOT_MM2 are dots, not strokes.
DOT_MM = 0.9
DOT_MM2 = 0.5


def paper_level(grey: np.ndarray) -> float:
    """The paper's grey level in ``grey``: a bright percentile (most of a cell is paper)."""
    counts = np.cumsum(histogram(grey))
    return max(float(np.searchsorted(counts, 0.85 * max(int(counts[-1]) - 1, 0), side="right")), 1.0)


def paper_background(grey: np.ndarray, px_per_mm: float = CELL_PX_PER_MM) -> np.ndarray:
    """The paper's grey level at every pixel (float32): a shadow or a light gradient is paper, not ink.

    A grey closing about 2 mm wide (wider than any pen stroke or printed
    line), smoothed, never below half the cell's overall paper level.
    """
    size = int(2.2 * px_per_mm) | 1
    # Smooth a little first: the brightest raw pixel of a noisy scan is noise, not paper.
    calm = cv2.blur(grey, (3, 3))
    # A closing fills every dark mark narrower than the window with the paper around it and
    # keeps the edge of a shadow where it is (a plain maximum would smear it into "ink").
    closed = cv2.morphologyEx(calm, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (size, size)))
    smooth = closed.astype(np.float32)
    return np.maximum(smooth, np.float32(0.5 * paper_level(grey)), dtype=np.float32) + np.float32(1.0)


LinePosition = float | tuple[float, float, float]


def _low_quantile(values: np.ndarray, q: float) -> float:
    """The ``q`` quantile (lower value, no interpolation) of a 1-d float32 array, by one partition
    (np.quantile sorts and interpolates: several times slower on the many short lines of a page)."""
    k = min(int(q * values.size), values.size - 1)
    return float(np.partition(values, k)[k])


def _remove_lines(dark: np.ndarray, positions: Sequence[LinePosition], horizontal: bool, px_per_mm: float) -> None:
    """Subtract the printed lines at ``positions`` (rows when ``horizontal``) from ``dark`` in place.

    A position is a pixel offset across the line, or ``(offset, start, stop)``
    for a line segment (a stub) that only runs from ``start`` to ``stop``.
    """
    band = round(LINE_BAND_MM * px_per_mm)
    run = max(3, round(LINE_RUN_MM * px_per_mm))
    along = np.ones((1, run) if horizontal else (run, 1), np.uint8)
    across = np.ones((2 * band + 1, 1) if horizontal else (1, 2 * band + 1), np.uint8)
    limit = dark.shape[0] if horizontal else dark.shape[1]
    length = dark.shape[1] if horizontal else dark.shape[0]
    for item in positions:
        if isinstance(item, tuple):
            pos, start, stop = (float(v) for v in item)
            s0, s1 = max(int(start), 0), min(int(np.ceil(stop)), length)
        else:
            pos, s0, s1 = float(item), 0, length
        lo, hi = round(pos) - band, round(pos) + band + 1
        if hi <= 0 or lo >= limit or s1 <= s0:
            continue
        # Pad so the closing across the band sees the stroke on both sides of the line.
        plo, phi = max(lo - band, 0), min(hi + band, limit)
        view = dark[plo:phi, :] if horizontal else dark[:, plo:phi]
        strip = np.ascontiguousarray(view)
        opened = cv2.morphologyEx(strip, cv2.MORPH_OPEN, along)
        # The line is what the opening keeps inside the band (and the stub's stretch), nothing outside.
        line = np.zeros_like(strip)
        a, b = max(lo, 0) - plo, min(hi, limit) - plo
        core = (slice(a, b), slice(s0, s1)) if horizontal else (slice(s0, s1), slice(a, b))
        line[core] = opened[core]
        # A printed line has one darkness along its length; a dark pen stroke running along the
        # line (a "1" on the edge) is darker: cap the line at its typical level so the stroke stays.
        # The level is a low quantile, not the median: a point square's side ends at the centre strip
        # and the board's edge, and a "1" written on it can cover more than half of what is there.
        along_line = line.max(axis=0 if horizontal else 1)
        present = along_line[along_line > FAINT]
        if present.size:
            level = _low_quantile(present, LINE_LEVEL_QUANTILE)
            np.minimum(line, np.float32(level * 1.15), out=line)
        residual = strip - line
        np.clip(residual, 0.0, 1.0, out=residual)
        bridged = cv2.morphologyEx(residual, cv2.MORPH_CLOSE, across)
        np.maximum(residual, bridged, out=residual, where=line > FAINT)
        if horizontal:
            dark[plo:phi, :] = residual
        else:
            dark[:, plo:phi] = residual


def extract_ink(
    grey: np.ndarray,
    rows: Sequence[LinePosition] = (),
    cols: Sequence[LinePosition] = (),
    *,
    px_per_mm: float = CELL_PX_PER_MM,
    paper: float | None = None,
    own: tuple[int, int, int, int] | None = None,
) -> np.ndarray:
    """Handwriting of a cell image ``grey`` (uint8), float32 0..1 with 1 = ink.

    ``rows`` / ``cols`` are the pixel positions of printed horizontal and
    vertical lines in the image (the cell's own edges), or ``(offset, start,
    stop)`` for a stub of a neighbour's line inside the margin. ``paper`` is
    the paper's grey level when the caller knows it better than the cell
    does (an almost full cell). ``own`` is the cell's box inside the image
    (x0, y0, x1, y1 px): strokes with most of their ink outside it belong
    to a neighbour and are dropped, so a digit spilling over a line counts
    in its own square only.
    """
    if paper is not None:
        background: np.ndarray | np.float32 = np.float32(max(paper, 1.0))
    else:
        background = paper_background(grey, px_per_mm)
    dark = grey.astype(np.float32)
    np.divide(dark, background, out=dark)
    np.subtract(np.float32(1.0), dark, out=dark)
    np.clip(dark, 0.0, 1.0, out=dark)
    _remove_lines(dark, rows, True, px_per_mm)
    _remove_lines(dark, cols, False, px_per_mm)
    # A faint writer (a light pencil, a thin pen) gets a lower bar than a dark one, down to what
    # paper grain and show-through reach.
    # Quantiles from a 256-bin histogram: a sort per cell would cost more than the rest together.
    counts = np.cumsum(histogram((dark * 255.0).astype(np.uint8)))
    total = max(int(counts[-1]) - 1, 0)
    strongest = float(np.searchsorted(counts, 0.997 * total, side="right")) / 255.0
    middle = float(np.searchsorted(counts, 0.5 * total, side="right")) / 255.0
    quartile = float(np.searchsorted(counts, 0.75 * total, side="right")) / 255.0
    # The paper's own grain: no bar below a few times its spread (upper quartile ~ 0.67 sigma).
    grain = max(quartile - middle, 0.0) / 0.6745
    faint = min(FAINT, max(FAINTEST, 0.3 * strongest, middle + 4.0 * grain))
    high = max(faint + 0.1, min(HIGH, 0.8 * strongest))
    ink = np.clip((dark - faint) / (high - faint), 0.0, 1.0)
    return _keep_strokes(ink, px_per_mm, own)


def components(binary: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """The 8-connected components of a 0/1 uint8 image: count, labels and stats, as
    ``cv2.connectedComponentsWithStats`` gives them.

    By Grana's block-based algorithm: on the 809 cells and centres of four
    matches' pages, the same labels and stats as OpenCV's default (Spaghetti)
    in a third of the time.
    """
    count, labels, stats, _ = cv2.connectedComponentsWithStatsWithAlgorithm(binary, 8, cv2.CV_32S, cv2.CCL_GRANA)
    return count, labels, stats


_DILATE_3X3 = np.ones((3, 3), np.uint8)


def _keep_strokes(ink: np.ndarray, px_per_mm: float, own: tuple[int, int, int, int] | None) -> np.ndarray:
    """Drop specks, and strokes that belong to another cell (most of their ink outside ``own``).

    Works on ``ink`` in place and returns it.
    """
    binary = (ink > 0.12).view(np.uint8)  # 0/1, no copy
    count, labels, stats = components(binary)
    if count <= 1:
        return np.zeros_like(ink)
    # Sums over the stroke pixels only (a tenth of the cell or less): bincount's cost is in the
    # pixels it is given, and the background's sum (label 0) is never used.
    on = np.flatnonzero(binary)
    mass = np.bincount(labels.ravel()[on], weights=ink.ravel()[on], minlength=count)
    area_px = px_per_mm * px_per_mm
    # Specks: tiny blobs, or small compact dots (toner speckle, a pen rested on the paper);
    # pieces of a broken stroke are elongated and stay.
    side = np.maximum(stats[:, cv2.CC_STAT_WIDTH], stats[:, cv2.CC_STAT_HEIGHT]) / px_per_mm
    speck = (mass < SPECK_MM2 * area_px) | ((side <= DOT_MM) & (mass < DOT_MM2 * area_px))
    keep = ~speck
    if own is not None:
        x0, y0, x1, y1 = own
        inner = labels[y0:y1, x0:x1].ravel()
        on = np.flatnonzero(inner)
        inside = np.bincount(inner[on], weights=ink[y0:y1, x0:x1].ravel()[on], minlength=count)
        # A stroke is this cell's when much of its ink lies inside the cell's lines. A digit
        # split evenly by a line goes to both squares: a doubtful extra reading is the solver's to
        # dismiss, a digit lost from its square is not recoverable.
        keep &= inside >= SHARED_STROKE * mass
    keep[0] = False
    # Usually every blob stays: the mask is then the binary image itself.
    mask = binary if bool(keep[1:].all()) else keep.astype(np.uint8)[labels]
    # The faint rim of a kept stroke stays; faint noise elsewhere goes.
    mask = cv2.dilate(mask, _DILATE_3X3)
    np.copyto(ink, np.float32(0.0), where=mask == 0)
    return ink


def ink_amount(ink: np.ndarray, px_per_mm: float = CELL_PX_PER_MM) -> float:
    """How much ink an ink image holds, in mm^2 of full ink."""
    return float(ink.sum()) / (px_per_mm * px_per_mm)


#: Ink at least this strong is solid (a stroke's core, a blot), for :func:`solid_share`.
SOLID = 0.5


def solid_share(ink: np.ndarray) -> float:
    """The share of an ink image that is solid ink: a tenth or so for digits, a third or more under a blot.

    A blot or a scribble wider than the paper estimate's window reads as its
    outline only (its inside is taken for dark paper), but even that outline
    covers more of a cell than any digits do.
    """
    return float(np.count_nonzero(ink >= SOLID)) / max(ink.size, 1)
