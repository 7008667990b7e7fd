"""How sure the vision is that a board's squares sit where its print puts them: a measure, not a decision.

A page of another print is placed from its own lines (:func:`~digitise.vision.layout.fit_layout`), then each
board's lines are measured where that fit puts them (:func:`~digitise.vision.grid.refine_board`). Where many
of a board's line crossings were not found (lines erased or faint, a board cut off), or those found stray from
the board's own fit (a hand-ruled, wavy board), its squares are placed partly by guess. What to do
about it is the solver's: the measure goes into the readings (``fit``), with the crossings for the review's
overlay.
"""

from __future__ import annotations

import numpy as np

from digitise.notation.template import BoardGeometry
from digitise.vision.grid import BoardFit, board_lines
from digitise.vision.page import project, scale_at

#: The share of a board's line crossings kept as measured at and above which the fit is not doubted on that
#: account (clean scans of the other prints: 0.85 and more; a photographed page of faint thin lines, read right:
#: 0.67), and at and below which it is not trusted at all.
KEPT_SURE = 0.8
KEPT_NONE = 0.4
#: The spread (root mean square, mm) of the kept crossings about the board's own fit at and under which the
#: fit is not doubted on that account (clean pages: 0.12 mm at most), and at and over which not trusted at all.
SPREAD_SURE_MM = 0.2
SPREAD_NONE_MM = 0.4


def _ramp(value: float, none: float, sure: float) -> float:
    """0 at ``none``, 1 at ``sure``, straight between (either may be the larger)."""
    return float(np.clip((value - none) / (sure - none), 0.0, 1.0))


def crossing_spread_mm(fit: BoardFit, board: BoardGeometry) -> float:
    """Root mean square distance (mm) of the board's kept crossings from where its own homography puts them."""
    lines = board_lines(board)
    grid = np.stack(np.broadcast_arrays(np.array(lines.xs)[None, :], np.array(lines.ys)[:, None]), axis=-1)
    src = grid.reshape(-1, 2).astype(np.float64)
    kept = np.asarray(fit.measured, bool).reshape(-1)
    if not kept.any():
        return float("inf")
    predicted = project(fit.homography, src)
    px_per_mm = scale_at(fit.homography, src.mean(axis=0))
    deviation = np.linalg.norm(fit.crossings.reshape(-1, 2) - predicted, axis=1)[kept] / px_per_mm
    return float(np.sqrt(np.mean(deviation ** 2)))


def board_fit_score(fit: BoardFit, board: BoardGeometry) -> float:
    """How sure the board's squares sit where printed, 0..1 (1: sure): the kept share of its line crossings
    and their spread about the board's own fit, each ramped between untrusted and sure, multiplied."""
    kept = float(np.asarray(fit.measured, bool).mean())
    return _ramp(kept, KEPT_NONE, KEPT_SURE) * _ramp(crossing_spread_mm(fit, board), SPREAD_NONE_MM, SPREAD_SURE_MM)


def board_lines_px(fit: BoardFit) -> tuple[tuple[tuple[int, int], ...], ...]:
    """The board's line crossings as placed (rows of (x, y), whole image px), to draw over its picture."""
    return tuple(tuple((round(x), round(y)) for x, y in row) for row in np.asarray(fit.crossings).tolist())
