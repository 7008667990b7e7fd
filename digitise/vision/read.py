"""From page images to readings: find the page, fit every board, cut the written cells, read them.

The steps for one page (times are for a 300-dpi A4 scan on one core, see
``benchmarks/README.md``):

1. a reduced working copy (about 6 px/mm) for everything that only locates;
2. the markers, or without them the boards' outlines (:mod:`.page`, :mod:`.grid`);
3. each board's lines measured locally (:func:`.grid.refine_board`), which
   also shows which cells hold ink: only those are cut out again, from the
   full image, at 10 px/mm (:mod:`.ink`);
4. all written cells of the page go to the cell reader in one batch.

A page that is not a note raises :class:`~digitise.errors.PageError`;
:func:`read_pages` collects those per page and reads the others.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import cv2
import numpy as np

from digitise.errors import DigitiseError, InputError, LayoutError, PageError
from digitise.fileio import check_outputs
from digitise.notation.readings import POINT_NEIGHBOURS, BoardReading, CellReading, PageReading, Readings
from digitise.notation.template import (
    BOARD_BOX_MARGIN_MM,
    BoardGeometry,
    Template,
    board_rect,
    load_template,
    template_names,
)
from digitise.vision.cells import WholeCell
from digitise.vision.grid import (
    MIN_FOUND,
    REFINE_PX_PER_MM,
    SMEARED_LINE_BAR,
    BoardFit,
    board_inside,
    board_lines,
    cell_slot,
    darkness,
    edge_balance,
    find_grid,
    mirrored,
    refine_board,
    scaled_fit,
    smear_mm,
    upright_edge_contrast,
)
from digitise.vision.images import PageImage, darkest_channel, iter_pages, keep_freed_memory, picture_damage
from digitise.vision.ink import (
    CELL_MARGIN_MM,
    CELL_PX_PER_MM,
    DOT_MM2,
    components,
    extract_ink,
    ink_amount,
    solid_share,
)
from digitise.vision.layout import CLOSED_EDGES, fit_layout, print_map, way_up
from digitise.vision.page import FoundMarker, PageFit, detect_markers, fit_markers, project, rotation_of

log = logging.getLogger(__name__)

#: Long side of the working copy used for locating (pixels).
WORK_LONG_SIDE = 1800
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
#: A cut-out cell with less ink than this (mm^2) after line removal is empty.
MIN_INK_MM2 = 0.25
#: A cell more of which than this is solid ink is blotted or scribbled over, not written in: what it
#: holds cannot be read (see :func:`~digitise.vision.cells.obscured`).
BLOT_SHARE = 0.17
#: A page needs at least this many of its boards found ...
MIN_BOARDS = 6
#: ... or this many when three or four printed markers fix it: the markers place every board, the
#: lines only confirm the form.
MIN_BOARDS_WITH_MARKERS = 3
#: A picture whose lines look at least this wide (mm, :func:`~digitise.vision.grid.smear_mm`) is smeared
#: (camera shake). Wider than SMEAR_AT_MOST the width is no smear's but lines not there (another form).
SMEARED_MM = 0.7
SMEAR_AT_MOST = 2.5
#: ... and one smeared further than this is refused, not looked at again: it would be read by guesswork.
SMEAR_READABLE_MM = 1.4
#: A picture where no note was found whose :func:`~digitise.vision.grid.edge_balance` is under this is said to look
#: smeared: scans and photos held still are at 0.65 or more, a 0.5 mm shake at 0.3, 1 mm at 0.13 (and an empty
#: ruled sheet low too: the message says "if it is a note").
SMEARED_BALANCE = 0.25
#: A page smaller than this (px per mm) cannot be read.
MIN_PX_PER_MM = 4.0
#: A match's own header fields (length, players, event...) are read from this many pages with a written
#: header, enough for the solver's vote to outvote one misread; later pages give their page number only.
HEADER_PAGES = 3


class CellAnalyser(Protocol):
    """What reads cells: :class:`digitise.vision.cells.CellReader` or a stand-in."""

    def analyse_many(self, cells: Sequence[tuple[np.ndarray, Any]]) -> list[Any]:
        """Candidates and mark probabilities of each (ink, kind)."""


@dataclass(frozen=True, slots=True)
class SeenCell:
    """One written cell as the reader saw it (for debug overlays and review)."""

    board: int
    name: str
    #: Corners in image px (TL, TR, BR, BL).
    quad: np.ndarray
    ink: np.ndarray
    candidates: tuple[CellReading, ...] = ()
    #: How the whole-cell model read it (point and off squares), for adapting to the writer.
    whole: WholeCell | None = None


@dataclass(frozen=True, slots=True)
class HandCell:
    """A point or off square of a page read, as the whole-cell model saw it: one sample of the writer's hand."""

    #: The page's file and number in it, as its :class:`PageReading` says.
    source: str
    page: int
    board: int
    name: str
    whole: WholeCell


@dataclass(frozen=True, slots=True)
class PageAnalysis:
    """Everything found on a page: the fit, the boards, the written cells."""

    fit: PageFit
    boards: tuple[BoardFit, ...]
    cells: tuple[SeenCell, ...] = ()
    #: Seconds spent per step (locate, boards, cells, read, header).
    timings: dict[str, float] = field(default_factory=dict)
    #: Written header text fields not yet given to tesseract (``defer_text``): (name, grey image).
    pending_text: tuple[tuple[str, np.ndarray], ...] = ()


def cell_kind(name: str) -> Any:
    """The :class:`~digitise.vision.cells.CellKind` of a cell name."""
    from digitise.vision.cells import CellKind

    if name == "centre":
        return CellKind.CENTRE
    if name in ("Bres", "Wres"):
        return CellKind.RESULT
    return CellKind.POINT


def _reduce(grey: np.ndarray) -> tuple[np.ndarray, float]:
    """The working copy and its scale (working px per image px).

    The reduction is by a whole number: OpenCV's area resize is then a fast
    block average (a fractional one costs twenty times more).
    """
    step = int(np.ceil(max(grey.shape[:2]) / WORK_LONG_SIDE))
    if step <= 1:
        return grey, 1.0
    return cv2.resize(grey, None, fx=1.0 / step, fy=1.0 / step, interpolation=cv2.INTER_AREA), 1.0 / step


def _scale(factor: float) -> np.ndarray:
    return np.array([[factor, 0.0, 0.0], [0.0, factor, 0.0], [0.0, 0.0, 1.0]])


def _not_a_note(small: np.ndarray, path: str, number: int) -> PageError:
    """The error for a page where no note was found, saying what it looks like."""
    dark = darkness(small)
    if float((dark > 0.25).mean()) < 0.002:
        reason = "blank page: no recording note found"
    elif edge_balance(small) < SMEARED_BALANCE:
        # Said as a likelihood: a ruled sheet's edges run one way too, and it is no note at all.
        reason = ("no recording note found (no markers and no grid of boards); its edges run almost all one way, "
                  "as in a picture taken while the camera moved: if it is a note, take it again holding the camera "
                  "still")
    else:
        reason = "no recording note found (no markers and no grid of boards)"
    return PageError(reason, path, f"page {number}")


#: Two notes side by side or one above the other in one scan or photo: their markers are there twice.
#: Read as one page, one of the two was read and the other lost without a word.
TWO_NOTES = "two notes in one picture (their printed markers are there twice): scan or photograph each page on its own"

#: Why a mirror-image page is refused rather than read: see :func:`_mirrored`.
MIRRORED = "the page is mirrored (a mirror-image scan or photo): flip it and scan again"

#: The back of a sheet in a two-sided scan: its only marks are the other side's print showing through, mirrored
#: and faint. Its markers are found flipped, or its boards' lines (the same mirrored) found without them, as on a
#: mirror-image photo; what tells the two apart is how faint the page was (:attr:`PageImage.washed_out`).
SHOW_THROUGH = ("blank page: nothing printed on it, only the other side of the sheet showing through "
                "(the back of a two-sided scan?)")
#: A mirrored page whose darkest marks were less than this much darker than its paper is a sheet's back:
#: show-through is fainter than the faintest print of a front.
SHOW_THROUGH_BELOW = 0.3
#: A page found by its grid alone (no markers) is a mirror image when its header boxes' upright edges do not
#: stand out where the template puts them (:func:`~digitise.vision.grid.upright_edge_contrast` under this)...
UPRIGHT_EDGES = 0.2
#: ...and stand out by this much more on the page flipped: the boards' lines look the same mirrored, the boxes
#: do not.
MIRROR_MARGIN = 0.05


def _mirrored(small: np.ndarray, templates: Sequence[Template], ids: Sequence[int]) -> bool:
    """Whether the page's printed markers fit a template once the image is flipped left to right.

    A phone's front camera takes mirror images. ArUco markers are not
    symmetric, so none is found on such a page, and the grid path alone
    would fit the page's lines in mirror order and read garbage. Looked for
    only on pages where no marker was found. Such a page is refused rather
    than read flipped: everything read is placed in the image's own pixels
    (the review's boxes, the overlays), which a flipped reading would not be.
    """
    flipped = detect_markers(cv2.flip(small, 1), ids)
    return len(flipped) >= 2 and any(fit_markers(flipped, t.markers, t.page_mm) is not None for t in templates)


def _fit_page(small: np.ndarray, templates: Sequence[Template], source: str, number: int,
              washed_out: float | None = None) -> tuple[Template, PageFit, dict[int, np.ndarray]] | None:
    """The best-fitting template and its page fit on the working copy (markers first, then the grid).

    Raises :class:`PageError` for a mirror-image page, or for the back of a sheet when such a page
    was faint (``washed_out``: :data:`SHOW_THROUGH_BELOW`).
    """
    ids = sorted({m.id for t in templates for m in t.markers})
    repeated: set[int] = set()
    markers = detect_markers(small, ids, repeated=repeated)
    if len(repeated) >= 2:
        raise PageError(TWO_NOTES, source, f"page {number}")
    if not markers and ids and _mirrored(small, templates, ids):
        raise _mirror_image(source, number, washed_out)
    fits = [(t, fit_markers(markers, t.markers, t.page_mm)) for t in templates]
    marked = [(t, f) for t, f in fits if f is not None]
    if marked:
        template, fit = min(marked, key=lambda tf: (tf[1].method != "markers", tf[1].residual_mm))
        return template, fit, {}
    try:
        by_lines = _by_lines(small, templates)
    except LayoutError as exc:
        raise LayoutError(exc.reason, source, f"page {number}") from None
    if by_lines is not None:
        template, homography = by_lines
        rotation = rotation_of(homography, template.page_mm)
        # Said in the page's readings, and so in the report's notes (see digitise.pipeline.MIRRORED_PRINT_METHOD).
        method = "lines, mirrored print" if mirrored(template.boards[0]) else "lines"
        method += f", turned {rotation}" if rotation else ""
        return template, PageFit(homography, method, (), rotation, 0.0), {}
    grids = [(t, find_grid(small, t)) for t in templates]
    found = [(t, g) for t, g in grids if g is not None]
    if not found:
        return None
    template, (fit, per_board) = min(found, key=lambda tg: (-len(tg[1][1]), tg[1][0].residual_mm))
    if _mirrored_grid(small, template, fit.homography, [t for t, _ in found]):
        raise _mirror_image(source, number, washed_out)
    return template, fit, per_board


def _by_lines(small: np.ndarray, templates: Sequence[Template]) -> tuple[Template, np.ndarray] | None:
    """The page's boards fitted from its own lines (:func:`~digitise.vision.layout.fit_layout`): the template
    and its homography (mm -> px of ``small``).

    A print one of ``templates`` describes without markers (a layout file of
    ``digitise layout``) is placed as that template; another print gets the
    template fitted. None when no grid of boards is seen, or when the page
    is digitise's own print (with markers in its template), which its own
    fit places, as always. Raises :class:`LayoutError` for a page that may be
    turned and whose print does not say which way up (see
    :func:`~digitise.vision.layout.way_up`).
    """
    try:
        fitted = fit_layout(small)
    except LayoutError:
        return None
    # digitise's own print is never mirrored: its lines alone say it is one (its dots may look like numbers).
    if any(print_map(fitted.template, t, sides=False) is not None for t in templates if t.markers):
        return None
    way_up(fitted)
    for template in templates:
        onto = print_map(fitted.template, template)
        if onto is not None and not template.markers:
            return template, fitted.homography @ onto
    return fitted.template, fitted.homography


def _mirror_image(source: str, number: int, washed_out: float | None) -> PageError:
    """The error for a page seen mirrored: the back of a sheet when it was that faint, else a mirror-image picture."""
    back = washed_out is not None and washed_out < SHOW_THROUGH_BELOW
    return PageError(SHOW_THROUGH if back else MIRRORED, source, f"page {number}")


def _mirrored_grid(small: np.ndarray, template: Template, homography: np.ndarray,
                   templates: Sequence[Template]) -> bool:
    """Whether a page fitted by its grid of boards to ``template`` is a mirror image (see :data:`UPRIGHT_EDGES`).

    Its markers, when it has any, were not found, so :func:`_mirrored` could
    not tell; read, a mirror image gives mirrored digits in mirrored squares.
    The flipped page is fitted to each of ``templates`` whose grid fitted the
    page: a faint back fits the other paper size about as well as its own.
    """
    if not template.fields:
        return False
    as_is = upright_edge_contrast(small, homography, list(template.fields.values()))
    if as_is >= UPRIGHT_EDGES:
        return False
    flipped = np.ascontiguousarray(cv2.flip(small, 1))
    for other in templates:
        found = find_grid(flipped, other)
        rects = list(other.fields.values())
        if found is not None and upright_edge_contrast(flipped, found[0].homography, rects) >= as_is + MIRROR_MARGIN:
            return True
    return False


def locate(
    page: PageImage, template: Template | Sequence[Template]
) -> tuple[PageFit, tuple[BoardFit, ...], np.ndarray, float, Template]:
    """The page fit (template mm -> image px) and every board's refined fit (image px).

    ``template`` may be several candidates (paper sizes): the one that fits
    best is used and returned. Also returns the working copy and its scale.
    Raises :class:`PageError` when the page is not a readable note.
    """
    where = f"page {page.number}"
    # Reduce first, then take the darkest channel: a quarter of the work on a colour scan.
    reduced, factor = _reduce(page.image)
    small = darkest_channel(reduced)
    templates = [template] if isinstance(template, Template) else list(template)
    fitted = _fit_page(small, templates, page.source, page.number, page.washed_out)
    if fitted is None:
        raise _not_a_note(small, page.source, page.number)
    chosen, fit, per_board = fitted
    if fit.px_per_mm < MIN_PX_PER_MM * factor:
        scale = fit.px_per_mm / factor
        raise PageError(f"the note is too small to read ({scale:.1f} px per mm, about {scale * 25.4:.0f} dpi): "
                        f"scan it at 150 dpi or more", page.source, where)
    enough = MIN_BOARDS_WITH_MARKERS if fit.method == "markers" else MIN_BOARDS
    boards, outside, missing = _refine_boards(small, chosen, per_board, fit.homography, factor)
    smeared = 0.0
    if not outside and len(chosen.boards) - len(missing) < enough:
        # Lines too faint to find: on a picture smeared one way (camera shake) the lines across the
        # smear are spread thin, and a lower bar finds them; a picture smeared further is refused.
        smeared = smear_mm(boards)
        if SMEARED_MM <= smeared <= SMEAR_READABLE_MM:
            boards, outside, missing = _refine_boards(small, chosen, per_board, fit.homography, factor,
                                                      bar=SMEARED_LINE_BAR)
    if outside:
        raise PageError(f"part of the note lies outside the image (board {', '.join(map(str, outside))}): half a page?",
                        page.source, where)
    if len(chosen.boards) - len(missing) < enough:
        why = f"only {len(chosen.boards) - len(missing)} of {len(chosen.boards)} boards show their lines"
        if SMEARED_MM <= smeared <= SMEAR_AT_MOST:
            raise PageError(f"the picture is smeared by about {smeared:.1f} mm (did the camera move?): {why}; take it "
                            "again holding the camera still", page.source, where)
        raise PageError(f"no recording note found: {why}", page.source, where)
    full_fit = PageFit(_scale(1.0 / factor) @ fit.homography, fit.method,
                       tuple(FoundMarker(m.id, m.corners / factor) for m in fit.markers), fit.rotation, fit.residual_mm)
    return full_fit, tuple(boards), small, factor, chosen


def _refine_boards(small: np.ndarray, template: Template, per_board: dict[int, np.ndarray], homography: np.ndarray,
                   factor: float, bar: float | None = None) -> tuple[list[BoardFit], list[int], list[int]]:
    """Every board's lines measured: the fits (full-image px), the boards outside the image, those not found."""
    boards: list[BoardFit] = []
    outside: list[int] = []
    missing: list[int] = []
    for board in template.boards:
        local = refine_board(small, per_board.get(board.index, homography), board, bar=bar)
        if board.index in per_board and local.found < MIN_FOUND:
            # Its own outline was found misshapen (print or a stain joined to it): its lines are looked for
            # where the page fit puts them too, and the better measure is kept.
            again = refine_board(small, homography, board, bar=bar)
            if again.found > local.found:
                local = again
        if not board_inside(local.crossings, small.shape, slack=2.0):
            outside.append(board.index)
        elif local.found < MIN_FOUND:
            missing.append(board.index)
        boards.append(scaled_fit(local, 1.0 / factor))
    return boards, outside, missing


def presence_bar(cell: Any) -> float:
    """The dark area (mm^2) a cell must hold to count as written: specks and dust scale with its area."""
    return float(PRESENCE_MM2 + PRESENCE_PER_MM2 * max(0.0, cell.w * cell.h - 150.0))


def _presence(fit: BoardFit, board: BoardGeometry, specks: bool = False) -> dict[str, float]:
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


#: A header field is cut where the top boards' lines show the page really lies, when that is further
#: than this (mm) from where the page fit puts it: a bowed page in a photo (the fit is right at the
#: markers, in the corners, and the header lies between them). Flat pages are cut as fitted.
HEADER_SHIFT_MM = 0.5
#: The top boards' line crossings within this (mm) of a field, along the page, give its shift.
HEADER_SHIFT_REACH_MM = 15.0


def header_homographies(fit: PageFit, boards: Sequence[BoardFit], template: Template) -> dict[str, np.ndarray]:
    """Page mm -> image px for the header fields the page fit misplaces, moved as the top boards' lines are.

    The fields sit just above the top row of boards, whose top line is
    measured crossing by crossing (:func:`~digitise.vision.grid.refine_board`).
    Where those crossings lie more than :data:`HEADER_SHIFT_MM` from where
    the page fit puts them, the fields above them are moved as much. A
    curled page had its match length read from the field's edge ("3" as
    "2" at 0.08): only fields that need it are returned.
    """
    rects = {b.index: board_rect(b) for b in template.boards}
    top = min(r.y for r in rects.values())
    shifts: list[tuple[float, np.ndarray]] = []
    for bfit in boards:
        board = template.board(bfit.index)
        if rects[bfit.index].y > top + 1.0:
            continue
        lines = board_lines(board)
        where = np.array([[x, lines.ys[0]] for x in lines.xs])
        measured = np.asarray(bfit.measured[0], bool)
        moved = bfit.crossings[0] - project(fit.homography, where)
        shifts += [(float(x), d) for x, d, m in zip(lines.xs, moved, measured, strict=True) if m]
    out: dict[str, np.ndarray] = {}
    if not shifts:
        return out
    xs = np.array([x for x, _ in shifts])
    for name, rect in template.fields.items():
        near = (xs >= rect.x - HEADER_SHIFT_REACH_MM) & (xs <= rect.right + HEADER_SHIFT_REACH_MM)
        if not near.any():
            off = np.abs(xs - (rect.x + rect.w / 2))
            near = off == off.min()
        dx, dy = np.median(np.array([d for (_, d), n in zip(shifts, near, strict=True) if n]), axis=0)
        if math.hypot(dx, dy) / fit.px_per_mm > HEADER_SHIFT_MM:
            out[name] = np.array([[1.0, 0.0, dx], [0.0, 1.0, dy], [0.0, 0.0, 1.0]]) @ fit.homography
    return out


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


def analyse_page(
    page: PageImage,
    template: Template | Sequence[Template],
    reader: CellAnalyser | None = None,
    *,
    header: bool = True,
    clock: Callable[[], float] | None = None,
    defer_text: bool = False,
    match_fields: bool = True,
) -> tuple[PageReading, PageAnalysis]:
    """Read one page: the :class:`PageReading` and what was found where (for overlays).

    With ``defer_text`` the header's written text fields are cut out but not
    read: they come back in :attr:`PageAnalysis.pending_text` for one
    tesseract run over many pages (:func:`read_pages` does this). Without
    ``match_fields`` the header gives the page number only, not the fields
    that are the same on every page of a match (length, players, event...).
    """
    import time

    tick = clock or time.perf_counter
    timings: dict[str, float] = {}
    t0 = tick()
    fit, boards, small, factor, template = locate(page, template)
    del small, factor
    t1 = tick()
    timings["locate"] = t1 - t0
    image = page.image
    jobs: list[tuple[int, str, np.ndarray, np.ndarray]] = []
    for board, bfit in zip(template.boards, boards, strict=True):
        amounts = _presence(bfit, board, specks=image.ndim == 2)
        for name in board.cells:
            cell = board.cells[name]
            # Specks and dust scale with the area: the long centre strip needs a little more.
            if amounts[name] < presence_bar(cell):
                continue
            quad = bfit.cell_quad(name)
            ink = cell_ink(image, quad, board, name, closed=bool(template.style.get(CLOSED_EDGES, 0.0)))
            if ink_amount(ink) < MIN_INK_MM2:
                continue
            jobs.append((board.index, name, quad, ink))
    t2 = tick()
    timings["cells"] = t2 - t1
    if reader is None:
        from digitise.vision.cells import default_reader

        reader = default_reader()
    analyses = reader.analyse_many([(ink, cell_kind(name)) for _, name, _, ink in jobs]) if jobs else []
    from digitise.vision.cells import obscured

    # The reader has never seen a blot: it calls one empty, or letters (a names board, which would
    # drop the board without a word). Said unreadable, the board is explained and flagged instead.
    analyses = [obscured(result) if solid_share(ink) > BLOT_SHARE else result
                for (_, _, _, ink), result in zip(jobs, analyses, strict=True)]
    t3 = tick()
    timings["read"] = t3 - t2
    seen: list[SeenCell] = []
    per_board: dict[int, dict[str, Any]] = {b.index: {"cells": {}, "crossed": 0.0, "arrow": 0.0, "letters": 0.0} for b in template.boards}
    for (index, name, quad, ink), result in zip(jobs, analyses, strict=True):
        entry = per_board[index]
        candidates = tuple(result.candidates)
        seen.append(SeenCell(index, name, quad, ink, candidates, result.whole))
        if not (len(candidates) == 1 and candidates[0].digits == () and candidates[0].probability >= 0.999):
            entry["cells"][name] = candidates
        if name == "centre":
            entry["crossed"] = max(entry["crossed"], float(result.crossed))
        entry["arrow"] = max(entry["arrow"], float(result.arrow))
        entry["letters"] = max(entry["letters"], float(result.letters))
    touching: dict[int, dict[str, tuple[str, ...]]] = {b.index: {} for b in template.boards}
    for index, name, _, ink in jobs:
        over = sides_crossed(name, ink)
        if over and name in per_board[index]["cells"]:
            touching[index][name] = over
    readings = tuple(
        BoardReading(
            index=bfit.index,
            cells=dict(sorted(per_board[bfit.index]["cells"].items())),
            crossed=round(per_board[bfit.index]["crossed"], 6),
            arrow=round(per_board[bfit.index]["arrow"], 6),
            letters=round(per_board[bfit.index]["letters"], 6),
            box=bfit.box(margin_px=BOARD_BOX_MARGIN_MM * fit.px_per_mm),
            touches=touching[bfit.index],
        )
        for bfit in boards
    )
    # How the page was found and which paper it is: not header fields proper, but the review shows them.
    fields: dict[str, Any] = {
        "method": {"value": fit.method, "confidence": 1.0},
        "template": {"value": template.name, "confidence": 1.0},
    }
    pending: tuple[tuple[str, np.ndarray], ...] = ()
    if header:
        from digitise.vision.header import NUMBER_FIELDS, number_fields, ocr_fields, text_field_images

        moved = header_homographies(fit, boards, template)
        fields.update(number_fields(image, fit.homography, template, reader,
                                    NUMBER_FIELDS if match_fields else ("page",), per_field=moved))
        pending = tuple(text_field_images(image, fit.homography, template, per_field=moved)) if match_fields else ()
        if not defer_text:
            fields.update(ocr_fields(pending))
            pending = ()
    timings["header"] = tick() - t3
    page_reading = PageReading(page.source, page.number, readings, fields)
    return page_reading, PageAnalysis(fit, boards, tuple(seen), timings, pending)


def read_page(page: PageImage, template: Template | Sequence[Template], reader: CellAnalyser | None = None, *, header: bool = True) -> PageReading:
    """The readings of one page (see :func:`analyse_page`)."""
    return analyse_page(page, template, reader, header=header)[0]


@dataclass(frozen=True, slots=True)
class ReadOutcome:
    """The readings of the pages that could be read, an error for each that could not, and a notice for each
    page read from a damaged file (as far as it decoded: its turns want a look)."""

    readings: Readings
    errors: tuple[DigitiseError, ...]
    notices: tuple[str, ...] = ()
    #: The point and off squares read whole, with what the model saw in them (not kept in readings files).
    hand: tuple[HandCell, ...] = ()


def resolve_templates(template: Template | str | Path | None) -> list[Template]:
    """The candidate templates: the one named, or every known paper when None."""
    if template is None:
        return [load_template(name) for name in template_names()]
    if isinstance(template, Template):
        return [template]
    return [load_template(template)]


def _each_told(items: Iterable[Any], on_page: Callable[[], None] | None) -> Iterator[Any]:
    """``items``, calling ``on_page`` after each one's loop body is done (the loop asks for the next)."""
    for item in items:
        yield item
        if on_page is not None:
            on_page()


def _overlay_names(paths: Sequence[str | Path], debug_dir: str | Path | None, overwrite: bool) -> list[str]:
    """The overlays' names per input, their targets checked before any page is read (none exists unforced)."""
    if debug_dir is None:
        return []
    from digitise.vision.debug import overlay_names, overlay_path
    from digitise.vision.images import page_count

    names = overlay_names(paths)
    folder = Path(debug_dir)
    check_outputs([overlay_path(folder, name, n) for p, name in zip(paths, names, strict=True)
                   for n in range(1, page_count(p) + 1)], overwrite, inputs=[Path(p) for p in paths])
    return names


def _kept(error: DigitiseError) -> DigitiseError:
    """``error`` without its traceback, to be kept to the end of the pile: the traceback holds the frames that
    raised it, and with them the page's pictures (a 500-page PDF of blank pages held 5 GB)."""
    error.__traceback__ = error.__context__ = error.__cause__ = None
    return error


#: A board with ink in this many cells records no turn (a turn writes at most four digits, and its centre):
#: garbage decoded from damaged picture data, or a scribble.
INKED_ALL_OVER = 12


def _inked_all_over(reading: PageReading) -> bool:
    """Whether some board of ``reading`` has ink in :data:`INKED_ALL_OVER` cells or more."""
    return any(len(board.cells) >= INKED_ALL_OVER for board in reading.boards)


def read_pages(
    paths: Iterable[str | Path],
    template: Template | str | Path | None = None,
    reader: CellAnalyser | None = None,
    *,
    header: bool = True,
    debug_dir: str | Path | None = None,
    overwrite: bool = False,
    on_page: Callable[[], None] | None = None,
) -> ReadOutcome:
    """Read every page of every file in order; bad files and pages are collected, not fatal.

    ``template`` is a template, a paper name or geometry file, or None to
    find the paper from each page. With ``debug_dir``, an overlay of each
    page is drawn there (replacing old ones only with ``overwrite``). Raises
    only for a bad template, a shipped model missing, or an overlay that cannot be written. The
    paths are one match: the header fields it shares (length, players,
    event...) are read from its first HEADER_PAGES pages whose header holds
    writing, every page's own number from every page. ``on_page`` is called
    after each page, read or not (a batch's progress bar).
    """
    templates = resolve_templates(template)
    if reader is None:
        from digitise.vision.cells import check_models

        check_models()  # a broken install is one error before the first page, not one per page
    keep_freed_memory()
    pages: list[PageReading] = []
    texts: list[tuple[tuple[str, np.ndarray], ...]] = []
    errors: list[DigitiseError] = []
    notices: list[str] = []
    hand: list[HandCell] = []
    # Pages whose header held the match's fields: only the first HEADER_PAGES, as every page repeats them.
    headed = 0
    paths = list(paths)
    overlays = _overlay_names(paths, debug_dir, overwrite)
    drawn: list[Path] = []
    try:
        for k, path in enumerate(paths):
            try:
                size = Path(path).stat().st_size
            except OSError:
                size = None  # iter_pages says why
            try:
                for item in _each_told(iter_pages(path), on_page):
                    if isinstance(item, DigitiseError):
                        errors.append(item)
                        continue
                    try:
                        # Header text waits for one tesseract run over all pages (its start-up is most of its cost).
                        reading, analysis = analyse_page(item, templates, reader, header=header, defer_text=True,
                                                         match_fields=headed < HEADER_PAGES)
                    except PageError as exc:
                        damage = picture_damage(item)
                        if damage is not None:
                            # The damage is the cause: "no note found" alone would send the user to the wrong fix.
                            exc = PageError(f"{damage}, and what decodes is not a readable note: {exc.reason}",
                                            exc.path, exc.where)
                        errors.append(_kept(exc))
                        continue
                    # A PDF's damaged picture is decoded silently (PDFium patches it): looked for strictly only on a
                    # page with a board inked all over, which no turn writes.
                    damage = picture_damage(item) if _inked_all_over(reading) else item.damage
                    if damage is not None:
                        notices.append(f"{item.source}: page {item.number}: {damage}; read as far as it decodes: "
                                       "check its turns")
                    if analysis.pending_text or "match_length" in reading.header:
                        headed += 1
                    pages.append(replace(reading, source_bytes=size))
                    hand.extend(HandCell(reading.source, reading.page, cell.board, cell.name, cell.whole)
                                for cell in analysis.cells if cell.whole is not None)
                    texts.append(analysis.pending_text)
                    if debug_dir is not None:
                        from digitise.vision.debug import overlay_path, write_overlay

                        target = overlay_path(Path(debug_dir), overlays[k], item.number)
                        write_overlay(item, analysis, target, overwrite=overwrite)
                        drawn.append(target)
            except InputError as exc:
                errors.append(_kept(exc))
        if any(texts):
            from digitise.vision.header import ocr_pages

            for k, text in enumerate(ocr_pages(texts)):
                if text:
                    pages[k] = replace(pages[k], header={**pages[k].header, **text})
    except BaseException:
        # Stopped (Ctrl-C) or failed: the overlays drawn so far go too, or the same command, run again, would
        # refuse to replace them.
        for target in drawn:
            with contextlib.suppress(OSError):
                target.unlink()
        raise
    return ReadOutcome(Readings(tuple(pages)), tuple(errors), tuple(notices), tuple(hand))


__all__ = [
    "HandCell",
    "PageAnalysis",
    "ReadOutcome",
    "SeenCell",
    "analyse_page",
    "cell_kind",
    "cell_slot",
    "cut_cell",
    "locate",
    "read_page",
    "read_pages",
]
