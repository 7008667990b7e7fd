"""A note's boards fitted from its own ruled lines, whatever its print.

Old records are on Kato notes digitise did not print: photocopied,
re-typeset by a club, drawn larger or smaller, spaced otherwise, with point
numbers and row labels printed beside the squares and no markers. What all
of them share is the board: two rows of squares (a result square, twelve
point squares, an off square) with a centre strip between, the rows' four
long lines running the board's whole width, the centre strip without the
point squares' lines. :func:`fit_layout` finds that structure on a page
and returns it as a :class:`~digitise.notation.template.Template` in the
page's own millimetres, with the homography placing it on the image: the
rest of the pipeline reads it as it reads digitise's own note.

The steps, on the working copy (a few px per mm):

1. the page's turn, from the sharpest row profile of its dark pixels (a page on its side too); which way up,
   from its printed two-figure point numbers (the 1 comes first on a page the right way up), read on the
   full-resolution page when given, or for a print without them, from the end of the centre strips that holds
   the boards' numbers;
2. long horizontal lines (a morphological opening with a long flat kernel);
3. lines sharing their ends, in fours (row, row, centre strip, row): a board;
4. in each board's rows, the thirteen evenly spaced lines between the
   result and the off square, fitted (start and pitch) to how much of each
   column is dark; the centre strip must be open between them (a
   spreadsheet's grid is not);
5. the boards in a lattice of columns and rows, in reading order; a board
   hidden by writing or damage is placed from its row and column.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from itertools import combinations
from types import MappingProxyType

import cv2
import numpy as np

from digitise.errors import LayoutError
from digitise.notation.marks import BOARDS_PER_PAGE, BOTTOM_ROW, TOP_ROW
from digitise.notation.template import BoardGeometry, Rect, Template
from digitise.vision.fitted import FittedBoard, LayoutFit
from digitise.vision.header_fit import find_header
from digitise.vision.layout_overlay import draw_layout, reduced
from digitise.vision.page_image import darkest_channel
from digitise.vision.printed_numbers import (
    figure_votes,
    figures_upright,
    figures_verdict,
    labels_side,
    number_widths,
    numbers_side,
)
from digitise.vision.same_print import (
    SAME_BOARD_MM,
    SAME_PRINT_MM,
    SAME_PRINT_STRETCH,
    board_crossings,
    print_map,
    same_boards,
)

# The fit's own names, and those of the modules split from it, importable from here as before the split.
__all__ = [
    "BOARD_GRIDS",
    "BOARD_LIKE",
    "CLOSED_EDGES",
    "FIGURE_PITCH_PX",
    "LINE_COVER",
    "MAX_TURN_DEG",
    "MIN_SEEN",
    "MIN_SEEN_SHARE",
    "OPEN_CENTRE",
    "OWN_CELL_W_MM",
    "SAME_BOARD_MM",
    "SAME_PRINT_MM",
    "SAME_PRINT_STRETCH",
    "UNEQUAL",
    "FittedBoard",
    "LayoutFit",
    "board_crossings",
    "draw_layout",
    "figures_upright",
    "fit_layout",
    "labels_side",
    "numbers_side",
    "page_turn",
    "print_map",
    "reduced",
    "same_boards",
    "way_up",
]


#: Largest turn of the page looked for (degrees either way).
MAX_TURN_DEG = 7.0
#: A point square's width (mm) on digitise's own note: the scale of a page whose resolution is unknown.
OWN_CELL_W_MM = 9.75
#: A board's vertical line is dark over at least this share of its row (handwriting covers less).
LINE_COVER = 0.5
#: Between the rows, the point squares' lines are absent (at most this share of the strip is dark there), but
#: the strip is closed at both ends.
OPEN_CENTRE = 0.35
#: Printed figures are judged on the full-resolution page up to this many px per point square's width (a figure
#: then stands about 12 px tall; more costs time and tells no more).
FIGURE_PITCH_PX = 70.0
#: A page needs this many boards seen (the others are placed from the lattice) ...
MIN_SEEN = 6
#: ... of its eight, or as many of a note of fewer boards (three of four, five of six).
MIN_SEEN_SHARE = MIN_SEEN / BOARDS_PER_PAGE
#: How many boards a note's grid may hold (two columns of two, three or four rows, or the other way).
BOARD_GRIDS = (4, 6, BOARDS_PER_PAGE)
#: Boards whose point squares' pitch differs from the page's by more than this are of unequal size ...
UNEQUAL = 0.12
#: ... and four long lines spaced as a board's, without its squares, as wide and tall as the boards found to
#: within this share, are a board not read (a smaller board, or one too damaged to fit).
BOARD_LIKE = 0.35
#: Style key of a fitted template: strokes beyond a board's outer lines are not its cells' (the print
#: may write point numbers or labels there).
CLOSED_EDGES = "closed_edges"


def _binary(grey: np.ndarray, contrast: int = 6) -> np.ndarray:
    """Dark marks (1) on paper (0): at least ``contrast`` grey levels darker than around them (a local threshold,
    as printed lines on uneven light need; faint thin lines need a low one, and the long lines are then found
    among the paper's grain by their length)."""
    return cv2.adaptiveThreshold(grey, 1, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV, 25, contrast)


def _rotation(shape: Sequence[int], angle: float) -> tuple[np.ndarray, tuple[int, int]]:
    """The affine turning an image of ``shape`` by ``angle`` degrees about its centre, onto a canvas holding all of it."""
    h, w = shape[0], shape[1]
    matrix = cv2.getRotationMatrix2D((w / 2.0, h / 2.0), angle, 1.0)
    cos, sin = abs(matrix[0, 0]), abs(matrix[0, 1])
    new_w, new_h = int(np.ceil(h * sin + w * cos)), int(np.ceil(h * cos + w * sin))
    matrix[0, 2] += new_w / 2.0 - w / 2.0
    matrix[1, 2] += new_h / 2.0 - h / 2.0
    return matrix, (new_w, new_h)


def page_turn(binary: np.ndarray) -> float:
    """The angle (degrees) that makes the page's long lines horizontal: the sharpest row profile."""
    small = cv2.resize(binary.astype(np.float32), None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)

    def sharpness(angle: float) -> float:
        matrix, size = _rotation(small.shape, angle)
        turned = cv2.warpAffine(small, matrix, size, flags=cv2.INTER_LINEAR)
        profile = turned.sum(axis=1, dtype=np.float64)
        return float((profile * profile).sum())

    # Lines across the page or down it (a page scanned on its side): which way up is told later.
    coarse = np.arange(-MAX_TURN_DEG, MAX_TURN_DEG + 1e-6, 0.25)
    best = max(np.concatenate([coarse, coarse + 90.0]), key=sharpness)
    return float(max(np.arange(best - 0.25, best + 0.25 + 1e-6, 0.05), key=sharpness))


def _horizontals(binary: np.ndarray) -> list[tuple[float, float, float]]:
    """Long horizontal lines: (left x, right x, y), px."""
    width = binary.shape[1]
    k = max(15, width // 30)
    lines = cv2.morphologyEx(binary, cv2.MORPH_OPEN, np.ones((1, k), np.uint8))
    lines = cv2.morphologyEx(lines, cv2.MORPH_CLOSE, np.ones((1, k // 2), np.uint8))
    count, labels, stats, _ = cv2.connectedComponentsWithStats(cv2.dilate(lines, np.ones((3, 1), np.uint8)), connectivity=8)
    pieces = []
    for label in range(1, count):
        x, y, w, h, _ = (int(v) for v in stats[label])
        if w < k or h > 24:
            continue
        rows = (lines[y:y + h, x:x + w] * (labels[y:y + h, x:x + w] == label)).sum(axis=1)
        at = np.flatnonzero(rows >= 0.6 * rows.max())
        pieces.append([float(x), float(x + w - 1), float(y + at.mean())])
    return [(p[0], p[1], p[2]) for p in pieces if p[1] - p[0] >= width * 0.1]


def _fours(lines: list[tuple[float, float, float]],
           accept: Callable[[float, float, tuple[float, float, float, float]], FittedBoard | None]) -> list[FittedBoard]:
    """The boards of groups of four lines sharing their ends, spaced as a board's rows and centre strip, that
    ``accept`` (left, right, the four lines' y) finds a board between."""
    # Lines top to bottom, each joining the column whose last line has the same ends: a slanted photo moves the
    # ends a little from board to board, never much from one line to the next.
    columns: list[list[tuple[float, float, float]]] = []
    for line in sorted(lines, key=lambda line: line[2]):
        tol = 0.03 * (line[1] - line[0])
        near = [c for c in columns if abs(c[-1][0] - line[0]) <= tol and abs(c[-1][1] - line[1]) <= tol]
        if near:
            min(near, key=lambda c: line[2] - c[-1][2]).append(line)
        else:
            columns.append([line])
    # A line broken or shortened by damage or by writing over it (which makes a faint line lighter than around
    # it) is a part of a line of the narrowest column of more lines it lies within (that column's line nearest
    # to it).
    by_width = sorted(columns, key=lambda c: c[0][1] - c[0][0])
    # Where a line given a wider column's ends was drawn (a smaller board's lines lie within its neighbours').
    drawn: dict[tuple[float, float, float], tuple[float, float]] = {}
    for few in sorted(columns, key=len):
        for line in list(few):
            x0, x1, y = line
            for column in by_width:
                if len(column) <= len(few) or column is few:
                    continue
                c0, c1, _ = min(column, key=lambda other: abs(other[2] - y))
                tol = 0.03 * (c1 - c0)
                if x0 >= c0 - tol and x1 <= c1 + tol and x1 - x0 >= 0.3 * (c1 - c0):
                    column.append((c0, c1, y))
                    drawn[(c0, c1, y)] = (x0, x1)
                    few.remove(line)
                    break
    columns = [c for c in columns if c]
    boards: list[FittedBoard] = []
    for column in columns:
        column.sort(key=lambda line: line[2])
        i = 0
        while i + 3 < len(column):
            # The board starting at line i; a stray line among its four (an arrow, a stroke along the rows) is
            # passed over.
            for picks in combinations(range(i + 1, min(i + 6, len(column))), 3):
                chosen = [column[i]] + [column[j] for j in picks]
                ys = (chosen[0][2], chosen[1][2], chosen[2][2], chosen[3][2])
                left = float(np.median([line[0] for line in chosen]))
                right = float(np.median([line[1] for line in chosen]))
                w = right - left
                h1, centre, h2 = ys[1] - ys[0], ys[2] - ys[1], ys[3] - ys[2]
                if not (0.04 * w <= h1 <= 0.2 * w and abs(h1 - h2) <= 0.12 * max(h1, h2)
                        and 0.25 * h1 <= centre <= 1.6 * h1):
                    continue
                board = accept(left, right, ys)
                if board is None and any(line in drawn for line in chosen):
                    # A board smaller than the boards above or below it: its own lines' ends.
                    ends = [drawn.get(line, line[:2]) for line in chosen]
                    board = accept(float(np.median([e[0] for e in ends])), float(np.median([e[1] for e in ends])), ys)
                if board is not None:
                    boards.append(board)
                    i = picks[-1] + 1
                    break
            else:
                i += 1
    return boards


def _cover(binary: np.ndarray, y0: float, y1: float, x0: int, x1: int, *, slack: bool = True) -> np.ndarray:
    """Share of each column x0..x1 that is dark between y0 and y1 (a fifth of the band left out at each end);
    with ``slack``, a pixel either way counts (a line a little off the vertical)."""
    inset = 0.2 * (y1 - y0)
    band = binary[max(int(y0 + inset), 0):max(int(y1 - inset), int(y0 + inset) + 1), max(x0, 0):x1]
    if slack:
        band = cv2.dilate(band, np.ones((1, 3), np.uint8))
    out = np.zeros(x1 - x0, np.float32)
    if band.size:
        start = max(x0, 0) - x0
        out[start:start + band.shape[1]] = band.mean(axis=0)
    return out


def _board(binary: np.ndarray, left: float, right: float, ys: tuple[float, float, float, float]) -> FittedBoard | None:
    """The board between these lines, when its rows hold thirteen evenly spaced lines and its centre strip none."""
    w = right - left
    margin = int(0.05 * w) + 2
    x0, x1 = int(left) - margin, int(np.ceil(right)) + margin
    rows = _cover(binary, ys[0], ys[1], x0, x1) + _cover(binary, ys[2], ys[3], x0, x1)
    rows = np.maximum(rows, np.maximum(np.roll(rows, 1), np.roll(rows, -1)))
    centre = _cover(binary, ys[1], ys[2], x0, x1)
    k = np.arange(13, dtype=np.float64)
    best: tuple[float, float, float] | None = None
    for pitch in np.arange(w / 16.5, w / 12.2, 0.25):
        starts = np.arange(left + 0.35 * pitch, right - 12.35 * pitch, 0.5)
        if starts.size == 0:
            continue
        at = np.clip(np.round(starts[:, None] + k[None, :] * pitch).astype(int) - x0, 0, rows.size - 1)
        score = rows[at].mean(axis=1)
        j = int(np.argmax(score))
        if best is None or score[j] > best[0]:
            best = (float(score[j]), float(starts[j]), float(pitch))
    if best is None or best[0] < 2 * LINE_COVER:
        return None
    _, first, pitch = best
    at = np.round(first + k * pitch).astype(int) - x0

    def lines(profile: np.ndarray) -> np.ndarray:
        """The profile's darkest within 3 px of each of the thirteen lines (the search lands a pixel or two off)."""
        return np.array([float(profile[max(a - 3, 0):max(a + 4, 1)].max()) for a in at])

    for y0, y1 in ((ys[0], ys[1]), (ys[2], ys[3])):
        if float(lines(_cover(binary, y0, y1, x0, x1)).mean()) < LINE_COVER:
            return None  # each row holds the lines, not one row for two (the gap between boards is no row)
    strip = lines(centre)
    if float(strip[1:12].mean()) > OPEN_CENTRE:
        return None  # lines straight through the centre strip: a table (or a row), not a board's centre strip
    if min(strip[0], strip[12]) < LINE_COVER:
        return None  # a strip open at its ends: the gap between two boards, not a board's centre strip

    # Each line where its own columns are darkest (the search above lands on the left of a plateau).
    raw = _cover(binary, ys[0], ys[1], x0, x1, slack=False) + _cover(binary, ys[2], ys[3], x0, x1, slack=False)
    reach = max(2, round(0.15 * pitch))

    def centred(near: float) -> float | None:
        lo, hi = max(round(near) - reach - x0, 0), min(round(near) + reach - x0 + 1, raw.size)
        window = raw[lo:hi]
        if window.size == 0 or float(window.max()) < LINE_COVER:
            return None
        weights = np.where(window >= 0.5 * window.max(), window, 0.0)
        return float((weights * np.arange(lo, hi)).sum() / weights.sum()) + x0

    points = [(k, at) for k in range(13) if (at := centred(first + k * pitch)) is not None]
    if len(points) >= 7:
        pitch, first = (float(v) for v in np.polyfit([k for k, _ in points], [at for _, at in points], 1))
    outer_left, outer_right = centred(left), centred(right)
    return FittedBoard(left if outer_left is None else outer_left, right if outer_right is None else outer_right,
                       ys, first, pitch)


def _clusters(values: Sequence[float], tol: float) -> list[float]:
    """Centres of groups of values lying within ``tol`` of the group's first."""
    centres: list[list[float]] = []
    for v in sorted(values):
        if centres and v - centres[-1][0] <= tol:
            centres[-1].append(v)
        else:
            centres.append([v])
    return [float(np.median(c)) for c in centres]


def _needed(count: int) -> int:
    """How many boards of a grid of ``count`` must be seen (:data:`MIN_SEEN`)."""
    return int(np.ceil(MIN_SEEN_SHARE * count - 1e-9))


def _lattice(found: list[FittedBoard], rows_only: Sequence[tuple[float, float, tuple[float, float, float, float]]] = ()
             ) -> list[FittedBoard]:
    """The boards in reading order (rows top to bottom, left to right), the unseen placed from the others of
    their column (from its row beside it when the column holds one other). ``rows_only``: boards whose four
    long lines were seen but not their squares (left, right, the lines' y): they count in the grid's rows and
    columns. Raises :class:`LayoutError` when they form no grid of :data:`BOARD_GRIDS` boards, or too few of
    them were seen."""
    width = float(np.median([b.right - b.left for b in found]))
    height = float(np.median([b.ys[3] - b.ys[0] for b in found]))
    cols = _clusters([b.left for b in found] + [left for left, _, _ in rows_only], 0.5 * width)
    rows = _clusters([b.ys[0] for b in found] + [ys[0] for _, _, ys in rows_only], 0.5 * height)
    count = len(cols) * len(rows)
    if count not in BOARD_GRIDS:
        raise LayoutError(f"{len(found)} boards found in {len(cols)} column(s) and {len(rows)} row(s): "
                          f"a note of {', '.join(map(str, BOARD_GRIDS[:-1]))} or {BOARD_GRIDS[-1]} boards in a grid "
                          "is expected")
    if len(found) < _needed(count):
        raise LayoutError(f"only {len(found)} boards found from the lines (at least {_needed(count)} of {count} needed)")
    slots: dict[tuple[int, int], FittedBoard] = {}
    for b in found:
        c = int(np.argmin([abs(b.left - x) for x in cols]))
        r = int(np.argmin([abs(b.ys[0] - y) for y in rows]))
        if (r, c) in slots:
            raise LayoutError("two boards found in one place of the grid: the boards do not form a grid")
        slots[(r, c)] = b
    out = []
    for r in range(len(rows)):
        for c in range(len(cols)):
            if (r, c) in slots:
                out.append(slots[(r, c)])
                continue
            column = sorted(((rr, b) for (rr, cc), b in slots.items() if cc == c), key=lambda rb: rb[0])
            row = [b for (rr, cc), b in slots.items() if rr == r]
            if len(column) >= 2:
                # Along its column, a board's place changes steadily from row to row (a slanted photo included).
                at = [float(rr) for rr, _ in column]

                def along(values: list[float], r: int = r, at: list[float] = at) -> float:
                    slope, start = np.polyfit(at, values, 1)
                    return float(start + slope * r)

                boards = [b for _, b in column]
                out.append(FittedBoard(
                    along([b.left for b in boards]), along([b.right for b in boards]),
                    (along([b.ys[0] for b in boards]), along([b.ys[1] for b in boards]),
                     along([b.ys[2] for b in boards]), along([b.ys[3] for b in boards])),
                    along([b.first for b in boards]), along([b.pitch for b in boards])))
                continue
            if not column or not row:
                raise LayoutError(f"only {len(found)} boards found, and a whole row or column of the grid is missing")
            only = column[0][1]
            out.append(FittedBoard(only.left, only.right,
                                   tuple(float(np.median([b.ys[i] for b in row])) for i in range(4)),  # type: ignore[arg-type]
                                   only.first, only.pitch))
    return out


def _figures(upright: np.ndarray) -> np.ndarray:
    """An upright page's print (thresholded firmly: print, not paper grain) and its darkness above the paper's, the
    two channels :func:`figures_upright` reads."""
    printed = _binary(upright, contrast=15)
    darkness = 1.0 - upright.astype(np.float32) / 255.0
    return np.dstack([printed.astype(np.float32), darkness - float(np.median(darkness))]).clip(0.0, 1.0)


def _full_figures(full: np.ndarray, work_shape: Sequence[int], fit: LayoutFit) -> list[tuple[np.ndarray, FittedBoard]]:
    """Each board's surroundings cut upright from the full-resolution page ``full`` (of which the working copy of
    ``work_shape`` is a reduction), as :func:`_figures`, with the board in the crop's px; empty when the full page
    is no sharper than the working copy."""
    factor = work_shape[1] / full.shape[1]
    pitch = float(np.median([b.pitch for b in fit.boards]))
    gain = min(1.0 / factor, FIGURE_PITCH_PX / pitch)
    if gain <= 1.25:
        return []
    matrix, _ = _rotation(work_shape, fit.turn)
    # Upright working px -> full-resolution px of the page as it lies.
    to_full = np.diag([1.0 / factor, 1.0 / factor, 1.0]) @ np.linalg.inv(np.vstack([matrix, [0.0, 0.0, 1.0]]))
    out = []
    for b in fit.boards:
        w, h = b.right - b.left, b.ys[1] - b.ys[0]
        x0, y0 = b.left - 0.1 * w, b.ys[0] - 0.7 * h
        size = (int(np.ceil(1.2 * w * gain)), int(np.ceil((b.ys[3] - b.ys[0] + 1.4 * h) * gain)))
        crop_to_full = to_full @ np.array([[1.0 / gain, 0.0, x0], [0.0, 1.0 / gain, y0], [0.0, 0.0, 1.0]])
        crop = cv2.warpAffine(full, crop_to_full[:2], size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                              borderMode=cv2.BORDER_REPLICATE)
        out.append((_figures(darkest_channel(crop)), FittedBoard(
            (b.left - x0) * gain, (b.right - x0) * gain, tuple((y - y0) * gain for y in b.ys),  # type: ignore[arg-type]
            (b.first - x0) * gain, b.pitch * gain)))
    return out


def _upright(fit: LayoutFit, figures: np.ndarray, work_shape: Sequence[int], full: np.ndarray | None) -> int:
    """:func:`figures_upright` for the fitted page, on the full-resolution page when it is sharper."""
    crops = [] if full is None else _full_figures(full, work_shape, fit)
    if not crops:
        return figures_upright(figures, fit.boards)
    votes = tens_seen = 0
    for crop, board in crops:
        # The full page's lines are placed from the working copy's, a pixel or two either way: closer to them.
        more, seen = figure_votes(crop, (board,), inset=0.04)
        votes, tens_seen = votes + more, tens_seen + seen
    return figures_verdict(votes, tens_seen)


def _template(boards: Sequence[FittedBoard], scale: float, size: tuple[int, int], name: str,
              mirrored: bool = False, indices: Sequence[int] | None = None) -> Template:
    """The fitted boards as a template in mm (``scale`` px per mm of the upright image of ``size``); ``mirrored``:
    the off squares on the left; ``indices``: the boards' numbers on the page (else 1, 2, ... in order)."""

    def mm(v: float) -> float:
        return round(v / scale + 0.0, 2)

    geometries = []
    for index, b in zip(indices or range(1, len(boards) + 1), boards, strict=True):
        xs = b.xs
        cells: dict[str, Rect] = {}
        for names, (top, bottom) in ((TOP_ROW, b.ys[:2]), (BOTTOM_ROW, b.ys[2:])):
            for k, cell in enumerate(names[::-1] if mirrored else names):
                cells[cell] = Rect(mm(xs[k]), mm(top), round(mm(xs[k + 1]) - mm(xs[k]), 2), round(mm(bottom) - mm(top), 2))
        cells["centre"] = Rect(mm(xs[1]), mm(b.ys[1]), round(mm(xs[13]) - mm(xs[1]), 2), round(mm(b.ys[2]) - mm(b.ys[1]), 2))
        geometries.append(BoardGeometry(index, MappingProxyType(cells)))
    return Template(name=name, page_mm=(mm(size[0]), mm(size[1])), markers=(), fields=MappingProxyType({}),
                    boards=tuple(geometries), style=MappingProxyType({CLOSED_EDGES: 1.0}))


def fit_layout(grey: np.ndarray, *, name: str = "fitted", full: np.ndarray | None = None) -> LayoutFit:
    """The note on ``grey`` (uint8, a few px per mm) fitted from its own lines.

    The template's millimetres are the page's scaled so that a point square
    is as wide as on digitise's own note (:data:`OWN_CELL_W_MM`): the cells
    are then cut at the size the reader knows, whatever the print's size.
    ``full``: the page at full resolution (grey or colour), of which ``grey``
    is a reduction; its printed figures, a few px tall on ``grey``, are read
    there to tell which way up the page stands.
    Raises :class:`LayoutError` with the reason when no grid of boards is
    seen (a blank page, a page of something else, a spreadsheet's grid).
    """
    binary = _binary(grey)
    if float(binary.mean()) < 0.002:
        raise LayoutError("blank page: no ruled lines on it")
    turn = page_turn(binary)
    fit, figures = _fit_turned(grey, turn, name)
    if not fit.numbered:
        return _by_labels(grey, fit, figures, name)
    way = _upright(fit, figures, grey.shape, full)
    if way < 0:
        turned, figures = _fit_turned(grey, turn + 180.0, name)
        if _upright(turned, figures, grey.shape, full) <= 0:
            return replace(fit, way_up_seen=False)  # the figures disagree with themselves: not told
        fit = turned
    return replace(fit, way_up_seen=way != 0)


def _by_labels(grey: np.ndarray, fit: LayoutFit, figures: np.ndarray, name: str) -> LayoutFit:
    """A print without point numbers turned as its boards' numbers say (see :func:`labels_side`): they stand at the
    left of an upright page; ``fit`` not told which way up when they do not say."""
    side = labels_side(figures[..., 0] > 0, fit.boards)
    if side < 0:
        return fit
    if side > 0:
        turned, figures = _fit_turned(grey, fit.turn + 180.0, name)
        if labels_side(figures[..., 0] > 0, turned.boards) < 0:
            return turned
    return replace(fit, way_up_seen=False)


def way_up(fit: LayoutFit, *, vouched: bool = False) -> None:
    """Raises :class:`LayoutError` for a fitted page that may be turned when its print did not say which way up.

    ``vouched``: the user named this print (a layout file of ``digitise
    layout``) or checks the fit by eye (``digitise layout``'s overlay), so a
    print with neither point numbers nor boards' numbers is read as it lies
    when it lies upright.

    A page lying on its side may be either way up, and point numbers running
    the other way are a mirrored print or a page upside down: guessed, every
    square would be read in another's place. A page whose print has neither
    point numbers nor boards' numbers to say may be upside down either way.
    A page as upright, whose point numbers run as an upright page's, is read
    as it lies when their figures are too small to say.
    """
    if fit.way_up_seen:
        return
    if not fit.numbered and not (vouched and abs(fit.turn) <= 45.0):
        raise LayoutError("the print shows neither point numbers nor boards' numbers to say which way up the page "
                          "stands: not read, as a page upside down would be read in the wrong squares (fit an "
                          "upright page with 'digitise layout' and give it with --template to read the print as "
                          "it lies)")
    if abs(fit.turn) > 45.0:
        raise LayoutError("the page lies on its side and its print does not say which way up (no point numbers "
                          "clear enough beside the squares): turn it upright and scan it again")
    if fit.mirrored:
        raise LayoutError("the point numbers run right to left: a mirrored print or a page upside down, and their "
                          "figures are not clear enough to tell which: scan it the right way up")


def _fit_turned(grey: np.ndarray, turn: float, name: str) -> tuple[LayoutFit, np.ndarray]:
    """The note fitted once the page is turned ``turn`` degrees (anticlockwise), and the turned page's printed
    figures (see :func:`figures_upright`)."""
    turn = (turn + 180.0) % 360.0 - 180.0
    matrix, size = _rotation(grey.shape, turn)
    upright = cv2.warpAffine(grey, matrix, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    upright_binary = _binary(upright)
    lines = _horizontals(upright_binary)
    rows_seen: list[tuple[float, float, tuple[float, float, float, float]]] = []

    def accept(left: float, right: float, ys: tuple[float, float, float, float]) -> FittedBoard | None:
        rows_seen.append((left, right, ys))
        return _board(upright_binary, left, right, ys)

    found = _fours(lines, accept)
    candidates = rows_seen
    if not found:
        what = "no long ruled lines" if not lines else (
            "no board's rows (four long lines spaced as two rows and a centre strip)" if not candidates
            else "no board's squares (ruled lines, but not a result square, twelve point squares and an off square "
                 "in each row with an open centre strip between)")
        raise LayoutError(f"no grid of boards found: {what}")
    pitch = float(np.median([b.pitch for b in found]))
    odd = [b for b in found if abs(b.pitch - pitch) > UNEQUAL * pitch]
    unread: tuple[int, ...] = ()
    alike, like = _rows_only(found, rows_seen, UNEQUAL), _rows_only(found, rows_seen, BOARD_LIKE)
    if odd or len(like) > len(alike):
        boards, indices, unread = _each_own(found, like)
    else:
        boards = _lattice(found, alike)
        indices = tuple(range(1, len(boards) + 1))
    scale = pitch / OWN_CELL_W_MM
    figures = _figures(upright)
    printed = figures[..., 0] > 0
    flipped = numbers_side(printed, boards) > 0
    numbered = sum(1 for _ in number_widths(printed, boards)) >= 4
    template = _template(boards, scale, size, name, flipped, indices)
    outlines = [(b.left, b.ys[0], b.right, b.ys[3]) for b in boards]
    template = replace(template, fields=MappingProxyType(find_header(upright, upright_binary, outlines, pitch, scale)))
    to_upright = np.vstack([matrix, [0.0, 0.0, 1.0]])
    homography = np.linalg.inv(to_upright) @ np.diag([scale, scale, 1.0])
    return (LayoutFit(template, homography, turn, len(found), tuple(boards), flipped, numbered=numbered, unread=unread),
            figures)


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    """Whether two boxes (left, top, right, bottom) share more than a tenth of the smaller's width and height."""
    across = min(a[2], b[2]) - max(a[0], b[0])
    down = min(a[3], b[3]) - max(a[1], b[1])
    return across > 0.1 * min(a[2] - a[0], b[2] - b[0]) and down > 0.1 * min(a[3] - a[1], b[3] - b[1])


def _rows_only(found: Sequence[FittedBoard], tried: Sequence[tuple[float, float, tuple[float, float, float, float]]],
               within: float) -> list[tuple[float, float, tuple[float, float, float, float]]]:
    """Boards whose four long lines were seen but not their squares: the groups of four lines tried
    (``tried``: left, right, their y) that lie on no board found nor on one another, as wide and tall as the
    boards found to within this share (lines of a header or a title are not a board)."""
    boxes = [(b.left, b.ys[0], b.right, b.ys[3]) for b in found]
    width = float(np.median([b.right - b.left for b in found]))
    height = float(np.median([b.ys[3] - b.ys[0] for b in found]))
    out: list[tuple[float, float, tuple[float, float, float, float]]] = []
    for left, right, ys in sorted(tried, key=lambda t: (t[2][0], t[0])):
        box = (left, ys[0], right, ys[3])
        if abs(right - left - width) > within * width or abs(ys[3] - ys[0] - height) > within * height:
            continue
        if any(_overlap(box, other) for other in boxes):
            continue
        boxes.append(box)
        out.append((left, right, ys))
    return out


def _each_own(found: Sequence[FittedBoard], rows_only: Sequence[tuple[float, float, tuple[float, float, float, float]]]
              ) -> tuple[list[FittedBoard], tuple[int, ...], tuple[int, ...]]:
    """Boards of unequal size, each with its own lines, in reading order (rows top to bottom, left to right): the
    boards, their indices, and the indices of boards seen by their long lines only (not read: nothing is placed
    where no squares were seen). Raises :class:`LayoutError` for more boards than a note holds, or for fewer seen
    than a page needs (:data:`MIN_SEEN`)."""
    places: list[tuple[float, float, float, FittedBoard | None]] = [(b.left, b.ys[0], b.ys[3] - b.ys[0], b) for b in found]
    places += [(left, ys[0], ys[3] - ys[0], None) for left, _, ys in rows_only]
    if len(places) > BOARDS_PER_PAGE:
        raise LayoutError(f"{len(places)} boards of unequal size found: a note holds at most {BOARDS_PER_PAGE}")
    rows = _clusters([top for _, top, _, _ in places], 0.5 * float(np.median([h for _, _, h, _ in places])))
    ordered = sorted(places, key=lambda p: (int(np.argmin([abs(p[1] - y) for y in rows])), p[0]))
    boards = [b for _, _, _, b in ordered if b is not None]
    indices = tuple(k for k, (_, _, _, b) in enumerate(ordered, start=1) if b is not None)
    unread = tuple(k for k, (_, _, _, b) in enumerate(ordered, start=1) if b is None)
    # As on a grid: a page where most boards show no squares is no note (a sheet's faint back, a page of something else).
    if len(boards) < _needed(len(ordered)):
        raise LayoutError(f"no grid of boards found: the squares of only {len(boards)} of {len(ordered)} boards seen")
    return boards, indices, unread
