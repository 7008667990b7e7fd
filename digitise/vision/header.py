"""The header: match length and page number by the digit model, the text fields by tesseract.

Best effort: a header field that is empty or unreadable is simply absent or
has a low confidence; the readings never depend on it. When the tesseract
program is not installed the text fields come back empty with a warning and
everything else works. On a bowed page the fields are cut where the top
boards' lines show they lie (:func:`header_homographies`).

Tesseract runs in this process through tesserocr when it is installed and
finds tesseract's English data, else as the ``tesseract`` program through
pytesseract. Loading the model is most of a run's cost (~170 ms of CPU for
four fields that take ~20 to read): the program loads it for every match,
the library once per process, which in a batch is once per worker.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from digitise.notation.template import Rect, Template, board_rect
from digitise.vision.cell_types import CellKind
from digitise.vision.grid import BoardFit, board_lines
from digitise.vision.images import darkest_channel
from digitise.vision.ink import CELL_MARGIN_MM, CELL_PX_PER_MM, extract_ink, ink_amount
from digitise.vision.page import PageFit, project

log = logging.getLogger(__name__)

NUMBER_FIELDS: tuple[str, ...] = ("match_length", "page")
TEXT_FIELDS: tuple[str, ...] = ("event", "date", "round", "player_top", "player_bottom")
#: Resolution the text fields' handwriting is given to tesseract at (about 200 dpi): most names right.
OCR_PX_PER_MM = 8.0
#: A field with less ink than this (mm^2) is empty.
FIELD_INK_MM2 = 0.6
#: Resolution (px per mm) a text field is looked at to see whether it holds writing.
CHECK_PX_PER_MM = 5.0
#: Paper kept either side of a field's writing for tesseract (mm).
OCR_SIDE_MM = 3.0
#: At most this many fields go into one tesseract run (a very tall image slows its layout analysis).
MAX_FIELDS_PER_RUN = 48
TESSERACT_MISSING = "tesseract is not installed: header text not read"
#: Where tesseract's language data is looked for by the in-process engine when TESSDATA_PREFIX is
#: not set (Debian's tesseract-ocr packages, then the usual source-build places).
TESSDATA_DIRS = (
    "/usr/share/tesseract-ocr/5/tessdata",
    "/usr/share/tesseract-ocr/4.00/tessdata",
    "/usr/share/tessdata",
    "/usr/local/share/tessdata",
)

_warned = False


def _cut(grey: np.ndarray, homography: np.ndarray, rect: Any, px_per_mm: float, margin_mm: float) -> np.ndarray:
    """The field rectangle ``rect`` (mm) cut upright from ``grey`` at ``px_per_mm``, with a margin."""
    shift = np.array([[1.0 / px_per_mm, 0.0, rect.x - margin_mm], [0.0, 1.0 / px_per_mm, rect.y - margin_mm], [0.0, 0.0, 1.0]])
    size = (round((rect.w + 2 * margin_mm) * px_per_mm), round((rect.h + 2 * margin_mm) * px_per_mm))
    return cv2.warpPerspective(grey, np.asarray(homography, np.float64) @ shift, size,
                               flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE)


def _field_ink(grey: np.ndarray, homography: np.ndarray, rect: Any, px_per_mm: float = CELL_PX_PER_MM) -> np.ndarray:
    """The handwriting in a header field's box (see :func:`~digitise.vision.ink.extract_ink`) at ``px_per_mm``."""
    p, m = px_per_mm, CELL_MARGIN_MM
    patch = darkest_channel(_cut(grey, homography, rect, p, m))
    # Only strokes inside the box count: the printed label sits just above it.
    own = (round(m * p), round(m * p), round((m + rect.w) * p), round((m + rect.h) * p))
    return extract_ink(patch, [m * p, (m + rect.h) * p], [m * p, (m + rect.w) * p], px_per_mm=p, own=own)


def number_fields(image: np.ndarray, homography: np.ndarray, template: Template, reader: Any,
                  names: Sequence[str] = NUMBER_FIELDS, *,
                  per_field: Mapping[str, np.ndarray] | None = None) -> dict[str, Any]:
    """The digit fields ``names`` (match length, page number) read by the cell reader, only those with writing.

    ``per_field``: a homography of its own for some fields (where the page lies otherwise than fitted).
    """
    fields: dict[str, Any] = {}
    jobs = []
    for name in names:
        rect = template.fields.get(name)
        if rect is None:
            continue
        ink = _field_ink(image, (per_field or {}).get(name, homography), rect)
        if ink_amount(ink) >= FIELD_INK_MM2:
            jobs.append((name, ink))
    if jobs:
        results = reader.analyse_many([(ink, CellKind.HEADER_NUMBER) for _, ink in jobs])
        for (name, _), result in zip(jobs, results, strict=True):
            candidates = [c for c in result.candidates if c.digits]
            if candidates:
                best = candidates[0]
                fields[name] = {"value": "".join(map(str, best.digits)), "confidence": round(float(best.probability), 4)}
    return fields


def text_field_images(image: np.ndarray, homography: np.ndarray, template: Template, *,
                      per_field: Mapping[str, np.ndarray] | None = None) -> list[tuple[str, np.ndarray]]:
    """The text fields that hold writing, ready for :func:`ocr_pages`: (name, uint8 grey image).

    Each is the field's handwriting alone (see :func:`~digitise.vision.ink.extract_ink`), dark on
    white at OCR_PX_PER_MM, cut to the written stretch of the box. Empty fields are left out: they
    cost tesseract time and can only give noise. ``per_field`` as for :func:`number_fields`.
    """
    written: list[tuple[str, np.ndarray]] = []
    for name in TEXT_FIELDS:
        rect = template.fields.get(name)
        if rect is None:
            continue
        placed = (per_field or {}).get(name, homography)
        # Whether anything is written is seen at a coarser scale: a quarter of the pixels.
        ink = _field_ink(image, placed, rect, CHECK_PX_PER_MM)
        if ink_amount(ink, CHECK_PX_PER_MM) < FIELD_INK_MM2:
            continue
        # Only the written stretch of the box goes to tesseract (plus some paper either side): its
        # line recogniser costs in proportion to the line's length, and a name fills a fifth of it.
        columns = np.flatnonzero(ink.sum(axis=0) > 0.0) / CHECK_PX_PER_MM - CELL_MARGIN_MM  # mm from rect.x
        left = max(0.0, float(columns[0]) - OCR_SIDE_MM)
        right = min(rect.w, float(columns[-1]) + OCR_SIDE_MM)
        stretch = Rect(rect.x + left, rect.y, max(right - left, 1.0), rect.h)
        # The handwriting alone, dark on white: no box lines, paper grain, shadow or show-through
        # for tesseract to take for letters.
        clean = _field_ink(image, placed, stretch, OCR_PX_PER_MM)
        written.append((name, np.round(255.0 * (1.0 - clean)).astype(np.uint8)))
    return written


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


def read_header(grey: np.ndarray, homography: np.ndarray, template: Template, reader: Any | None = None) -> dict[str, Any]:
    """Header fields as ``{name: {"value": str, "confidence": float}}`` (only fields with writing).

    ``grey`` is the page (grey or BGR); ``homography`` maps template mm to its pixels; ``reader`` is the
    cell reader for the number fields (skipped when None). The text fields cost one tesseract run;
    to read many pages, collect :func:`text_field_images` and give them all to :func:`ocr_pages`.
    """
    fields: dict[str, Any] = number_fields(grey, homography, template, reader) if reader is not None else {}
    fields.update(ocr_fields(text_field_images(grey, homography, template)))
    return fields


def ocr_fields(images: Sequence[tuple[str, np.ndarray]]) -> dict[str, Any]:
    """Several one-line fields of one page read by one tesseract run (see :func:`ocr_pages`)."""
    return ocr_pages([images])[0]


def ocr_pages(pages: Sequence[Sequence[tuple[str, np.ndarray]]]) -> list[dict[str, Any]]:
    """The text fields of many pages read together: ``{name: {"value", "confidence"}}`` per page.

    Starting tesseract (loading its model) costs about 130 ms of CPU, reading
    a field a few: every field of every page is stacked into one image with
    white space between them, read in one run (or a few, for very many
    pages), and each word goes back to the field whose band holds it.
    """
    out: list[dict[str, Any]] = [{} for _ in pages]
    bands = [(k, name, img) for k, fields in enumerate(pages) for name, img in fields]
    for start in range(0, len(bands), MAX_FIELDS_PER_RUN):
        for (k, name), value in _ocr_stack(bands[start:start + MAX_FIELDS_PER_RUN]).items():
            out[k][name] = value
    return out


def _ocr_stack(images: Sequence[tuple[int, str, np.ndarray]]) -> dict[tuple[int, str], Any]:
    """One tesseract run over fields stacked into one image; results keyed by (page, field)."""
    if not images:
        return {}
    gap = 24
    width = max(img.shape[1] for _, _, img in images) + 2 * gap
    bands: list[tuple[tuple[int, str], int, int]] = []
    rows: list[np.ndarray] = [np.full((gap, width), 255, np.uint8)]
    y = gap
    for page, name, img in images:
        row = np.full((img.shape[0], width), 255, np.uint8)
        row[:, gap:gap + img.shape[1]] = img
        rows.append(row)
        bands.append(((page, name), y, y + img.shape[0]))
        y += img.shape[0]
        rows.append(np.full((gap, width), 255, np.uint8))
        y += gap
    sheet = np.vstack(rows)
    data = tesseract_words(sheet, "--psm 6")
    if data is None:
        return {}
    if "warning" in data:
        return {key: dict(data) for key, _, _ in bands}
    words: dict[tuple[int, str], list[tuple[int, str, float]]] = {key: [] for key, _, _ in bands}
    for text, conf, top, height, left in zip(data["text"], data["conf"], data["top"], data["height"], data["left"],
                                             strict=False):
        if not str(text).strip() or float(conf) < 0:
            continue
        middle = int(top) + int(height) // 2
        for key, y0, y1 in bands:
            if y0 - gap // 2 <= middle < y1 + gap // 2:
                words[key].append((int(left), str(text), float(conf)))
                break
    out: dict[tuple[int, str], Any] = {}
    for key, found in words.items():
        if key[1] in NAME_FIELDS:
            found = [(left, name, conf) for left, text, conf in found if (name := _name_word(text))]
        if found:
            found.sort()
            out[key] = {"value": " ".join(w for _, w, _ in found),
                        "confidence": round(sum(c for _, _, c in found) / len(found) / 100.0, 3)}
    return out


#: The text fields that hold a player's name.
NAME_FIELDS = frozenset({"player_top", "player_bottom"})
#: What may end a name (a closing bracket of "(NL)", the point of "Jr."): other marks at either end
#: of a word are the field's edge, a shadow's or a fold's line, or a speck read as "|", "'" or "-".
_NAME_ENDS = ")."


def _name_word(text: str) -> str:
    """One word OCR read in a name field, without stray marks at its ends; empty when it holds no letter or digit."""
    start, end = 0, len(text)
    while start < end and not text[start].isalnum() and text[start] != "(":
        start += 1
    while end > start and not text[end - 1].isalnum() and not (text[end - 1] in _NAME_ENDS and end - 1 > start):
        end -= 1
    word = text[start:end]
    return word if any(ch.isalnum() for ch in word) else ""


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    """tesseract (through pytesseract, which passes on os.environ) with one OpenMP thread.

    Its OpenMP threads spin while they wait: on a few short lines they add a
    quarter to its CPU time and take a core another page could use.
    """
    old = os.environ.get("OMP_THREAD_LIMIT")
    if old is None:
        os.environ["OMP_THREAD_LIMIT"] = "1"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("OMP_THREAD_LIMIT", None)


def tessdata_folder() -> str | None:
    """The folder holding tesseract's English model, or None when there is none."""
    prefix = os.environ.get("TESSDATA_PREFIX")
    for folder in ([prefix] if prefix else []) + list(TESSDATA_DIRS):
        if (Path(folder) / "eng.traineddata").is_file():
            return folder
    return None


@functools.cache
def tesseract_engine(psm: int) -> Any | None:
    """tesseract in this process (a tesserocr API) for page segmentation mode ``psm``, or None.

    None when tesserocr is not installed or no English model is found: the
    tesseract program is run instead. One per mode and process, kept for the
    process's life (each holds the loaded model). Looked up on this module:
    replaced by one giving None, the program is always run.
    """
    try:
        import tesserocr  # optional: without it the tesseract program is run
    except ImportError:
        return None
    folder = tessdata_folder()
    if folder is None:
        return None
    try:
        return tesserocr.PyTessBaseAPI(path=folder, lang="eng", psm=psm)
    except RuntimeError as exc:
        log.debug("tesserocr could not start (%s): running the tesseract program", exc)
        return None


def _engine_words(engine: Any, image: np.ndarray) -> dict[str, Any] | None:
    """The in-process engine's word table for a grey ``image``, shaped as pytesseract's; None when it fails."""
    import tesserocr  # optional: installed, as tesseract_engine made the engine with it

    grey = np.ascontiguousarray(image, np.uint8)
    height, width = grey.shape
    engine.SetImageBytes(grey.tobytes(), width, height, 1, width)
    if not engine.Recognize():
        return None
    table: dict[str, list[Any]] = {"text": [], "conf": [], "top": [], "height": [], "left": []}
    level = tesserocr.RIL.WORD
    for word in tesserocr.iterate_level(engine.GetIterator(), level):
        box = word.BoundingBox(level)
        text = word.GetUTF8Text(level)
        if box is None or text is None:
            continue
        left, top, _, bottom = box
        table["text"].append(text)
        table["conf"].append(float(word.Confidence(level)))
        table["top"].append(top)
        table["height"].append(bottom - top)
        table["left"].append(left)
    return table


def tesseract_words(image: np.ndarray, config: str) -> dict[str, Any] | None:
    """tesseract's word table for ``image``; a warning entry when it is missing; None when it fails.

    ``config`` is a page segmentation mode as the program takes it, ``--psm N``.
    Every header text is read through here, looked up on this module: another OCR
    giving the same table (``text``, ``conf``, ``top``, ``height``, ``left``) can stand in.
    """
    engine = tesseract_engine(int(config.removeprefix("--psm").strip()))
    if engine is not None:
        try:
            return _engine_words(engine, image)
        except RuntimeError as exc:
            log.debug("tesseract failed on the header: %s", exc)
            return None
    try:
        import pytesseract  # optional here: without it the text fields come back empty, as without tesseract
    except ImportError:
        return _missing()
    try:
        with _one_thread():
            result: dict[str, Any] = pytesseract.image_to_data(image, config=config, output_type=pytesseract.Output.DICT)
    except pytesseract.TesseractNotFoundError:
        return _missing()
    except (pytesseract.TesseractError, RuntimeError, OSError) as exc:
        log.debug("tesseract failed on the header: %s", exc)
        return None
    return result


def _missing() -> dict[str, Any]:
    global _warned
    if not _warned:
        log.warning(TESSERACT_MISSING)
        _warned = True
    return {"value": "", "confidence": 0.0, "warning": TESSERACT_MISSING}
