"""Which cells of a board hold writing: the dark area inside each, measured on the image its lines were measured on,
so that only those cells are cut out and read."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from digitise.notation.template import BoardGeometry
from digitise.vision.grid import REFINE_PX_PER_MM, BoardFit, cell_slot
from digitise.vision.ink import DOT_MM2, components

#: A cell whose interior holds less dark than this (mm^2, on the working copy) is empty. Low: a
#: faint digit missed here is lost for good, an empty cell let through costs one cut (~2 ms).
PRESENCE_MM2 = 0.075
#: ... plus this much per mm^2 of a cell larger than a point square (the centre strip).
PRESENCE_PER_MM2 = 0.0003
#: Darkness that counts towards presence (thin light strokes fade on the reduced copy).
PRESENCE_DARK = 0.14
#: Blobs smaller than this (px at REFINE_PX_PER_MM, so 0.24 mm^2) do not count towards presence.
PRESENCE_MIN_BLOB = 6
#: Compact blobs no wider or taller than this (mm, blur included) with less dark than ink's DOT_MM2 are specks.
PRESENCE_DOT_MM = 1.3
#: Pen-dark ink: at least this, and at least PEN_OVER_LINE times the board's printed lines, above
#: the paper. Measured right up to a cell's lines (PEN_INSET_MM), so that a "1" written on a
#: square's side, which the inset of the presence box hides, still makes the square count as written.
PEN_DARK = 0.35
PEN_OVER_LINE = 2.5
PEN_INSET_MM = 0.2


def presence_bar(cell: Any) -> float:
    """The dark area (mm^2) a cell must hold to count as written: specks and dust scale with its area."""
    return float(PRESENCE_MM2 + PRESENCE_PER_MM2 * max(0.0, cell.w * cell.h - 150.0))


def dark_area_by_cell(fit: BoardFit, board: BoardGeometry, specks: bool = False) -> dict[str, float]:
    """Dark area (mm^2) inside each cell of a board, measured on the image its lines were measured on.

    Box sums from one integral image give every cell at once. Dust (a
    pixel or two here) does not count, but looking for it costs more than
    the rest: it is only looked for in the cells whose sum passes
    :func:`presence_bar` (removing dust can only lower a sum). With
    ``specks`` (a grey page, as photocopies are), a square holding nothing
    but one small compact dot is empty: toner speckle would otherwise send
    a tenth of a photocopy's empty squares to be cut out and looked at.
    A colour page keeps such a dot: there it may be the remains of a faint digit.
    """
    s = REFINE_PX_PER_MM
    dark = fit.measure_image
    grid = fit.measure_crossings
    assert dark is not None and grid is not None
    # Darker than the paper around it (a shadow across the board is paper, not ink).
    size = int(2.2 * s) | 1
    around = cv2.blur(cv2.erode(cv2.blur(dark, (3, 3)), np.ones((size, size), np.uint8)), (size, size))
    values = np.subtract(dark, around, out=around)
    np.copyto(values, np.float32(0.0), where=~(values >= PRESENCE_DARK))
    height, width = dark.shape
    names = list(board.cells)
    slots = np.array([cell_slot(n, fit.mirrored) for n in names])
    sums, (x0, x1, y0, y1) = _box_sums(values, grid, slots, 0.9 * s, s, inner=True)
    on_lines = _pen_on_lines(values, grid, slots, s)
    pad = 3  # blobs are measured whole a little beyond the box (a stroke crossing its edge)
    for k, name in enumerate(names):
        if sums[k] < presence_bar(board.cells[name]):
            sums[k] = max(sums[k], on_lines[k])
            continue
        a0, a1 = max(y0[k] - pad, 0), min(y1[k] + pad, height)
        b0, b1 = max(x0[k] - pad, 0), min(x1[k] + pad, width)
        region = values[a0:a1, b0:b1]
        marked = (region > 0).view(np.uint8)
        _, labels, stats = components(marked)
        # Summed over the marked pixels only: the background's sum (label 0) is never used.
        on = np.flatnonzero(marked)
        mass = np.bincount(labels.ravel()[on], weights=region.ravel()[on], minlength=len(stats)) / (s * s)
        side = np.maximum(stats[:, cv2.CC_STAT_WIDTH], stats[:, cv2.CC_STAT_HEIGHT]) / s
        inner = (slice(y0[k] - a0, y1[k] - a0), slice(x0[k] - b0, x1[k] - b0))
        big = stats[:, cv2.CC_STAT_AREA] >= PRESENCE_MIN_BLOB
        big[0] = False
        if specks:
            # A photocopy's toner speck: one small compact dot alone in the square. (Faint writing
            # also falls apart into small pieces here, but into several.)
            inside = big & (np.bincount(labels[inner].ravel(), minlength=len(stats)) > 0)
            dot = (side <= PRESENCE_DOT_MM) & (mass < DOT_MM2)
            if inside.sum() == 1 and bool(dot[inside][0]):
                big[:] = False
        sums[k] = float(np.where(big[labels[inner]], region[inner], 0.0).sum()) / (s * s)
    return {name: float(v) for name, v in zip(names, sums, strict=True)}


def _pen_on_lines(values: np.ndarray, grid: np.ndarray, slots: np.ndarray, s: float) -> np.ndarray:
    """Pen-dark area (mm^2) in each cell's box inset by only PEN_INSET_MM: ink on the cell's lines.

    ``values`` is darkness above the paper. The printed lines' own darkness is
    measured halfway along the point squares' sides; what counts here is
    several times darker (PEN_OVER_LINE), so the lines themselves never do.
    """
    height, width = values.shape
    mids = (grid[:-1] + grid[1:]) / 2.0
    xs = np.clip(np.round(mids[..., 0]).astype(int), 1, width - 2).ravel()
    ys = np.clip(np.round(mids[..., 1]).astype(int), 0, height - 1).ravel()
    across = np.max([values[ys, xs + d] for d in (-1, 0, 1)], axis=0)
    printed = across[across > 0]
    line = float(np.median(printed)) if printed.size else 0.0
    bar = max(PEN_DARK, PEN_OVER_LINE * line)
    pen = np.where(values >= bar, values, np.float32(0.0))
    sums, _ = _box_sums(pen, grid, slots, PEN_INSET_MM * s, s, inner=False)
    return sums


Bounds = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _box_sums(values: np.ndarray, grid: np.ndarray, slots: np.ndarray, inset: float, s: float, *,
              inner: bool) -> tuple[np.ndarray, Bounds]:
    """Sum of ``values`` (mm^2 at ``s`` px/mm) in each cell's box, ``inset`` px in from its lines, by one
    integral image; and the boxes (x0, x1, y0, y1). A cell's corners are measured crossings and its
    sides not quite straight: ``inner`` boxes lie inside all four corners, outer ones reach the outermost."""
    height, width = values.shape
    integral = cv2.integral(values, sdepth=cv2.CV_64F)
    tl = grid[slots[:, 0], slots[:, 2]]
    br = grid[slots[:, 1], slots[:, 3]]
    tr = grid[slots[:, 0], slots[:, 3]]
    bl = grid[slots[:, 1], slots[:, 2]]
    near, far = (np.maximum, np.minimum) if inner else (np.minimum, np.maximum)
    x0 = np.clip(near(tl[:, 0], bl[:, 0]) + inset, 0, width).astype(int)
    x1 = np.clip(far(tr[:, 0], br[:, 0]) - inset, 0, width).astype(int)
    y0 = np.clip(near(tl[:, 1], tr[:, 1]) + inset, 0, height).astype(int)
    y1 = np.clip(far(bl[:, 1], br[:, 1]) - inset, 0, height).astype(int)
    sums = integral[y1, x1] - integral[y0, x1] - integral[y1, x0] + integral[y0, x0]
    out: np.ndarray = np.where((x1 > x0) & (y1 > y0), sums, 0.0) / (s * s)
    return out, (x0, x1, y0, y1)
