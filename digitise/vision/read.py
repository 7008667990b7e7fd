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

This module reads a match's pages (:func:`read_pages`); the steps live in
:mod:`.locate` (1-3: the page and its boards), :mod:`.presence` (which
cells hold ink), :mod:`.cut` (a cell cut out) and :mod:`.analyse` (one
page read, with the header: :mod:`.header`). Their public names are
importable from here.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from digitise.errors import DigitiseError, InputError, PageError
from digitise.fileio import check_outputs
from digitise.notation.readings import PageReading, Readings
from digitise.notation.template import Template, load_template, template_names
from digitise.vision import header as page_header
from digitise.vision.analyse import CellAnalyser, PageAnalysis, SeenCell, analyse_page, cell_kind, read_page
from digitise.vision.cells import WholeCell, check_models
from digitise.vision.cut import cell_ink, cut_cell, sides_crossed
from digitise.vision.debug import overlay_names, overlay_path, write_overlay
from digitise.vision.grid import cell_slot
from digitise.vision.header import header_homographies
from digitise.vision.images import iter_pages, keep_freed_memory, page_count, picture_damage
from digitise.vision.locate import MIRRORED, SHOW_THROUGH, WORK_LONG_SIDE, locate

log = logging.getLogger(__name__)

#: A match's own header fields (length, players, event...) are read from this many pages with a written
#: header, enough for the solver's vote to outvote one misread; later pages give their page number only.
HEADER_PAGES = 3


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
                        target = overlay_path(Path(debug_dir), overlays[k], item.number)
                        write_overlay(item, analysis, target, overwrite=overwrite)
                        drawn.append(target)
            except InputError as exc:
                errors.append(_kept(exc))
        if any(texts):
            # Looked up on the module (``header`` here is the flag): a test may swap tesseract's run.
            for k, text in enumerate(page_header.ocr_pages(texts)):
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

#: Reading pages, wherever its parts live (:mod:`.locate`, :mod:`.presence`, :mod:`.cut`, :mod:`.analyse`,
#: :mod:`.header`), importable from here as before.
__all__ = [
    "HEADER_PAGES",
    "INKED_ALL_OVER",
    "MIRRORED",
    "SHOW_THROUGH",
    "WORK_LONG_SIDE",
    "CellAnalyser",
    "HandCell",
    "PageAnalysis",
    "ReadOutcome",
    "Readings",
    "SeenCell",
    "analyse_page",
    "cell_ink",
    "cell_kind",
    "cell_slot",
    "cut_cell",
    "header_homographies",
    "locate",
    "read_page",
    "read_pages",
    "resolve_templates",
    "sides_crossed",
]
