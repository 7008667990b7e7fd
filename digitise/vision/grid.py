"""The boards' ruled lines: finding boards without markers, and refining every board locally.

Two jobs, both on a reduced copy of the page (a few pixels per millimetre):

* :func:`find_grid` -- the marker-less path. Old notes and photocopies carry
  no markers, so the eight boards are found as the outlines of their ruled
  lines (contours whose hull is a wide rectangle, all of about one size),
  matched to the template's boards (2 columns by 4 rows) whichever way the
  page is turned, and each board gets its own homography from its four
  corners: boards drawn 15 % larger or smaller than the template still fit.
* :func:`refine_board` -- both paths. Starting from a homography that is
  right to within a few millimetres, it measures where each printed line of
  the board really is (per cell, so a curled page or a phone photo still
  gives cells within a millimetre) and returns the measured line crossings.
  Its vertical lines are measured upright in the frame the start gives, so a
  start without the page's shear (another print placed from its lines) is
  measured again from the board's own fit until it settles
  (:func:`settle_board`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import cv2
import numpy as np

from digitise.notation.marks import BOTTOM_ROW, TOP_ROW
from digitise.notation.template import BoardGeometry, Rect, Template, board_rect
from digitise.vision.images import histogram
from digitise.vision.page import PageFit, project, rotation_of, scale_at

#: Pixels per mm of the board images used to measure lines.
REFINE_PX_PER_MM = 5.0
#: How far (mm) a line may be from where the first fit puts it.
SEARCH_MM = 2.6
#: Margin (mm) around a board in its measuring image.
BOARD_MARGIN_MM = 4.0
#: Fraction of a line's length that must look dark for it to count as found.
MIN_COVERAGE = 0.6
#: Fewer line crossings than this fraction found: the board is not there.
MIN_FOUND = 0.45
#: The darkness taken for a printed line on a picture smeared one way (camera shake), where a board's
#: own bar (set by its darkest lines) is too high for the lines across the smear: spread thin, 1 mm of
#: smear at 300 dpi leaves them about 0.1 darker than the paper.
SMEARED_LINE_BAR = 0.05
#: A measured crossing further than this (mm) from what its neighbours say is a stroke, not the line.
NEIGHBOUR_JUMP_MM = 0.45
#: A board placed without a shear is measured again from its own fit (:func:`settle_board`) at most this many
#: times, until no crossing moves more than SETTLED_MM.
SETTLE_PASSES = 4
SETTLED_MM = 0.02


@dataclass(frozen=True, slots=True)
class BoardLines:
    """The printed lines of one board in page mm: 15 verticals, 4 horizontals (row tops and bottoms)."""

    xs: tuple[float, ...]
    ys: tuple[float, float, float, float]


def mirrored(board: BoardGeometry) -> bool:
    """Whether ``board`` is printed mirrored: its off squares on the left, points 1 to 12 left to right."""
    return board.cells["Boff"].x < board.cells["Bres"].x


def board_lines(board: BoardGeometry) -> BoardLines:
    """Where ``board``'s lines are printed, from its cells (left to right, mirrored or not)."""
    cells = board.cells
    row = TOP_ROW[::-1] if mirrored(board) else TOP_ROW
    xs = tuple([cells[n].x for n in row] + [cells[row[-1]].right])
    top, bottom = cells["Bres"], cells["Wres"]
    return BoardLines(xs, (top.y, top.bottom, bottom.y, bottom.bottom))


def cell_slot(name: str, mirrored: bool = False) -> tuple[int, int, int, int]:
    """The (first line row, last line row, first column, last column) bounding ``name`` in the crossings grid
    (of a board printed ``mirrored``: its columns run the other way)."""
    if name == "centre":
        return 1, 2, 1, 13
    if name in TOP_ROW:
        k = TOP_ROW.index(name)
        return (0, 1, 13 - k, 14 - k) if mirrored else (0, 1, k, k + 1)
    k = BOTTOM_ROW.index(name)
    return (2, 3, 13 - k, 14 - k) if mirrored else (2, 3, k, k + 1)


@dataclass(frozen=True, slots=True)
class BoardFit:
    """Where one board lies in the image after local refinement.

    ``crossings`` is (4, 15, 2): image pixels of every line crossing (rows of
    horizontal lines, columns of vertical lines); ``measured`` says which were
    measured (the others come from the board's own homography).
    """

    index: int
    crossings: np.ndarray
    measured: np.ndarray
    #: Page mm -> image px, fitted to this board's crossings.
    homography: np.ndarray
    #: Fraction of the crossings actually measured.
    found: float
    #: The darkness image the lines were measured on (REFINE_PX_PER_MM), and the crossings in it.
    measure_image: np.ndarray | None = field(default=None, repr=False, compare=False)
    measure_crossings: np.ndarray | None = field(default=None, repr=False, compare=False)
    #: The board is printed mirrored (:func:`mirrored`).
    mirrored: bool = False

    def cell_quad(self, name: str) -> np.ndarray:
        """The four corners (TL, TR, BR, BL in page terms) of cell ``name``, image px."""
        r0, r1, c0, c1 = cell_slot(name, self.mirrored)
        g = self.crossings
        return np.array([g[r0, c0], g[r0, c1], g[r1, c1], g[r1, c0]], np.float64)

    def box(self, margin_px: float = 0.0) -> tuple[int, int, int, int]:
        """The board's bounding box in image px: (x, y, w, h)."""
        pts = self.crossings.reshape(-1, 2)
        x0, y0 = np.floor(pts.min(axis=0) - margin_px)
        x1, y1 = np.ceil(pts.max(axis=0) + margin_px)
        return int(x0), int(y0), int(x1 - x0), int(y1 - y0)


def board_warp(homography: np.ndarray, rect: Rect, px_per_mm: float, margin_mm: float) -> tuple[np.ndarray, tuple[int, int]]:
    """The matrix taking pixels of an upright board image (``px_per_mm``, ``margin_mm``) to image px, and its size."""
    a = np.array([[1.0 / px_per_mm, 0.0, rect.x - margin_mm], [0.0, 1.0 / px_per_mm, rect.y - margin_mm], [0.0, 0.0, 1.0]])
    size = (round((rect.w + 2 * margin_mm) * px_per_mm), round((rect.h + 2 * margin_mm) * px_per_mm))
    return np.asarray(homography, np.float64) @ a, size


def _grey_percentile(grey: np.ndarray, q: float) -> float:
    """The ``q`` quantile (0..1) of a uint8 image, from its histogram (much faster than sorting)."""
    return _grey_percentiles(grey, (q,))[0]


def _grey_percentiles(grey: np.ndarray, qs: Sequence[float]) -> list[float]:
    """Several quantiles of a uint8 image from one histogram."""
    cumulative = np.cumsum(histogram(grey))
    total = max(int(cumulative[-1]) - 1, 0)
    return [float(v) for v in np.searchsorted(cumulative, np.asarray(qs) * total, side="right")]


def paper_of(grey: np.ndarray) -> float:
    """The paper's grey level: the bright 90th percentile (most of a page is paper)."""
    if grey.size == 0:
        return 255.0
    return max(_grey_percentile(grey[::2, ::2], 0.9), 1.0)


def upright_edge_contrast(grey: np.ndarray, homography: np.ndarray, rects: Sequence[Rect]) -> float:
    """How much darker ``grey`` is along the left and right edges of ``rects`` (mm, placed by ``homography``)
    than beside them (1.5 mm either way): about a printed line's darkness where the boxes are, about 0 where not.

    Each point is taken at its darkest within a pixel either way, so a fit a
    pixel off still finds the printed edge. 0 when there are no edges.
    """
    edges = []
    for rect in rects:
        ys = np.arange(rect.y + 1.0, rect.y + rect.h - 1.0, 0.5)
        for x in (rect.x, rect.right):
            edges.append(np.stack([np.full_like(ys, x), ys], axis=1))
    if not edges or grey.size == 0:
        return 0.0
    on = np.concatenate(edges)
    beside = np.array([BESIDE_EDGE_MM, 0.0])
    darkest = cv2.erode(grey, np.ones((3, 3), np.uint8))
    paper = paper_of(grey)

    def mean_darkness(points: np.ndarray) -> float:
        at = project(homography, points)
        xs = np.clip(np.round(at[:, 0]).astype(int), 0, grey.shape[1] - 1)
        ys = np.clip(np.round(at[:, 1]).astype(int), 0, grey.shape[0] - 1)
        return float(np.clip(1.0 - darkest[ys, xs] / paper, 0.0, 1.0).mean())

    return mean_darkness(on) - (mean_darkness(on - beside) + mean_darkness(on + beside)) / 2.0


#: Where :func:`upright_edge_contrast` looks for the paper beside an edge (mm): clear of the printed line and
#: of the neighbouring box's edge (the header's boxes are 3 mm apart).
BESIDE_EDGE_MM = 1.5


def darkness(grey: np.ndarray, paper: float | None = None) -> np.ndarray:
    """How much darker than the paper each pixel is, float32 0..1."""
    level = paper_of(grey) if paper is None else paper
    dark = grey.astype(np.float32)
    np.multiply(dark, np.float32(1.0 / level), out=dark)
    np.subtract(np.float32(1.0), dark, out=dark)
    return np.clip(dark, 0.0, 1.0, out=dark)


def _line_offsets(windows: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Line position (sub-pixel) in each row of a coverage matrix, NaN where there is none.

    The line is the well-covered position nearest where it should be: a
    small penalty for the distance lets the printed line beat a handwritten
    stroke beside it that is almost as long.
    """
    n, width = windows.shape
    if width == 0:
        return np.full(n, np.nan)
    positions = np.arange(width, dtype=np.float32)
    score = windows - 0.015 * np.abs(positions[None, :] - centres[:, None])
    best = np.argmax(score, axis=1)
    rows = np.arange(n)
    peak = windows[rows, best]
    # Centroid of the line's profile around the best position (a line is 1-3 px wide here).
    around = np.clip(best[:, None] + np.arange(-2, 3)[None, :], 0, width - 1)
    values = windows[rows[:, None], around]
    weights = np.where(values >= 0.5 * peak[:, None], values, 0.0)
    offset = (weights * (around - best[:, None])).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-6)
    return np.where(peak >= MIN_COVERAGE, best + offset, np.nan)


def refine_board(small: np.ndarray, homography: np.ndarray, board: BoardGeometry, *, bar: float | None = None) -> BoardFit:
    """Measure ``board``'s lines in ``small`` (grey, uint8) near where ``homography`` (mm -> px of ``small``) puts them.

    Returns the crossings in ``small``'s pixels; scale them for the full image.
    ``bar`` is the darkness taken for a line, when not the board's own (a smeared picture: :data:`SMEARED_LINE_BAR`).
    """
    lines = board_lines(board)
    rect = board_rect(board)
    s = REFINE_PX_PER_MM
    m = BOARD_MARGIN_MM
    warp, size = board_warp(homography, rect, s, m)
    patch = cv2.warpPerspective(small, warp, size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                borderMode=cv2.BORDER_CONSTANT, borderValue=255)
    # The paper (90th percentile), the darkest ink (0.5th), and the lines: they cover about 7 % of a
    # board, so the 97th percentile of darkness is about a line's darkness (more with much ink), even
    # where blur and bright light make them faint.
    darkest, lines_grey, paper = _grey_percentiles(patch[::2, ::2], (0.005, 0.03, 0.9))
    paper = max(paper, 1.0)
    dark = darkness(patch, paper)
    strongest = 1.0 - darkest / paper
    lines_dark = 1.0 - lines_grey / paper
    # Binary "looks like a line" with one pixel of slack for a slightly tilted line.
    # Capped: a board with heavy black handwriting must not raise the bar above its grey lines.
    if bar is None:
        bar = min(0.2, max(0.08, 0.35 * strongest), max(0.08, 0.7 * lines_dark))
    binary = (dark > bar).astype(np.uint8)
    slack_v = cv2.dilate(binary, np.ones((1, 3), np.uint8)).astype(np.float32)
    slack_h = cv2.dilate(binary, np.ones((3, 1), np.uint8)).astype(np.float32)

    xs_mm, ys_mm = np.array(lines.xs), np.array(lines.ys)
    us = (xs_mm - rect.x + m) * s
    vs = (ys_mm - rect.y + m) * s
    reach = int(SEARCH_MM * s)
    inset = 1.8 * s
    n_cols = len(us)
    span = np.arange(2 * reach + 1)
    # Vertical lines, measured separately in the top row and the bottom row.
    vx = np.full((2, n_cols), np.nan)
    for row, (va, vb) in enumerate(((vs[0], vs[1]), (vs[2], vs[3]))):
        r0, r1 = max(int(va + inset), 0), min(int(vb - inset), size[1])
        if r1 <= r0:
            continue
        profile = np.concatenate([[0.0], slack_v[r0:r1].mean(axis=0), [0.0]])
        starts = np.round(us).astype(int) - reach
        index = np.clip(starts[:, None] + span[None, :] + 1, 0, profile.size - 1)
        vx[row] = starts + _line_offsets(profile[index], us - starts)
    # Horizontal lines, measured per column of cells (column sums by cumulative sums).
    hy = np.full((4, n_cols - 1), np.nan)
    c0 = np.clip((us[:-1] + inset).astype(int), 0, size[0])
    c1 = np.clip((us[1:] - inset).astype(int), 0, size[0])
    widths = np.maximum(c1 - c0, 1)
    # Each segment's sum over its columns [c0, c1): one reduceat over the bounds in order (c1 of a
    # segment never passes c0 of the next); a spare zero column lets a bound sit at the image's edge.
    bounds = np.stack([c0, c1], axis=1).ravel()
    band = np.zeros((span.size, size[0] + 1), np.float32)
    for i, v in enumerate(vs):
        start = int(np.round(v)) - reach
        rows_idx = start + span
        valid = (rows_idx >= 0) & (rows_idx < size[1])
        band[:, :-1] = slack_h[np.clip(rows_idx, 0, size[1] - 1)]
        band[~valid] = 0.0
        # Sums of 0/1 pixels: exact whatever the order, so the same as differences of cumulative sums.
        sums = np.add.reduceat(band, bounds, axis=1)[:, 0::2]
        cov = (np.where(c1 > c0, sums, np.float32(0.0)) / widths).T  # (segments, span)
        found = _line_offsets(cov, np.full(n_cols - 1, v - start))
        hy[i] = np.where(c1 > c0, start + found, np.nan)

    # Crossings in the board image: x from the vertical line in that row, y from the horizontals beside it.
    beside_left = np.concatenate([np.full((4, 1), np.nan), hy], axis=1)
    beside_right = np.concatenate([hy, np.full((4, 1), np.nan)], axis=1)
    pair = np.stack([beside_left, beside_right])
    count = (~np.isnan(pair)).sum(axis=0)
    y_meas = np.where(count > 0, np.nansum(pair, axis=0) / np.maximum(count, 1), np.nan)
    x_meas = vx[[0, 0, 1, 1]]
    measured = ~np.isnan(x_meas) & ~np.isnan(y_meas)
    local = np.stack(np.broadcast_arrays(us[None, :], vs[:, None]), axis=-1).astype(np.float64)
    local = np.where(measured[..., None], np.stack([x_meas, y_meas], axis=-1), local)

    found_fraction = float(measured.mean())
    src_mm = np.stack(np.broadcast_arrays(xs_mm[None, :], ys_mm[:, None]), axis=-1).reshape(-1, 2)
    # Too few crossings to trust: keep the page fit rather than fit a board to a handful of points.
    if found_fraction >= MIN_FOUND:
        pts_small = project(warp, local.reshape(-1, 2))
        ok = measured.reshape(-1)
        fitted, _ = cv2.findHomography(src_mm[ok], pts_small[ok], cv2.RANSAC, 1.2 * scale_at(homography, src_mm[0]))
        if fitted is None:
            fitted = np.asarray(homography, np.float64)
        predicted = project(fitted, src_mm)
        residual = pts_small - predicted
        deviation = np.linalg.norm(residual, axis=1)
        px_mm = scale_at(fitted, src_mm.mean(axis=0))
        # A measured crossing far from the board's own fit is handwriting, not the line ...
        keep = ok & (deviation <= 1.6 * px_mm)
        # ... and so is one that leaves its neighbours: a curled page bends the lines smoothly,
        # a stroke lying along a line pulls one crossing (or the two ends of one segment) alone.
        local = _neighbour_residual(residual.reshape(4, n_cols, 2), keep.reshape(4, n_cols)).reshape(-1, 2)
        jump = np.linalg.norm(residual - local, axis=1)
        keep &= jump <= NEIGHBOUR_JUMP_MM * px_mm
        crossings = np.where(keep[:, None], pts_small, predicted).reshape(4, n_cols, 2)
        measured = keep.reshape(4, n_cols)
    else:
        fitted = np.asarray(homography, np.float64)
        crossings = project(fitted, src_mm).reshape(4, n_cols, 2)
    inverse = np.linalg.inv(warp)
    local_crossings = project(inverse, crossings.reshape(-1, 2)).reshape(4, n_cols, 2)
    return BoardFit(board.index, crossings, measured, fitted, found_fraction, dark, local_crossings, mirrored(board))


def settle_board(small: np.ndarray, first: BoardFit, board: BoardGeometry, *, bar: float | None = None) -> BoardFit:
    """``first`` (``board`` measured in ``small`` by :func:`refine_board`) measured again from its own fit until its
    crossings stay within :data:`SETTLED_MM`, at most :data:`SETTLE_PASSES` times.

    The vertical lines are measured once per row of cells, upright in the
    board image the starting homography makes. A start that misses the
    page's shear (a page placed from its lines: a turn, no shear) leaves
    every square's sides leaning by it, a pixel or more at the corners; the
    board's own fit over both rows has most of the shear, and measured again
    in that frame the lean shrinks each time.
    """
    fit = first
    for _ in range(SETTLE_PASSES):
        if fit.found < MIN_FOUND:
            break
        again = refine_board(small, fit.homography, board, bar=bar)
        if again.found < fit.found:
            break
        moved = float(np.abs(again.crossings - fit.crossings).max())
        fit = again
        if moved <= SETTLED_MM * scale_at(fit.homography, np.array(board_rect(board).centre)):
            break
    return fit


def _neighbour_residual(residual: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Median residual (4, n, 2) of each crossing's kept neighbours; zero (the board's fit) when it has none.

    Neighbours are the crossings up to three columns either side in the
    same line row, and up to two either side in its partner row (the other
    line of the same row of cells), where the same vertical lines cross.
    """
    cols = keep.shape[1]
    values = np.where(keep[..., None], residual, np.nan)
    partner = values[[1, 0, 3, 2]]
    pool = []
    for source, offsets in ((values, (-3, -2, -1, 1, 2, 3)), (partner, (-2, -1, 0, 1, 2))):
        for offset in offsets:
            shifted = np.full_like(values, np.nan)
            if offset > 0:
                shifted[:, :cols - offset] = source[:, offset:]
            elif offset < 0:
                shifted[:, -offset:] = source[:, :cols + offset]
            else:
                shifted = source
            pool.append(shifted)
    # Median over the pool ignoring gaps: a sort puts NaN last (np.nanmedian costs ten times more).
    stack = np.sort(np.stack(pool), axis=0)
    count = (~np.isnan(stack)).sum(axis=0)
    low = np.take_along_axis(stack, np.maximum((count - 1) // 2, 0)[None], axis=0)[0]
    high = np.take_along_axis(stack, np.maximum(count // 2, 0)[None], axis=0)[0]
    return np.where(count > 0, (low + high) / 2.0, 0.0)


def scaled_fit(fit: BoardFit, factor: float) -> BoardFit:
    """``fit`` for an image ``factor`` times larger (crossings measured on a reduced copy)."""
    s = np.array([[factor, 0.0, 0.0], [0.0, factor, 0.0], [0.0, 0.0, 1.0]])
    return BoardFit(fit.index, fit.crossings * factor, fit.measured, s @ fit.homography, fit.found,
                    fit.measure_image, fit.measure_crossings, fit.mirrored)


# --- the marker-less path ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Candidate:
    centre: np.ndarray
    corners: np.ndarray  # 4x2, hull corners in image order
    long_side: float
    angle: float  # direction of the long side, degrees in [0, 180)


def _candidates(small: np.ndarray, template: Template) -> list[_Candidate]:
    """Contours that could be board outlines: wide, nearly rectangular, of one common size."""
    binary = cv2.adaptiveThreshold(small, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV, 25, 12)
    binary = cv2.morphologyEx(binary, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(binary, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
    rect0 = board_rect(template.boards[0])
    aspect0 = rect0.w / rect0.h
    image_area = small.shape[0] * small.shape[1]
    found: list[_Candidate] = []
    for contour in contours:
        if len(contour) < 4:
            continue
        (cx, cy), (w, h), angle = cv2.minAreaRect(contour)
        long_side, short_side = max(w, h), min(w, h)
        if short_side < 8 or long_side * short_side < image_area * 0.004:
            continue
        aspect = long_side / short_side
        if not aspect0 * 0.7 <= aspect <= aspect0 * 1.45:
            continue
        hull = cv2.convexHull(contour)
        hull_area = cv2.contourArea(hull)
        if hull_area < 0.85 * long_side * short_side:
            continue
        corners = _quad(hull)
        if corners is None:
            corners = cv2.boxPoints(((cx, cy), (w, h), angle)).astype(np.float64)
        direction = angle if w >= h else angle + 90.0
        found.append(_Candidate(np.array([cx, cy]), corners, long_side, direction % 180.0))
    return _dedupe(found)


def _quad(hull: np.ndarray) -> np.ndarray | None:
    """Four corners of a convex hull, or None when it is not a quadrilateral."""
    perimeter = cv2.arcLength(hull, True)
    for eps in (0.01, 0.02, 0.03, 0.05):
        approx = cv2.approxPolyDP(hull, eps * perimeter, True)
        if len(approx) == 4:
            return approx.reshape(4, 2).astype(np.float64)
    return None


def _dedupe(cands: list[_Candidate]) -> list[_Candidate]:
    """One candidate per board: a line's inner and outer outline are the same board."""
    cands = sorted(cands, key=lambda c: -c.long_side)
    kept: list[_Candidate] = []
    for c in cands:
        if all(np.linalg.norm(c.centre - k.centre) > 0.1 * k.long_side for k in kept):
            kept.append(c)
    return kept


def _order_corners(corners: np.ndarray, rotation: int) -> np.ndarray:
    """Corners as TL, TR, BR, BL of the page frame, for a page turned ``rotation`` degrees clockwise."""
    centre = corners.mean(axis=0)
    theta = np.radians(-rotation)
    rot = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
    upright = (corners - centre) @ rot.T
    order = np.empty(4, int)
    for slot, (sx, sy) in enumerate(((-1, -1), (1, -1), (1, 1), (-1, 1))):
        order[slot] = int(np.argmax(upright[:, 0] * sx + upright[:, 1] * sy))
    if len(set(order.tolist())) != 4:
        order = np.argsort(np.arctan2(upright[:, 1], upright[:, 0]))  # clockwise from the left
        order = np.roll(order, -int(np.argmin([np.arctan2(upright[i, 1], upright[i, 0]) + np.pi * 1.25 for i in order]) % 4))
    return corners[order]


def _assign(cands: list[_Candidate], template: Template, rotation: float) -> dict[int, _Candidate]:
    """Match candidates to template boards for a page turned ``rotation`` degrees (any angle).

    Every pairing of one candidate with one template board proposes a shift
    of the whole layout; the shift that puts most candidates on boards (then
    the closest) wins. Missing or extra candidates do not disturb it. The
    layout's scale is tried a little off the boards' own scale, for boards
    drawn larger or smaller than the template but spaced as it says.
    """
    theta = np.radians(-rotation)
    rot = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
    rects = [board_rect(b) for b in template.boards]
    indices = [b.index for b in template.boards]
    board_scale = float(np.median([c.long_side for c in cands])) / float(np.median([r.w for r in rects]))
    pts = np.array([c.centre for c in cands]) @ rot.T  # (N, 2)
    pitch = min(r.h for r in rects) * board_scale
    best: tuple[int, float] | None = None
    result: dict[int, _Candidate] = {}
    for layout in (1.0, 1 / 0.92, 1 / 1.08, 1 / 0.85, 1 / 1.15):
        tpl = np.array([r.centre for r in rects]) * board_scale * layout  # (B, 2)
        shifts = (pts[:, None, :] - tpl[None, :, :]).reshape(-1, 2)  # (S, 2)
        predicted = tpl[None, :, :] + shifts[:, None, :]  # (S, B, 2)
        dist = np.linalg.norm(predicted[:, :, None, :] - pts[None, None, :, :], axis=3)  # (S, B, N)
        nearest = np.argmin(dist, axis=2)
        dmin = np.take_along_axis(dist, nearest[:, :, None], axis=2)[:, :, 0]
        matched = dmin < 0.4 * pitch
        count = matched.sum(axis=1)
        error = np.where(matched, dmin, 0.0).sum(axis=1)
        for k in np.lexsort((error, -count)):
            chosen = nearest[k][matched[k]]
            if len(set(chosen.tolist())) != len(chosen):
                continue
            key = (int(count[k]), -float(error[k]))
            if best is None or key > best:
                best = key
                result = {indices[b]: cands[int(nearest[k, b])] for b in range(len(indices)) if matched[k, b]}
            break
    return result


def _cue(binary: np.ndarray, homography: np.ndarray, template: Template) -> float:
    """How much printed matter lies where the header and the board labels should be (for 180-degree turns)."""
    h, w = binary.shape
    total = 0.0
    rects: list[Rect] = list(template.fields.values())
    for board in template.boards:
        if board.label is not None:
            rects.append(board.label.inset(0.8))
    for r in rects:
        quad = project(homography, np.array(r.corners))
        x0, y0 = np.clip(quad.min(axis=0), 0, [w - 1, h - 1]).astype(int)
        x1, y1 = np.clip(quad.max(axis=0), 0, [w - 1, h - 1]).astype(int)
        if x1 > x0 and y1 > y0:
            total += float(binary[y0:y1 + 1, x0:x1 + 1].mean())
    return total


def find_grid(small: np.ndarray, template: Template) -> tuple[PageFit, dict[int, np.ndarray]] | None:
    """The page fitted from its boards' outlines (no markers), or None when no note is seen.

    Returns the page fit (mm -> px of ``small``) and a homography per found
    board (mm -> px of ``small``), which follows that board's own size.
    """
    cands = _candidates(small, template)
    if len(cands) < 4:
        return None
    # The boards' common direction, mod 180: each candidate votes for its long side's angle.
    angles = np.radians([c.angle * 2 for c in cands])
    direction = float(np.degrees(np.arctan2(np.sin(angles).mean(), np.cos(angles).mean())) / 2) % 180.0
    cands = [c for c in cands if min(abs(c.angle - direction), 180 - abs(c.angle - direction)) < 12]
    if len(cands) < 4:
        return None
    binary = cv2.adaptiveThreshold(small, 1, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV, 25, 12)
    best: tuple[float, PageFit, dict[int, np.ndarray]] | None = None
    for turn in (direction, direction + 180.0):
        match = _assign(cands, template, turn)
        if len(match) < 4:
            continue
        round(turn / 90.0) % 4 * 90
        boards: dict[int, np.ndarray] = {}
        src: list[tuple[float, float]] = []
        dst: list[list[float]] = []
        for index, cand in sorted(match.items()):
            rect = board_rect(template.board(index))
            corners = _order_corners(cand.corners, round(turn))
            src.extend(rect.corners)
            dst.extend(corners.tolist())
            boards[index] = cv2.getPerspectiveTransform(np.array(rect.corners, np.float32), corners.astype(np.float32))
        page_h, _ = cv2.findHomography(np.array(src, np.float64), np.array(dst, np.float64), cv2.RANSAC, 0.05 * np.median([c.long_side for c in cands]))
        if page_h is None:
            continue
        residual = float(np.linalg.norm(project(page_h, np.array(src)) - np.array(dst), axis=1).mean())
        fit = PageFit(page_h, "grid", (), rotation_of(page_h, template.page_mm), residual / max(scale_at(page_h, np.array(template.page_mm) / 2), 1e-6))
        score = len(match) * 1000.0 + _cue(binary, page_h, template)
        if best is None or score > best[0]:
            best = (score, fit, boards)
    if best is None:
        return None
    return best[1], best[2]


def board_inside(fit_crossings: np.ndarray, shape: Sequence[int], slack: float = 0.0) -> bool:
    """True when every crossing of a board lies inside an image of ``shape`` (h, w)."""
    h, w = shape[0], shape[1]
    pts = fit_crossings.reshape(-1, 2)
    return bool(np.all(pts[:, 0] >= -slack) and np.all(pts[:, 1] >= -slack) and np.all(pts[:, 0] <= w - 1 + slack) and np.all(pts[:, 1] <= h - 1 + slack))


def line_widths(fit: BoardFit) -> tuple[float, float] | None:
    """How wide (mm) the board's vertical and horizontal lines look where they were measured, or None.

    Each line's width is its darkness profile's area over its peak (its
    "equivalent width"), the profile taken across the line over the
    board's inside; the median over the lines. A printed line looks 0.3-0.45
    mm wide on a 300-dpi scan (0.5 at 150 dpi); a camera that moved ``L`` mm while the picture was taken
    spreads the lines across its motion over about ``L`` mm (the lines along
    it stay as they were), which is what makes a smeared picture's lines too
    faint to find and its digits hard to read.
    """
    dark, crossings = fit.measure_image, fit.measure_crossings
    if dark is None or crossings is None:
        return None
    s = REFINE_PX_PER_MM
    reach = int(SEARCH_MM * s)
    inset = 4

    def median_width(profile: np.ndarray, positions: np.ndarray) -> float | None:
        found = []
        for position in positions:
            at = round(float(position))
            window = profile[max(at - reach, 0):at + reach + 1]
            if window.size < 2 * reach:
                continue
            # Above the window's own floor: handwriting near the line raises the floor, not the line.
            window = np.clip(window - np.percentile(window, 20), 0.0, None)
            peak = float(window.max())
            if peak > 0.0:
                found.append(float(window.sum()) / peak)
        return float(np.median(found)) / s if found else None

    top, bottom = int(crossings[0, :, 1].mean()) + inset, int(crossings[-1, :, 1].mean()) - inset
    left, right = int(crossings[:, 0, 0].mean()) + inset, int(crossings[:, -1, 0].mean()) - inset
    if bottom <= top or right <= left:
        return None
    vertical = median_width(dark[max(top, 0):bottom].mean(axis=0), crossings[0, :, 0])
    horizontal = median_width(dark[:, max(left, 0):right].mean(axis=1), crossings[:, 0, 1])
    if vertical is None or horizontal is None:
        return None
    return vertical, horizontal


def smear_mm(fits: Sequence[BoardFit]) -> float:
    """How far (mm) the picture looks smeared: the widest-looking lines' width, median over the boards.

    About 0.3-0.55 on scans and photos held still, whatever their damage;
    about the distance the camera moved while the picture was taken, in
    whichever direction, when it moved further than that (see :func:`line_widths`).
    """
    widths = [w for w in (line_widths(fit) for fit in fits) if w is not None]
    if not widths:
        return 0.0
    return float(np.median([max(w) for w in widths]))


def edge_balance(grey: np.ndarray) -> float:
    """How evenly ``grey``'s edges run every way: the smaller over the larger eigenvalue of its structure tensor.

    A note's lines and handwriting run both ways: 0.65-1.0 on scans and
    photos, whatever their damage. A camera that moved sideways or up the
    page wipes out the edges across its motion: 0.3 at 0.5 mm, 0.13 at 1 mm,
    0.05 at 2 mm. (A diagonal motion smears the lines both ways alike and
    leaves the balance: :func:`smear_mm` measures that, where the boards are found.)
    """
    image = np.asarray(grey, np.float32)
    gx = cv2.Sobel(image, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(image, cv2.CV_32F, 0, 1, ksize=3)
    jxx, jyy, jxy = float(np.mean(gx * gx)), float(np.mean(gy * gy)), float(np.mean(gx * gy))
    half_trace = (jxx + jyy) / 2.0
    spread = float(np.sqrt(max(half_trace * half_trace - (jxx * jyy - jxy * jxy), 0.0)))
    if half_trace + spread <= 0.0:
        return 1.0  # a flat picture has no edges to be smeared
    return (half_trace - spread) / (half_trace + spread)
