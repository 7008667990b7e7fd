"""Reading one page: the note located, its written cells cut and read in one batch, the header read, all gathered
into a :class:`~digitise.notation.readings.PageReading` (and, for overlays, what was found where)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from digitise.notation.readings import BoardReading, CellReading, PageReading
from digitise.notation.template import BOARD_BOX_MARGIN_MM, Template
from digitise.vision import cells
from digitise.vision import header as page_header
from digitise.vision.cells import CellKind, WholeCell, obscured
from digitise.vision.cut import cell_ink, sides_crossed
from digitise.vision.fit_measure import board_fit_score, board_lines_px
from digitise.vision.grid import BoardFit
from digitise.vision.images import PageImage
from digitise.vision.ink import ink_amount, solid_share
from digitise.vision.layout import CLOSED_EDGES
from digitise.vision.locate import locate
from digitise.vision.page import PageFit
from digitise.vision.presence import dark_area_by_cell, presence_bar

#: A cut-out cell with less ink than this (mm^2) after line removal is empty.
MIN_INK_MM2 = 0.25
#: A cell more of which than this is solid ink is blotted or scribbled over, not written in: what it
#: holds cannot be read (see :func:`~digitise.vision.cells.obscured`).
BLOT_SHARE = 0.17


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
    if name == "centre":
        return CellKind.CENTRE
    if name in ("Bres", "Wres"):
        return CellKind.RESULT
    return CellKind.POINT


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
        amounts = dark_area_by_cell(bfit, board, specks=image.ndim == 2)
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
        reader = cells.default_reader()  # looked up on its module: a test or benchmark may swap the shipped reader
    analyses = reader.analyse_many([(ink, cell_kind(name)) for _, name, _, ink in jobs]) if jobs else []
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
    unsure = _unsure_boards(fit, template, boards)
    readings = tuple(
        BoardReading(
            index=bfit.index,
            cells=dict(sorted(per_board[bfit.index]["cells"].items())),
            crossed=round(per_board[bfit.index]["crossed"], 6),
            arrow=round(per_board[bfit.index]["arrow"], 6),
            letters=round(per_board[bfit.index]["letters"], 6),
            box=bfit.box(margin_px=BOARD_BOX_MARGIN_MM * fit.px_per_mm),
            touches=touching[bfit.index],
            fit=unsure.get(bfit.index),
            lines=board_lines_px(bfit) if bfit.index in unsure else None,
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
        # Looked up on the module (``header`` here is the flag): a test may swap how the fields are cut and read.
        moved = page_header.header_homographies(fit, boards, template)
        fields.update(page_header.number_fields(image, fit.homography, template, reader,
                                                page_header.NUMBER_FIELDS if match_fields else ("page",), per_field=moved))
        pending = (tuple(page_header.text_field_images(image, fit.homography, template, per_field=moved))
                   if match_fields else ())
        if not defer_text:
            fields.update(page_header.ocr_fields(pending))
            pending = ()
    timings["header"] = tick() - t3
    page_reading = PageReading(page.source, page.number, readings, fields)
    return page_reading, PageAnalysis(fit, boards, tuple(seen), timings, pending)


def _unsure_boards(fit: PageFit, template: Template, boards: Sequence[BoardFit]) -> dict[int, float]:
    """The boards of a page placed by its own lines (another print) whose squares may be misplaced, and how sure
    each sits right (:func:`~digitise.vision.fit_measure.board_fit_score` under 1). A page placed by its
    markers or by digitise's own grid is placed by its print's known proportions: not measured."""
    if not fit.method.startswith("lines"):
        return {}
    scores = {bfit.index: round(board_fit_score(bfit, board), 4)
              for board, bfit in zip(template.boards, boards, strict=True)}
    return {index: score for index, score in scores.items() if score < 1.0}


def read_page(page: PageImage, template: Template | Sequence[Template], reader: CellAnalyser | None = None, *, header: bool = True) -> PageReading:
    """The readings of one page (see :func:`analyse_page`)."""
    return analyse_page(page, template, reader, header=header)[0]
