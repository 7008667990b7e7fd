"""The header of another print found from its own lines: boxes outside the boards, named by label or by order.

A note of another print (:mod:`digitise.vision.layout`) may print the
header's boxes above its boards, below them, or not at all. They are the
closed boxes the page rules outside its boards: wider than a point square,
about as tall, in a row. Which box holds which field is told by the printed
label beside each (above it or left of it, read by tesseract: "Event",
"Black (top)", "Match to", ...), and where the print labels none, by the
fields' order on digitise's own note: one row of seven (event, date, round,
Black's name, White's name, match length, page) or its two rows of three and
four. A template file names all seven fields or none
(:mod:`digitise.notation.template`): a header whose boxes cannot all be
named is not used, and the match's names and length are then not read, as
on a print without a header.

Pure functions on the upright working image (:func:`find_header`) in its
pixels, the boards given as their outer boxes.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from digitise.notation.template import FIELD_NAMES, Rect
from digitise.vision import header as page_header

#: The fields in the order digitise's own note prints them: its two rows, or read on as one row.
ROWS_ORDER: tuple[tuple[str, ...], ...] = (
    ("event", "date", "round"),
    ("player_top", "player_bottom", "match_length", "page"),
)
ONE_ROW_ORDER: tuple[str, ...] = tuple(name for row in ROWS_ORDER for name in row)
#: Words of a printed label naming a field (lower case; near misses of OCR count too, see :func:`field_of_label`).
LABEL_WORDS: Mapping[str, str] = {
    "event": "event", "tournament": "event", "club": "event",
    "date": "date",
    "round": "round",
    "black": "player_top", "top": "player_top",
    "white": "player_bottom", "bottom": "player_bottom",
    "match": "match_length", "length": "match_length", "points": "match_length",
    "page": "page", "sheet": "page",
}
#: A header box is at least this many point squares wide ...
MIN_BOX_PITCHES = 1.5
#: ... and between these many tall.
BOX_HEIGHT_PITCHES = (0.5, 2.5)
#: Every side of a box is ruled along at least this share of its length.
BOX_SIDES = 0.8
#: A box's top and bottom lines may climb or fall this much (px per px) across it.
BOX_SLANT = 0.015
#: A box's emptiest row inside is dark along at most this share of it.
BOX_INSIDE = 0.2
#: Printed text beside the boards (point numbers, row labels, board numbers) lies within this many point squares
#: of a board's outer lines: left out when looking for boxes.
BESIDE_BOARD_PITCHES = (1.0, 0.7)
#: A label is looked for above a box up to this share of its height, and left of it up to this share.
LABEL_ABOVE = 0.7
LABEL_LEFT = 2.5
#: A printed label's letters stand between these shares of the box's height.
LETTER_HEIGHT = (0.12, 0.6)
#: Labels are given to tesseract enlarged this much (their letters are a dozen pixels tall on the working image).
LABEL_ZOOM = 3.0


@dataclass(frozen=True, slots=True)
class HeaderBox:
    """One ruled box outside the boards (px of the upright working image): its sides' middle lines."""

    left: float
    top: float
    right: float
    bottom: float

    @property
    def height(self) -> float:
        """The box's height (px)."""
        return self.bottom - self.top


def header_boxes(binary: np.ndarray, boards: Sequence[tuple[float, float, float, float]], pitch: float
                 ) -> list[list[HeaderBox]]:
    """The closed boxes ruled outside the boards, in rows top to bottom, each row left to right.

    ``binary``: the upright page's dark marks (1 on 0); ``boards``: their
    outer boxes (left, top, right, bottom px); ``pitch``: a point square's
    width (px). Handwriting and printed text are not lines: only marks
    as long as a fraction of a square, joined into a box ruled on all four
    sides, count.
    """
    mask = binary.copy()
    across, down = (int(share * pitch) for share in BESIDE_BOARD_PITCHES)
    for left, top, right, bottom in boards:
        mask[max(int(top) - down, 0):int(bottom) + down, max(int(left) - across, 0):int(right) + across] = 0
    # Small breaks in a line (a thin line's grain, damage) are closed along it, not the gaps between neighbouring
    # boxes (a couple of mm); a line a little off the level steps a pixel across: thickened first.
    closing = max(3, int(0.08 * pitch)) | 1
    along = cv2.morphologyEx(cv2.dilate(mask, np.ones((3, 1), np.uint8)), cv2.MORPH_CLOSE, np.ones((1, closing), np.uint8))
    along = cv2.morphologyEx(along, cv2.MORPH_OPEN, np.ones((1, max(int(0.6 * pitch), 5)), np.uint8))
    sides = cv2.morphologyEx(cv2.dilate(mask, np.ones((1, 2), np.uint8)), cv2.MORPH_CLOSE, np.ones((closing, 1), np.uint8))
    sides = cv2.morphologyEx(sides, cv2.MORPH_OPEN, np.ones((max(int(0.35 * pitch), 5), 1), np.uint8))
    lines = cv2.bitwise_or(along, sides)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(lines, connectivity=8)
    found: list[HeaderBox] = []
    low, high = BOX_HEIGHT_PITCHES
    for label in range(1, count):
        x, y, w, h, _ = (int(v) for v in stats[label])
        if w < MIN_BOX_PITCHES * pitch or h < low * pitch:
            continue
        box = _box(labels[y:y + h, x:x + w] == label)
        if box is None:
            continue
        left, top, right, bottom = box
        if right - left >= MIN_BOX_PITCHES * pitch and low * pitch <= bottom - top <= high * pitch:
            found.append(HeaderBox(x + left, y + top, x + right, y + bottom))
    return _rows(found)


def _box(own: np.ndarray) -> tuple[float, float, float, float] | None:
    """The box one joined set of lines rules (left, top, right, bottom: its sides' middles, px in ``own``), or None.

    Its sides are the outermost rows and columns dark along most of it; what
    touches it from outside (a printed label's bracket) is not.
    """
    # A box a little off the level (a photographed page's header lies otherwise than its boards) has its top and
    # bottom lines step across rows: each row counts what lies within a few rows of it.
    slack = max(1, int(BOX_SLANT * own.shape[1]))
    level = cv2.dilate(own.astype(np.uint8), np.ones((2 * slack + 1, 1), np.uint8))
    rows = np.flatnonzero(level.mean(axis=1) >= BOX_SIDES)
    if rows.size < 2:
        return None
    top, bottom = _run_middle(rows, first=True), _run_middle(rows, first=False)
    if bottom - top < 3:
        return None
    band = own[int(top):int(bottom) + 1]
    columns = np.flatnonzero(band.mean(axis=0) >= BOX_SIDES)
    if columns.size < 2:
        return None
    left, right = _run_middle(columns, first=True), _run_middle(columns, first=False)
    inset = max(int(0.1 * (bottom - top)), 2) + 2 * slack
    inside = own[int(top) + inset:int(bottom) - inset + 1, int(left) + inset:int(right) - inset + 1]
    # Open inside somewhere between its top and bottom lines, above or below what is written in it (a line of
    # printed capitals has its letters' strokes in every row).
    if right - left < 3 or inside.size == 0 or inside.mean(axis=1).min() > BOX_INSIDE:
        return None
    return left, top, right, bottom


def _run_middle(indices: np.ndarray, *, first: bool) -> float:
    """The middle of the first (or last) run of consecutive ``indices``."""
    breaks = np.flatnonzero(np.diff(indices) > 1)
    run = indices[:breaks[0] + 1] if first and breaks.size else indices[breaks[-1] + 1:] if breaks.size else indices
    return float(run.mean())


def _rows(boxes: Sequence[HeaderBox]) -> list[list[HeaderBox]]:
    """``boxes`` in rows, top to bottom: taken by the height of their middles, a box joins the row of the one above
    it when their middles lie within half a box's height (a row slanting across a photographed page stays one)."""
    rows: list[list[HeaderBox]] = []
    previous = 0.0
    for box in sorted(boxes, key=lambda b: (b.top + b.bottom) / 2):
        middle = (box.top + box.bottom) / 2
        if rows and middle - previous <= 0.5 * box.height:
            rows[-1].append(box)
        else:
            rows.append([box])
        previous = middle
    return [sorted(row, key=lambda b: b.left) for row in rows]


def by_order(rows: Sequence[Sequence[HeaderBox]]) -> dict[str, HeaderBox]:
    """The fields named by their order on digitise's own note: one row of seven boxes, or rows of three and four.

    Empty for any other count (the order then says nothing).
    """
    counts = [len(row) for row in rows]
    if counts == [len(ONE_ROW_ORDER)]:
        return dict(zip(ONE_ROW_ORDER, rows[0], strict=True))
    if counts == [len(names) for names in ROWS_ORDER]:
        return {name: box for names, row in zip(ROWS_ORDER, rows, strict=True) for name, box in zip(names, row, strict=True)}
    return {}


def label_areas(binary: np.ndarray, rows: Sequence[Sequence[HeaderBox]]) -> list[tuple[HeaderBox, tuple[int, int, int, int]]]:
    """Each box with the area (x0, y0, x1, y1 px) just above it or left of it that holds printed letters, if one does.

    Letters are marks as tall as a label's (:data:`LETTER_HEIGHT` of the box)
    outside every box: the writing inside the boxes and their lines are not.
    """
    boxes = [box for row in rows for box in row]
    clear = binary.copy()
    for box in boxes:
        clear[max(int(box.top) - 2, 0):int(box.bottom) + 3, max(int(box.left) - 2, 0):int(box.right) + 3] = 0
    height, width = binary.shape[:2]
    out: list[tuple[HeaderBox, tuple[int, int, int, int]]] = []
    for box in boxes:
        h = box.height
        above = (int(box.left), max(int(box.top - LABEL_ABOVE * h), 0), int(box.right), max(int(box.top) - 2, 0))
        left = (max(int(box.left - LABEL_LEFT * h), 0), int(box.top), max(int(box.left) - 2, 0), int(box.bottom))
        for x0, y0, x1, y1 in (above, left):
            letters = _letters(clear[y0:y1, x0:x1], h)
            if letters is not None:
                lx0, ly0, lx1, ly1 = letters
                pad = max(int(0.1 * h), 2)
                out.append((box, (max(x0 + lx0 - pad, 0), max(y0 + ly0 - pad, 0), min(x0 + lx1 + pad, width),
                                  min(y0 + ly1 + pad, height))))
                break
    return out


def _letters(area: np.ndarray, box_height: float) -> tuple[int, int, int, int] | None:
    """The bounds (x0, y0, x1, y1) of the letter-sized marks in ``area``, or None when it holds fewer than two."""
    if area.size == 0:
        return None
    count, _, stats, _ = cv2.connectedComponentsWithStats(np.ascontiguousarray(area, np.uint8), connectivity=8)
    low, high = LETTER_HEIGHT
    kept = [stats[k] for k in range(1, count)
            if low * box_height <= stats[k][3] <= high * box_height and stats[k][2] <= high * box_height * 1.5]
    if len(kept) < 2:
        return None
    return (min(int(s[0]) for s in kept), min(int(s[1]) for s in kept),
            max(int(s[0] + s[2]) for s in kept), max(int(s[1] + s[3]) for s in kept))


def label_image(grey: np.ndarray, area: tuple[int, int, int, int]) -> np.ndarray:
    """A label's area of the upright working image, enlarged for tesseract (uint8 grey, dark on light)."""
    x0, y0, x1, y1 = area
    crop = grey[y0:y1, x0:x1]
    return cv2.resize(crop, None, fx=LABEL_ZOOM, fy=LABEL_ZOOM, interpolation=cv2.INTER_CUBIC)


def field_of_label(text: str) -> str | None:
    """The field a printed label names ("Black (top)": ``player_top``), or None when its words name none or two."""
    named = set()
    for word in text.lower().replace("(", " ").replace(")", " ").replace(":", " ").split():
        # A short word must be read exactly: "to" of "Match to" is not "top".
        if len(word) >= 4:
            close = difflib.get_close_matches(word, list(LABEL_WORDS), n=1, cutoff=0.75)
        else:
            close = [word] if word in LABEL_WORDS else []
        if close:
            named.add(LABEL_WORDS[close[0]])
    return named.pop() if len(named) == 1 else None


def by_labels(labelled: Sequence[tuple[HeaderBox, str]]) -> dict[str, HeaderBox]:
    """The fields named by their boxes' printed labels (box, label text): only fields one box's label names."""
    named: dict[str, list[HeaderBox]] = {}
    for box, text in labelled:
        field = field_of_label(text)
        if field is not None:
            named.setdefault(field, []).append(box)
    return {field: boxes[0] for field, boxes in named.items() if len(boxes) == 1}


def as_fields(named: Mapping[str, HeaderBox], scale: float) -> dict[str, Rect]:
    """The named boxes as the template's header fields (mm: ``scale`` px per mm), in the template's field order;
    empty unless every field is named (a template gives all its header fields or none)."""
    if set(named) != set(FIELD_NAMES):
        return {}

    def mm(v: float) -> float:
        return round(v / scale + 0.0, 2)

    return {name: Rect(mm(named[name].left), mm(named[name].top), round(mm(named[name].right) - mm(named[name].left), 2),
                       round(mm(named[name].bottom) - mm(named[name].top), 2)) for name in FIELD_NAMES}


def find_header(grey: np.ndarray, binary: np.ndarray, boards: Sequence[tuple[float, float, float, float]],
                pitch: float, scale: float) -> dict[str, Rect]:
    """The header fields of another print (mm of its fitted template: ``scale`` px per mm), or none.

    ``grey`` and ``binary``: the upright working image and its dark marks;
    ``boards``: the boards' outer boxes (px); ``pitch``: a point square's
    width (px). The boxes' printed labels name them when the print has labels
    (one tesseract run for all) when they name every field; else their order
    does (see the module docstring). Empty when the page rules no header's boxes or they cannot
    all be named.
    """
    rows = header_boxes(binary, boards, pitch)
    if not rows:
        return {}
    areas = label_areas(binary, rows)
    if areas:
        # Looked up on the module: the header's tesseract run (a test may swap it).
        read = page_header.ocr_pages([[(f"label-{k}", label_image(grey, area)) for k, (_, area) in enumerate(areas)]])[0]
        labelled = [(box, str(read.get(f"label-{k}", {}).get("value", ""))) for k, (box, _) in enumerate(areas)]
        fields = as_fields(by_labels(labelled), scale)
        if fields:
            return fields
    return as_fields(by_order(rows), scale)


def draw_fields(canvas: np.ndarray, fields: Mapping[str, Rect], to_canvas: np.ndarray) -> None:
    """The header fields drawn on ``canvas`` (BGR) where ``to_canvas`` (mm -> px) puts them, each with its name, in
    purple: the overlay of ``digitise layout`` shows which box was taken for which field."""
    for name, rect in fields.items():
        pts = cv2.perspectiveTransform(np.array(rect.corners, np.float64).reshape(-1, 1, 2), to_canvas).reshape(-1, 2)
        corners = np.round(pts).astype(np.int32)
        cv2.polylines(canvas, [corners], True, (200, 0, 160), 2, cv2.LINE_AA)
        cv2.putText(canvas, name, (int(corners[0][0]) + 4, int(corners[0][1]) - 5), cv2.FONT_HERSHEY_SIMPLEX, 0.5,
                    (200, 0, 160), 1, cv2.LINE_AA)
