"""A folder of reports reviewed together: a batch's output, one session per match, opened when first asked for.

``digitise batch`` writes ``NAME.mat`` and ``NAME.report.json`` per match; a
tournament director reviews the flagged ones in one sitting, from one page
listing them all. Each match is a :class:`~digitise.review.session.ReviewSession`
of its own (its corrections saved beside its report), made when its page is
first opened, since making one solves the match again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from digitise.errors import DigitiseError, InputError
from digitise.fileio import json_document, natural_key, read_text
from digitise.game.record import MatchOutcome
from digitise.notation.mat import outcome_of_file
from digitise.review.scanned import load_scanned
from digitise.review.session import ReviewSession
from digitise.solve.corrections import corrections_path, load_corrections_file
from digitise.solve.report_types import json_of

#: Files beside the reports that are not reports (the reader's output, corrections, the batch summary).
NOT_REPORTS = (".readings.json", ".corrections.json")
#: Sessions that keep their decoded pages (~25 MB each at 300 dpi, two a session): a director going
#: through a hundred matches must not hold them all. The others drop their pictures and make them
#: again when asked; the sessions themselves stay (a request may be saving a correction in one).
OPEN_SESSIONS = 4


def _is_report(path: Path) -> bool:
    """Whether ``path`` holds a digitise report (a "games" list and a "summary"), read cheaply and quietly."""
    try:
        doc = json_document(read_text(path, "a report"))  # read_text: never a device read without end
    except (InputError, ValueError, RecursionError):
        return False
    return isinstance(doc, dict) and isinstance(doc.get("games"), list) and isinstance(doc.get("summary"), dict)


def find_reports(folder: Path) -> list[Path]:
    """The digitise reports directly in ``folder``, in natural order (``m9`` before ``m10``)."""
    candidates = [p for p in folder.glob("*.json")
                  if p.is_file() and p.name != "summary.json" and not p.name.endswith(NOT_REPORTS)]
    return [p for p in sorted(candidates, key=natural_key) if _is_report(p)]


def _mat_beside(report: Path, named: str | None) -> Path | None:
    """The ``.mat`` a report names (relative to its folder), when it names one there."""
    if named is None or not named.endswith(".mat"):
        return None
    path = report.parent / named
    try:
        return path if path.resolve().is_relative_to(report.parent.resolve()) else None
    except (OSError, ValueError):
        return None


def _outcome_json(ended: MatchOutcome | None) -> dict[str, Any]:
    """A match's players, length, final score and winner for the folder's list (all None when unknown)."""
    if ended is None:
        return {"players": None, "length": None, "score": None, "winner": None}
    return {"players": list(ended.players), "length": ended.length,
            "score": [ended.score.bottom, ended.score.top], "winner": ended.winner_name}


class ReviewFolder:
    """The reports of one folder, each reviewed in its own session. Thread-safe."""

    def __init__(self, folder: str | Path, *, learn_dir: str | Path | None = None) -> None:
        """Find the reports in ``folder``; raises :class:`InputError` when there are none."""
        self.folder = Path(folder).resolve()
        if not self.folder.is_dir():
            raise InputError("no such folder", folder)
        self.reports = find_reports(self.folder)
        if not self.reports:
            raise InputError("no digitise report in this folder (a scan's --report, or a batch's NAME.report.json)",
                             folder)
        self.learn_dir = learn_dir
        self._sessions: dict[int, ReviewSession] = {}
        #: Sessions by last use, most recent last: the first ones beyond OPEN_SESSIONS forget their pictures.
        self._recent: OrderedDict[int, None] = OrderedDict()
        self._lock = threading.Lock()

    def holds(self, number: int) -> bool:
        """Whether the folder has a report ``number`` (1-based)."""
        return 1 <= number <= len(self.reports)

    def session(self, number: int) -> ReviewSession:
        """The session of report ``number`` (1-based), made (and the match solved) on first use.

        Raises ``KeyError`` for no such report, and :class:`DigitiseError`
        when its report, readings or corrections cannot be used.
        """
        if not self.holds(number):
            raise KeyError(number)
        cold: list[ReviewSession] = []
        with self._lock:
            known = self._sessions.get(number)
        if known is not None and known.rescanned():
            # Made again after a new scan of the match, outside the folder's lock like a first one.
            renewed = known.renewed()
            with self._lock:
                if self._sessions.get(number) is known:
                    self._sessions[number] = renewed
        if known is None:
            # Made outside the folder's lock: solving a long match takes seconds, and the list and the
            # other matches must not wait for it. Two first requests at once both solve; one is kept
            # (neither has saved anything yet).
            made = ReviewSession(self.reports[number - 1], learn_dir=self.learn_dir)
        with self._lock:
            if known is None:
                self._sessions.setdefault(number, made)
            self._recent[number] = None
            self._recent.move_to_end(number)
            while len(self._recent) > OPEN_SESSIONS:
                cold.append(self._sessions[self._recent.popitem(last=False)[0]])
            session = self._sessions[number]
        for other in cold:
            # Outside the folder's lock: another session may be busy solving.
            other.forget_pictures()
        return session

    def matches(self) -> list[dict[str, Any]]:
        """One entry per report for the folder's page: name, players, length, final score and winner, games,
        turns, flagged, closed-out turns (written as dances), corrected, notes; or its problem.

        Figures come from the match's session when it is open (they follow
        the corrections), else from its corrections file's summary (the match
        as last re-solved on the page), else from its report.
        """
        listed = []
        for number, report in enumerate(self.reports, 1):
            entry: dict[str, Any] = {"number": number, "name": report.name.removesuffix(".json").removesuffix(".report")}
            with self._lock:
                session = self._sessions.get(number)
            try:
                if session is not None:
                    now, corrected, reviewed, entry["mat_saved"] = session.overview()
                    summary, ended = json_of(now.summary), session.outcome()
                else:
                    scanned = load_scanned(report)
                    now = scanned.report
                    saved = corrections_path(report)
                    kept = load_corrections_file(saved) if saved.exists() else None
                    # The match as last re-solved on its page, when its corrections file keeps it.
                    summary = dict(kept.summary) if kept is not None and kept.summary is not None else json_of(now.summary)
                    corrected = len(kept.boards) if kept else 0
                    reviewed = bool(kept and kept.header.given)
                    # The .mat holds the match as last corrected (each correction is written into it).
                    mat = _mat_beside(report, scanned.mat)
                    ended = outcome_of_file(mat) if mat else None
            except DigitiseError as exc:
                entry["problem"] = exc.message
            except (OSError, ValueError, TypeError, RecursionError) as exc:
                entry["problem"] = f"{report}: cannot be read ({exc})"
            else:
                entry.update(turns=summary.get("turns"), flagged=summary.get("flagged"),
                             set_aside=summary.get("set_aside") or 0, games=summary.get("games"),
                             corrected=corrected, header_set=reviewed, notes=[note.text for note in now.notes],
                             opened=session is not None, **_outcome_json(ended), closed_out=now.closed_out)
            listed.append(entry)
        return listed
