"""The whole job: pages in, ``.mat`` and report out (``scan``), and many matches at once (``batch``).

``scan`` joins the reader (:mod:`digitise.vision.read`) and the solver
(:mod:`digitise.solve`). ``batch`` runs ``scan`` for every match found in a
folder, in worker processes, and never lets one bad file stop the others.
"""

from __future__ import annotations

import contextlib
import csv
import gc
import io
import json
import logging
import multiprocessing
import os
import signal
import stat
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from digitise.errors import DigitiseError, ExitCode, InputError, OptionError, OutputError
from digitise.fileio import (
    beside,
    check_inputs,
    check_outputs,
    json_document,
    make_folder,
    natural_key,
    read_input,
    read_text,
    real_path,
    why_absent,
    write_atomic,
)
from digitise.game.record import MatchOutcome
from digitise.game.record import outcome as match_outcome

if TYPE_CHECKING:
    from digitise.cluster import Channel, Cluster
    from digitise.notation.readings import PageReading, Readings
    from digitise.solve import SolveResult
    from digitise.vision.read import ReadOutcome

log = logging.getLogger(__name__)

#: Files that hold a whole match's pages (one match per file in a batch).
MATCH_FILE_SUFFIXES = frozenset({".pdf", ".tif", ".tiff"})
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".jpe", ".jfif", ".tif", ".tiff", ".pdf", ".bmp", ".webp"})
#: Pictures that are not read (their pages would be lost without a word): inside a match's folder they
#: are taken as pages, so each is reported as a page that could not be read and the match is flagged.
#: Archives: a match's folder zipped, which a batch cannot look into.
ARCHIVE_SUFFIXES = frozenset({".zip", ".7z", ".rar", ".tar", ".gz", ".tgz", ".bz2", ".xz"})
UNREAD_IMAGE_SUFFIXES = frozenset({".gif", ".heic", ".heif", ".avif", ".jp2", ".jpx", ".jxl", ".svg", ".djvu",
                                   ".dng", ".cr2", ".cr3", ".nef", ".arw", ".raw", ".eps", ".xps", ".psd"})


@dataclass(frozen=True, slots=True)
class ScanOptions:
    """What ``digitise scan`` was asked for, beyond the pages."""

    players: tuple[str, str] | None = None
    length: int | None = None
    template: str | None = None
    #: "given": pages in the order given; "header": by the page number written on each.
    order: str = "given"
    corrections: Path | None = None
    overwrite: bool = False
    #: A report and readings without their ``.mat`` (an earlier run stopped) may be replaced (batch).
    leftovers: bool = False
    #: The tournament's entrants (``--roster``): names read from the headers are taken as the one they spell.
    roster: tuple[str, ...] = ()
    #: The file the roster was read from (an input: never written over).
    roster_file: Path | None = None
    #: Learn the recorder's hand from the match's sure turns and read the rest again (``--no-adapt``: off).
    adapt: bool = True
    #: A batch's shared page memory (:class:`PageBudget`): its lock file and its bytes. None: not shared.
    page_memory: tuple[Path, int] | None = None


@dataclass(frozen=True, slots=True)
class ScanSummary:
    """What a scan produced, for the summary line and the batch summary."""

    output: str
    report: str | None
    pages: int
    games: int
    turns: int
    flagged: int
    #: Of ``flagged``, the boards set aside (recording no turn of the match: a blank board inside a game, a
    #: page of another match); the rest are turns.
    set_aside: int = 0
    #: Pages that could not be read: "file: page N: reason".
    page_errors: tuple[str, ...] = ()
    #: Doubts about the whole match (a length or names made up, nothing recorded).
    notes: tuple[str, ...] = ()
    #: Turns of a player closed out on the bar: on no board, so written as dances of 21 (docs/notation.md).
    closed_out: int = 0
    #: Players, length, final score and winner of the match written.
    outcome: MatchOutcome | None = None

    @property
    def exit_code(self) -> ExitCode:
        """FLAGGED when a person should look at the result, else OK."""
        return ExitCode.FLAGGED if self.flagged or self.page_errors or self.notes else ExitCode.OK

    @classmethod
    def of(cls, output: Path, report: Path | None, pages: int, result: SolveResult,
           page_errors: tuple[str, ...] = ()) -> ScanSummary:
        """The summary of a solved match (a :class:`~digitise.solve.SolveResult`)."""
        summary = result.report["summary"]
        return cls(output=str(output), report=str(report) if report else None, pages=pages,
                   games=int(summary["games"]), turns=int(summary["turns"]),
                   # Turns and boards set aside alike: what the review page will list.
                   flagged=int(summary["flagged"]), set_aside=_set_aside(summary), page_errors=page_errors,
                   notes=tuple(result.report.get("notes", ())), closed_out=int(result.report.get("closed_out") or 0),
                   outcome=match_outcome(result.match))


def _count_of(doc: Mapping[str, Any], key: str) -> int:
    """A count a report keeps (0 when it does not say, or says it otherwise)."""
    value = doc.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _set_aside(summary: Mapping[str, Any]) -> int:
    """The boards set aside of a report's summary (0 for a report written before it said)."""
    try:
        return max(0, int(summary.get("set_aside", 0)))
    except (TypeError, ValueError):
        return 0


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
    from digitise.adaptation import TURNED_OFF, Adaptation, adapt_to_hand, hand_by_place
    from digitise.notation.readings import renumbered
    from digitise.solve.reviewed import solve_with_corrections
    from digitise.vision.cellnet import point_heads
    from digitise.vision.read import read_pages

    if not pages:
        raise InputError("no pages given")
    check_inputs(pages)
    _fewer_collections()
    _check_report_name(report)
    readings_path = readings_beside(report) if report is not None else None
    _check_match_outputs(output, report, readings_path, options, [*pages])
    corrections, options, pages_note = _reviewed(options, _page_files(pages))
    outcome = _some_page_read(read_pages(list(pages), template=options.template, on_page=on_page), pages)
    page_errors = tuple(err.message for err in outcome.errors)
    readings = outcome.readings
    scan_notes = list(outcome.notices) + ([pages_note] if pages_note else [])
    if options.order == "header":
        readings, order_note = order_by_header(readings)
        scan_notes += [order_note] if order_note is not None else []
    scan_notes += page_notes(readings, ordered_by_header=options.order == "header") + mirrored_print_note(readings)
    scan_notes += turned_page_note(readings)
    hand = hand_by_place(readings.pages, outcome.hand)
    readings = renumbered(readings)

    def solve_readings(some: Readings) -> SolveResult:
        return solve_with_corrections(some, corrections, players=options.players, length=options.length,
                                      path=options.corrections, roster=options.roster)

    result = solve_readings(readings)
    if options.adapt:
        result, readings, adaptation = adapt_to_hand(readings, hand, result, solve_readings, point_heads())
    else:
        adaptation = Adaptation(flagged_before=result.flagged, flagged_after=result.flagged, skipped=TURNED_OFF)
    result.report["adaptation"] = adaptation.to_json()
    _some_turn_found(result, pages)
    from digitise.solve.corrections import page_files, pages_to_json

    # The files' names and sizes: what the review page's corrections file records of the pages it was made on.
    extra: dict[str, Any] = {"sources": [str(real_path(p)) for p in pages], "page_errors": list(page_errors),
                             "source_files": pages_to_json(page_files(pages))}
    if scan_notes:
        result.report["notes"] = [*result.report.get("notes", ()), *scan_notes]
        # Notes of the scan, not of the solve: a re-solve on the review page carries them over.
        extra["scan_notes"] = scan_notes
    _write_match(result, output, report, options, extra,
                 (readings_path, readings) if readings_path is not None else None)
    return ScanSummary.of(output, report, len(readings.pages), result, page_errors)


def _some_turn_found(result: SolveResult, files: Sequence[Path]) -> None:
    """Refuse a match with no turn at all: GNU Backgammon imports no ``.mat`` without a game, and a review has
    nothing to correct. Blank notes, or writing that no game from the start can follow (the wrong pages)."""
    from digitise.solve import NO_GAME, NO_TURNS

    if result.report["summary"]["turns"]:
        return
    found_none = NO_GAME.split("{", 1)[0]
    why = next((str(n) for n in result.report.get("notes", ()) if str(n).startswith(found_none)), NO_TURNS)
    where = files[0] if len(files) == 1 else None
    said = why if where is not None else f"{why} ({len(files)} files, {files[0]} first)"
    raise InputError(f"nothing to convert: {said}", where)


def _grouped_by_file(errors: Sequence[DigitiseError]) -> list[str]:
    """Page errors as messages, those of one file and one reason said once with their pages ("pages 1-3, 7")."""
    import re

    groups: dict[tuple[str | None, str], list[int]] = {}
    alone: list[str] = []
    for error in errors:
        found = re.fullmatch(r"page (\d+)", error.where or "")
        if found is None or error.path is None:
            alone.append(error.message)
            continue
        groups.setdefault((error.path, error.reason), []).append(int(found.group(1)))
    said = []
    for (path, reason), numbers in groups.items():
        runs: list[list[int]] = []
        for n in sorted(numbers):
            if runs and n == runs[-1][-1] + 1:
                runs[-1].append(n)
            else:
                runs.append([n])
        pages = ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)
        said.append(f"{path}: {'page' if len(numbers) == 1 else 'pages'} {pages}: {reason}")
    return said + alone


def _some_page_read(outcome: ReadOutcome, pages: Sequence[Path]) -> ReadOutcome:
    """``outcome`` when it read a page at all; else its problem is the error (one line, naming the file), or
    every page's problem, so that the user does not fix them one run at a time."""
    if not outcome.readings.pages:
        if len(outcome.errors) > 1:
            # One cause on every page (a model file missing, say) is said once, with its count; one cause on
            # many pages of a file once, with the pages ("pages 1-500"), not 500 times.
            counts = Counter(error.message for error in outcome.errors)
            said = _grouped_by_file(outcome.errors) if len(counts) == len(outcome.errors) else [
                message if n == 1 else f"{message} (x{n})" for message, n in counts.items()]
            raise InputError(f"no page could be read ({len(outcome.errors)} problems): " + "; ".join(said))
        raise outcome.errors[0] if outcome.errors else InputError("no readable page", pages[0])
    return outcome


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
    from digitise.notation.readings import readings_to_json, renumbered
    from digitise.vision.read import read_pages

    if not pages:
        raise InputError("no pages given")
    check_inputs(pages)
    if debug_dir is not None and real_path(debug_dir) == real_path(output):
        raise OutputError(f"named for two outputs (also --debug-dir {debug_dir}): give each its own name", output)
    check_outputs([output], overwrite, inputs=[*pages, *_template_file(template)])
    outcome = _some_page_read(read_pages(list(pages), template, header=header, debug_dir=debug_dir,
                                         overwrite=overwrite, on_page=on_page), pages)
    write_atomic(output, readings_to_json(renumbered(outcome.readings)), overwrite=overwrite)
    return ReadSummary(str(output), len(outcome.readings.pages), tuple(err.message for err in outcome.errors),
                       outcome.notices)


def load_roster(path: str | Path) -> tuple[str, ...]:
    """A tournament's entrants from a text file, one name a line (blank lines and ``#`` comments skipped).

    Raises :class:`InputError` naming the file for one that cannot be read, holds no name, or holds
    a name a ``.mat`` file cannot (a colon, control characters).
    """
    from digitise.fileio import read_text
    from digitise.notation.mat import holds_name

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
    from digitise.notation.readings import load_readings, renumbered
    from digitise.solve.reviewed import solve_with_corrections

    _check_report_name(report)
    _check_match_outputs(output, report, None, options, [readings_path])
    read = load_readings(readings_path)
    # The page files as `read` saw them: looked up again, a relative name would be found or not depending on
    # where this runs, and the corrections applied or refused with it. Readings from before `read` recorded
    # the sizes are looked up where their files still are.
    files = tuple(dict.fromkeys((Path(page.source).name, page.source_bytes) for page in read.pages
                                if page.source and page.source_bytes is not None))
    corrections, options, pages_note = _reviewed(
        options, files or _page_files([Path(p.source) for p in read.pages if p.source]))
    scan_notes = page_notes(read) + mirrored_print_note(read) + turned_page_note(read) + ([pages_note] if pages_note else [])
    # As scan numbers them: a `read` of several files numbers each file's pages from 1.
    readings = renumbered(read)
    result = solve_with_corrections(readings, corrections, players=options.players, length=options.length,
                                    path=options.corrections, roster=options.roster)
    _some_turn_found(result, [readings_path])
    extra: dict[str, Any] = {}
    if scan_notes:
        result.report["notes"] = [*result.report.get("notes", ()), *scan_notes]
        extra["scan_notes"] = scan_notes
    if report is not None:
        extra["readings"] = os.path.relpath(real_path(readings_path), real_path(report.parent))
    if files:
        from digitise.solve.corrections import pages_to_json

        # As scan records them: a review of this report saves its corrections with the pages they were made on.
        extra["source_files"] = pages_to_json(files)
    _write_match(result, output, report, options, extra, None)
    return ScanSummary.of(output, report, len(readings.pages), result)


def _check_report_name(report: Path | None) -> None:
    """Refuse a report path that names no file (``""``, ``.``, ``/``): its companions are named after it."""
    if report is not None and (report.name in ("", ".", "..") or os.path.isdir(report)):
        raise OutputError("is a folder, not a file: name the report file (e.g. match.report.json)", report)


def _page_files(pages: Sequence[Path]) -> tuple[tuple[str, int], ...]:
    from digitise.solve.corrections import page_files

    return page_files(pages)


def _reviewed(options: ScanOptions, files: Sequence[tuple[str, int]] = ()) -> tuple[
        dict[tuple[int, int], str], ScanOptions, str | None]:
    """The boards' corrections of ``options.corrections``, the options with its names and length, and a note
    when it was made on page files that differ in part from ``files`` ((name, bytes); refused when they
    differ wholly: :func:`~digitise.solve.corrections.check_pages`).

    A reviewer's names and length win over ``--players`` and ``--length``, as
    a corrected board wins over its marks: they were set looking at the scan.
    """
    if options.corrections is None:
        return {}, options, None
    from digitise.solve.corrections import check_pages, load_corrections_file

    reviewed = load_corrections_file(options.corrections)
    note = check_pages(reviewed, files, options.corrections) if files else None
    players, length = reviewed.header.over(options.players, options.length)
    return reviewed.boards, replace(options, players=players, length=length), note


def _template_file(template: str | None) -> list[Path]:
    """The note's geometry file when ``template`` names one (an input, never written over), else nothing (a
    paper name such as "a4")."""
    return [Path(template)] if template and os.path.isfile(template) else []


def _check_match_outputs(output: Path, report: Path | None, readings_path: Path | None, options: ScanOptions,
                         inputs: list[Path]) -> None:
    """All of a match's outputs checked before any work (see :func:`~digitise.fileio.check_outputs`).

    With ``options.leftovers`` (batch), a report and readings left by an
    earlier run that never wrote its ``.mat`` are that run's and may be replaced.
    """
    inputs = [*inputs, *(path for path in (options.corrections, options.roster_file) if path is not None),
              *_template_file(options.template)]
    companions = [t for t in (report, readings_path) if t is not None]
    check_outputs([output, *companions], options.overwrite, inputs=inputs,
                  replaceable=companions if options.leftovers else ())


def _write_match(result: SolveResult, output: Path, report: Path | None, options: ScanOptions, extra: dict[str, Any],
                 readings: tuple[Path, Readings] | None) -> None:
    """Write the readings, the report and, last, the ``.mat``.

    Everything is made before anything is written, so a refusal writes
    nothing; the ``.mat`` comes last because it is what tells a batch the
    match is done.
    """
    from digitise.notation.mat import format_mat
    from digitise.notation.readings import readings_to_json
    from digitise.solve import report_to_json

    try:
        text = format_mat(result.match, fill_gaps=True)
    except DigitiseError as exc:
        # The solver gave a match the writer refuses: say which output it was, and why.
        raise type(exc)(f"cannot write the solved match: {exc.reason}", output, exc.where) from exc
    report_doc = dict(result.report)
    # The review page re-solves with these: names and length given on the command line must survive.
    report_doc["players"] = list(options.players) if options.players else None
    report_doc["length"] = options.length
    if options.roster:
        report_doc["roster"] = list(options.roster)
    if report is not None:
        # The review page saves the corrected match here (a batch's NAME.mat beside NAME.report.json).
        report_doc["mat"] = os.path.relpath(real_path(output), real_path(report.parent))
    report_doc.update(extra)
    companions = options.overwrite or options.leftovers
    files: list[tuple[Path, str, bool]] = []
    if readings is not None:
        report_doc["readings"] = readings[0].name
        files.append((readings[0], readings_to_json(readings[1]), companions))
    if report is not None:
        files.append((report, report_to_json(report_doc), companions))
    files.append((output, text, options.overwrite))
    made: list[Path] = []
    try:
        for path, content, overwrite in files:
            new = not os.path.exists(path)
            written = write_atomic(path, content, overwrite=overwrite)  # a link's target, when path is a link
            if new:
                made.append(written)
    except DigitiseError:
        # A disk that filled up half way: the files this run made would block the re-run ("exists").
        for path in made:
            path.unlink(missing_ok=True)
        raise


def readings_beside(report: Path) -> Path:
    """Where the reader's output is kept next to a report (the review page re-solves from it)."""
    return beside(report, ".readings.json")


#: The note of ``--order header`` when some page's number could not be read.
ORDER_KEPT = ("page order: not every page's number could be read surely (read: {numbers}; ? unsure); the pages are "
              "in the order given")
ORDER_BROKEN = ("page order: the page numbers read ({numbers}) do not run from {first} to {last} once each "
                "(a page missing, one from another match, or a number misread); the pages are in the order given")
#: How sure a page number must be read to sort the pile by it (a guess would move a page for nothing).
ORDER_SURE = 0.9


def order_by_header(readings: Readings) -> tuple[Readings, str | None]:
    """Readings with pages sorted by their written page numbers, when every page has one read surely
    (:data:`ORDER_SURE`) and together they run from the first to the last once each.

    Otherwise the order given is kept, with a note the match reports
    (:data:`ORDER_KEPT`, or :data:`ORDER_BROKEN` with the numbers read): the
    user asked for the header's order and did not get it.
    """
    from dataclasses import replace

    from digitise.notation.readings import written_page_number

    read = [written_page_number(page) for page in readings.pages]
    if any(number is None or number < 1 or sure < ORDER_SURE for number, sure in read):
        shown = ", ".join("?" if number is None else f"{number}?" if sure < ORDER_SURE or number < 1 else str(number)
                          for number, sure in read)
        return readings, ORDER_KEPT.format(numbers=shown)
    numbers = [number for number, _ in read if number is not None]
    if numbers and sorted(numbers) != list(range(min(numbers), min(numbers) + len(numbers))):
        return readings, ORDER_BROKEN.format(numbers=", ".join(map(str, numbers)), first=min(numbers),
                                             last=min(numbers) + len(numbers) - 1)
    order = sorted(range(len(numbers)), key=lambda i: numbers[i])
    return replace(readings, pages=tuple(readings.pages[i] for i in order)), None


#: How sure the first page's number must be read to say a match starts on a later page (above what a misread
#: "1" reaches).
FIRST_PAGE_SURE = 0.94
#: Boards that must read alike, cell for cell, for two pages to be taken for one sheet scanned twice
#: (different pages seldom share a board; misreads tell the rest apart).
ALIKE_BOARDS = 4


#: How sure both player names of a page must be read, and how little alike (difflib's ratio, case aside) to
#: the other pages' names, for the page to be noted as naming other players (a page of another match
#: differs in both).
NAMES_SURE = 0.85
NAMES_UNLIKE = 0.5


def _players_read(page: PageReading) -> tuple[str, str] | None:
    """The page's (bottom, top) player names when both were read surely (:data:`NAMES_SURE`), else None."""
    from digitise.notation.readings import header_entry

    found = []
    for field_name in ("player_bottom", "player_top"):
        value, sure = header_entry(page, field_name)
        if not isinstance(value, str) or not value.strip() or sure is None or sure < NAMES_SURE:
            return None
        found.append(value.strip())
    return found[0], found[1]


def _same_players(a: tuple[str, str], b: tuple[str, str]) -> bool:
    """Whether each name of ``a`` is like one of ``b`` (in either seat: a recorder may swap them)."""
    import difflib

    def like(x: str, y: str) -> bool:
        return difflib.SequenceMatcher(None, x.lower(), y.lower()).ratio() >= NAMES_UNLIKE

    return all(any(like(x, y) for y in b) for x in a)


def _page_names(readings: Readings) -> list[str]:
    """How the pages are named in messages: the file (its path from the pages' common folder when two
    files share a name), and the page within it when it holds several."""
    import os

    sources = list(dict.fromkeys(page.source for page in readings.pages))
    by_name: dict[str, set[str]] = {}
    for source in sources:
        by_name.setdefault(Path(source).name, set()).add(source)
    clash = any(len(found) > 1 for found in by_name.values())
    try:
        common = os.path.commonpath([os.path.abspath(s) for s in sources]) if clash else ""
    except ValueError:  # paths on different drives
        common = ""
    shown = {s: os.path.relpath(os.path.abspath(s), common) if clash and common else Path(s).name for s in sources}
    frames: dict[str, set[int]] = {}
    for page in readings.pages:
        frames.setdefault(page.source, set()).add(page.page)
    return [shown[page.source] + (f" page {page.page}" if len(frames[page.source]) > 1 else "")
            for page in readings.pages]


def _marks_read(page: PageReading) -> list[tuple[object, ...]]:
    """Each board's best reading of every cell (and its X and arrow), for comparing pages."""
    return [tuple(sorted((name, cands[0].digits) for name, cands in board.cells.items() if cands))
            + (round(board.crossed), round(board.arrow)) for board in page.boards]


#: How a page found from its lines, of a print mirrored (off squares on the left), says so in its readings.
MIRRORED_PRINT_METHOD = "lines, mirrored print"


def _read_by(page: PageReading) -> str:
    """How the page's boards were placed (its readings' ``method``: ``markers``, ``lines, turned 180``, ...)."""
    return str(page.header.get("method", {}).get("value", ""))


def _first_few(names: list[str]) -> str:
    """Page names for a note: the first three, then how many more."""
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def mirrored_print_note(readings: Readings) -> list[str]:
    """A note naming the pages of a mirrored print (off squares on the left, points 1 to 12 left to right),
    read as printed: a person should know the squares were taken the other way round."""
    names = _page_names(readings)
    mirrored = [name for name, page in zip(names, readings.pages, strict=True)
                if _read_by(page).startswith(MIRRORED_PRINT_METHOD)]
    if not mirrored:
        return []
    shown = _first_few(mirrored)
    verb = "is" if len(mirrored) == 1 else "are"
    note = (f"pages: {shown} {verb} of a mirrored print (off squares on the left, point numbers 1 to 12 left to "
            "right): read as printed")
    return [note]


#: How a page found from its lines, lying turned in the image, says so in its readings ("lines, turned 90").
TURNED_METHOD = ", turned "


def turned_page_note(readings: Readings) -> list[str]:
    """A note naming the pages of another print found turned (on their side or upside down) and read turned back:
    a person checking a page should know it was not read as it lies."""
    names = _page_names(readings)
    turned = [f"{name} ({method.rsplit(TURNED_METHOD, 1)[1]} degrees)" for name, page in zip(names, readings.pages, strict=True)
              if TURNED_METHOD in (method := _read_by(page))]
    if not turned:
        return []
    shown = _first_few(turned)
    return [f"pages: {shown} {'was' if len(turned) == 1 else 'were'} turned in the image: read turned back"]


def page_notes(readings: Readings, *, ordered_by_header: bool = False) -> list[str]:
    """Pages given twice: notes for the match, none when every page is a sheet of its own.

    A file (or a page of one) named twice, and two pages whose boards read
    alike cell for cell (one sheet scanned twice): replayed again, such a
    page reads as a new game (flagged where it starts, but the match is
    wrong from there). And a first page numbered 2 or more, read very surely
    (:data:`FIRST_PAGE_SURE`): a continuation scanned alone. The other page
    numbers written in the headers are not judged one by one here (the
    reader drops a digit of "12" or "14" too often, and surely): the solver
    looks for a page missing, or pages out of order, where four numbers in a
    row agree (:func:`digitise.solve.page_gaps`). ``ordered_by_header``: the
    pages were to be put in the order of their numbers (``--order header``),
    which could not be done (the order note says why), so that is not the advice.
    """
    from digitise.notation.readings import written_page_number

    names = _page_names(readings)
    notes = []
    number, sure = written_page_number(readings.pages[0]) if readings.pages else (None, 0.0)
    if number is not None and number > 1 and sure >= FIRST_PAGE_SURE:
        # A later page surely numbered lower: the pile is out of order, not short.
        lower = next((k for k, page in enumerate(readings.pages[1:], 1)
                      if (found := written_page_number(page))[0] is not None and found[0] < number
                      and found[1] >= FIRST_PAGE_SURE), None)
        if lower is not None:
            notes.append(f"pages: not in the order of their numbers (the first, {names[0]}, is numbered {number}, "
                         f"and {names[lower]} {written_page_number(readings.pages[lower])[0]}): give them in "
                         + ("order" if ordered_by_header else "order, or add --order header"))
        else:
            missing = "is page 1" if number == 2 else f"are pages 1 to {number - 1}"
            notes.append(f"pages: the first page, {names[0]}, is numbered {number}: {missing} missing?")
    first: dict[tuple[str, int], int] = {}
    for k, page in enumerate(readings.pages):
        key = (page.source, page.page)
        if key in first:
            notes.append(f"pages: {names[k]} is given twice (as pages {first[key] + 1} and {k + 1} of the match)")
        else:
            first[key] = k
    # A page naming other players, read surely: a page of another match in the pile. Its boards may read
    # as new games of this one without a misfit to show it.
    players = [(k, named) for k, page in enumerate(readings.pages) if (named := _players_read(page)) is not None]
    if len(players) >= 2:
        agreeing = [sum(_same_players(a, b) for _, b in players) for _, a in players]
        ref_k, ref = players[agreeing.index(max(agreeing))]
        for k, named in players:
            if not _same_players(named, ref):
                notes.append(f"pages: {names[k]} names the players {named[0]} and {named[1]}, {names[ref_k]} "
                             f"{ref[0]} and {ref[1]}: a page of another match?")
    marks = [_marks_read(page) for page in readings.pages]
    for j, later in enumerate(marks):
        for i in range(j):
            if (readings.pages[i].source, readings.pages[i].page) == (readings.pages[j].source, readings.pages[j].page):
                continue
            alike = sum(1 for a, b in zip(marks[i], later, strict=False) if a == b and len(a) > 2)
            if alike >= ALIKE_BOARDS:
                notes.append(f"pages: {names[i]} and {names[j]} read alike, board for board: "
                             "one sheet scanned twice?")
                break
    return notes


# --------------------------------------------------------------------------- batch


@dataclass(frozen=True, slots=True)
class Job:
    """One match of a batch: its name, its pages (files) and where its outputs go."""

    name: str
    pages: tuple[Path, ...]
    output: Path
    report: Path
    #: Pages in its files (a PDF or TIFF holds several): what the progress bar counts.
    page_count: int


@dataclass(frozen=True, slots=True)
class JobResult:
    """How one job ended: "done", "flagged", "skipped" (already done), "failed", or "interrupted" (not done:
    the batch was stopped first)."""

    name: str
    status: str
    pages: int
    reason: str = ""
    turns: int = 0
    flagged: int = 0
    #: Of ``flagged``, the boards set aside (see :attr:`ScanSummary.set_aside`).
    set_aside: int = 0
    seconds: float = 0.0
    page_errors: tuple[str, ...] = field(default=())
    #: Doubts about the whole match (see :attr:`ScanSummary.notes`).
    notes: tuple[str, ...] = field(default=())
    #: The match's report (for ``digitise review``), when it has one.
    report: str | None = None
    #: For a failed job, the exit code its error alone would give (an output that cannot be written is 4).
    code: int = 0
    #: The match as written (None where no .mat was: a failed or interrupted match): players (bottom, top),
    #: length (0: unlimited), score after the last game (bottom, top), and the winner's name (None: nobody
    #: reached the length).
    players: tuple[str, str] | None = None
    length: int | None = None
    score: tuple[int, int] | None = None
    winner: str | None = None
    games: int = 0
    #: Turns written as dances of 21 (a player closed out on the bar: on no board).
    closed_out: int = 0

    def told(self, match: MatchOutcome | None) -> JobResult:
        """This result with what ``match`` says of the match written (unchanged for None)."""
        if match is None:
            return self
        return replace(self, players=match.players, length=match.length, games=match.games,
                       score=(match.score.bottom, match.score.top), winner=match.winner_name)

    @property
    def needs_review(self) -> bool:
        """Whether the match has a report with flagged turns (converted now, or by an earlier run)."""
        return bool(self.report) and (self.status == "flagged" or (self.status == "skipped" and self.flagged > 0))


#: The batch's own log, in the output folder.
SUMMARY_NAME = "summary.json"
#: What summary.json says it is (a file of that name written otherwise is not replaced without --force).
SUMMARY_FORMAT = "digitise-batch-summary"
#: The summary as a table, one row a match, for a spreadsheet.
SUMMARY_CSV_NAME = "summary.csv"
#: Files ``batch`` writes itself: skipped when the output folder is the input folder.
OUTPUT_SUFFIXES = (".mat", ".report.json", ".readings.json", ".corrections.json")


#: What operating systems leave among files, never a user's (compared in lower case): Windows' thumbnail caches
#: and folder settings, a USB stick's recycle bin and volume information, the folder a Mac's zip archive
#: unpacks its metadata into. Skipped as hidden files are: reported, each was a failed match, and the batch's
#: exit code said it failed.
SYSTEM_ENTRIES = frozenset({"thumbs.db", "ehthumbs.db", "desktop.ini", "__macosx", "$recycle.bin",
                            "system volume information"})


def _skipped(name: str) -> bool:
    """Whether a folder entry is hidden or the system's own (:data:`SYSTEM_ENTRIES`): no page, no match."""
    return name.startswith(".") or name.lower() in SYSTEM_ENTRIES


class FoundMatches(NamedTuple):
    """What :func:`find_jobs` found in a batch's input folder."""

    jobs: list[Job]
    #: Folders and files meant as pages that cannot be (a GIF, a folder with no page): failed matches.
    failed: list[JobResult]
    #: Files at the top that are no pictures (an entry list, a readme, an earlier batch's outputs): not
    #: matches, and no fault; the batch names them.
    left_out: list[Path]


def find_jobs(input_dir: Path, output_dir: Path) -> FoundMatches:
    """The matches in ``input_dir``: one per sub-folder of pages and one per PDF or TIFF file.

    A loose image at the top is a one-page match; so is a file named otherwise
    whose first bytes are a picture's (``scan001``). Folders and files meant
    as pages that hold nothing readable come back as failed results, not
    exceptions, and so do inputs that would write the same outputs (``m1/``
    and ``m1.pdf``). Other files at the top (``entrants.txt``, a ``.mat``)
    are left out and listed. The output folder, when it is inside the input,
    is not an input. Raises :class:`InputError` when ``input_dir`` is no
    folder or holds no match.
    """
    from digitise.vision.images import page_count, unread_picture

    if not os.path.isdir(input_dir):
        raise InputError("not a folder" if os.path.exists(input_dir) else why_absent(input_dir, "folder"), input_dir)
    try:
        entries = sorted(input_dir.iterdir(), key=natural_key)
    except OSError as exc:
        raise InputError(f"cannot open the folder: {exc.strerror or exc}", input_dir) from exc
    output = real_path(output_dir)
    in_place = output == real_path(input_dir)
    found: list[tuple[Path, Job]] = []
    failed: list[JobResult] = []
    left_out: list[Path] = []
    for entry in entries:
        if _skipped(entry.name):
            continue
        if real_path(entry) == output:
            # The output folder inside the input is not a match; one that holds pages would get
            # every match's outputs among them: refused whole.
            try:
                holds_pages = next(_pages_under(entry), None) is not None
            except OSError:
                holds_pages = False  # unreadable: make_folder says so before any job
            if holds_pages:
                raise InputError("holds pages: choose an output folder of its own (-o)", entry)
            continue
        if entry.is_dir() and entry.is_symlink() and real_path(input_dir).is_relative_to(real_path(entry)):
            # "ln -s . loop": every other match's pages again, as one giant match.
            failed.append(JobResult(entry.name, "failed", 0, f"{entry}: a link to the folder being converted, or "
                                                              "one above it: not a match"))
            continue
        if entry.is_dir():
            try:
                pages = tuple(sorted(_pages_under(entry), key=natural_key))
            except OSError as exc:
                where = Path(exc.filename) if exc.filename else entry
                failed.append(JobResult(entry.name, "failed", 0, f"{where}: cannot open the folder: "
                                                                  f"{exc.strerror or exc}"))
                continue
            if not pages:
                if (entry / SUMMARY_NAME).is_file():
                    continue  # an earlier batch's output folder, left in the input: not a match, and no fault
                failed.append(JobResult(entry.name, "failed", 0, f"{entry}: no image or PDF inside"))
                continue
            name = entry.name
        elif entry.suffix.lower() in IMAGE_SUFFIXES:
            pages, name = (entry,), entry.stem
        elif in_place and (entry.name in (SUMMARY_NAME, SUMMARY_CSV_NAME) or entry.name.endswith(OUTPUT_SUFFIXES)):
            continue  # this batch's own output, from an earlier run
        elif entry.suffix.lower() in UNREAD_IMAGE_SUFFIXES:
            failed.append(JobResult(entry.name, "failed", 0, f"{entry}: a {entry.suffix[1:].upper()} picture, which "
                                                              "digitise does not read: save the page as PNG, JPEG "
                                                              "or PDF"))
            continue
        elif entry.is_symlink() and not entry.exists():
            failed.append(JobResult(entry.name, "failed", 0, f"{entry}: is a link that leads nowhere (a loop or a "
                                                              "missing target)"))
            continue
        elif _is_pipe(entry):
            # Never looked into (that could wait for ever): failed below, as a pipe named as a page is.
            pages, name = (entry,), entry.stem
        elif not os.access(entry, os.R_OK):
            # Whether it is a page cannot be seen: said, as a page that cannot be read is.
            failed.append(JobResult(entry.name, "failed", 0, f"{entry}: cannot read: permission denied"))
            continue
        elif _holds_a_picture(entry):
            # A page named otherwise ("scan001", "page4.png.bak"), as inside a match's folder.
            pages, name = (entry,), entry.stem
        elif entry.suffix.lower() in ARCHIVE_SUFFIXES:
            failed.append(JobResult(entry.name, "failed", 0, f"{entry}: an archive: unpack it (a match's pages "
                                                              "in a folder of their own) and convert again"))
            continue
        elif (unread := unread_picture(entry)) is not None:
            failed.append(JobResult(entry.name, "failed", 0, f"{entry}: {unread}, which digitise does not read: "
                                                              "save the page as PNG, JPEG or PDF"))
            continue
        elif entry.is_file() and entry.stat().st_size == 0:
            # A scan that never got written (a copy stopped at once): a page lost, not paperwork.
            failed.append(JobResult(entry.name, "failed", 0, f"{entry}: empty file"))
            continue
        else:
            # A roster, a readme, an earlier batch's outputs beside the scans: no page, and no fault.
            left_out.append(entry)
            continue
        piped = next((page for page in pages if _is_pipe(page)), None)
        if piped is not None:
            # Read, it would wait for ever on a writer that never writes, and the batch with it.
            failed.append(JobResult(name, "failed", 0, f"{piped}: a named pipe, not a page file: a batch reads "
                                                        "files only (give a pipe to `digitise scan`)"))
            continue
        found.append((entry, Job(name, pages, output_dir / f"{name}.mat", output_dir / f"{name}.report.json",
                                 sum(page_count(page) for page in pages))))
    by_name: dict[str, list[Path]] = {}
    for entry, job in found:
        by_name.setdefault(job.name, []).append(entry)
    jobs: list[Job] = []
    for entry, job in found:
        clash = by_name[job.name]
        if len(clash) > 1:
            others = ", ".join(str(e) for e in clash if e != entry)
            failed.append(JobResult(entry.name, "failed", job.page_count,
                                    f"{entry}: {others} would also write {job.output.name}: rename one"))
        else:
            jobs.append(job)
    if not jobs and not failed:
        only = f" (only {listed_names([path.name for path in left_out])})" if left_out else ""
        raise InputError(f"no match found: no sub-folder of pages, image or PDF in it{only}", input_dir)
    return FoundMatches(jobs, failed, left_out)


#: Names a message lists before it counts the rest (:func:`listed_names`).
NAMES_SHOWN = 5


def listed_names(names: Sequence[str], shown: int = NAMES_SHOWN) -> str:
    """``names`` for a one-line message: the first ``shown`` of them, then how many more."""
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


def _pages_under(folder: Path) -> Iterator[Path]:
    """The page files anywhere under ``folder`` (not hidden or system ones: :func:`_skipped`).

    Raises the :class:`OSError` of a sub-folder that cannot be read, which
    ``Path.rglob`` would skip without a word, losing its pages.
    """
    def fail(exc: OSError) -> None:
        raise exc

    if not os.access(folder, os.R_OK | os.X_OK):
        raise PermissionError(13, "Permission denied", str(folder))
    for root, dirs, files in os.walk(folder, onerror=fail, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not _skipped(d))
        for name in files:
            path = Path(root) / name
            suffix = path.suffix.lower()
            if _skipped(name):
                continue
            # A page named as one is a page, even a link leading nowhere: reading it says what is wrong, where
            # leaving it out would shorten the match without a word. So is a picture named otherwise
            # ("page3", "page4.png.bak"); other files (notes, a scanner's index) are not pages.
            # A named pipe is not looked into (that could wait for ever): the match is failed for it.
            if suffix in IMAGE_SUFFIXES or suffix in UNREAD_IMAGE_SUFFIXES or _is_pipe(path) or _holds_a_picture(path):
                yield path


def _is_pipe(path: Path) -> bool:
    """Whether ``path`` is (or leads to) a named pipe."""
    try:
        return stat.S_ISFIFO(path.stat().st_mode)
    except OSError:
        return False


def _holds_a_picture(path: Path) -> bool:
    """Whether the file's first bytes are those of a picture or PDF that pages are read from."""
    from digitise.vision.images import sniff_file

    return sniff_file(path) is not None


#: How this process tells the batch that a page was read, given the job's name (set by the batch:
#: its own callback in-process, a queue's ``put`` in a worker).
_page_read: Callable[[str], None] | None = None


def run_job(job: Job, options: ScanOptions) -> JobResult:
    """Scan one job; every failure becomes a result, so a batch never stops."""
    from digitise.solve.corrections import corrections_path

    start = time.perf_counter()
    tell = _page_read
    on_page = (lambda: tell(job.name)) if tell is not None else None
    reviewed = corrections_path(job.report)
    if options.corrections is None and os.path.isfile(reviewed):
        # A match converted again (--force) keeps what its review said.
        options = replace(options, corrections=reviewed)
    from digitise.vision.images import share_page_memory

    budget = PageBudget(*options.page_memory) if options.page_memory else None
    shared = share_page_memory(budget)
    try:
        summary = scan(list(job.pages), job.output, job.report, options, on_page=on_page)
    except DigitiseError as exc:
        # The summary line must say which match failed, even when the error names no file.
        reason = exc.message if exc.path else f"{job.name}: {exc.message}"
        return JobResult(job.name, "failed", job.page_count, reason, seconds=time.perf_counter() - start,
                         code=int(exc.exit_code))
    except Exception as exc:  # a bug in one job must not cost the batch
        log.debug("job %s crashed", job.name, exc_info=True)
        return JobResult(job.name, "failed", job.page_count, f"{job.name}: internal error: {type(exc).__name__}: {exc}",
                         seconds=time.perf_counter() - start, code=int(ExitCode.INTERNAL))
    finally:
        share_page_memory(shared)
        if budget is not None:
            budget.close()
    status = "flagged" if summary.exit_code is ExitCode.FLAGGED else "done"
    # The pages as read: a damaged TIFF or PDF may hold more than could be counted before reading it.
    pages = max(job.page_count, summary.pages + len(summary.page_errors))
    return JobResult(job.name, status, pages, turns=summary.turns, flagged=summary.flagged,
                     set_aside=summary.set_aside, seconds=time.perf_counter() - start,
                     page_errors=summary.page_errors, notes=summary.notes,
                     report=str(job.report), closed_out=summary.closed_out).told(summary.outcome)


#: How log lines look on stderr (the CLI sets it up; batch workers, separate processes, copy it).
LOG_FORMAT = "%(levelname)s: %(message)s"


def _init_worker(events: Any = None, log_level: int = logging.WARNING, batch_pid: int | None = None) -> None:
    global _page_read
    _page_read = events.put if events is not None else None
    # Ctrl-C reaches every process of the terminal's group: the batch itself stops its workers (they would
    # otherwise each print a traceback, and the pool go on with the matches queued).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The batch stops its workers with SIGTERM: by default that ends one mid-write, leaving the temporary
    # file of its write behind in the output folder.
    signal.signal(signal.SIGTERM, _stop_worker)
    if batch_pid is not None:
        threading.Thread(target=_exit_without, args=(batch_pid,), daemon=True, name="batch-watch").start()
    # A worker is a fresh process: without this, -v would lose a crashed job's traceback there.
    logging.basicConfig(level=log_level, format=LOG_FORMAT)
    # One process per core: keep each library single-threaded so jobs don't fight.
    os.environ["OMP_NUM_THREADS"] = "1"
    try:
        import cv2

        cv2.setNumThreads(1)
    except ImportError:  # pragma: no cover
        pass


def _stop_worker(signum: int, frame: Any) -> None:
    """SIGTERM in a batch worker: the unfinished writes' temporary files removed, then gone at once (the
    pool's own loop would catch an exception and carry on with the next match)."""
    from digitise.fileio import remove_unfinished

    remove_unfinished()
    os._exit(128 + signum)


def _exit_without(batch_pid: int) -> None:
    """End this worker once the batch that started it is gone (killed): a worker is the forkserver's child,
    so it is not told, and would go on converting and writing matches nobody waits for."""
    while True:
        time.sleep(WATCH_SECONDS)
        if not _alive(batch_pid):
            os._exit(1)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, killed and not yet reaped by its parent, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - alive, as another user (the pid was taken again)
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):  # no /proc (not Linux): kill's answer stands
        return True


#: How often (seconds) a batch's worker checks that the batch is still there.
WATCH_SECONDS = 1.0


class BatchInterrupted(KeyboardInterrupt):
    """A batch stopped by Ctrl-C or SIGTERM: the matches done are kept and listed in ``summary``."""

    def __init__(self, summary: BatchSummary) -> None:
        super().__init__("interrupted")
        self.summary = summary


@dataclass(frozen=True, slots=True)
class BatchSummary:
    """All job results of a batch, in the order of the jobs."""

    results: tuple[JobResult, ...]
    seconds: float
    #: Why ``summary.json`` could not be written (a full disk), when it could not.
    summary_error: DigitiseError | None = None
    #: Matches that are one loose picture at the top of the input (pages of one match dropped there
    #: side by side each become a match of their own: worth a word).
    loose_pages: int = 0
    #: Files at the top of the input that are no pictures, left out (:attr:`FoundMatches.left_out`).
    left_out: tuple[str, ...] = ()

    @property
    def exit_code(self) -> ExitCode:
        """OUTPUT if the summary or a match's files could not be written, INTERNAL if a job met a bug,
        BAD_INPUT if a job failed otherwise, FLAGGED if one needs review, else OK."""
        if self.summary_error is not None:
            return self.summary_error.exit_code
        statuses = {r.status for r in self.results}
        if "failed" in statuses:
            codes = {r.code for r in self.results if r.status == "failed"}
            # A full disk or a folder not writable fails every match after it: said as 4, as scan says it.
            for code in (ExitCode.OUTPUT, ExitCode.INTERNAL):
                if code in codes:
                    return code
            return ExitCode.BAD_INPUT
        # A match converted by an earlier run and still to review counts as much as one converted now: a
        # re-run must not say all is well where the first run said look.
        if "flagged" in statuses or any(r.needs_review or r.notes or r.page_errors for r in self.results):
            return ExitCode.FLAGGED
        return ExitCode.OK

    @property
    def counts(self) -> dict[str, int]:
        """How many jobs ended in each status, by status name."""
        counts: dict[str, int] = {}
        for r in self.results:
            counts[r.status] = counts.get(r.status, 0) + 1
        return dict(sorted(counts.items()))

    def to_json(self, folder: Path | None = None) -> str:
        """The ``summary.json`` document; with ``folder`` (where it is written), report paths relative to it.

        Relative, the file is the same whichever way the output folder was
        named (``out``, ``./out``, ``/abs/out``) and stays right when the folder moves.
        """
        jobs = []
        for r in self.results:
            job = {k: v for k, v in asdict(r).items() if k not in ("seconds", "code")}
            if folder is not None and r.report:
                job["report"] = Path(os.path.relpath(real_path(r.report), real_path(folder))).as_posix()
            jobs.append(job)
        doc: dict[str, Any] = {"format": SUMMARY_FORMAT, "counts": self.counts, "jobs": jobs}
        missing = self.missing
        if missing:
            # An interrupted batch: these matches have no results, in this file or in summary.csv.
            doc["missing"] = list(missing)
        if self.left_out:
            doc["left_out"] = list(self.left_out)
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"

    @property
    def missing(self) -> tuple[str, ...]:
        """The matches not converted because the batch was stopped first."""
        return tuple(r.name for r in self.results if r.status == "interrupted")

    def to_csv(self, folder: Path | None = None) -> str:
        """``summary.csv``: a row a match (:data:`CSV_COLUMNS`), for a spreadsheet; report paths as in
        :meth:`to_json`. A match without results (failed, interrupted) has its status and reason only."""
        rows = io.StringIO()
        writer = csv.writer(rows, lineterminator="\r\n")
        writer.writerow(CSV_COLUMNS)
        for r in self.results:
            report = r.report or ""
            if folder is not None and r.report:
                report = Path(os.path.relpath(real_path(r.report), real_path(folder))).as_posix()
            converted = r.players is not None
            bottom, top = r.players or ("", "")
            score = r.score or ("", "")
            figures = (r.games, r.turns, r.flagged, r.set_aside, r.closed_out) if converted or r.turns else \
                ("",) * 5
            writer.writerow([_cell(r.name), r.status, _cell(bottom), _cell(top),
                             "" if r.length is None else r.length, *score, _cell(r.winner or ""), *figures, r.pages,
                             _cell(" | ".join((*r.page_errors, *r.notes))), _cell(r.reason), _cell(report)])
        # Excel takes a UTF-8 file for its own code page unless it starts with a byte order mark.
        return "\ufeff" + rows.getvalue()


#: The columns of ``summary.csv`` (docs/batch.md says what each holds).
CSV_COLUMNS = ("match", "status", "bottom player", "top player", "length", "bottom score", "top score", "winner",
               "games", "turns", "flagged", "set aside", "closed out", "pages", "notes", "reason", "report")


def _cell(text: str) -> str:
    """``text`` for a spreadsheet cell: one starting as a formula does (``=``, ``+``, ``-``, ``@``) is kept as
    text by a leading apostrophe, so a name or note read from a page is never run as one."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def batch(
    input_dir: Path,
    output_dir: Path,
    options: ScanOptions,
    *,
    jobs: int | None = None,
    progress: Callable[[JobResult], None] | None = None,
    page_progress: Callable[[str], None] | None = None,
    started: Callable[[int], None] | None = None,
    runner: Callable[[Job, ScanOptions], JobResult] = run_job,
    executor: Executor | None = None,
    scheduler: str | None = None,
) -> BatchSummary:
    """Convert every match under ``input_dir`` into ``output_dir``.

    Matches already converted are skipped unless ``options.overwrite``.
    ``runner`` is the per-job function (tests inject failing ones); ``executor``
    runs it, by default in ``jobs`` worker processes (all cores: :class:`LocalProcesses`), or with ``scheduler``
    (``tcp://HOST:PORT``) on that Dask cluster's workers (:class:`OnCluster`). ``progress`` hears of each
    job as it ends, ``page_progress`` of each page read (the job's name) as it
    is read, in whichever process reads it; ``started`` of the pages found, before any job.
    """
    start = time.perf_counter()
    found, failed, left_out = find_jobs(input_dir, output_dir)
    if options.template is not None:
        from digitise.vision.read import resolve_templates

        resolve_templates(options.template)  # a bad --template is one error, not one per match
    from digitise.vision.cells import check_models

    check_models()  # so is a broken install
    # Before any job: a folder that cannot take the outputs would fail every one of them.
    make_folder(output_dir)
    chosen = _executor(scheduler, jobs, (input_dir, output_dir)) if executor is None else \
        contextlib.nullcontext(executor)
    with chosen as running, _batch_lock(output_dir):
        check_summaries(output_dir, options.overwrite)
        pages_lock = output_dir / PAGES_LOCK_NAME
        if options.page_memory is None:
            options = replace(options, page_memory=(pages_lock, batch_page_memory()))
        try:
            return _batch_in(found, failed, left_out, input_dir, output_dir, options, start, running, progress,
                             page_progress, started, runner)
        finally:
            for lock in (pages_lock, _mutex_of(pages_lock)):
                with contextlib.suppress(OSError):
                    lock.unlink(missing_ok=True)


@contextlib.contextmanager
def _batch_lock(output_dir: Path) -> Iterator[None]:
    """Hold the output folder for this batch: a second batch into it at the same time would take this one's
    matches for converted and write its summary over this one's."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock, as before
        yield
        return
    try:
        handle = open(output_dir / LOCK_NAME, "a+b")  # noqa: SIM115 - held open for the whole batch
    except OSError as exc:
        raise OutputError(f"cannot write: {exc.strerror or exc}", output_dir / LOCK_NAME) from exc
    with handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise OutputError(LOCKED, output_dir) from None
        try:
            same = os.fstat(handle.fileno()).st_ino == (output_dir / LOCK_NAME).stat().st_ino
        except OSError:
            same = False
        if not same:
            # Locked just as the batch before let go of it and took the file away: a batch after this
            # one would lock a new file, and both would run.
            raise OutputError(LOCKED, output_dir)
        _remove_orphans(output_dir)
        try:
            yield
        finally:
            # Taken away while still held: the folder holds the batch's outputs only. A folder made
            # read-only meanwhile keeps it: that must not cost the summary of what was done.
            with contextlib.suppress(OSError):
                (output_dir / LOCK_NAME).unlink(missing_ok=True)


#: Age (s) past which a temporary file in a batch's output folder is an orphan: a write takes milliseconds.
ORPHAN_SECONDS = 60.0


def _remove_orphans(output_dir: Path) -> None:
    """Remove the temporary files a batch worker killed mid-write left in ``output_dir`` (held by this batch).

    Only files named as :func:`~digitise.fileio.write_atomic` names them, and a minute old: a review page
    may be saving into the folder at this moment.
    """
    from digitise.fileio import TEMP_NAME

    now = time.time()
    with contextlib.suppress(OSError):
        for entry in os.scandir(output_dir):
            with contextlib.suppress(OSError):
                if (TEMP_NAME.match(entry.name) and entry.is_file(follow_symlinks=False)
                        and now - entry.stat(follow_symlinks=False).st_mtime > ORPHAN_SECONDS):
                    os.unlink(entry.path)


#: The hidden file a batch locks in its output folder while it runs.
LOCK_NAME = ".digitise-batch.lock"
#: The hidden file whose locks share the batch's page memory among its workers (:class:`PageBudget`).
PAGES_LOCK_NAME = ".digitise-pages.lock"
#: The part of the machine's memory the pages a batch's workers decode may take together: each worker
#: holds a page's peak (a 600-megapixel colour page: 3.4 GB) while it reads it, and waits while the others
#: hold too much. A page larger than the whole is read alone.
PAGE_MEMORY_SHARE = 0.5
#: Its unit: a 300-dpi A4 colour page at its peak takes about one.
PAGE_MEMORY_UNIT = 64 << 20


def batch_page_memory() -> int:
    """The bytes of decoded pages a batch's workers may hold at once (:data:`PAGE_MEMORY_SHARE` of memory)."""
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX: as much as 8 GB
        physical = 16 << 30
    return max(PAGE_MEMORY_UNIT, int(physical * PAGE_MEMORY_SHARE))


class PageBudget:
    """Bytes of decoded pages the processes of a batch hold at once, shared through locks on one file.

    The bytes are cut into units of :data:`PAGE_MEMORY_UNIT`, each a byte of
    the file that a process holding it locks (POSIX record locks: held by
    the process, gone with it if it is killed, so a worker's death frees its
    share). A process takes its units with a lock on a second file held,
    so two never wait on each other with some units each. One page at a time
    a process (a batch's worker reads its pages in turn); a job's budget is
    closed when the job ends.
    """

    def __init__(self, path: Path, total: int) -> None:
        self.path = path
        self.units = max(1, total // PAGE_MEMORY_UNIT)
        self._files: tuple[Any, Any] | None = None

    def _handles(self) -> tuple[Any, Any]:
        """The units' file and the file locked while units are taken, open for the process's life: closing
        any descriptor of a file drops all the process's record locks on it."""
        if self._files is None:
            self._files = (open(self.path, "a+b"), open(_mutex_of(self.path), "a+b"))  # noqa: SIM115
        return self._files

    def close(self) -> None:
        """Let go of the files (and so of any unit still held)."""
        for handle in self._files or ():
            handle.close()
        self._files = None

    @contextlib.contextmanager
    def hold(self, nbytes: int, *, wait: bool = True) -> Iterator[None]:
        """Hold ``nbytes`` (at least a unit, at most all) for the block; ``wait=False``: raise
        ``BlockingIOError`` at once rather than wait for them."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: nothing shared
            yield
            return
        wanted = min(self.units, max(1, -(-nbytes // PAGE_MEMORY_UNIT)))
        units, mutex = self._handles()
        fd = units.fileno()
        held: list[int] = []
        try:
            with _flocked(mutex, wait):
                for unit in range(self.units):
                    if len(held) == wanted:
                        break
                    try:
                        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, unit)
                        held.append(unit)
                    except OSError:
                        continue
                if len(held) < wanted and not wait:
                    raise BlockingIOError(f"{wanted} of {self.units} units of page memory are not free")
                for unit in range(self.units):
                    if len(held) == wanted:
                        break
                    if unit not in held:
                        # Only their holders hold the others now, and they let go without this lock.
                        fcntl.lockf(fd, fcntl.LOCK_EX, 1, unit)
                        held.append(unit)
            yield
        finally:
            for unit in held:
                with contextlib.suppress(OSError):
                    fcntl.lockf(fd, fcntl.LOCK_UN, 1, unit)


def _mutex_of(path: Path) -> Path:
    """The file a :class:`PageBudget` locks while a process takes its units."""
    return path.with_name(path.name + ".taking")


@contextlib.contextmanager
def _flocked(handle: Any, wait: bool) -> Iterator[None]:
    """The open file ``handle`` locked whole for the block."""
    import fcntl

    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    try:
        yield
    finally:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
#: Why a batch is refused an output folder another batch holds.
LOCKED = "another batch is converting into this folder now: wait for it to end, or give another output folder"


def _batch_in(found: list[Job], failed: list[JobResult], left_out: list[Path], input_dir: Path, output_dir: Path,
              options: ScanOptions, start: float, executor: Executor, progress: Callable[[JobResult], None] | None,
              page_progress: Callable[[str], None] | None, started: Callable[[int], None] | None,
              runner: Callable[[Job, ScanOptions], JobResult]) -> BatchSummary:
    """The batch's jobs run with its output folder held (see :func:`batch`)."""
    if started:
        started(sum(job.page_count for job in found))
    # Job names are unique (find_jobs fails clashing ones), so results can be keyed by them.
    results: dict[str, JobResult] = {}
    todo: list[Job] = []
    for job in found:
        if job.output.exists() and not options.overwrite:
            done = _converted_before(job)
            lost = [path.name for path in (job.report, readings_beside(job.report)) if not path.exists()]
            if lost:
                # Its .mat stands, but the review of it needs the files beside it: said, not left to the review.
                gone = f"{lost[0]} is gone: the review page needs it" if len(lost) == 1 else \
                    f"{' and '.join(lost)} are gone: the review page needs them"
                done = replace(done, notes=(*done.notes, f"{gone}; --force converts the match again"))
            results[job.name] = done
        else:
            todo.append(job)
    for r in (*failed, *results.values()):
        if progress:
            progress(r)
    # A job without its .mat is not done: what an interrupted run left beside it is its own to replace.
    own = replace(options, leftovers=True)
    begun = time.time()
    try:
        with _stops_remembered():
            executor.run(todo, own, results, progress, page_progress, runner, begun)
    except KeyboardInterrupt:
        # Stopped (Ctrl-C, SIGTERM): what is done stays done, and the summary says what is not.
        for job in todo:
            if job.name not in results:
                results[job.name] = _written_meanwhile(job, begun) or JobResult(
                    job.name, "interrupted", job.page_count,
                    f"{job.name}: not converted: the batch was interrupted (the same command again converts it)")
        summary = _summarise(found, failed, left_out, results, input_dir, output_dir, start)
        raise BatchInterrupted(summary) from None
    return _summarise(found, failed, left_out, results, input_dir, output_dir, start)


class Executor(Protocol):
    """What runs a batch's jobs: worker processes of this machine (:class:`LocalProcesses`), or the workers
    of a Dask cluster (:class:`OnCluster`)."""

    def run(self, todo: list[Job], own: ScanOptions, results: dict[str, JobResult],
            progress: Callable[[JobResult], None] | None, page_progress: Callable[[str], None] | None,
            runner: Callable[[Job, ScanOptions], JobResult], begun: float) -> None:
        """Run ``runner(job, own)`` for each of ``todo``; each result into ``results`` and ``progress`` as it
        ends, each page read to ``page_progress``. Raises KeyboardInterrupt when the batch is stopped, its
        workers stopped first; a match whose ``.mat`` was written since ``begun`` (a ``time.time()``) is
        converted, though its result was not heard."""


@dataclass(frozen=True, slots=True)
class LocalProcesses:
    """Jobs in worker processes of this machine: ``jobs`` of them (default and most: one a core)."""

    jobs: int | None = None

    def run(self, todo: list[Job], own: ScanOptions, results: dict[str, JobResult],
            progress: Callable[[JobResult], None] | None, page_progress: Callable[[str], None] | None,
            runner: Callable[[Job, ScanOptions], JobResult], begun: float) -> None:
        """See :meth:`Executor.run`."""
        cores = os.cpu_count() or 1
        # At most one worker a core: each holds a page's images and models (~250 MB) and more only take turns.
        workers = max(1, min(self.jobs or cores, cores, len(todo) or 1))
        _run_jobs(todo, own, results, workers, progress, page_progress, runner, begun)


@dataclass(frozen=True, slots=True)
class OnCluster:
    """Jobs as tasks of a running Dask cluster (``batch --scheduler``), one match a task.

    The workers read the pages and write the outputs themselves (atomically,
    the ``.mat`` last), so every folder must be on a file system they share.
    A match whose worker is lost is run again on another; one whose ``.mat``
    a lost worker had written already is taken from it, not converted twice.
    """

    cluster: Cluster

    def run(self, todo: list[Job], own: ScanOptions, results: dict[str, JobResult],
            progress: Callable[[JobResult], None] | None, page_progress: Callable[[str], None] | None,
            runner: Callable[[Job, ScanOptions], JobResult], begun: float) -> None:
        """See :meth:`Executor.run`."""
        told: Counter[str] = Counter()
        pages = {job.name: job.page_count for job in todo}

        def relay_pages() -> None:
            for name in self.cluster.heard():
                # A match run again after its worker was lost tells its pages again: counted once.
                if page_progress is not None and told[name] < pages.get(name, 0):
                    told[name] += 1
                    page_progress(name)

        def take(done: list[Any]) -> None:
            for future in done:
                job = pending.pop(future)
                try:
                    result = future.result()
                except Exception as exc:  # noqa: BLE001 - what the worker could not send back
                    reason = "the process converting it died (killed, or out of memory?): the other matches " \
                             "went on" if self.cluster.lost(exc) else f"worker failed: {exc}"
                    result = JobResult(job.name, "failed", job.page_count, f"{job.name}: {reason}",
                                       code=int(ExitCode.INTERNAL))
                if result is None:
                    continue  # stopped before it was converted: the batch says so
                if result.report is not None:
                    result = replace(result, report=str(job.report))  # as the user named the folder
                results[job.name] = result
                if progress:
                    progress(result)

        # A worker has a working folder of its own: it is given every path whole. The batch's page memory is
        # this machine's: a worker's is bounded by its own --memory-limit (docs/distributed.md).
        whole = replace(own, template=_whole_template(own.template),
                        roster_file=_whole(own.roster_file) if own.roster_file is not None else None,
                        page_memory=None)
        pending: dict[Any, Job] = {}
        try:
            for job in todo:
                # The longest matches first, so no worker is left with a long one at the end. Keys of one
                # group: a big batch is queued at the scheduler, and a worker holds only the matches it runs.
                pending[self.cluster.submit(_run_task, runner, _whole_job(job), whole, begun, self.cluster.channel,
                                            key=f"digitise-match-{uuid.uuid4().hex}",
                                            priority=job.page_count)] = job
            while pending:
                if _stop_asked.is_set():
                    raise KeyboardInterrupt
                relay_pages()
                done = [future for future in pending if future.done()]
                if done:
                    take(done)
                else:
                    time.sleep(PAGE_POLL_SECONDS)
            relay_pages()
        except BaseException:
            # Tasks are threads on other machines, never killed: each is asked to stop at its next page, and
            # those writing their outputs are waited for, so that the summary tells what is on disk.
            self.cluster.stop()
            end = time.monotonic() + STOP_SECONDS
            while pending and time.monotonic() < end:
                take([future for future in pending if future.done()])
                time.sleep(PAGE_POLL_SECONDS)
            self.cluster.cancel(list(pending))
            raise


#: How long (s) a stopped batch waits for its cluster's tasks to stop or finish writing their match.
STOP_SECONDS = 60.0
#: How often (s) at most a cluster's task asks whether its batch was stopped.
STOP_POLL_SECONDS = 1.0


class _Stopped(BaseException):
    """Raised in a cluster's task when its batch was stopped: not an error of the match (run_job passes it on)."""


def _run_task(runner: Callable[[Job, ScanOptions], JobResult], job: Job, options: ScanOptions, begun: float,
              channel: Channel) -> JobResult | None:
    """One match as a task on a cluster's worker (:class:`OnCluster`); None when the batch was stopped first."""
    global _page_read
    if channel.stopped():
        return None
    written = _written_meanwhile(job, begun)
    if written is not None:
        return written  # by a worker lost after it wrote the .mat: this is its match run again

    asked = time.monotonic()

    def tell(name: str) -> None:
        nonlocal asked
        # Asking is a round trip to the scheduler: once a second is soon enough to stop.
        if time.monotonic() - asked >= STOP_POLL_SECONDS:
            asked = time.monotonic()
            if channel.stopped():
                raise _Stopped
        channel.tell(name)

    # Workers run one task a thread: the same function for every task of the batch.
    _page_read = tell
    _one_thread()
    try:
        return runner(job, options)
    except _Stopped:
        return None


def _one_thread() -> None:
    """Keep OpenCV to one thread in this process: one match a core, so matches don't fight."""
    try:
        import cv2

        cv2.setNumThreads(1)
    except ImportError:  # pragma: no cover
        pass


def _whole(path: Path) -> Path:
    """``path`` from the root, as this process sees it (not resolving links)."""
    return Path(os.path.abspath(path))


def _whole_job(job: Job) -> Job:
    """``job`` with every path from the root: a worker elsewhere has another working folder."""
    return replace(job, pages=tuple(_whole(page) for page in job.pages), output=_whole(job.output),
                   report=_whole(job.report))


def _whole_template(template: str | None) -> str | None:
    """A template given as a file, from the root; a paper name as it is."""
    return str(_whole(Path(template))) if template is not None and os.path.isfile(template) else template


@contextlib.contextmanager
def _executor(scheduler: str | None, jobs: int | None, shared: Sequence[Path]) -> Iterator[Executor]:
    """The executor a batch asked for: local processes, or the Dask cluster at ``scheduler``."""
    if scheduler is None:
        yield LocalProcesses(jobs)
        return
    if jobs is not None:
        raise OptionError("--jobs counts this machine's processes: a cluster runs one match a worker thread, as "
                          "many as its workers were started with (docs/distributed.md)")
    from digitise.cluster import connect

    with connect(scheduler, shared) as cluster:
        yield OnCluster(cluster)


def _run_jobs(todo: list[Job], own: ScanOptions, results: dict[str, JobResult], workers: int,
              progress: Callable[[JobResult], None] | None, page_progress: Callable[[str], None] | None,
              runner: Callable[[Job, ScanOptions], JobResult], begun: float = 0.0) -> None:
    """Run ``todo`` in ``workers`` processes (in this one when it is a single match); each result into
    ``results`` as it ends.

    ``begun`` (a ``time.time()``): a match whose ``.mat`` was written since then is converted, though a
    worker's death kept its result from being heard.
    """
    global _page_read

    def record(result: JobResult) -> None:
        results[result.name] = result
        if progress:
            progress(result)

    # One job or two, matches are converted in worker processes, so a match that kills its process (out of
    # memory, a crash below Python) costs that match alone. A lone match has no others to cost.
    if len(todo) <= 1:
        _page_read = page_progress
        try:
            for job in todo:
                record(runner(job, own))
        finally:
            _page_read = None
    else:
        # Longest matches first, so no worker is left with a long one at the end (results keep job order).
        by_size = sorted(todo, key=lambda job: -job.page_count)
        # forkserver, not fork: forking a process that runs threads (a GUI, a test
        # runner, onnxruntime) can deadlock the children.
        context = multiprocessing.get_context("forkserver")
        events = context.SimpleQueue() if page_progress else None

        def relay_pages() -> None:
            while events is not None and page_progress is not None and not events.empty():
                page_progress(events.get())

        def pool_run(jobs: list[Job], processes: int) -> list[Job]:
            with ProcessPoolExecutor(max_workers=processes, initializer=_init_worker,
                                     initargs=(events, logging.getLogger().getEffectiveLevel(), os.getpid()),
                                     mp_context=context) as pool:
                pending: dict[Future[JobResult], Job] = {pool.submit(runner, job, own): job for job in jobs}
                try:
                    broken = _collect(pending, results, progress, relay_pages)
                except BaseException:
                    # No public way to stop the matches being read before Python 3.14's terminate_workers();
                    # leaving the pool's block would wait for every queued match to be converted first.
                    workers_now = list((getattr(pool, "_processes", None) or {}).values())
                    pool.shutdown(wait=False, cancel_futures=True)
                    for process in workers_now:
                        process.terminate()
                    # Gone before the summary is written, so that it tells what is on disk.
                    for process in workers_now:
                        process.join(timeout=10)
                    raise
                relay_pages()
            return sorted(broken, key=jobs.index)

        def heard_of(jobs: list[Job]) -> list[Job]:
            """``jobs`` less those a worker converted before the pool broke (their .mat says so)."""
            left = []
            for job in jobs:
                written = _written_meanwhile(job, begun)
                if written is None:
                    left.append(job)
                else:
                    record(written)
            return left

        remaining = by_size
        while remaining:
            broken = heard_of(pool_run(remaining, workers))
            # A worker died (killed, or out of memory): the pool fails every match not done, the queued
            # ones too. The one that killed it was among the first few handed out: each of those is tried
            # again alone, so it cannot take others with it; the rest go on in a new pool.
            suspects, remaining = broken[:workers + 1], broken[workers + 1:]
            for job in suspects:
                if heard_of(pool_run([job], 1)):
                    record(JobResult(job.name, "failed", job.page_count,
                                     f"{job.name}: the process converting it died (killed, or out of memory?): "
                                     "the other matches went on", code=int(ExitCode.INTERNAL)))
        if events is not None:
            events.close()


#: Set when Ctrl-C (or the CLI's SIGTERM) reaches a running batch. The KeyboardInterrupt the signal raises can be
#: lost, raised inside a ``__del__`` or a callback that swallows it (a test saw a batch run on to its end so);
#: :func:`_collect` raises it again from this.
_stop_asked = threading.Event()


@contextlib.contextmanager
def _stops_remembered() -> Iterator[None]:
    """SIGINT and SIGTERM, while the batch runs, also set :data:`_stop_asked` (then do what they did)."""
    _stop_asked.clear()
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[int, Any] = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}

    def remembered(signum: int, frame: Any) -> None:
        _stop_asked.set()
        handler = previous[signum]
        if callable(handler):
            handler(signum, frame)
        elif signum == signal.SIGINT:
            raise KeyboardInterrupt

    for signum, handler in previous.items():
        # Only what would stop the batch: a signal ignored, or SIGTERM left to end the process, stays so.
        if callable(handler):
            signal.signal(signum, remembered)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            if callable(handler):
                signal.signal(signum, handler)


def _collect(pending: dict[Future[JobResult], Job], results: dict[str, JobResult],
             progress: Callable[[JobResult], None] | None, relay_pages: Callable[[], None]) -> list[Job]:
    """Wait for the workers' jobs, each result into ``results`` (and ``progress``) as it ends; the jobs not
    done because a worker died (the pool is then broken) are returned, not taken for failed."""
    broken: list[Job] = []
    while pending:
        if _stop_asked.is_set():
            raise KeyboardInterrupt
        # Woken now and then to pass on the pages read and to see a stop asked, not only when a match is done.
        done, _ = wait(pending, timeout=PAGE_POLL_SECONDS, return_when=FIRST_COMPLETED)
        relay_pages()
        for future in done:
            job = pending.pop(future)
            try:
                result = future.result()
            except BrokenProcessPool:
                broken.append(job)
                continue
            except Exception as exc:  # noqa: BLE001 - what the worker could not send back
                result = JobResult(job.name, "failed", job.page_count, f"{job.name}: worker failed: {exc}",
                                   code=int(ExitCode.INTERNAL))
            results[job.name] = result
            if progress:
                progress(result)
    return broken


def _summarise(found: list[Job], failed: list[JobResult], left_out: list[Path], results: dict[str, JobResult],
               input_dir: Path, output_dir: Path, start: float) -> BatchSummary:
    """The batch's summary, written to ``summary.json`` (a failure to write it is kept in the summary)."""
    # Pictures converted one to a match (a PDF or TIFF is a match's own file; a failed file was not converted).
    loose = sum(1 for job in found if job.page_count == 1 and job.pages[0].parent == input_dir
                and job.pages[0].suffix.lower() not in MATCH_FILE_SUFFIXES and results[job.name].status != "failed")
    summary = BatchSummary((*failed, *(results[j.name] for j in found)), time.perf_counter() - start,
                           loose_pages=loose, left_out=tuple(path.name for path in left_out))
    try:
        # The summary is the batch's own log: each run replaces it on purpose; a link of that name is replaced
        # too, never written through (it could lead to one of the inputs).
        for target, text in ((summary_path(output_dir), summary.to_json(output_dir)),
                             (summary_csv_path(output_dir), summary.to_csv(output_dir))):
            if target.is_symlink():
                target.unlink()
            write_atomic(target, text, overwrite=True)
    except DigitiseError as exc:
        # Said after the matches' own results: losing the file must not lose the list of what failed.
        return replace(summary, summary_error=exc)
    except OSError as exc:  # the link could not be taken away
        return replace(summary, summary_error=OutputError(f"cannot write: {exc.strerror or exc}", target))
    return summary


def _written_meanwhile(job: Job, begun: float) -> JobResult | None:
    """A match whose worker wrote its ``.mat`` (the last of its files) after ``begun`` though the batch was
    stopped before hearing of it: converted, as the disk shows (the summary must not say otherwise)."""
    try:
        if job.output.stat().st_mtime < begun:
            return None
    except OSError:
        return None
    found = _converted_before(job)
    status = "flagged" if found.flagged or found.notes or found.page_errors else "done"
    return replace(found, status=status, reason="")


def _converted_before(job: Job) -> JobResult:
    """A match a re-run skips, with the turns and flags its report gave (summary.json keeps them).

    Once reviewed, the flags left are the review's (its corrections file keeps the re-solved summary).
    """
    from digitise.notation.mat import outcome_of_file
    from digitise.solve.corrections import read_reviewed

    # Read from the .mat: after a review it holds the corrected match, which the report does not.
    result = JobResult(job.name, "skipped", job.page_count, "already converted (use --force)").told(
        outcome_of_file(job.output))
    try:
        doc, _ = read_reviewed(job.report)
        summary = doc["summary"]
        # What the first run said of the match's pages and doubts stays in the summary a re-run writes.
        errors = tuple(str(e) for e in doc.get("page_errors", ()) if isinstance(e, str))
        notes = tuple(str(n) for n in doc.get("notes", ()) if isinstance(n, str))
        return replace(result, turns=int(summary["turns"]), flagged=int(summary["flagged"]),
                       set_aside=_set_aside(summary), report=str(job.report),
                       page_errors=errors, notes=notes, closed_out=_count_of(doc, "closed_out"),
                       games=_count_of(summary, "games") or result.games)
    except DigitiseError as exc:
        # Its review's corrections file cannot be read (a hand edit): named, not left to hide the match.
        return replace(result, report=str(job.report), notes=(exc.message,))
    except (OSError, ValueError, TypeError, KeyError):
        return result  # no report, or not one of ours: the counts are unknown


#: How often (seconds) a batch with workers passes on the pages they read.
PAGE_POLL_SECONDS = 0.2


def summary_path(output_dir: Path) -> Path:
    """Where ``batch`` writes its ``summary.json`` in ``output_dir``."""
    return output_dir / SUMMARY_NAME


def summary_csv_path(output_dir: Path) -> Path:
    """Where ``batch`` writes its ``summary.csv`` (the same, for a spreadsheet) in ``output_dir``."""
    return output_dir / SUMMARY_CSV_NAME


def check_summaries(output_dir: Path, overwrite: bool) -> None:
    """Refuse, before any match is converted, a ``summary.json`` or ``summary.csv`` the batch could not write
    at its end, or that it would replace unasked: a folder, a device, or a file a batch did not write
    (without ``overwrite``: ``--force``). An earlier batch's own are its log, replaced on purpose."""
    for target, ours in ((summary_path(output_dir), _our_summary), (summary_csv_path(output_dir), _our_csv)):
        check_outputs([target], overwrite=True)
        if os.path.exists(target) and not overwrite and not ours(target):
            raise OutputError("exists already and was not written by digitise batch (use --force to replace it, "
                              "or give another output folder)", target)


def _our_summary(path: Path) -> bool:
    """Whether ``path`` holds a ``summary.json`` a batch wrote (its counts and jobs; a format since it said one)."""
    try:
        doc = json_document(read_text(path, "a batch summary"))
    except (InputError, ValueError, RecursionError):
        return False
    return isinstance(doc, dict) and (doc.get("format") == SUMMARY_FORMAT if "format" in doc else
                                      isinstance(doc.get("counts"), dict) and isinstance(doc.get("jobs"), list))


def _our_csv(path: Path) -> bool:
    """Whether ``path`` is a ``summary.csv`` a batch wrote (its first line is the batch's header row)."""
    try:
        text = read_input(path, 4096).decode("utf-8-sig")
    except (InputError, UnicodeDecodeError):
        return False
    return text.split("\r\n", 1)[0] == ",".join(CSV_COLUMNS)


def pages_held(pages: Sequence[Path]) -> int | None:
    """How many pages ``pages`` hold, for a progress bar; None when one is not a plain file (a pipe, such
    as ``<(command)``, can be read only once)."""
    from digitise.vision.images import page_count

    if not all(os.path.isfile(page) for page in pages):
        return None
    return sum(page_count(page) for page in pages)


def is_terminal() -> bool:
    """True when progress can be drawn as a bar (stderr is a terminal)."""
    return sys.stderr.isatty()


@dataclass(frozen=True, slots=True)
class LayoutSummary:
    """What ``digitise layout`` wrote: the layout file, its boards (how many seen, the others placed from the
    grid), how far the page was turned, and the overlay picture when asked for."""

    output: str
    boards: int
    seen: int
    turn: float
    overlay: str | None = None


def layout_to_file(page: Path, output: Path, *, overlay: Path | None = None, name: str | None = None,
                   overwrite: bool = False) -> LayoutSummary:
    """``digitise layout``: the first page of ``page`` fitted from its own lines, written as a template JSON
    (``--template`` reads it), and the fit drawn over the page into ``overlay``.

    Raises :class:`~digitise.errors.LayoutError` with the reason for a page whose grid of boards cannot be
    fitted (nothing is guessed, nothing written).
    """
    import cv2
    import numpy as np

    from digitise.errors import LayoutError
    from digitise.vision.images import darkest_channel, iter_pages
    from digitise.vision.layout import draw_layout, fit_layout, reduced, way_up
    from digitise.vision.read import WORK_LONG_SIDE

    check_inputs([page])
    check_outputs([output, *([overlay] if overlay is not None else [])], overwrite, inputs=[page])
    first = next(iter(iter_pages(page)), None)
    if first is None:
        raise InputError("no page in it", page)
    if isinstance(first, DigitiseError):
        raise first
    small, factor = reduced(darkest_channel(first.image), WORK_LONG_SIDE)
    try:
        fit = fit_layout(small, name=name or output.stem)
        way_up(fit)
    except LayoutError as exc:
        raise LayoutError(exc.reason, page, "page 1") from None
    drawn: bytes | None = None
    if overlay is not None:
        to_image = np.diag([1.0 / factor, 1.0 / factor, 1.0]) @ fit.homography
        ok, encoded = cv2.imencode(".png", draw_layout(first.image, fit.template, to_image))
        if not ok:  # pragma: no cover - encoding a valid array does not fail
            raise OutputError("cannot encode the overlay", overlay)
        drawn = encoded.tobytes()
    write_atomic(output, fit.template.to_json(), overwrite=overwrite)
    if overlay is not None and drawn is not None:
        write_atomic(overlay, drawn, overwrite=overwrite)
    return LayoutSummary(str(output), len(fit.template.boards), fit.seen, fit.turn,
                         str(overlay) if overlay is not None else None)
