"""A scan's report as the review reads it: the solve's typed report, and what the scan wrote beside it.

The report file is read once, here (:func:`load_scanned`): its parts the page
relies on are checked with their JSON path (:func:`check_report`), the solve's
part is read by :meth:`Report.from_json`, and the keys the scan adds (the
readings and page files, the players and length it was told, its own notes,
the ``.mat`` it wrote) become fields of :class:`Scanned`. The review never
writes the report back.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from digitise.errors import InputError
from digitise.fileio import load_json
from digitise.game.record import MatchRecord
from digitise.review.checks import check_report
from digitise.solve.corrections import MatchHeader, pages_from_json
from digitise.solve.reasons import LENGTH_NOTES, PLAYER_NOTES, Flag, Reason
from digitise.solve.report_types import Report, flags_of


@dataclass(frozen=True, slots=True)
class Scanned:
    """A scan's report: the solved match (:class:`Report`) and the scan's own keys."""

    report: Report
    #: The readings file, as the report names it (relative to the report's folder, or absolute).
    readings: str | None = None
    #: The page files the scan read, as given.
    sources: tuple[str, ...] = ()
    #: The page files as (name, size): a corrections file made on other pages is refused.
    source_files: tuple[tuple[str, int], ...] = ()
    #: The players and length the scan was told (command line or corrections file); None where it read them.
    players: tuple[str, str] | None = None
    length: int | None = None
    #: The scan's own notes (the page order kept): true whatever the corrections.
    scan_notes: tuple[Flag, ...] = ()
    #: The ``.mat`` the scan wrote, relative to the report's folder.
    mat: str | None = None
    #: The entrants' names the scan matched the header against.
    roster: tuple[str, ...] = ()

    @property
    def header(self) -> MatchHeader:
        """The players and length the scan was told."""
        return MatchHeader(self.players, self.length)

    def with_scan_notes(self, solved: Report) -> Report:
        """A re-solved report with the scan's own notes added to its notes (those it does not give itself)."""
        given = {note.text for note in solved.notes}
        kept = tuple(note for note in self.scan_notes if note.text not in given)
        return replace(solved, notes=solved.notes + kept) if kept else solved


@dataclass(frozen=True, slots=True)
class MatchForm:
    """The names and length the match is written with, and who set each: ``review`` (the reviewer), ``scan``
    (told to the scan), ``header`` (read from the sheet) or ``unsure`` (read, with a note of doubt)."""

    players: tuple[str, ...] | None
    length: int | None
    players_from: str
    length_from: str
    #: What the reviewer set, as saved with the corrections.
    reviewed: MatchHeader

    def to_json(self) -> dict[str, Any]:
        """As the page's match form gets it."""
        return {"players": list(self.players) if self.players is not None else None, "length": self.length,
                "players_from": self.players_from, "length_from": self.length_from,
                "reviewed": self.reviewed.to_json()}


def match_form(scanned: Scanned, report: Report, header: MatchHeader, match: MatchRecord | None) -> MatchForm:
    """The match form of ``scanned`` re-solved into ``report`` (and ``match``, None when not re-solved) with the
    reviewer's ``header``."""
    told = scanned.header
    if match is not None:
        players: tuple[str, ...] | None = tuple(match.players)
        length: int | None = match.length
    else:
        named, length = header.over(told.players, told.length)
        players = tuple(named) if named else None
    notes = {note.code for note in report.notes}

    def source(reviewed: object, given: object, doubt: frozenset[Reason]) -> str:
        if reviewed is not None:
            return "review"
        if given is not None:
            return "scan"
        return "unsure" if any(reason.code in notes for reason in doubt) else "header"

    return MatchForm(players, length, source(header.players, told.players, PLAYER_NOTES),
                     source(header.length, told.length, LENGTH_NOTES), header)


def load_scanned(path: Path) -> Scanned:
    """Read the report at ``path``. Raises :class:`InputError`, with the JSON path, when it is not a report."""
    doc = load_json(path, "a digitise report")
    if not isinstance(doc, dict) or not isinstance(doc.get("games"), list):
        raise InputError('not a digitise report (no "games" list)', path, "$.games")
    check_report(doc, path)
    try:
        report = Report.from_json(doc)
        scan_notes = flags_of(doc, "scan_notes", "$.scan_notes")
    except InputError as exc:
        raise InputError(exc.reason, path, exc.where) from None
    except ValueError as exc:
        raise InputError(f"not a digitise report: {exc}", path) from None
    players, length, readings, mat, roster = (doc.get(key) for key in ("players", "length", "readings", "mat", "roster"))
    return Scanned(
        report,
        readings=readings if isinstance(readings, str) and readings else None,
        sources=tuple(doc.get("sources") or ()),
        source_files=pages_from_json(doc.get("source_files") or [], "$.source_files", path),
        # check_report has refused players that are not two names and a length out of range.
        players=(str(players[0]), str(players[1])) if isinstance(players, list) else None,
        length=length if isinstance(length, int) else None,
        scan_notes=scan_notes,
        mat=mat if isinstance(mat, str) else None,
        roster=tuple(str(name) for name in roster) if isinstance(roster, list) else (),
    )
