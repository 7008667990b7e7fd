"""Board pictures: where a board's picture lies (its page image and box), the page loaded, and the crops of a
corrected board's squares saved (and forgotten) for learning the hand."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from digitise.errors import DigitiseError, PageError
from digitise.fileio import write_atomic
from digitise.notation.template import BOARD_BOX_MARGIN_MM, BoardGeometry, board_rect, load_template

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class BoardSource:
    """Where one board's picture is: the page image file, which page of it, and the board's pixel box."""

    image: Path
    box: tuple[int, int, int, int] | None
    #: 0-based: which readable page of a multi-page file (TIFF, PDF) this is.
    frame: int = 0


def load_page(source: BoardSource) -> Any:
    """The :class:`~digitise.vision.images.PageImage` of ``source``, through the reader's own loader.

    The reader's loader is used so a PDF or multi-page TIFF gives the same
    pixels (and so the same board boxes) as when it was read. None when the
    file or that page cannot be read.
    """
    # imported here: keeps the review server's start-up light (OpenCV, the reader)
    from digitise.vision.images import iter_pages

    try:
        readable = (item for item in iter_pages(source.image) if not isinstance(item, DigitiseError))
        return next((item for k, item in enumerate(readable) if k == source.frame), None)
    except DigitiseError:
        return None


def load_page_image(source: BoardSource) -> Any:
    """The page picture of ``source`` as a BGR array; None if unreadable."""
    # imported here: keeps the review server's start-up light (OpenCV)
    import cv2

    page = load_page(source)
    if page is None:
        return None
    image = page.image
    return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR) if image.ndim == 2 else image


#: The paper kept around a board's picture: this share of its box's width and height on each side.
CROP_MARGIN = 0.04


def cell_boxes(board: BoardGeometry, box: tuple[int, int, int, int]) -> dict[str, list[float]]:
    """Where each square of ``board`` lies on its picture (:meth:`ReviewSession.crop_png`): left, top, width and
    height as shares of the picture's width and height.

    ``box`` is the board's box in the page (its cells and BOARD_BOX_MARGIN_MM around them), the picture that
    box and CROP_MARGIN around it. An upright board's squares fall exactly there; a board photographed at an
    angle, or cut at the page's edge, roughly: enough to point at a square.
    """
    rect = board_rect(board)
    _, _, w, h = box
    dx, dy = int(w * CROP_MARGIN), int(h * CROP_MARGIN)
    width, height = w + 2 * dx, h + 2 * dy
    sx = w / (rect.w + 2 * BOARD_BOX_MARGIN_MM)
    sy = h / (rect.h + 2 * BOARD_BOX_MARGIN_MM)
    boxes: dict[str, list[float]] = {}
    for name, cell in board.cells.items():
        left = dx + (cell.x - rect.x + BOARD_BOX_MARGIN_MM) * sx
        top = dy + (cell.y - rect.y + BOARD_BOX_MARGIN_MM) * sy
        boxes[name] = [round(left / width, 4), round(top / height, 4), round(cell.w * sx / width, 4),
                       round(cell.h * sy / height, 4)]
    return boxes


def cut_out(image: Any, box: tuple[int, int, int, int], margin: float) -> Any:
    """``box`` of ``image`` with a small margin, clipped to the image; None when empty."""
    x, y, w, h = box
    dx, dy = int(w * margin), int(h * margin)
    height, width = image.shape[:2]
    x0, y0 = max(0, x - dx), max(0, y - dy)
    x1, y1 = min(width, x + w + dx), min(height, y + h + dy)
    if x1 <= x0 or y1 <= y0:
        return None
    return image[y0:y1, x0:x1]


def save_learning_crops(
    learn_dir: Path, source: BoardSource, cells: Mapping[str, tuple[int, ...]], stem: str, template: str = "a4"
) -> int:
    """File every cell of the corrected board under its label, for ``digitise train``.

    ``DIR/<digits or "empty">/<stem>_<cell>.png`` holds each cell exactly as
    the reader classifies it (:func:`digitise.vision.read.cell_ink`: upright,
    10 px/mm, its own strokes, white ink on black); the board picture and its labels go to
    ``DIR/boards/<stem>.png`` and ``.json``. The cells are found by the
    reader's own page and board fit, so they line up with what was read.
    Returns how many cells were saved (0 when the page cannot be fitted).
    Crops an earlier correction of the board left under other labels are the
    caller's to remove first (:func:`forget_learning_crops`).
    """
    # imported here: keeps the review server's start-up light (OpenCV, the reader)
    import cv2

    from digitise.vision.read import cell_ink, locate

    page = load_page(source)
    if page is None or source.box is None:
        raise PageError("cannot read the page image", source.image)
    saved = 0
    board_index = cells_board = None
    try:
        geometry = load_template(template)
        fit, boards, _, _, chosen = locate(page, geometry)
        del fit
        # The corrected board is the fitted board whose box matches the reading's.
        x, y, w, h = source.box
        centre = (x + w / 2, y + h / 2)
        for bfit in boards:
            bx, by, bw, bh = bfit.box()
            if bx <= centre[0] <= bx + bw and by <= centre[1] <= by + bh:
                board_index, cells_board = bfit.index, bfit
                break
        if cells_board is not None and board_index is not None:
            grey = page.grey
            board_geometry = chosen.board(board_index)
            for name in sorted(board_geometry.cells):
                if name in ("Bres", "Wres") and name not in cells:
                    continue  # result squares are rarely written: an "empty" label there teaches little
                ink = cell_ink(grey, cells_board.cell_quad(name), board_geometry, name)
                if ink.max() <= 1:
                    # The reader's ink mask is 0/1: store it as white ink on black, like digits.png.
                    ink = ink * 255
                label = "".join(str(d) for d in cells.get(name, ())) or "empty"
                ok, encoded = cv2.imencode(".png", ink)
                if ok:
                    write_atomic(learn_dir / label / f"{stem}_{name}.png", encoded.tobytes(), overwrite=True)
                    saved += 1
    except (PageError, DigitiseError, KeyError):
        log.warning("cannot fit the page %s: only the board picture is kept for learning", source.image)
    image = page.grey
    board_crop = cut_out(image, source.box, margin=0.0)
    if board_crop is not None:
        ok, encoded = cv2.imencode(".png", board_crop)
        if ok:
            write_atomic(learn_dir / "boards" / f"{stem}.png", encoded.tobytes(), overwrite=True)
    labels = {
        "source": str(source.image),
        "frame": source.frame,
        "box": list(source.box),
        "cells": {k: list(v) for k, v in sorted(cells.items())},
        "cell_crops": saved,
    }
    write_atomic(learn_dir / "boards" / f"{stem}.json", json.dumps(labels, indent=1) + "\n", overwrite=True)
    return saved


def forget_learning_crops(learn_dir: Path, stem: str) -> int:
    """Remove the cell crops and board picture filed under ``stem`` by :func:`save_learning_crops`; how many."""
    if not learn_dir.is_dir():
        return 0
    gone = 0
    for folder in sorted(p for p in learn_dir.iterdir() if p.is_dir()):
        names = [f"{stem}.png", f"{stem}.json"] if folder.name == "boards" else None
        for path in sorted(folder.iterdir()):
            # A cell crop is <stem>_<cell>.png, and cell names hold no underscore.
            mine = path.name in names if names is not None else (
                path.suffix == ".png" and path.stem.startswith(stem + "_") and "_" not in path.stem[len(stem) + 1:])
            if mine:
                path.unlink(missing_ok=True)
                gone += 1
    return gone
