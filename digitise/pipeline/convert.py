"""One match converted: pages read, solved and written (``scan``), and its halves ``read`` and ``solve``."""

from __future__ import annotations

import gc
import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from digitise.errors import DigitiseError, ExitCode, InputError, OutputError
from digitise.fileio import beside, check_inputs, check_outputs, real_path, write_atomic
from digitise.game.record import MatchOutcome
from digitise.game.record import outcome as match_outcome
from digitise.pipeline.notes import mirrored_print_note, order_by_header, page_notes, turned_page_note
from digitise.solve.reasons import Flag, Reason, codes, texts

if TYPE_CHECKING:
    from digitise.notation.readings import Readings
    from digitise.solve import SolveResult
    from digitise.vision.read import ReadOutcome


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
    scan_notes = [Reason.PAGE_DAMAGED.said(notice) for notice in outcome.notices] + _pages_noted(pages_note)
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
        _add_scan_notes(result, extra, scan_notes)
    _write_match(result, output, report, options, extra,
                 (readings_path, readings) if readings_path is not None else None)
    return ScanSummary.of(output, report, len(readings.pages), result, page_errors)


def _pages_noted(note: str | None) -> list[Flag]:
    """The corrections file's note that it was made on other pages, if any, as a scan note."""
    return [Reason.CORRECTIONS_OTHER_PAGES.said(note)] if note else []


def _add_scan_notes(result: SolveResult, extra: dict[str, Any], scan_notes: list[Flag]) -> None:
    """The scan's own notes added to the match's, texts and codes, and kept apart too: a re-solve on the
    review page carries them over."""
    result.report["notes"] = [*result.report.get("notes", ()), *texts(scan_notes)]
    result.report["note_codes"] = [*result.report.get("note_codes", ()), *codes(scan_notes)]
    extra["scan_notes"] = texts(scan_notes)
    extra["scan_note_codes"] = codes(scan_notes)


def _some_turn_found(result: SolveResult, files: Sequence[Path]) -> None:
    """Refuse a match with no turn at all: GNU Backgammon imports no ``.mat`` without a game, and a review has
    nothing to correct. Blank notes, or writing that no game from the start can follow (the wrong pages)."""
    from digitise.solve import NO_TURNS

    if result.solved.summary.turns:
        return
    why = next((note.text for note in result.solved.notes if note.reason is Reason.NO_GAME), NO_TURNS)
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
    scan_notes = page_notes(read) + mirrored_print_note(read) + turned_page_note(read) + _pages_noted(pages_note)
    # As scan numbers them: a `read` of several files numbers each file's pages from 1.
    readings = renumbered(read)
    result = solve_with_corrections(readings, corrections, players=options.players, length=options.length,
                                    path=options.corrections, roster=options.roster)
    _some_turn_found(result, [readings_path])
    extra: dict[str, Any] = {}
    if scan_notes:
        _add_scan_notes(result, extra, scan_notes)
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
