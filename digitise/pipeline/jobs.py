"""A batch's jobs: the matches found in its input folder, and how each ended."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

from digitise.errors import DigitiseError, InputError
from digitise.fileio import natural_key, real_path, why_absent
from digitise.game.record import MatchOutcome
from digitise.notation.mat import outcome_of_file
from digitise.solve.corrections import read_reviewed

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
    # imported here: keeps start-up light (OpenCV, NumPy)
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
    # imported here: keeps start-up light (OpenCV, NumPy)
    from digitise.vision.images import sniff_file

    return sniff_file(path) is not None


def converted_unheard(job: Job, begun: float) -> JobResult | None:
    """A match whose worker wrote its ``.mat`` (the last of its files) after ``begun`` though the batch was
    stopped before hearing of it: converted, as the disk shows (the summary must not say otherwise)."""
    try:
        if job.output.stat().st_mtime < begun:
            return None
    except OSError:
        return None
    found = skipped_as_converted(job)
    status = "flagged" if found.flagged or found.notes or found.page_errors else "done"
    return replace(found, status=status, reason="")


def skipped_as_converted(job: Job) -> JobResult:
    """A match a re-run skips, with the turns and flags its report gave (summary.json keeps them).

    Once reviewed, the flags left are the review's (its corrections file keeps the re-solved summary).
    """
    # Read from the .mat: after a review it holds the corrected match, which the report does not.
    result = JobResult(job.name, "skipped", job.page_count, "already converted (use --force)").told(
        outcome_of_file(job.output))
    try:
        counts = read_reviewed(job.report)
        return replace(result, turns=counts.turns, flagged=counts.flagged, set_aside=counts.set_aside,
                       report=str(job.report), page_errors=counts.page_errors, notes=counts.notes,
                       closed_out=counts.closed_out, games=counts.games or result.games)
    except DigitiseError as exc:
        # Its review's corrections file cannot be read (a hand edit): named, not left to hide the match.
        return replace(result, report=str(job.report), notes=(exc.message,))
    except (OSError, ValueError, TypeError, KeyError):
        return result  # no report, or not one of ours: the counts are unknown
