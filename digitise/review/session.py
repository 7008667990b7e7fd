"""The review session: one report, its readings, the reviewer's corrections, the re-solved match.

The web server (:mod:`digitise.review.server`) is a thin HTTP layer over a
:class:`ReviewSession`; everything it answers comes from here, so this is
what the tests drive directly as well as through HTTP.

A correction is a hard constraint: each one re-runs the solver with all
corrections, and the page is told which turns changed. The reviewer may also
set the players' names and the match length (a header misread or left
blank); they are saved with the corrections and re-solve the match too. After
each change the corrected match is written over the ``.mat`` the scan wrote
(the report names it), so closing the page loses nothing and leaves no stale
file.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from digitise.errors import DigitiseError, InputError, OutputError
from digitise.fileio import folder_problem, write_atomic
from digitise.game.record import MatchOutcome, outcome
from digitise.notation.template import Template, load_template
from digitise.review.board_parts import (
    ACTION_PARTS,
    cells_json,
    marks_json,
    with_other_turns,
)
from digitise.review.changes import (
    Change,
    Solver,
    candidate_correction,
    default_solver,
    describe_turn,
    report_changes,
)
from digitise.review.checks import looks_like_mat
from digitise.review.pictures import (
    CROP_MARGIN,
    BoardSource,
    cell_boxes,
    cut_out,
    forget_learning_crops,
    load_page_image,
    save_learning_crops,
)
from digitise.review.refusals import (
    CHANGED_ELSEWHERE,
    RESCANNED,
    STALE_PAGE,
    ChangedElsewhere,
    CorrectionRefused,
    file_stamp,
    report_locked,
)
from digitise.review.scanned import MatchForm, load_scanned, match_form
from digitise.review.why_refused import illegal_play, misfit
from digitise.solve.corrections import (
    Corrections,
    MatchHeader,
    absent_boards,
    check_fit,
    correction_from_request,
    corrections_path,
    header_from_json,
    load_corrections_file,
    place_from_request,
    save_corrections,
    unfitting,
)
from digitise.solve.report_types import Report, Turn, json_of
from digitise.solve.reviewed import OnBoard, corrected_cells, corrected_readings, turn_at, turns_by_board

log = logging.getLogger(__name__)




class ReviewSession:
    """One report under review. Thread-safe: the HTTP server serves requests in threads."""

    def __init__(
        self,
        report_path: str | Path,
        *,
        readings_path: str | Path | None = None,
        learn_dir: str | Path | None = None,
        solver: Solver | None = None,
        resolve: bool = True,
    ) -> None:
        """Load ``report_path``, its readings and saved corrections, and solve once with them.

        ``solver`` replaces :func:`digitise.solve.solve` (tests); ``resolve=False``
        reviews without re-solving (corrections are only saved). Raises
        :class:`InputError` for a bad report, readings or corrections file,
        including corrections that no longer fit the scan.
        """
        #: How this session was made: :meth:`fresh` makes it again after a new scan.
        self._made_with = (report_path, readings_path, learn_dir, solver, resolve)
        self.report_path = Path(report_path).resolve()
        self.root = self.report_path.parent
        self._report_stamp = file_stamp(self.report_path)
        #: The report as the scan wrote it: what every re-solve (and a reload from the file) starts from; the
        #: match as re-solved with the corrections is ``report``.
        self.scan = load_scanned(self.report_path)
        self.report: Report = self.scan.report
        self.readings_path = self._find_readings(readings_path)
        self._readings_stamp = file_stamp(self.readings_path)
        #: The files' stamps when a new scan was last tried (:meth:`renewed`), and why it could not be loaded.
        self._rescan_tried: tuple[tuple[int, int, int] | None, tuple[int, int, int] | None] | None = None
        self._rescan_problem: str | None = None
        self.readings = self._load_readings(self.readings_path) if self.readings_path else None
        # The readings never change during a session: their boards and images are looked up once.
        self._boards: dict[tuple[int, int], BoardSource] | None = None
        self._existing_images: set[Path] | None = None
        self.learn_dir = Path(learn_dir) if learn_dir else None
        if self.learn_dir is not None and (unusable := folder_problem(self.learn_dir / "crop.png")):
            # Refused now, not at the first correction: the crops would be lost one by one.
            raise OutputError(f"cannot save learning crops: {unusable}", self.learn_dir)
        if not resolve or self.readings is None:
            self.solver = None
        else:
            self.solver = solver if solver is not None else default_solver(self.scan)
        self.corrections_file = corrections_path(self.report_path)
        self.corrections: Corrections = {}
        #: The players and length the reviewer set (saved with the corrections).
        self.header = MatchHeader()
        self.changes: list[Change] = []
        self.match: Any = None
        #: What became of the .mat at the last change: {"written": path} or {"error": why}; None before any.
        self.mat_note: dict[str, str] | None = None
        self.messages: list[str] = []
        self._lock = threading.Lock()
        self._crops: dict[tuple[int, int, bool], bytes] = {}
        self._templates: dict[str, Template | None] = {}
        self._pages: dict[tuple[Path, int], Any] = {}
        if self.readings is None:
            self.messages.append(
                "no readings: corrections are saved but the match is not re-solved and cannot be exported "
                "(give --readings FILE)"
            )
        elif self.solver is None:
            self.messages.append("the match is not re-solved here: corrections are saved but not applied")
        unwritable = folder_problem(self.corrections_file)
        if unwritable is not None:
            # Said at the start: otherwise the first correction made in the browser is the one that fails.
            self.messages.append(f"corrections cannot be saved ({unwritable}): review a copy of the folder "
                                 "somewhere writable")
        #: The corrections file's text as this session last read or wrote it (None: no file).
        self._disk: str | None = None
        self._load_saved()

    def _load_saved(self) -> None:
        """Take the corrections file as it is on disk, and solve the match with it (at start, and after a
        change made elsewhere)."""
        # Everything is read and solved before any of it is taken: a file that cannot be read (a typo made by
        # hand) leaves this session as it was, and the next change is refused again instead of saving over it.
        disk = self._disk_text()
        corrections: Corrections = {}
        header = MatchHeader()
        changes: list[Change] = []
        report, match = self.scan.report, None
        if self.corrections_file.exists():
            saved = load_corrections_file(self.corrections_file)
            corrections, header = saved.boards, saved.header
            if self.readings is not None:
                absent_boards(corrections, self.boards(), self.corrections_file)
        if self.solver is not None and self.readings is not None:
            # Solve once at start so the page shows the match with the saved corrections applied.
            readings = corrected_readings(self.readings, corrections, self.scan.report)
            match, solved = self.solver(readings, corrections, header)
            report = self.scan.with_scan_notes(solved)
            if corrections or header.given:
                check_fit(report, corrections, self.corrections_file)
                changes = report_changes(self.scan.report, report)
        self._disk, self.corrections, self.header, self.changes = disk, corrections, header, changes
        self.report, self.match = report, match

    def _disk_text(self) -> str | None:
        """The corrections file's text now, or None when there is none (or it cannot be read)."""
        try:
            return self.corrections_file.read_text(encoding="utf-8") if self.corrections_file.is_file() else None
        except (OSError, UnicodeDecodeError):
            return None

    # -- loading ---------------------------------------------------------------------------------

    def _find_readings(self, given: str | Path | None) -> Path | None:
        if given is not None:
            return Path(given).resolve()
        named = self.scan.readings
        if named:
            candidate = Path(named)
            return (candidate if candidate.is_absolute() else self.root / candidate).resolve()
        return None

    @staticmethod
    def _load_readings(path: Path) -> Any:
        from digitise.notation.readings import load_readings

        return load_readings(path)

    def _made_on(self) -> list[tuple[str, int]]:
        """The page files the scan read, (name, size), for the corrections file: `scan --corrections` refuses
        it with other pages. Empty for a report that does not record them (an older scan, or `solve`)."""
        return list(self.scan.source_files)

    def boards(self) -> dict[tuple[int, int], BoardSource]:
        """Every board of the readings, keyed by (page, board), with its picture's source."""
        if self._boards is None:
            self._boards = self._find_boards()
        return self._boards

    def _find_boards(self) -> dict[tuple[int, int], BoardSource]:
        found: dict[tuple[int, int], BoardSource] = {}
        if self.readings is None:
            return found
        frames: dict[str, int] = {}
        for page in self.readings.pages:
            frame = frames.get(page.source, 0)
            frames[page.source] = frame + 1
            image = self._locate_image(page.source)
            for board in page.boards:
                found[(page.page, board.index)] = BoardSource(image, board.box, frame)
        return found

    def _locate_image(self, source: str) -> Path:
        """The page file a reading names: as written, beside the readings, or among the report's sources.

        ``digitise read`` records the path as it was given (relative to where
        it ran); the report lists the inputs as absolute paths.
        """
        named = Path(source)
        tried = [named] if named.is_absolute() else []
        if not named.is_absolute():
            if self.readings_path is not None:
                tried.append(self.readings_path.parent / named)
            tried.append(self.root / named)
            tried.append(Path.cwd() / named)
        tried.extend(Path(s) for s in self.scan.sources if Path(s).name == named.name)
        return next((p for p in tried if p.is_file()), tried[0] if tried else named)

    def board_reading(self, page: int, board: int) -> Any:
        """The :class:`BoardReading` of (page, board), or None."""
        if self.readings is None:
            return None
        for p in self.readings.pages:
            if p.page == page:
                for b in p.boards:
                    if b.index == board:
                        return b
        return None

    # -- what the page shows ---------------------------------------------------------------------

    def _disk_problem(self) -> str | None:
        """Take the corrections file as it is when it changed on disk since it was read or written (a hand
        edit); what is wrong with it when it cannot be taken, None when nothing is."""
        if self.rescanned():
            # Only a session whose new scan could not be loaded is still asked (see renewed()).
            why = f": {self._rescan_problem}" if self._rescan_problem else ""
            return (f"the match was scanned again since this page loaded it, and the new scan cannot be reviewed"
                    f"{why}; the page shows the old scan, and nothing can be changed")
        if self._disk_text() == self._disk:
            return None
        try:
            self._load_saved()
        except DigitiseError as exc:
            # Said on the page as it loads, not first at the next correction or export.
            return (f"{exc.message}: the page shows the corrections as they were last read, and none can be "
                    "saved or exported until the file is mended (or deleted); then reload the page")
        return "the corrections were changed elsewhere (another review page, or by hand): shown as they are now"

    def state(self) -> dict[str, Any]:
        """Everything the page needs, as JSON-able data."""
        with self._lock:
            problem = self._disk_problem()
            changed = {(c.page, c.board) for c in self.changes if c.before != c.after}
            scanned = {(on.page, on.board): on for on in turns_by_board(self.scan.report) if on.n == 0}
            turns = []
            for turn in turns_by_board(self.report):
                page, board, n = turn.key
                reading = self.board_reading(page, board)
                correction = self.corrections.get((page, board))
                candidates = [{**json_of(c), "correction": candidate_correction(c)} for c in turn.candidates]
                if correction is not None and n == 0 and (page, board) in scanned:
                    # A corrected board's only candidate is its correction: the scan's own candidates follow it,
                    # so the runner-up is one key away without undoing first.
                    given = {c["correction"] for c in candidates}
                    candidates += [{**json_of(c), "correction": made, "as_scanned": True}
                                   for c in scanned[(page, board)].candidates
                                   if (made := candidate_correction(c)) not in given]
                turns.append(
                    {
                        **turn.to_json(),
                        "id": f"p{page}b{board}" + (f"n{n}" if n else ""),
                        "text": describe_turn(turn),
                        "cells": cells_json(reading),
                        "marks": marks_json(reading),
                        "corrected": correction is not None and n == 0,
                        "correction": correction if n == 0 else None,
                        "candidates": candidates,
                        "changed": (page, board) in changed,
                        "has_crop": self._has_crop(page, board),
                        # A board the fit was unsure of: its picture with the squares as placed drawn over it.
                        "overlay": self._has_crop(page, board) and getattr(reading, "lines", None) is not None,
                        "cell_boxes": self._cell_boxes(page, board),
                        # What the user should do about each reason, beside it.
                        "reason_actions": [flag.reason.action for flag in turn.reasons],
                    }
                )
            games = [{"number": g.number, "winner": g.winner, "points": g.points} for g in self.report.games]
            mat = self.mat_path()
            return {
                "title": self.report_path.name,
                "revision": self.revision(),
                "summary": json_of(self.report.summary),
                "match": self._match_header().to_json(),
                "games": games,
                "turns": turns,
                "corrections": [{"page": p, "board": b, "text": t} for (p, b), t in sorted(self.corrections.items())],
                "changes": [change.to_json() for change in self.changes],
                "can_resolve": self.solver is not None and self.readings is not None,
                "can_export": self.match is not None,
                "can_save": self.match is not None and mat is not None,
                "mat": mat.name if mat is not None else None,
                "mat_saved": self.mat_saved(),
                "mat_note": self.mat_note,
                "messages": list(self.messages) + ([problem] if problem else []),
                # Doubts about the whole match (a name or the length made up, the page order kept).
                "notes": [note.text for note in self.report.notes],
                "closed_out": self.report.closed_out,
            }

    def overview(self) -> tuple[Report, int, bool, bool | None]:
        """For a folder's list: the match as it now stands, how many boards are corrected, whether names or
        length were set, and whether the .mat is up to date (None when there is none to write)."""
        with self._lock:
            saved = self.mat_saved() if self.match is not None and self.mat_path() is not None else None
            return self.report, len(self.corrections), self.header.given, saved

    def outcome(self) -> MatchOutcome | None:
        """Players, length, score and winner of the match as it now stands (None when it was not solved)."""
        with self._lock:
            return None if self.match is None else outcome(self.match)

    def _match_header(self) -> MatchForm:
        """The names and length the match is written with, and who set them (the page's match form)."""
        return match_form(self.scan, self.report, self.header, self.match)

    def _cell_boxes(self, page: int, board: int) -> dict[str, list[float]]:
        """Where each square of the board lies on its picture (see :func:`cell_boxes`); {} without a picture."""
        source = self.boards().get((page, board))
        if source is None or source.box is None or not self._has_crop(page, board):
            return {}
        name = self._template_of(page)
        if name not in self._templates:
            try:
                self._templates[name] = load_template(name)
            except DigitiseError:
                self._templates[name] = None  # a paper file moved away since the scan: no outlines
        template = self._templates[name]
        if template is None or board not in {b.index for b in template.boards}:
            return {}
        return cell_boxes(template.board(board), source.box)

    def _has_crop(self, page: int, board: int) -> bool:
        source = self.boards().get((page, board))
        return source is not None and source.box is not None and source.image in self._images()

    def _images(self) -> set[Path]:
        """The page images that exist (looked up once: the page asks for every turn)."""
        if self._existing_images is None:
            self._existing_images = {s.image for s in self.boards().values() if s.image.is_file()}
        return self._existing_images

    def crop_png(self, page: int, board: int, overlay: bool = False) -> bytes | None:
        """The board's picture cut from its page image, as PNG; None when there is none. With ``overlay``, the
        squares as placed drawn over it (a board the fit was unsure of: None for a board without its lines)."""
        key = (page, board, overlay)
        with self._lock:
            if key in self._crops:
                return self._crops[key]
        source = self.boards().get((page, board))
        if source is None or source.box is None or not source.image.is_file():
            return None
        # OpenCV is loaded only when a picture is asked for.
        import cv2

        from digitise.review.overlay import draw_board_lines

        lines = getattr(self.board_reading(page, board), "lines", None)
        if overlay and lines is None:
            return None
        image = self._page_pixels(source)
        if image is None:
            return None
        crop = (cut_out(image, source.box, margin=CROP_MARGIN) if lines is None or not overlay
                else draw_board_lines(image, source.box, CROP_MARGIN, lines))
        if crop is None:
            return None
        ok, encoded = cv2.imencode(".png", crop)
        if not ok:
            return None
        data = encoded.tobytes()
        with self._lock:
            self._crops[key] = data
        return data

    def _page_pixels(self, source: BoardSource) -> Any:
        """The page picture, decoded once for the eight boards on it (the last two pages are kept)."""
        key = (source.image, source.frame)
        with self._lock:
            if key in self._pages:
                return self._pages[key]
        image = load_page_image(source)
        with self._lock:
            self._pages[key] = image
            while len(self._pages) > 2:
                self._pages.pop(next(iter(self._pages)))
        return image

    def revision(self) -> str:
        """What the page's state rests on: the scan and the corrections as last read or written.

        The page sends it back with each change, so a change made in a tab
        showing an older state is refused (:data:`STALE_PAGE`) instead of
        undoing, unseen, what another tab did since.
        """
        import hashlib

        rests_on = f"{self._report_stamp}|{self._readings_stamp}|{self._disk}"
        return hashlib.sha256(rests_on.encode("utf-8", "surrogatepass")).hexdigest()[:16]

    def _stamps(self) -> tuple[tuple[int, int, int] | None, tuple[int, int, int] | None]:
        """The report's and the readings' :func:`file_stamp` now."""
        return file_stamp(self.report_path), file_stamp(self.readings_path)

    def rescanned(self) -> bool:
        """Whether the report or its readings were written again since this session loaded them (a new scan)."""
        return self._stamps() != (self._report_stamp, self._readings_stamp)

    def fresh(self) -> ReviewSession:
        """This report's session made again from the files as they are now (after :meth:`rescanned`).

        Raises :class:`DigitiseError` as the constructor does: the new scan's
        files cannot be read, or the saved corrections do not fit it.
        """
        report_path, readings_path, learn_dir, solver, resolve = self._made_with
        return ReviewSession(report_path, readings_path=readings_path, learn_dir=learn_dir, solver=solver,
                             resolve=resolve)

    def renewed(self) -> ReviewSession:
        """This session, or one made again when the match was scanned again since it loaded (:meth:`fresh`).

        A review page left open over a new scan (``scan --force``) showed the
        old scan's boards and crops, and its next correction wrote the old
        readings, re-solved, over the new ``.mat``. When the new scan cannot
        be loaded (half written, or the saved corrections do not fit it),
        this session is kept: its page says why and it refuses changes. Each
        new state of the files is tried once.
        """
        stamps = self._stamps()
        if stamps in ((self._report_stamp, self._readings_stamp), self._rescan_tried):
            return self
        self._rescan_tried = stamps
        try:
            return self.fresh()
        except DigitiseError as exc:
            self._rescan_problem = exc.message
            return self

    def _check_disk(self) -> None:
        """Refuse (and take the file as it now is) when the corrections file changed since this session read or
        wrote it: another review page of the same report, or a hand edit. Acting on the old ones would undo
        that change unseen. Refuse too when the match was scanned again: the old readings, re-solved, would
        be written over the new scan's ``.mat``."""
        if self.rescanned():
            raise ChangedElsewhere(RESCANNED)
        if self._disk_text() != self._disk:
            self._load_saved()
            raise ChangedElsewhere(CHANGED_ELSEWHERE)

    def export_mat(self) -> str:
        """The corrected match as ``.mat`` text."""
        from digitise.notation.mat import format_mat

        with self._lock:
            self._check_disk()
            if self.match is None:
                raise CorrectionRefused("nothing to export: the match is only re-solved with its readings (--readings)")
            return str(format_mat(self.match, fill_gaps=True))

    def mat_path(self) -> Path | None:
        """The ``.mat`` the scan wrote for this report (the report names it), or None when it names none.

        Only a file in the report's folder (or below it, links followed): a
        report names where the page writes, and a page must never write
        outside the folder it serves (the .mat of ``scan -o`` elsewhere is
        exported instead).
        """
        named = self.scan.mat
        if named is None or not named.endswith(".mat"):
            return None
        try:
            path = (self.root / named).resolve()
            inside = path.is_relative_to(self.root) and path.parent.is_dir()
        except (OSError, ValueError):
            return None
        return path if inside else None

    def save_mat(self) -> dict[str, Any]:
        """Write the corrected match over the scan's ``.mat`` (the reviewer asked for it), atomically.

        Refuses (:class:`CorrectionRefused`) when there is no re-solved
        match, the report names no ``.mat``, or the file there is not one.
        """
        with self._lock:
            self._check_disk()
            target = self._save_mat_locked()
            self.mat_note = {"written": str(target)}
            return {"saved": str(target)}

    def _save_mat_locked(self) -> Path:
        from digitise.notation.mat import format_mat

        if self.match is None:
            raise CorrectionRefused("nothing to save: the match is only re-solved with its readings (--readings)")
        target = self.mat_path()
        if target is None:
            raise CorrectionRefused("the report names no .mat file (made by an older digitise): use Export")
        if target.exists() and not looks_like_mat(target):
            raise CorrectionRefused(f"{target} is not a .mat file: not replaced; use Export")
        write_atomic(target, str(format_mat(self.match, fill_gaps=True)), overwrite=True)
        return target

    def mat_saved(self) -> bool:
        """Whether the ``.mat`` on disk holds the match as corrected now."""
        from digitise.notation.mat import format_mat

        target = self.mat_path()
        if self.match is None or target is None:
            return False
        if not target.is_file():
            return False
        try:
            return target.read_text(encoding="utf-8") == str(format_mat(self.match, fill_gaps=True))
        except (OSError, UnicodeDecodeError):
            return False

    def export_name(self) -> str:
        """The file name offered for the exported ``.mat``: ``NAME.mat`` for ``NAME.json`` or a batch's ``NAME.report.json``."""
        # A download, not a file beside the report: the match's own name is what the user expects.
        return self.report_path.name.removesuffix(".json").removesuffix(".report") + ".mat"

    # -- corrections -----------------------------------------------------------------------------

    def _turn_at(self, page: int, board: int) -> OnBoard | None:
        return turn_at(self.report, page, board)

    def _turns_on(self, page: int, board: int) -> list[Turn]:
        return [on.turn for on in turns_by_board(self.report) if (on.page, on.board) == (page, board) and on.turn]

    def _check_revision(self, revision: str | None) -> None:
        """Refuse a change made on a state of the match since changed (None: the caller does not say)."""
        if revision is not None and revision != self.revision():
            raise ChangedElsewhere(STALE_PAGE)

    def correct(self, request: Any, revision: str | None = None) -> dict[str, Any]:
        """Apply one correction sent by the page; returns the changes it made.

        ``revision``: that of the state the page showed (see :meth:`revision`).
        Raises :class:`InputError` for a malformed request and
        :class:`CorrectionRefused` for one that cannot be applied.
        """
        key, text = correction_from_request(request)
        with self._lock:
            self._check_revision(revision)
            if isinstance(request, Mapping) and request.get("action") in ACTION_PARTS:
                # A button or the move field corrects one turn: the board's other turns stay as they are.
                text = with_other_turns(text, ACTION_PARTS[request["action"]], self._turns_on(*key))
            boards = self.boards()
            if self.readings is not None and key not in boards:
                raise CorrectionRefused(f"page {key[0]} board {key[1]} is not in the readings")
            if self.readings is None and self._turn_at(*key) is None:
                raise CorrectionRefused(f"page {key[0]} board {key[1]} is not in the report")
            turn = self._turn_at(*key)
            illegal_play(text, turn, self._match_header().players)
            changes = self._resolve({**self.corrections, key: text}, changed=key)
            if self.learn_dir is not None:
                self._learn(key, text, turn, boards.get(key))
            return {"changes": [c.to_json() for c in changes], "correction": text, "page": key[0], "board": key[1], "mat": self.mat_note}

    def set_header(self, request: Any, revision: str | None = None) -> dict[str, Any]:
        """Set the players' names and the match length (``{"players": [BOTTOM, TOP], "length": N}``).

        Either may be null (or left out): the scan's value stands again.
        Re-solves the match; returns the changes. Raises :class:`InputError`
        for a malformed request.
        """
        header = header_from_json(request, "$", "request")
        with self._lock:
            self._check_revision(revision)
            changes = self._resolve(self.corrections, header)
            return {"changes": [c.to_json() for c in changes], "match": self._match_header().to_json(),
                    "mat": self.mat_note}

    def uncorrect(self, request: Any, revision: str | None = None) -> dict[str, Any]:
        """Remove the correction of one board (``{"page": p, "board": b}``)."""
        if not isinstance(request, Mapping) or set(request) != {"page", "board"}:
            raise InputError('expected {"page": p, "board": b}', "request", "$")
        page, board = place_from_request(request)
        with self._lock:
            self._check_revision(revision)
            if (page, board) not in self.corrections:
                raise CorrectionRefused(f"page {page} board {board} has no correction")
            updated = {k: c for k, c in self.corrections.items() if k != (page, board)}
            changes = self._resolve(updated, undone=(page, board))
            if self.learn_dir is not None:
                # The board's labels came from the correction now withdrawn: they teach nothing true.
                forget_learning_crops(self.learn_dir, self._learn_stem((page, board)))
            return {"changes": [c.to_json() for c in changes], "page": page, "board": board, "mat": self.mat_note}

    def _template_of(self, page: int) -> str:
        """The paper the reader found for ``page`` (its header says), a4 when it does not say."""
        for reading in self.readings.pages if self.readings is not None else ():
            if reading.page == page:
                found = reading.header.get("template")
                value = found.get("value") if isinstance(found, Mapping) else found
                if isinstance(value, str) and value:
                    return value
        return "a4"

    def _resolve(self, updated: Corrections, header: MatchHeader | None = None,
                 changed: tuple[int, int] | None = None, undone: tuple[int, int] | None = None) -> list[Change]:
        """Re-solve with ``updated`` (and ``header``, else the one set); keep and save them only when honoured.

        Refuses, and takes the file as it now is, when the corrections file
        changed since this session read or wrote it (another review page of
        the same report, or a hand edit): saving would undo that change unseen.
        """
        with report_locked(self.report_path):
            return self._resolve_locked(updated, header, changed, undone)

    def _resolve_locked(self, updated: Corrections, header: MatchHeader | None,
                        changed: tuple[int, int] | None, undone: tuple[int, int] | None = None
                        ) -> list[Change]:
        """:meth:`_resolve` with the report locked against other review servers (:func:`report_locked`)."""
        self._check_disk()
        header = self.header if header is None else header
        if self.solver is not None and self.readings is not None:
            try:
                readings = corrected_readings(self.readings, updated, self.report)
                match, solved = self.solver(readings, updated, header)
            except DigitiseError as exc:
                raise CorrectionRefused(f"the solver cannot read this correction: {exc.reason}") from exc
            new_report = self.scan.with_scan_notes(solved)
            bad = unfitting(new_report, updated)
            if bad:
                form = self._match_header()
                raise misfit(self.report, new_report, updated, bad, changed, undone, form.players, form.length)
            changes = report_changes(self.report, new_report)
            # Saved before it is shown: a correction the page shows but the file lacks would be lost unseen.
            save_corrections(self.corrections_file, updated, self.report_path.name, header,
                             json_of(new_report.summary), self._made_on())
            self.match, self.report = match, new_report
        else:
            changes = []
            save_corrections(self.corrections_file, updated, self.report_path.name, header, pages=self._made_on())
        self._disk = self._disk_text()
        self.corrections = dict(sorted(updated.items()))
        self.header = header
        self.changes = changes
        self._write_mat()
        return changes

    def _write_mat(self) -> None:
        """Write the corrected match over the scan's ``.mat``, noting (never raising) why when it cannot be.

        The correction itself is saved already: a ``.mat`` that cannot be
        written is said on the page (``mat_note``), with Save to try again.
        """
        if self.match is None or self.mat_path() is None:
            return
        try:
            target = self._save_mat_locked()
        except DigitiseError as exc:
            self.mat_note = {"error": exc.message}
        else:
            self.mat_note = {"written": str(target)}

    @property
    def pictures_kept(self) -> tuple[int, int]:
        """How many decoded pages and board crops are kept for speed (none after :meth:`forget_pictures`)."""
        with self._lock:
            return len(self._pages), len(self._crops)

    def forget_pictures(self) -> None:
        """Drop the decoded pages and crops kept for speed (memory); they are made again when asked for."""
        with self._lock:
            self._pages.clear()
            self._crops.clear()

    def _learn_stem(self, key: tuple[int, int]) -> str:
        """The name the learning crops of board ``key`` are filed under."""
        return f"{self.report_path.stem}_p{key[0]}b{key[1]}"

    def _learn(self, key: tuple[int, int], text: str, turn: OnBoard | None, source: BoardSource | None) -> None:
        """Save the corrected board's cells as labelled crops for ``digitise train``."""
        if self.learn_dir is None:
            return
        stem = self._learn_stem(key)
        try:
            # Whatever comes of this correction, the crops of an earlier one on this board are wrong now.
            forget_learning_crops(self.learn_dir, stem)
            if source is None or source.box is None or turn is None:
                return
            cells = corrected_cells(text, turn)
            saved = save_learning_crops(self.learn_dir, source, cells, stem, self._template_of(key[0]))
            if not saved:
                self.messages.append(f"page {key[0]}: the page could not be fitted, only the board picture was saved")
        except (DigitiseError, ValueError, OSError) as exc:
            # Learning is a side benefit: a failure must not lose the correction itself.
            log.warning("could not save learning crops: %s", exc)
            self.messages.append(f"learning crops not saved: {exc}")
