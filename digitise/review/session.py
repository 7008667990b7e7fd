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

import difflib
import json
import logging
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from digitise.errors import DigitiseError, InputError, OutputError, short
from digitise.fileio import folder_problem, load_json, write_atomic
from digitise.game.match import MAX_MATCH_LENGTH, Cube, MatchState
from digitise.game.position import Position, Side
from digitise.game.record import MatchOutcome, outcome
from digitise.game.rules import ALL_ROLLS, legal_plays, play_from_moves
from digitise.notation.template import BOARD_BOX_MARGIN_MM, BoardGeometry, Template, board_rect, load_template
from digitise.solve.corrections import (
    Corrections,
    MatchHeader,
    absent_boards,
    check_fit,
    correction_from_request,
    corrections_path,
    header_from_json,
    load_corrections_file,
    pages_from_json,
    place_from_request,
    save_corrections,
    unfitting,
)
from digitise.solve.reasons import LENGTH_NOTES, PLAYER_NOTES, Reason, codes_of
from digitise.solve.reviewed import corrected_cells, corrected_readings, turn_at, turns_by_board

log = logging.getLogger(__name__)

#: solve(readings, corrections, header) -> (match, report): the solver, injectable for tests.
Solver = Callable[[Any, Mapping[tuple[int, int], str], MatchHeader], tuple[Any, Mapping[str, Any]]]


#: Why a change is refused when the corrections file changed under the page.
CHANGED_ELSEWHERE = ("the corrections were changed elsewhere (another review page of this match, or by hand) since "
                     "this page loaded them: reload the page to see them; nothing was changed here")


class CorrectionRefused(DigitiseError):
    """A correction that cannot be applied: illegal, not fitting the match, or naming no board."""


@contextmanager
def report_locked(report: Path) -> Iterator[None]:
    """Held while a session checks the corrections file, re-solves and saves: exclusive among processes.

    Two review servers of one report (its own page and its folder's, say)
    each checked the file, solved for half a second, then saved: both
    answered "saved", and the later save undid the earlier one unseen. With
    the lock the later one finds the file changed and says so. A lock on the
    report (which a review never rewrites) via ``flock``; where there is none
    (not POSIX) or the report cannot be opened, the check alone guards.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    try:
        handle = open(report, "rb")  # noqa: SIM115 - held across the yield
    except OSError:
        yield
        return
    with handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


class ChangedElsewhere(CorrectionRefused):
    """Refused because the corrections file changed since the page loaded it: the page should load it again."""


#: Why a change is refused when it was made on a state of the match since changed.
STALE_PAGE = ("this match was changed on another page or tab since this one showed it: the page now shows the "
              "change; nothing was changed here")

#: Why a change is refused when the match was scanned again under the page.
RESCANNED = ("the match was scanned again since this page loaded it (its report or readings changed): reload the "
             "page to review the new scan; nothing was changed here")


def file_stamp(path: Path | None) -> tuple[int, int, int] | None:
    """What tells a file rewritten (digitise writes by rename, so a new inode): inode, mtime, size; None if absent."""
    if path is None:
        return None
    try:
        found = path.stat()
    except OSError:
        return None
    return (found.st_ino, found.st_mtime_ns, found.st_size)


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
    from digitise.vision.images import iter_pages

    try:
        readable = (item for item in iter_pages(source.image) if not isinstance(item, DigitiseError))
        return next((item for k, item in enumerate(readable) if k == source.frame), None)
    except DigitiseError:
        return None


def load_page_image(source: BoardSource) -> Any:
    """The page picture of ``source`` as a BGR array; None if unreadable."""
    import cv2

    page = load_page(source)
    if page is None:
        return None
    image = page.image
    return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR) if image.ndim == 2 else image


def describe_turn(turn: Mapping[str, Any]) -> str:
    """A turn in a few words: ``bottom 64: 24/18 13/9``, ``top double``."""
    who = turn.get("player") or ""
    action = turn.get("action", "?")
    if action == "move":
        dice = turn.get("dice") or []
        roll = "".join(str(d) for d in dice)
        text = f"{who} {roll}: {turn.get('move') or '(no play)'}"
    elif action == "resign":
        text = f"{who} resigns {turn.get('points') or ''}".rstrip()
    else:
        text = f"{who} {action}"
    return text.strip()


def candidate_correction(candidate: Mapping[str, Any]) -> str | None:
    """The correction string that forces a solver candidate on its board (None for letters)."""
    action = candidate.get("action")
    result = candidate.get("result") or {}
    wins = f"{result['winner']} wins {result['points']}" if result.get("winner") and result.get("points") else ""
    answer = candidate.get("answer") if candidate.get("answer") in ("take", "drop") else None
    if action == "move" and candidate.get("dice"):
        player = candidate.get("player")
        a, b = candidate["dice"]
        text = f"{player + ' ' if player else ''}{a}{b}: {candidate.get('move') or ''}".rstrip()
        if answer:
            # The answer to the double before is part of the choice: "take; 52: ..." and "drop; 52: ..."
            # (a new game opening with the same play) are two.
            text = f"{answer}; {text}"
    elif action == "double":
        # Answered on its own board ("double; drop"): a decision of its own, apart from a double the
        # next board answers. Taken and at once conceded, the result says it all.
        text = f"double; {answer}" if answer and not wins else "double"
    elif action == "resign" and wins:
        return wins
    elif action == "blank":
        return "blank"
    else:
        return None
    return f"{text}; {wins}" if wins else text


def report_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The turns whose reading differs between two reports, board by board."""
    before = dict(turns_by_board(old))
    after = dict(turns_by_board(new))
    changes = []
    for key in sorted(set(before) | set(after)):
        a, b = before.get(key), after.get(key)
        old_text = describe_turn(a) if a else None
        new_text = describe_turn(b) if b else None
        flag_changed = bool(a and b and bool(a.get("flagged")) != bool(b.get("flagged")))
        if old_text != new_text or flag_changed:
            changes.append(
                {
                    "page": key[0],
                    "board": key[1],
                    "before": old_text,
                    "after": new_text,
                    "flagged_before": bool(a and a.get("flagged")),
                    "flagged_after": bool(b and b.get("flagged")),
                }
            )
    return changes


def scan_header(report: Mapping[str, Any]) -> MatchHeader:
    """The players and length the scan was told (command line or corrections file); None where it read them."""
    summary = report.get("summary") or {}
    players = report.get("players") or summary.get("players")
    length = report.get("length", summary.get("length"))
    return MatchHeader(
        (str(players[0]), str(players[1])) if isinstance(players, list) and len(players) == 2 else None,
        length if isinstance(length, int) and not isinstance(length, bool) else None,
    )


def default_solver(report: Mapping[str, Any]) -> Solver:
    """The real solver, run with the players and length the report was made with.

    The reviewer's names and length, when set, win over the scan's.
    """
    from digitise.solve import solve

    told = scan_header(report)
    entrants = report.get("roster")
    roster = tuple(str(name) for name in entrants) if isinstance(entrants, list) else ()

    def run(readings: Any, corrections: Mapping[tuple[int, int], str],
            header: MatchHeader) -> tuple[Any, Mapping[str, Any]]:
        players, length = header.over(told.players, told.length)
        result = solve(readings, players=players, length=length, corrections=dict(corrections) or None,
                       roster=roster)
        return result.match, result.report

    return run


#: Reasons that say nothing of why a correction was refused: the refusal itself, and the doubt it leaves.
_NOT_WHY = frozenset({Reason.CORRECTION_MISFIT.code, Reason.LOW_CONFIDENCE.code})

#: The part of a board each of the page's per-turn actions corrects (a board may hold a move and a
#: resignation, or a double and its answer).
ACTION_PARTS = {"move": "move", "double": "cube", "take": "cube", "drop": "cube", "resign": "resign"}


def board_parts(turns: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """A board's turns (as a report gives them) as correction text, by part: ``move``, ``cube``, ``resign``."""
    parts: dict[str, str] = {}
    for turn in turns:
        action = turn.get("action")
        if action == "move" and turn.get("dice"):
            high, low = sorted(int(d) for d in turn["dice"])[::-1]
            who = turn.get("player")
            parts["move"] = f"{who + ' ' if who in ('bottom', 'top') else ''}{high}{low}: {turn.get('move') or ''}".rstrip()
        elif action == "double":
            parts.setdefault("cube", "double")
        elif action in ("take", "drop"):
            parts["cube"] = f"double; {action}"
        elif action == "resign" and isinstance(turn.get("points"), int) and turn["points"] >= 1:
            parts["resign"] = f"resign {turn['points']}"
    return parts


def with_other_turns(text: str, part: str, turns: Sequence[Mapping[str, Any]]) -> str:
    """The correction ``text`` of one part of a board, with the board's other parts as they are now.

    Marking the resignation on a board that also holds the opponent's last
    move must not take that move off the match, nor correcting the move its
    resignation. A double is a board of its own (NOTATION.md): marking one
    replaces what the board was read as, its result included (a drop ends
    the game by itself).
    """
    others = board_parts(turns)
    if part == "cube":
        return text
    others.pop(part, None)
    if part == "move":
        others.pop("cube", None)
    if not others:
        return text
    return "; ".join(text if name == part else others[name] for name in ("cube", "move", "resign")
                     if name == part or name in others)


def named_side(players: Sequence[str] | None, side: str | None) -> str:
    """A side as the page names it: "Alice (bottom)" (the side alone means little to the person who recorded it)."""
    if players and len(players) == 2 and side in ("bottom", "top"):
        return f"{players[0 if side == 'bottom' else 1]} ({side})"
    return str(side or "the player on roll")


def no_double_because(report: Mapping[str, Any], key: tuple[int, int], text: str,
                      header: Mapping[str, Any]) -> str | None:
    """The rule that forbids the double a correction ``text`` puts on board ``key``, if one does.

    The match is replayed from the report (score, Crawford game, cube) up to
    the turn now on that board; its player is the one who would double. None
    when the correction is no double, or the rules allow it there (the marks
    are then what refuse it).
    """
    if not text.strip().lower().startswith("double"):
        return None
    players, length = header.get("players"), header.get("length")
    state = MatchState(length if isinstance(length, int) and length > 0 else 0)
    for game in report.get("games") or ():
        cube, doubler = Cube(), None
        for number, turn in enumerate(game.get("turns") or ()):
            side = turn.get("player")
            if (turn.get("page"), turn.get("board")) == key:
                if side not in ("bottom", "top"):
                    return None
                me = Side(side)
                if number == 0:
                    return "a game opens with a roll, never a double"
                if state.crawford:
                    return "this is the Crawford game, in which no one may double"
                if cube.owner is me.opponent:
                    return f"{named_side(players, me.opponent.value)} owns the cube: only they may double"
                if state.length and state.needs(me) <= cube.value:
                    return (f"{named_side(players, side)} needs {state.needs(me)} to win the match and the cube is "
                            f"at {cube.value}: a double gains nothing, and GNU Backgammon allows none")
                return None
            if turn.get("action") == "double" and side in ("bottom", "top"):
                doubler = Side(side)
            elif turn.get("action") == "take" and doubler is not None:
                cube, doubler = cube.doubled_by(doubler), None
        winner, points = game.get("winner"), game.get("points")
        if winner not in ("bottom", "top") or not isinstance(points, int):
            return None
        state = state.after_game(Side(winner), points)
    return None


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
        self.report = self._load_report(self.report_path)
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
            self.solver = solver if solver is not None else default_solver(self.report)
        self.corrections_file = corrections_path(self.report_path)
        self.corrections: Corrections = {}
        #: The players and length the reviewer set (saved with the corrections).
        self.header = MatchHeader()
        self.changes: list[dict[str, Any]] = []
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
        #: The scan's own report: what every re-solve (and a reload from the file) starts from.
        self._scanned = self.report
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
        changes: list[dict[str, Any]] = []
        report, match = self._scanned, None
        if self.corrections_file.exists():
            saved = load_corrections_file(self.corrections_file)
            corrections, header = saved.boards, saved.header
            if self.readings is not None:
                absent_boards(corrections, self.boards(), self.corrections_file)
        if self.solver is not None and self.readings is not None:
            # Solve once at start so the page shows the match with the saved corrections applied.
            readings = corrected_readings(self.readings, corrections, self._scanned)
            match, solved = self.solver(readings, corrections, header)
            report = self._keep_links(dict(solved))
            if corrections or header.given:
                check_fit(report, corrections, self.corrections_file)
                changes = report_changes(self._scanned, report)
        self._disk, self.corrections, self.header, self.changes = disk, corrections, header, changes
        self.report, self.match = report, match

    def _disk_text(self) -> str | None:
        """The corrections file's text now, or None when there is none (or it cannot be read)."""
        try:
            return self.corrections_file.read_text(encoding="utf-8") if self.corrections_file.is_file() else None
        except (OSError, UnicodeDecodeError):
            return None

    # -- loading ---------------------------------------------------------------------------------

    @staticmethod
    def _load_report(path: Path) -> dict[str, Any]:
        doc = load_json(path, "a digitise report")
        if not isinstance(doc, dict) or not isinstance(doc.get("games"), list):
            raise InputError('not a digitise report (no "games" list)', path, "$.games")
        _check_report(doc, path)
        return doc

    def _find_readings(self, given: str | Path | None) -> Path | None:
        if given is not None:
            return Path(given).resolve()
        named = self.report.get("readings")
        if isinstance(named, str) and named:
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
        return list(pages_from_json(self.report.get("source_files") or [], "$.source_files", self.report_path))

    def _keep_links(self, report: dict[str, Any]) -> dict[str, Any]:
        """A re-solved report keeps the original's links to readings and page images."""
        for key in ("readings", "sources", "source_files", "page_errors", "players", "length", "scan_notes",
                    "scan_note_codes", "mat", "roster", "adaptation"):
            if key in self.report and key not in report:
                report[key] = self.report[key]
        # The scan's own notes (the page order kept) stay true whatever the corrections.
        kept = [(n, code) for n, code in zip(self.report.get("scan_notes") or [], codes_of(self.report, "scan_notes"),
                                              strict=True) if n not in report.get("notes", [])]
        if kept:
            report["note_codes"] = [*codes_of(report, "notes"), *(code for _, code in kept)]
            report["notes"] = [*report.get("notes", []), *(n for n, _ in kept)]
        return report

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
        sources = self.report.get("sources") or []
        tried.extend(Path(s) for s in sources if isinstance(s, str) and Path(s).name == named.name)
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
            changed = {(c["page"], c["board"]) for c in self.changes if c["before"] != c["after"]}
            scanned = {(p, b): t for (p, b, n), t in turns_by_board(self._scanned) if n == 0}
            turns = []
            for (page, board, n), turn in turns_by_board(self.report):
                reading = self.board_reading(page, board)
                correction = self.corrections.get((page, board))
                candidates = [{**c, "correction": candidate_correction(c)} for c in turn.get("candidates") or []]
                if correction is not None and n == 0 and (page, board) in scanned:
                    # A corrected board's only candidate is its correction: the scan's own candidates follow it,
                    # so the runner-up is one key away without undoing first.
                    given = {c["correction"] for c in candidates}
                    candidates += [{**c, "correction": made, "as_scanned": True}
                                   for c in scanned[(page, board)].get("candidates") or []
                                   if (made := candidate_correction(c)) not in given]
                turns.append(
                    {
                        **turn,
                        "id": f"p{page}b{board}" + (f"n{n}" if n else ""),
                        "text": describe_turn(turn),
                        "cells": _cells_json(reading),
                        "marks": _marks_json(reading),
                        "corrected": correction is not None and n == 0,
                        "correction": correction if n == 0 else None,
                        "candidates": candidates,
                        "changed": (page, board) in changed,
                        "has_crop": self._has_crop(page, board),
                        # A board the fit was unsure of: its picture with the squares as placed drawn over it.
                        "overlay": self._has_crop(page, board) and getattr(reading, "lines", None) is not None,
                        "cell_boxes": self._cell_boxes(page, board),
                    }
                )
            games = [
                {"number": g.get("number"), "winner": g.get("winner"), "points": g.get("points")}
                for g in self.report.get("games", [])
            ]
            mat = self.mat_path()
            return {
                "title": self.report_path.name,
                "revision": self.revision(),
                "summary": self.report.get("summary", {}),
                "match": self._match_header(),
                "games": games,
                "turns": turns,
                "corrections": [{"page": p, "board": b, "text": t} for (p, b), t in sorted(self.corrections.items())],
                "changes": self.changes,
                "can_resolve": self.solver is not None and self.readings is not None,
                "can_export": self.match is not None,
                "can_save": self.match is not None and mat is not None,
                "mat": mat.name if mat is not None else None,
                "mat_saved": self.mat_saved(),
                "mat_note": self.mat_note,
                "messages": list(self.messages) + ([problem] if problem else []),
                # Doubts about the whole match (a name or the length made up, the page order kept).
                "notes": [str(n) for n in self.report.get("notes") or []],
                "closed_out": self.report.get("closed_out") or 0,
            }

    def overview(self) -> tuple[dict[str, Any], list[str], int, bool, bool | None]:
        """For a folder's list: the summary, the notes, how many boards are corrected, whether names or
        length were set, and whether the .mat is up to date (None when there is none to write)."""
        with self._lock:
            saved = self.mat_saved() if self.match is not None and self.mat_path() is not None else None
            return (dict(self.report.get("summary") or {}), [str(n) for n in self.report.get("notes") or []],
                    len(self.corrections), self.header.given, saved)

    def outcome(self) -> MatchOutcome | None:
        """Players, length, score and winner of the match as it now stands (None when it was not solved)."""
        with self._lock:
            return None if self.match is None else outcome(self.match)

    def _match_header(self) -> dict[str, Any]:
        """The names and length the match is written with, and who set them (the page's match form)."""
        told = scan_header(self.report)
        if self.match is not None:
            players: list[str] | None = list(self.match.players)
            length: int | None = self.match.length
        else:
            named, length = self.header.over(told.players, told.length)
            players = list(named) if named else None
        notes = set(codes_of(self.report, "notes"))

        def source(reviewed: object, given: object, doubt: frozenset[Reason]) -> str:
            if reviewed is not None:
                return "review"
            if given is not None:
                return "scan"
            return "unsure" if any(reason.code in notes for reason in doubt) else "header"

        return {
            "players": players,
            "length": length,
            "players_from": source(self.header.players, told.players, PLAYER_NOTES),
            "length_from": source(self.header.length, told.length, LENGTH_NOTES),
            "reviewed": self.header.to_json(),
        }

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
        crop = (_cut(image, source.box, margin=CROP_MARGIN) if lines is None or not overlay
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
        named = self.report.get("mat")
        if not isinstance(named, str) or not named.endswith(".mat"):
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
        if target.exists() and not _looks_like_mat(target):
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

    def _turn_at(self, page: int, board: int) -> dict[str, Any] | None:
        return turn_at(self.report, page, board)

    def _turns_on(self, page: int, board: int) -> list[dict[str, Any]]:
        return [turn for (p, b, _), turn in turns_by_board(self.report) if (p, b) == (page, board)]

    def check_legal(self, key: tuple[int, int], text: str) -> None:
        """Refuse a typed move that is not a legal play in the position before that turn.

        Checked against the turn now on that board, when it is the same
        player's move: the clear message a person needs ("not a legal play of
        64 here; legal plays include ..."). The solver checks the rest.
        """
        from digitise.solve import parse_correction

        forced = parse_correction(text)
        turn = self._turn_at(*key)
        if forced.roll is None or forced.moves is None or turn is None or not turn.get("position_before"):
            return
        if turn.get("action") != "move" or (forced.player is not None and forced.player.value != turn.get("player")):
            return
        try:
            position = Position.from_position_id(str(turn["position_before"]))
        except ValueError:
            return
        roll, moves = forced.roll, list(forced.moves)
        plays = legal_plays(position, roll)
        side = turn.get("player")
        who = named_side(self._match_header().get("players"), side)
        if not moves:
            if plays:
                examples = ", ".join(sorted(str(p) for p in plays)[:3])
                raise CorrectionRefused(f"{roll} can be played by {who} here (e.g. {examples}): type the play")
            return
        if play_from_moves(position, roll, moves) is None:
            shown = short(text.split(":", 1)[1].split(";")[0].strip())
            # The moves may be right and the dice mistyped: the rolls they are a play of say so.
            fits = [other for other in ALL_ROLLS if other != roll and play_from_moves(position, other, moves)]
            if not plays:
                hint = f"{roll} cannot be played at all here: leave the play empty ('{roll}:')"
            else:
                # The plays nearest what was typed first (a slip of one point shows its fix at the top).
                near = sorted((str(p) for p in plays),
                              key=lambda p: (-difflib.SequenceMatcher(None, p, shown).ratio(), p))
                hint = "legal plays include " + ", ".join(near[:4])
            if fits:
                hint = f"it is a play of {' or '.join(map(str, fits))}: are the dice right? Else {hint}"
            raise CorrectionRefused(f"{shown} is not a legal play of {roll} for {who} here; {hint}")

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
            self.check_legal(key, text)
            turn = self._turn_at(*key)
            changes = self._resolve({**self.corrections, key: text}, changed=key)
            if self.learn_dir is not None:
                self._learn(key, text, turn, boards.get(key))
            return {"changes": changes, "correction": text, "page": key[0], "board": key[1], "mat": self.mat_note}

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
            return {"changes": changes, "match": self._match_header(), "mat": self.mat_note}

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
            return {"changes": changes, "page": page, "board": board, "mat": self.mat_note}

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
                 changed: tuple[int, int] | None = None, undone: tuple[int, int] | None = None) -> list[dict[str, Any]]:
        """Re-solve with ``updated`` (and ``header``, else the one set); keep and save them only when honoured.

        Refuses, and takes the file as it now is, when the corrections file
        changed since this session read or wrote it (another review page of
        the same report, or a hand edit): saving would undo that change unseen.
        """
        with report_locked(self.report_path):
            return self._resolve_locked(updated, header, changed, undone)

    def _resolve_locked(self, updated: Corrections, header: MatchHeader | None,
                        changed: tuple[int, int] | None, undone: tuple[int, int] | None = None
                        ) -> list[dict[str, Any]]:
        """:meth:`_resolve` with the report locked against other review servers (:func:`report_locked`)."""
        self._check_disk()
        header = self.header if header is None else header
        if self.solver is not None and self.readings is not None:
            try:
                readings = corrected_readings(self.readings, updated, self.report)
                match, solved = self.solver(readings, updated, header)
            except DigitiseError as exc:
                raise CorrectionRefused(f"the solver cannot read this correction: {exc.reason}") from exc
            new_report = self._keep_links(dict(solved))
            bad = unfitting(new_report, updated)
            if bad:
                refused = [(p, b, turn) for (p, b, _), turn in turns_by_board(new_report) if (p, b) in bad]
                places = sorted(bad, key=lambda place: (place != changed, place))
                named = "; ".join(f"page {p} board {b} as {short(updated[(p, b)])!r}" for p, b in places)
                ended = [turn for _, _, turn in refused if Reason.AFTER_THE_END.code in codes_of(turn)]
                if ended:
                    raise CorrectionRefused(f"page {ended[0]['page']} board {ended[0]['board']} comes after the end "
                                            "of the match: it cannot hold a turn; nothing was changed")
                if changed is not None and changed not in bad:
                    # The change just made is honoured, an earlier correction no longer is: name both, as the
                    # earlier one may be the wrong one.
                    clash = "; ".join(f"page {p} board {b} ({short(updated[(p, b)])!r})" for p, b in bad)
                    raise CorrectionRefused(
                        f"no legal match reads page {changed[0]} board {changed[1]} as {short(updated[changed])!r} "
                        f"together with the earlier correction of {clash}: if that one is wrong, undo it first; "
                        "nothing was changed")
                if undone is not None:
                    # A later correction was made on the position this one gave: it goes first.
                    later = ", ".join(f"page {p} board {b}" for p, b in sorted(bad))
                    raise CorrectionRefused(
                        f"no legal match reads {named} without the correction of page {undone[0]} board "
                        f"{undone[1]}, which {'it rests' if len(bad) == 1 else 'they rest'} on: undo {later} first; "
                        "nothing was changed")
                # What the solver found wrong there ("arrow where no double is allowed"), when it says.
                why: dict[tuple[int, int], list[str]] = {}
                for p, b, turn in refused:
                    for reason, code in zip(turn.get("reasons", ()), codes_of(turn), strict=True):
                        if code not in _NOT_WHY and reason not in why.setdefault((p, b), []):
                            why[(p, b)].append(reason)
                header_now = self._match_header()
                for p, b in places:
                    rule = no_double_because(self.report, (p, b), updated[(p, b)], header_now)
                    if rule is not None:
                        why[(p, b)] = [rule]  # the solver's own words ("arrow where no double ...") add nothing
                explained = "; ".join(f"page {p} board {b} as {short(updated[(p, b)])!r}"
                                      + (f" ({'; '.join(why[(p, b)])})" if why.get((p, b)) else "")
                                      for p, b in places)
                raise CorrectionRefused(
                    f"no legal match reads {explained} together with the rest of the note; nothing was changed"
                )
            changes = report_changes(self.report, new_report)
            # Saved before it is shown: a correction the page shows but the file lacks would be lost unseen.
            save_corrections(self.corrections_file, updated, self.report_path.name, header, new_report.get("summary"),
                             self._made_on())
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

    def forget_pictures(self) -> None:
        """Drop the decoded pages and crops kept for speed (memory); they are made again when asked for."""
        with self._lock:
            self._pages.clear()
            self._crops.clear()

    def _learn_stem(self, key: tuple[int, int]) -> str:
        """The name the learning crops of board ``key`` are filed under."""
        return f"{self.report_path.stem}_p{key[0]}b{key[1]}"

    def _learn(self, key: tuple[int, int], text: str, turn: Mapping[str, Any] | None, source: BoardSource | None) -> None:
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


def _cells_json(reading: Any) -> dict[str, list[dict[str, Any]]]:
    if reading is None:
        return {}
    return {
        name: [{"digits": list(c.digits), "probability": round(float(c.probability), 4)} for c in candidates]
        for name, candidates in sorted(reading.cells.items())
    }


def _marks_json(reading: Any) -> dict[str, float]:
    if reading is None:
        return {}
    return {"crossed": reading.crossed, "arrow": reading.arrow, "letters": reading.letters}


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


def _cut(image: Any, box: tuple[int, int, int, int], margin: float) -> Any:
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
    import cv2

    from digitise.errors import PageError
    from digitise.notation.template import load_template
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
    board_crop = _cut(image, source.box, margin=0.0)
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


def _looks_like_mat(path: Path) -> bool:
    """Whether ``path`` is a match file (its first line says "N point match"): only such a file is replaced."""
    import re

    if not path.is_file():  # a pipe or a device would block the read, or never end
        return False
    try:
        with path.open("r", encoding="utf-8", errors="replace") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    first = next((line for line in head.splitlines() if line.strip()), "")
    return path.is_file() and re.match(r"^\s*\d+\s+point\s+match\s*$", first, re.IGNORECASE) is not None


def _check_choice(entry: dict[str, Any], where: str, weight: str, bad: Any) -> None:
    """A turn or candidate's player, dice and ``weight`` (confidence or probability), as the page shows them."""
    import math

    player = entry.get("player")
    if player is not None and player not in ("bottom", "top"):
        raise bad(f"{where}.player", "not bottom or top")
    dice = entry.get("dice")
    if dice is not None and not (isinstance(dice, list) and len(dice) == 2
                                 and all(isinstance(d, int) and not isinstance(d, bool) and 1 <= d <= 6 for d in dice)):
        raise bad(f"{where}.dice", "not two dice 1-6")
    value = entry.get(weight)
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                              or not math.isfinite(value) or not 0 <= value <= 1):
        raise bad(f"{where}.{weight}", "not a number from 0 to 1")


def _check_report(doc: dict[str, Any], path: Path) -> None:
    """Refuse, with the JSON path, a report whose parts the page relies on have the wrong shape."""

    def bad(where: str, what: str) -> InputError:
        return InputError(f"not a digitise report: {what}", path, where)

    for g, game in enumerate(doc["games"]):
        if not isinstance(game, dict):
            raise bad(f"$.games[{g}]", "a game is not an object")
        turns = game.get("turns", [])
        if not isinstance(turns, list):
            raise bad(f"$.games[{g}].turns", "not a list")
        for t, turn in enumerate(turns):
            where = f"$.games[{g}].turns[{t}]"
            if not isinstance(turn, dict):
                raise bad(where, "a turn is not an object")
            for key in ("page", "board"):
                if isinstance(turn.get(key), bool) or not isinstance(turn.get(key), int):
                    raise bad(f"{where}.{key}", "not a whole number")
            if not isinstance(turn.get("candidates") or [], list):
                raise bad(f"{where}.candidates", "not a list")
            _check_choice(turn, where, "confidence", bad)
            for c, candidate in enumerate(turn.get("candidates") or []):
                if not isinstance(candidate, dict):
                    raise bad(f"{where}.candidates[{c}]", "a candidate is not an object")
                _check_choice(candidate, f"{where}.candidates[{c}]", "probability", bad)
    for key in ("skipped", "sources", "page_errors", "notes", "scan_notes"):
        if not isinstance(doc.get(key) or [], list):
            raise bad(f"$.{key}", "not a list")
    if any(not isinstance(s, str) for s in doc.get("scan_notes") or []):
        raise bad("$.scan_notes", "a note is not text")
    if any(not isinstance(s, str) for s in doc.get("sources") or []):
        raise bad("$.sources", "a source is not a file name")
    try:
        # As a corrections file's "pages" part, which the review copies them into.
        pages_from_json(doc.get("source_files") or [], "$.source_files", path)
    except InputError as exc:
        raise bad(exc.where or "$.source_files", exc.reason) from None
    if any(not isinstance(s, dict) for s in doc.get("skipped") or []):
        raise bad("$.skipped", "an entry is not an object")
    length = doc.get("length")
    if length is not None and (isinstance(length, bool) or not isinstance(length, int)
                               or not 0 <= length <= MAX_MATCH_LENGTH):
        raise bad("$.length", f"not a match length (0-{MAX_MATCH_LENGTH})")
    players = doc.get("players")
    if players is not None and not (isinstance(players, list) and len(players) == 2
                                    and all(isinstance(n, str) and n for n in players)):
        raise bad("$.players", 'not two names ["BOTTOM", "TOP"]')
    from digitise.notation.mat import holds_name

    if players is not None and not all(holds_name(n) for n in players):
        raise bad("$.players", "a .mat file cannot hold a name with a colon or control characters")
    if not isinstance(doc.get("summary") or {}, dict):
        raise bad("$.summary", "not an object")
