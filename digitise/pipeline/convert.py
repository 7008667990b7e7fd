"""One match converted: pages read, solved and written (``scan``), and its halves ``read`` and ``solve``.

Each reads top to bottom as the list of its steps (:mod:`digitise.pipeline.steps`).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from digitise.errors import ExitCode, InputError, OutputError
from digitise.fileio import check_inputs, check_outputs, read_text, real_path, write_atomic
from digitise.notation.mat import holds_name
from digitise.notation.readings import load_readings, readings_to_json, renumbered
from digitise.pipeline.options import ScanOptions, ScanSummary
from digitise.pipeline.steps import (
    adapt,
    add_scan_notes,
    header_order,
    match_files,
    notes_on_pages,
    numbered,
    read_match,
    readings_sources,
    recorded_page_files,
    review_of,
    scanned_sources,
    solver,
    some_page_read,
    some_turn_found,
    template_file,
    write_match,
)
from digitise.solve.corrections import page_files
from digitise.solve.reasons import Reason

#: Allocations between two collections of Python's youngest generation (its default is 700). Reading
#: and solving a page makes and drops some 10^5 short-lived objects: with the default, a page cost
#: ~26 collections and 6.7 ms of CPU; with this, 1.3 and 2.5 ms (the same readings and match).
GC_YOUNG_THRESHOLD = 10_000


def _fewer_collections() -> None:
    """Collect the youngest generation less often in a process that scans (set once, never lowered)."""
    young, *older = gc.get_threshold()
    if 0 < young < GC_YOUNG_THRESHOLD:
        gc.set_threshold(GC_YOUNG_THRESHOLD, *older)


def scan(pages: Sequence[Path], output: Path, report: Path | None, options: ScanOptions, *,
         on_page: Callable[[], None] | None = None) -> ScanSummary:
    """Read ``pages`` as one match, solve it, write the ``.mat`` (and the report).

    Raises :class:`DigitiseError` when nothing usable could be read. Pages that
    fail on their own are listed in the summary (and flagged in the report);
    the rest of the match is still written. ``on_page`` is called after each
    page is read (progress).
    """
    if not pages:
        raise InputError("no pages given")
    check_inputs(pages)
    _fewer_collections()
    files = match_files(output, report, options, [*pages], with_readings=True)
    reviewed = review_of(options, page_files(pages))
    options = reviewed.options
    outcome = read_match(pages, options, on_page)
    readings, order_notes = header_order(outcome.readings, options)
    notes = [*(Reason.PAGE_DAMAGED.said(notice) for notice in outcome.notices), *reviewed.notes, *order_notes,
             *notes_on_pages(readings, ordered_by_header=options.order == "header")]
    readings, hand = numbered(readings, outcome.hand)
    solve = solver(reviewed)
    solved = adapt(readings, hand, solve(readings), solve, options)
    some_turn_found(solved.result, pages)
    kept = add_scan_notes(solved.result, notes)
    write_match(solved.result, files, options, {**scanned_sources(pages, outcome), **kept}, solved.readings)
    return ScanSummary.of(output, report, len(solved.readings.pages), solved.result,
                          tuple(err.message for err in outcome.errors), notes)


@dataclass(frozen=True, slots=True)
class ReadSummary:
    """What ``digitise read`` wrote: the pages read, the pages it could not read, and the pages read from a
    damaged file (one line each)."""

    output: str
    pages: int
    skipped: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def exit_code(self) -> ExitCode:
        """FLAGGED when a page was skipped or read from a damaged file (as ``scan``), else OK."""
        return ExitCode.FLAGGED if self.skipped or self.notes else ExitCode.OK


def read_to_file(pages: Sequence[Path], output: Path, *, template: str | None = None, header: bool = True,
                 debug_dir: Path | None = None, overwrite: bool = False,
                 on_page: Callable[[], None] | None = None) -> ReadSummary:
    """``digitise read``: ``pages`` read into the readings file ``output`` (for ``digitise solve``).

    Pages are numbered in pile order, as ``scan`` numbers them (each file
    numbers its own pages from 1). A page that cannot be read is skipped and
    listed; raises :class:`DigitiseError` when no page at all could be read.
    """
    # imported here: keeps start-up light (OpenCV, NumPy)
    from digitise.vision.read import read_pages

    if not pages:
        raise InputError("no pages given")
    check_inputs(pages)
    if debug_dir is not None and real_path(debug_dir) == real_path(output):
        raise OutputError(f"named for two outputs (also --debug-dir {debug_dir}): give each its own name", output)
    check_outputs([output], overwrite, inputs=[*pages, *template_file(template)])
    outcome = some_page_read(read_pages(list(pages), template, header=header, debug_dir=debug_dir,
                                        overwrite=overwrite, on_page=on_page), pages)
    write_atomic(output, readings_to_json(renumbered(outcome.readings)), overwrite=overwrite)
    return ReadSummary(str(output), len(outcome.readings.pages), tuple(err.message for err in outcome.errors),
                       outcome.notices)


def load_roster(path: str | Path) -> tuple[str, ...]:
    """A tournament's entrants from a text file, one name a line (blank lines and ``#`` comments skipped).

    Raises :class:`InputError` naming the file for one that cannot be read, holds no name, or holds
    a name a ``.mat`` file cannot (a colon, control characters).
    """
    names: list[str] = []
    for number, line in enumerate(read_text(path, "a roster").splitlines(), 1):
        name = " ".join(line.split())
        if not name or name.startswith("#"):
            continue
        if not holds_name(name):
            raise InputError(f"line {number}: a .mat file cannot hold the name {name!r} (a colon?)", Path(path))
        if name not in names:
            names.append(name)
    if not names:
        raise InputError("no names in it: give one entrant a line", Path(path))
    return tuple(names)


def solve_readings(readings_path: Path, output: Path, report: Path | None, options: ScanOptions) -> ScanSummary:
    """``digitise solve``: a readings file (from ``digitise read``) solved into the ``.mat`` (and report).

    Corrections are checked as ``scan`` checks them: a file that does not fit
    these readings is refused, naming the boards.
    """
    files = match_files(output, report, options, [readings_path], with_readings=False)
    read = load_readings(readings_path)
    recorded = recorded_page_files(read)
    # Readings from before `read` recorded the sizes are looked up where their files still are.
    reviewed = review_of(options, recorded or page_files([Path(p.source) for p in read.pages if p.source]))
    notes = [*notes_on_pages(read), *reviewed.notes]
    # As scan numbers them: a `read` of several files numbers each file's pages from 1.
    readings = renumbered(read)
    result = solver(reviewed)(readings)
    some_turn_found(result, [readings_path])
    kept = add_scan_notes(result, notes)
    write_match(result, files, reviewed.options, {**kept, **readings_sources(readings_path, report, recorded)}, None)
    return ScanSummary.of(output, report, len(readings.pages), result, scan_notes=notes)
