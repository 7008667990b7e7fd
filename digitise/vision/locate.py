"""Finding the note on a page: the page fit (markers, the print's own lines, or the grid of boards) and every
board's lines measured, or a :class:`~digitise.errors.PageError` saying why the page is not a readable note
(blank, mirrored, two notes, too small, smeared, half a page)."""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from digitise.errors import LayoutError, PageError
from digitise.notation.template import Template
from digitise.vision.grid import (
    MIN_FOUND,
    SMEARED_LINE_BAR,
    BoardFit,
    board_inside,
    darkness,
    edge_balance,
    find_grid,
    mirrored,
    refine_board,
    scaled_fit,
    settle_board,
    smear_mm,
    upright_edge_contrast,
)
from digitise.vision.images import PageImage, darkest_channel
from digitise.vision.layout import MIN_SEEN_SHARE, LayoutFit, fit_layout, print_map, same_boards, way_up
from digitise.vision.page import FoundMarker, PageFit, detect_markers, fit_markers, rotation_of

#: Long side of the working copy used for locating (pixels).
WORK_LONG_SIDE = 1800
#: A working copy longer than this whose lines do not fit is tried again halved (:func:`_by_lines`).
HALVE_ABOVE = 1400
#: A page needs at least this many of its boards found ...
MIN_BOARDS = 6
#: (as large a share of a note of fewer boards, another print's: :func:`_boards_needed`) ...
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


#: How a page found from its lines says in its readings' method which of its boards were seen but not read
#: ("lines, boards not read 3, 5": boards of unequal size whose squares could not be fitted).
UNREAD_METHOD = "boards not read "


def _boards_needed(boards: int) -> int:
    """How many of a note's ``boards`` must show their lines (:data:`MIN_BOARDS` of eight)."""
    return int(np.ceil(MIN_SEEN_SHARE * boards - 1e-9))


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
              washed_out: float | None = None, full: np.ndarray | None = None
              ) -> tuple[Template, PageFit, dict[int, np.ndarray]] | None:
    """The best-fitting template and its page fit on the working copy (markers first, then the grid; ``full``,
    the page at full resolution, for a print's small figures).

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
        by_lines = _by_lines(small, templates, full)
    except LayoutError as exc:
        raise LayoutError(exc.reason, source, f"page {number}") from None
    if by_lines is not None:
        template, homography, unread = by_lines
        rotation = rotation_of(homography, template.page_mm)
        # Said in the page's readings, and so in the report's notes (see digitise.pipeline.MIRRORED_PRINT_METHOD).
        method = "lines, mirrored print" if mirrored(template.boards[0]) else "lines"
        method += f", {UNREAD_METHOD}{', '.join(map(str, unread))}" if unread else ""
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


def _by_lines(small: np.ndarray, templates: Sequence[Template], full: np.ndarray | None = None
              ) -> tuple[Template, np.ndarray, tuple[int, ...]] | None:
    """The page's boards fitted from its own lines (:func:`~digitise.vision.layout.fit_layout`): the template,
    its homography (mm -> px of ``small``) and the boards seen but not read (boards of unequal size whose
    squares could not be fitted: see :attr:`~digitise.vision.layout.LayoutFit.unread`).

    A print one of ``templates`` describes without markers (a layout file of
    ``digitise layout``) is placed as that template; another print gets the
    template fitted. None when no grid of boards is seen, or when the page
    is digitise's own print (with markers in its template), which its own
    fit places, as always. Raises :class:`LayoutError` for a page that may be
    turned and whose print does not say which way up (see
    :func:`~digitise.vision.layout.way_up`).
    """
    try:
        fitted, back = _fit_layout_halved_if_need_be(small, full)
    except LayoutError:
        return None
    # digitise's own print is never mirrored: its lines alone say it is one (its dots may look like numbers).
    if any(print_map(fitted.template, t, sides=False) is not None or same_boards(fitted.template, t)
           for t in templates if t.markers):
        return None
    for template in templates:
        onto = print_map(fitted.template, template)
        if onto is not None and not template.markers:
            way_up(fitted, vouched=True)
            return template, back @ fitted.homography @ onto, ()
    way_up(fitted)
    return fitted.template, back @ fitted.homography, fitted.unread


def _fit_layout_halved_if_need_be(small: np.ndarray, full: np.ndarray | None) -> tuple[LayoutFit, np.ndarray]:
    """:func:`fit_layout` of ``small``, or of it halved when that fails on a working copy over
    :data:`HALVE_ABOVE` px long (a page scanned just small enough not to be reduced keeps the speckle of a
    photocopy that a reduction averages away); with the scale that maps the fit's px back onto ``small``."""
    try:
        return fit_layout(small, full=full), _scale(1.0)
    except LayoutError:
        if max(small.shape[:2]) <= HALVE_ABOVE:
            raise
    halved = cv2.resize(small, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
    return fit_layout(halved, full=full), _scale(2.0)


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
    fitted = _fit_page(small, templates, page.source, page.number, page.washed_out, page.image)
    if fitted is None:
        raise _not_a_note(small, page.source, page.number)
    chosen, fit, per_board = fitted
    if fit.px_per_mm < MIN_PX_PER_MM * factor:
        scale = fit.px_per_mm / factor
        raise PageError(f"the note is too small to read ({scale:.1f} px per mm, about {scale * 25.4:.0f} dpi): "
                        f"scan it at 150 dpi or more", page.source, where)
    enough = MIN_BOARDS_WITH_MARKERS if fit.method == "markers" else min(MIN_BOARDS, _boards_needed(len(chosen.boards)))
    # A page placed by its lines was fitted a turn but no shear: its boards are measured until they settle.
    settle = fit.method.startswith("lines")
    boards, outside, missing = refine_boards(small, chosen, per_board, fit.homography, factor, settle=settle)
    smeared = 0.0
    if not outside and len(chosen.boards) - len(missing) < enough:
        # Lines too faint to find: on a picture smeared one way (camera shake) the lines across the
        # smear are spread thin, and a lower bar finds them; a picture smeared further is refused.
        smeared = smear_mm(boards)
        if SMEARED_MM <= smeared <= SMEAR_READABLE_MM:
            boards, outside, missing = refine_boards(small, chosen, per_board, fit.homography, factor,
                                                      bar=SMEARED_LINE_BAR, settle=settle)
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


def refine_boards(small: np.ndarray, template: Template, per_board: dict[int, np.ndarray], homography: np.ndarray,
                   factor: float, bar: float | None = None, *, settle: bool = False
                   ) -> tuple[list[BoardFit], list[int], list[int]]:
    """Every board's lines measured: the fits (full-image px), the boards outside the image, those not found.

    With ``settle``, each board is measured again from its own fit until it settles
    (:func:`~digitise.vision.grid.settle_board`): for a ``homography`` that misses the page's shear."""
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
        if settle:
            local = settle_board(small, local, board, bar=bar)
        if not board_inside(local.crossings, small.shape, slack=2.0):
            outside.append(board.index)
        elif local.found < MIN_FOUND:
            missing.append(board.index)
        boards.append(scaled_fit(local, 1.0 / factor))
    return boards, outside, missing
