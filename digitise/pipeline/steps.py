"""The steps of converting one match, each typed in and typed out, in the order ``scan`` takes them.

The outputs checked (:func:`match_files`), a review's corrections taken in
(:func:`review_of`), the pages read (:func:`read_match`), put in their written
order (:func:`header_order`), noted (:func:`notes_on_pages`), numbered
(:func:`numbered`), solved (:func:`solver`), read again in the recorder's hand
(:func:`adapt`), and written (:func:`write_match`), the notes of the scan added
to the report on the way (:func:`add_scan_notes`).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from digitise.errors import DigitiseError, InputError, OutputError
from digitise.fileio import beside, check_outputs, real_path, write_atomic
from digitise.notation.mat import format_mat
from digitise.notation.readings import readings_to_json, renumbered
from digitise.pipeline.notes import (
    mirrored_print_note,
    order_by_header,
    page_notes,
    turned_page_note,
    unread_boards_note,
)
from digitise.pipeline.options import ScanOptions
from digitise.solve import NO_TURNS, report_to_json
from digitise.solve.corrections import check_pages, load_corrections_file, page_files, pages_to_json
from digitise.solve.reasons import Flag, Reason, codes, texts
from digitise.solve.reviewed import solve_with_corrections

if TYPE_CHECKING:
    from digitise.adaptation import Place
    from digitise.notation.readings import Readings
    from digitise.solve import SolveResult
    from digitise.vision.read import HandCell, ReadOutcome


@dataclass(frozen=True, slots=True)
class MatchFiles:
    """Where one match's files go, checked before any work: the ``.mat``, its report and the readings beside it
    (None: not written)."""

    mat: Path
    report: Path | None
    readings: Path | None


@dataclass(frozen=True, slots=True)
class Reviewed:
    """What a review's corrections file (``options.corrections``) gives a solve: the boards' corrections, the
    options with the reviewer's names and length, and a note when it was made on page files that differ in part
    from those read."""

    boards: Mapping[tuple[int, int], str]
    options: ScanOptions
    note: str | None = None

    @property
    def notes(self) -> list[Flag]:
        """The note, as the match's notes list it."""
        return [Reason.CORRECTIONS_OTHER_PAGES.said(self.note)] if self.note else []


@dataclass(frozen=True, slots=True)
class Solved:
    """A solved match and the readings it was solved from (read again in the recorder's hand, when it was)."""

    result: SolveResult
    readings: Readings


def match_files(output: Path, report: Path | None, options: ScanOptions, inputs: list[Path], *,
                with_readings: bool) -> MatchFiles:
    """The match's files, all checked before any work: refused when one would write over an input, or over a
    file unasked (see :func:`~digitise.fileio.check_outputs`). ``with_readings``: the readings are kept beside
    the report (:func:`readings_beside`)."""
    _check_report_name(report)
    readings_path = readings_beside(report) if with_readings and report is not None else None
    _check_match_outputs(output, report, readings_path, options, inputs)
    return MatchFiles(output, report, readings_path)


def read_match(pages: Sequence[Path], options: ScanOptions, on_page: Callable[[], None] | None) -> ReadOutcome:
    """The pages read (``on_page`` told of each); raises the problem when not one page could be read."""
    # imported here: keeps start-up light (OpenCV, NumPy)
    from digitise.vision.read import read_pages

    return some_page_read(read_pages(list(pages), template=options.template, on_page=on_page), pages)


def header_order(readings: Readings, options: ScanOptions) -> tuple[Readings, list[Flag]]:
    """The pages in the order of their written numbers when ``--order header`` asked for it and they can be (else
    as given, with the note why: :func:`~digitise.pipeline.notes.order_by_header`)."""
    if options.order != "header":
        return readings, []
    ordered, note = order_by_header(readings)
    return ordered, [note] if note is not None else []


def notes_on_pages(readings: Readings, *, ordered_by_header: bool = False) -> list[Flag]:
    """The notes on the pages: given twice, of another match, out of order, of a mirrored print, read turned, with
    boards not read."""
    return (page_notes(readings, ordered_by_header=ordered_by_header) + mirrored_print_note(readings)
            + turned_page_note(readings) + unread_boards_note(readings))


def numbered(readings: Readings, hand: Sequence[HandCell]) -> tuple[Readings, dict[Place, list[HandCell]]]:
    """The pages numbered in pile order, as the report numbers them, and ``hand``'s squares by their (page,
    board) there (:func:`~digitise.adaptation.hand_by_place`)."""
    # imported here: keeps start-up light (OpenCV, NumPy)
    from digitise.adaptation import hand_by_place

    by_place = hand_by_place(readings.pages, hand)
    return renumbered(readings), by_place


def solver(reviewed: Reviewed) -> Callable[[Readings], SolveResult]:
    """How the match's readings are solved: with the review's corrections, names, length and roster."""
    options = reviewed.options

    def solve(readings: Readings) -> SolveResult:
        return solve_with_corrections(readings, reviewed.boards, players=options.players, length=options.length,
                                      path=options.corrections, roster=options.roster)

    return solve


def adapt(readings: Readings, hand: Mapping[Place, Sequence[HandCell]], first: SolveResult,
          solve: Callable[[Readings], SolveResult], options: ScanOptions) -> Solved:
    """``first`` read again in the recorder's hand learned from its sure turns (unless ``--no-adapt``), what
    that did kept in the report's ``adaptation``."""
    # imported here: keeps start-up light (OpenCV, NumPy)
    from digitise.adaptation import TURNED_OFF, Adaptation, adapt_to_hand
    from digitise.vision.cellnet import point_heads

    if options.adapt:
        result, readings, adaptation = adapt_to_hand(readings, hand, first, solve, point_heads())
    else:
        result = first
        adaptation = Adaptation(flagged_before=first.flagged, flagged_after=first.flagged, skipped=TURNED_OFF)
    result.report["adaptation"] = adaptation.to_json()
    return Solved(result, readings)


def add_scan_notes(result: SolveResult, notes: list[Flag]) -> dict[str, Any]:
    """The scan's own notes added to ``result``'s report after the solve's, texts and codes; returned is what the
    report keeps of them apart (a re-solve on the review page carries them over)."""
    if not notes:
        return {}
    result.report["notes"] = [*result.report.get("notes", ()), *texts(notes)]
    result.report["note_codes"] = [*result.report.get("note_codes", ()), *codes(notes)]
    return {"scan_notes": texts(notes), "scan_note_codes": codes(notes)}


def scanned_sources(pages: Sequence[Path], outcome: ReadOutcome) -> dict[str, Any]:
    """What the report keeps of the pages scanned: their files, the pages that could not be read, and the files'
    names and sizes (what the review page's corrections file records of the pages it was made on)."""
    return {"sources": [str(real_path(p)) for p in pages], "page_errors": [err.message for err in outcome.errors],
            "source_files": pages_to_json(page_files(pages))}


def recorded_page_files(read: Readings) -> tuple[tuple[str, int], ...]:
    """The page files as ``digitise read`` saw them ((name, bytes)); none for readings from before it recorded
    their sizes."""
    # Looked up again, a relative name would be found or not depending on where this runs, and the corrections
    # applied or refused with it.
    return tuple(dict.fromkeys((Path(page.source).name, page.source_bytes) for page in read.pages
                               if page.source and page.source_bytes is not None))


def readings_sources(readings_path: Path, report: Path | None, files: Sequence[tuple[str, int]]) -> dict[str, Any]:
    """What the report of a solved readings file keeps of its sources: the readings (from the report's folder)
    and the page files they were read from, when they say."""
    extra: dict[str, Any] = {}
    if report is not None:
        extra["readings"] = os.path.relpath(real_path(readings_path), real_path(report.parent))
    if files:
        # As scan records them: a review of this report saves its corrections with the pages they were made on.
        extra["source_files"] = pages_to_json(files)
    return extra


def some_turn_found(result: SolveResult, files: Sequence[Path]) -> None:
    """Refuse a match with no turn at all: GNU Backgammon imports no ``.mat`` without a game, and a review has
    nothing to correct. Blank notes, or writing that no game from the start can follow (the wrong pages)."""
    if result.solved.summary.turns:
        return
    why = next((note.text for note in result.solved.notes if note.reason is Reason.NO_GAME), NO_TURNS)
    where = files[0] if len(files) == 1 else None
    said = why if where is not None else f"{why} ({len(files)} files, {files[0]} first)"
    raise InputError(f"nothing to convert: {said}", where)


def _grouped_by_file(errors: Sequence[DigitiseError]) -> list[str]:
    """Page errors as messages, those of one file and one reason said once with their pages ("pages 1-3, 7")."""
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


def some_page_read(outcome: ReadOutcome, pages: Sequence[Path]) -> ReadOutcome:
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


def _check_report_name(report: Path | None) -> None:
    """Refuse a report path that names no file (``""``, ``.``, ``/``): its companions are named after it."""
    if report is not None and (report.name in ("", ".", "..") or os.path.isdir(report)):
        raise OutputError("is a folder, not a file: name the report file (e.g. match.report.json)", report)


def review_of(options: ScanOptions, files: Sequence[tuple[str, int]] = ()) -> Reviewed:
    """The boards' corrections of ``options.corrections``, the options with its names and length, and a note
    when it was made on page files that differ in part from ``files`` ((name, bytes); refused when they
    differ wholly: :func:`~digitise.solve.corrections.check_pages`).

    A reviewer's names and length win over ``--players`` and ``--length``, as
    a corrected board wins over its marks: they were set looking at the scan.
    """
    if options.corrections is None:
        return Reviewed({}, options)

    reviewed = load_corrections_file(options.corrections)
    note = check_pages(reviewed, files, options.corrections) if files else None
    players, length = reviewed.header.over(options.players, options.length)
    return Reviewed(reviewed.boards, replace(options, players=players, length=length), note)


def template_file(template: str | None) -> list[Path]:
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
              *template_file(options.template)]
    companions = [t for t in (report, readings_path) if t is not None]
    check_outputs([output, *companions], options.overwrite, inputs=inputs,
                  replaceable=companions if options.leftovers else ())


def write_match(result: SolveResult, files: MatchFiles, options: ScanOptions, extra: dict[str, Any],
                readings: Readings | None) -> None:
    """Write the readings (when ``files`` keeps them), the report and, last, the ``.mat``.

    Everything is made before anything is written, so a refusal writes
    nothing; the ``.mat`` comes last because it is what tells a batch the
    match is done.
    """
    output, report = files.mat, files.report
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
    writes: list[tuple[Path, str, bool]] = []
    if files.readings is not None and readings is not None:
        report_doc["readings"] = files.readings.name
        writes.append((files.readings, readings_to_json(readings), companions))
    if report is not None:
        writes.append((report, report_to_json(report_doc), companions))
    writes.append((output, text, options.overwrite))
    made: list[Path] = []
    try:
        for path, content, overwrite in writes:
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
