"""Corrections made on the review page: hard constraints on single boards, and the match's names and length.

A correction says what one board (page, board) really records, in the
solver's correction language (:mod:`digitise.solve`, "Corrections"): a move
``"52: 13/8 13/11"`` (optionally ``"top 52: ..."``; ``"63:"`` for a roll that
could not be played), ``"double"``, ``"double; take"``, ``"double; drop"``,
``"resign 2"``, ``"bottom wins 2"``, ``"blank"``, or several joined by ``;``.
The reviewer may also set the players' names and the match length (what the
header says, when it was misread or left blank). They are kept next to the
report as ``REPORT.corrections.json``::

    {"format": "digitise-corrections", "version": 3, "report": "match.json",
     "pages": [{"file": "page-001.jpg", "bytes": 812345}, {"file": "page-002.jpg", "bytes": 798120}],
     "match": {"players": ["Alice", "Bruno"], "length": 5},
     "corrections": {"1:3": "52: 8/3 6/4", "1:5": "double; drop", "2:2": "resign 2"}}

(``"match"`` and either of its keys may be left out; version 1 files, which
had no ``"match"``, and version 2, which had no ``"pages"``, are read too.
``"pages"`` names the page files the corrections were made on, by name and
size, so that a corrections file given with other pages is refused
(:func:`check_pages`); a board's number alone cannot tell one match's page 1
from another's. The review page also keeps the re-solved
match's ``"summary"`` there, its turns and flagged turns, for the list of a
folder's matches; it is never a correction.) :func:`load_corrections_file` reads that
file (or a bare ``{"page:board": text}`` object); :func:`load_corrections`
its boards, the mapping :func:`digitise.solve.solve` takes. Every problem is
an :class:`InputError` naming the file, the JSON path and the reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from digitise.errors import DigitiseError, InputError, short
from digitise.fileio import beside, json_document, load_json, read_text, write_atomic
from digitise.game.match import MAX_MATCH_LENGTH
from digitise.notation.mat import parse_steps, players_problem
from digitise.solve.correction_text import parse_correction
from digitise.solve.reasons import Reason
from digitise.solve.report_types import Report

FORMAT = "digitise-corrections"
#: The version written; 1 (no "match" part) and 2 (no "pages") are read as well.
VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
#: What the review page can mark a board as.
ACTIONS = ("move", "double", "take", "drop", "resign", "blank")

Corrections = dict[tuple[int, int], str]
#: What a corrections file keeps of the re-solved match's summary.
SUMMARY_KEYS = ("games", "turns", "flagged")


@dataclass(frozen=True, slots=True)
class MatchHeader:
    """The players (bottom, top) and match length a reviewer set; None where the scan's stand."""

    players: tuple[str, str] | None = None
    length: int | None = None

    @property
    def given(self) -> bool:
        """Whether the reviewer set anything."""
        return self.players is not None or self.length is not None

    def over(self, players: tuple[str, str] | None, length: int | None) -> tuple[tuple[str, str] | None, int | None]:
        """The players and length to write: the reviewer's where set, else ``players`` and ``length``."""
        return self.players or players, self.length if self.length is not None else length

    def to_json(self) -> dict[str, Any]:
        """The ``"match"`` part of a corrections file: only what is set."""
        doc: dict[str, Any] = {}
        if self.players is not None:
            doc["players"] = list(self.players)
        if self.length is not None:
            doc["length"] = self.length
        return doc


@dataclass(frozen=True, slots=True)
class CorrectionsFile:
    """What a corrections file says: the boards' corrections and the match's header."""

    boards: Corrections = field(default_factory=dict)
    header: MatchHeader = MatchHeader()
    #: The match as last re-solved with these corrections: {"games", "turns", "flagged"} (whole numbers).
    summary: Mapping[str, int] | None = None
    #: The page files the corrections were made on, (file name, size in bytes); None when not recorded.
    pages: tuple[tuple[str, int], ...] | None = None

_KEY = re.compile(r"^(\d{1,4}):([1-8])$")


def parse_moves(text: str) -> list[tuple[int, int]]:
    """Checker movements of a play in ``.mat`` notation (see :func:`~digitise.notation.mat.parse_steps`).

    Raises ``ValueError`` with a message a person can act on.
    """
    return parse_steps(text)[0]


def _fail(where: str, reason: str, path: str | Path) -> InputError:
    return InputError(reason, path, where)


def _whole(value: Any, where: str, low: int, high: int | None, path: str | Path) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        span = f"{low} to {high}" if high is not None else f"at least {low}"
        raise _fail(where, f"must be a whole number {span}, got {short(repr(value))}", path)
    return value


def check_text(text: Any, where: str, path: str | Path) -> str:
    """A correction string the solver can read, normalised; :class:`InputError` otherwise."""
    if not isinstance(text, str) or not text.strip():
        raise _fail(where, f"a correction is text such as '52: 13/8 13/11' or 'double', got {short(repr(text))}",
                    path)
    normal = "; ".join(" ".join(part.split()) for part in text.split(";") if part.strip())
    try:
        parse_correction(normal)
    except DigitiseError as exc:
        raise _fail(where, exc.reason, path) from exc
    except ValueError as exc:  # e.g. a die out of range inside the solver's parser
        raise _fail(where, f"correction {short(normal)!r}: {exc}", path) from exc
    return normal


def place_from_request(doc: Mapping[str, Any], path: str | Path = "request") -> tuple[int, int]:
    """The (page, board) a request from the page names; :class:`InputError` when it names none."""
    for key in ("page", "board"):
        if key not in doc:
            raise _fail("$", f"missing {key!r}", path)
    # Four digits, as the page's addresses (/api/crop/P/B.png) take them: no pile of notes is longer.
    return _whole(doc["page"], "$.page", 1, 9999, path), _whole(doc["board"], "$.board", 1, 8, path)


def correction_from_request(doc: Any, path: str | Path = "request") -> tuple[tuple[int, int], str]:
    """The board and correction text of a request from the page.

    The page sends ``{"page", "board", "action", "dice", "move", "points",
    "player"}`` (``action`` one of :data:`ACTIONS`), or ``{"page", "board",
    "text"}`` with a correction string. Raises :class:`InputError` with the
    JSON path of what is wrong.
    """
    if not isinstance(doc, Mapping):
        raise _fail("$", "must be an object with page, board and action", path)
    unknown = sorted(set(doc) - {"page", "board", "action", "dice", "move", "points", "player", "text"})
    if unknown:
        raise _fail("$", f"unknown key {short(repr(unknown[0]))}", path)
    page, board = place_from_request(doc, path)
    if "text" in doc:
        if "action" in doc:
            raise _fail("$", "give either text or action, not both", path)
        return (page, board), check_text(doc["text"], "$.text", path)
    if "action" not in doc:
        raise _fail("$", "missing 'action'", path)
    action = doc["action"]
    if action not in ACTIONS:
        raise _fail("$.action", f"must be one of {', '.join(ACTIONS)}, got {short(repr(action))}", path)
    allowed = {"move": {"dice", "move", "player"}, "resign": {"points"}}.get(action, set())
    extra = sorted(set(doc) - {"page", "board", "action"} - allowed)
    if extra:
        raise _fail("$", f"a {action} has no {extra[0]!r}", path)
    if action == "move":
        dice = doc.get("dice")
        if not isinstance(dice, list) or len(dice) != 2:
            raise _fail("$.dice", f"a move needs two dice, got {short(repr(dice))}", path)
        a = _whole(dice[0], "$.dice[0]", 1, 6, path)
        b = _whole(dice[1], "$.dice[1]", 1, 6, path)
        move = doc.get("move", "")
        if not isinstance(move, str):
            raise _fail("$.move", f"must be text such as '24/18 13/9', got {short(repr(move))}", path)
        try:
            parse_moves(move)
        except ValueError as exc:
            raise _fail("$.move", str(exc), path) from exc
        player = doc.get("player")
        if player not in (None, "bottom", "top"):
            raise _fail("$.player", f"must be bottom or top, got {short(repr(player))}", path)
        text = f"{player + ' ' if player else ''}{max(a, b)}{min(a, b)}: {' '.join(move.split())}".rstrip()
    elif action == "resign":
        text = f"resign {_whole(doc.get('points'), '$.points', 1, None, path)}"
    elif action in ("take", "drop"):
        # A take or drop is written on the arrow board of its double (NOTATION.md).
        text = f"double; {action}"
    else:
        text = action
    return (page, board), check_text(text, "$", path)


def header_from_json(doc: Any, where: str, path: str | Path) -> MatchHeader:
    """A match header (``{"players": [BOTTOM, TOP], "length": N}``, each optional or null), validated."""
    if not isinstance(doc, Mapping):
        raise _fail(where, 'must be an object {"players": ["BOTTOM", "TOP"], "length": N}', path)
    unknown = sorted(set(doc) - {"players", "length"})
    if unknown:
        raise _fail(where, f"unknown key {short(repr(unknown[0]))} (a match has players and length)", path)
    players = doc.get("players")
    if players is not None:
        if (not isinstance(players, list) or len(players) != 2
                or not all(isinstance(name, str) for name in players)):
            raise _fail(f"{where}.players", f'must be two names ["BOTTOM", "TOP"], got {short(repr(players))}', path)
        players = tuple(" ".join(name.split()) for name in players)
        problem = players_problem(players)
        if problem:
            raise _fail(f"{where}.players", problem, path)
    length = doc.get("length")
    if length is not None:
        length = _whole(length, f"{where}.length", 0, MAX_MATCH_LENGTH, path)
    return MatchHeader(players, length)


def file_from_json(doc: Any, path: str | Path) -> CorrectionsFile:
    """Validate a corrections document (wrapped or bare): its boards' corrections and match header."""
    header = MatchHeader()
    summary: Any = None
    pages: tuple[tuple[str, int], ...] | None = None
    if isinstance(doc, Mapping) and "format" in doc:
        if doc.get("format") != FORMAT:
            raise _fail("$.format", f"not a corrections file (expected {FORMAT!r})", path)
        unknown = sorted(set(doc) - {"format", "version", "report", "pages", "match", "summary", "corrections"})
        if unknown:
            raise _fail(f"$.{unknown[0]}", "unknown key (a corrections file has format, version, report, pages, "
                                           "match, summary and corrections)", path)
        version = doc.get("version")
        if isinstance(version, bool) or not isinstance(version, int) or version not in READABLE_VERSIONS:
            raise _fail("$.version", f"unsupported version {short(repr(doc.get('version')))} (this digitise reads "
                                     f"{', '.join(map(str, READABLE_VERSIONS[:-1]))} and {READABLE_VERSIONS[-1]})", path)
        if "match" in doc:
            if doc.get("version") == 1:
                raise _fail("$.match", "version 1 files have no match part: write version 2", path)
            header = header_from_json(doc["match"], "$.match", path)
        if "pages" in doc:
            if version < 3:
                raise _fail("$.pages", f"version {version} files have no pages part: write version 3", path)
            pages = pages_from_json(doc["pages"], "$.pages", path)
        summary = doc.get("summary")
        if summary is not None:
            # Only informs the folder's list: a malformed one is dropped, never a reason to refuse the file.
            kept = {k: v for k, v in summary.items() if k in SUMMARY_KEYS and isinstance(v, int)
                    and not isinstance(v, bool) and 0 <= v < 10**6} if isinstance(summary, Mapping) else {}
            summary = kept if len(kept) == len(SUMMARY_KEYS) else None
        items, prefix = doc.get("corrections"), "$.corrections"
    else:
        items, prefix = doc, "$"
        if isinstance(doc, Mapping) and {"games", "summary"} & set(doc):
            # The report itself given for its corrections: say so, not that "games" is no board.
            raise _fail("$", "not a corrections file but a report (its corrections are in "
                             "REPORT.corrections.json beside it)", path)
    if not isinstance(items, Mapping):
        raise _fail(prefix, 'must be an object {"page:board": "correction"}', path)
    found: Corrections = {}
    named: dict[tuple[int, int], str] = {}
    for key, text in items.items():
        match = _KEY.match(str(key))
        if not match:
            raise _fail(f"{prefix}.{key}", f"a board is named \"page:board\" (board 1-8), got {short(repr(key))}", path)
        board = (int(match.group(1)), int(match.group(2)))
        if board in named:
            # "1:3" and "01:3": one would silently win.
            raise _fail(f"{prefix}.{key}", f"the same board as {named[board]!r}: keep one", path)
        named[board] = str(key)
        found[board] = check_text(text, f"{prefix}.{key}", path)
    return CorrectionsFile(dict(sorted(found.items())), header, summary, pages)


def pages_from_json(doc: Any, where: str, path: str | Path) -> tuple[tuple[str, int], ...]:
    """The ``"pages"`` part: ``[{"file": NAME, "bytes": SIZE}, ...]`` as (name, size) pairs."""
    if not isinstance(doc, list):
        raise _fail(where, 'must be a list [{"file": NAME, "bytes": SIZE}, ...]', path)
    pages = []
    for k, entry in enumerate(doc):
        if not isinstance(entry, Mapping) or set(entry) != {"file", "bytes"}:
            raise _fail(f"{where}[{k}]", 'must be {"file": NAME, "bytes": SIZE}', path)
        name = entry["file"]
        if not isinstance(name, str) or not name or "/" in name:
            raise _fail(f"{where}[{k}].file", "must be a file's name", path)
        pages.append((name, _whole(entry["bytes"], f"{where}[{k}].bytes", 0, None, path)))
    return tuple(pages)


def pages_to_json(pages: Sequence[tuple[str, int]]) -> list[dict[str, Any]]:
    """(name, size) pairs as the ``"pages"`` part writes them (and a report's ``"source_files"``)."""
    return [{"file": name, "bytes": size} for name, size in pages]


def page_files(sources: Sequence[str | Path]) -> tuple[tuple[str, int], ...]:
    """The page files ``sources`` as a corrections file records them: (file name, size in bytes), once each.

    A file that cannot be looked at is left out (its reading failed with its own message).
    """
    out: dict[tuple[str, int], None] = {}
    for source in sources:
        try:
            out[(Path(source).name, Path(source).stat().st_size)] = None
        except OSError:
            continue
    return tuple(out)


def check_pages(kept: CorrectionsFile, scanned: Sequence[tuple[str, int]], path: str | Path) -> str | None:
    """Whether corrections made on ``kept.pages`` may be applied to a scan of the page files ``scanned``
    ((name, bytes), as :func:`page_files` gives them, or as the readings recorded them).

    Raises :class:`InputError` when no page file is among those the corrections
    were made on (another match's corrections: their boards' numbers would fit
    these pages as well, and overwrite what is read right). Returns a note when
    only some are (a page scanned again, added or taken out), else None; a file
    that records no pages (version 1 or 2) is not checked.
    """
    if not kept.pages or not kept.boards and not kept.header.given:
        return None
    made_on, now = set(kept.pages), set(scanned)
    if not scanned or made_on == now:
        return None
    if not made_on & now:
        named = ", ".join(name for name, _ in kept.pages[:3]) + (", ..." if len(kept.pages) > 3 else "")
        raise InputError(f"made on other pages ({named}), not these: is it the corrections file of another "
                         "match? (Each page is known by its file's name and size.)", Path(path))
    differ = sorted(name for name, _ in now - made_on)
    return Reason.CORRECTIONS_OTHER_PAGES.flag(name=Path(path).name,
                                              differ=", ".join(differ) if differ else "some are not given").text


def load_corrections(path: str | Path) -> Corrections:
    """Read a corrections file written by the review page: ``{(page, board): text}`` for :func:`solve`.

    See :func:`load_corrections_file`, which gives the match header too.
    """
    return load_corrections_file(path).boards


def load_corrections_file(path: str | Path) -> CorrectionsFile:
    """Read a corrections file written by the review page: its boards' corrections and match header.

    Raises :class:`InputError` (file, JSON path, reason) when it cannot be read
    or is not a valid corrections file. Whether it still fits the scan is
    checked once solved (:func:`check_fit`).
    """
    source = Path(path)
    return file_from_json(load_json(source, "a corrections file"), source)


def corrections_to_json(corrections: Mapping[tuple[int, int], str], report_name: str,
                        header: MatchHeader = MatchHeader(), summary: Mapping[str, Any] | None = None,
                        pages: Sequence[tuple[str, int]] | None = None) -> str:
    """The corrections file's text: sorted, so the same corrections give the same bytes."""
    doc: dict[str, Any] = {"format": FORMAT, "version": VERSION, "report": report_name}
    if pages:
        doc["pages"] = pages_to_json(pages)
    if header.given:
        doc["match"] = header.to_json()
    if summary is not None:
        doc["summary"] = {k: int(summary[k]) for k in SUMMARY_KEYS if k in summary}
    doc["corrections"] = {f"{p}:{b}": text for (p, b), text in sorted(corrections.items())}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def save_corrections(path: str | Path, corrections: Mapping[tuple[int, int], str], report_name: str,
                     header: MatchHeader = MatchHeader(), summary: Mapping[str, Any] | None = None,
                     pages: Sequence[tuple[str, int]] | None = None) -> Path:
    """Write the corrections file atomically (replacing the previous one)."""
    return write_atomic(path, corrections_to_json(corrections, report_name, header, summary, pages), overwrite=True)


@dataclass(frozen=True, slots=True)
class ReviewedCounts:
    """What a report says of its match, with the summary its review left: what a batch's re-run tells of a match
    converted before."""

    turns: int
    flagged: int
    #: 0 for a report written before it counted them apart, and once reviewed (the corrections file keeps none).
    set_aside: int
    #: 0 where the report does not say.
    games: int
    closed_out: int
    #: The scan's pages that could not be read, and the match's notes, as the report lists them.
    page_errors: tuple[str, ...]
    notes: tuple[str, ...]


def read_reviewed(report: Path) -> ReviewedCounts:
    """A report's counts, with the summary its review left.

    The summary is the match as last re-solved on the review page when the
    corrections file keeps one, else the scan's. The report is read leniently
    (a report from before a key was written still counts). Raises ``OSError``,
    ``ValueError``, ``TypeError`` or ``KeyError`` for a report that cannot be
    read, and :class:`InputError` for a bad corrections file.
    """
    try:
        doc = json_document(read_text(report, "a report"))
    except InputError as exc:
        raise OSError(exc.message) from exc  # as the callers take a report that cannot be read
    if not isinstance(doc, dict):
        raise TypeError("not a JSON object")
    saved = corrections_path(report)
    kept = load_corrections_file(saved) if saved.exists() else None
    summary = dict(kept.summary) if kept is not None and kept.summary is not None else doc["summary"]
    # What the first run said of the match's pages and doubts stays in the summary a re-run writes.
    errors = tuple(str(e) for e in doc.get("page_errors", ()) if isinstance(e, str))
    notes = tuple(str(n) for n in doc.get("notes", ()) if isinstance(n, str))
    return ReviewedCounts(turns=int(summary["turns"]), flagged=int(summary["flagged"]),
                          set_aside=_set_aside_count(summary), games=_count(summary, "games"),
                          closed_out=_count(doc, "closed_out"), page_errors=errors, notes=notes)


def _count(doc: Mapping[str, Any], key: str) -> int:
    """A count a report keeps (0 when it does not say, or says it otherwise)."""
    value = doc.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _set_aside_count(summary: Mapping[str, Any]) -> int:
    """The boards set aside of a report's summary (0 for a report written before it said)."""
    try:
        return max(0, int(summary.get("set_aside", 0)))
    except (TypeError, ValueError):
        return 0


def corrections_path(report: str | Path) -> Path:
    """Where the corrections of ``report`` live: ``REPORT.corrections.json`` beside it."""
    return beside(report, ".corrections.json")


def unfitting(report: Report, corrections: Mapping[tuple[int, int], str]) -> list[tuple[int, int]]:
    """The corrected boards that the solved ``report`` could not honour.

    A board is unfitting when the solver tagged it ``correction does not fit``
    or when the report has no turn and no skipped board there at all (the
    scan has fewer pages, or pages in another order).
    """
    seen: dict[tuple[int, int], list[str]] = {}
    for entry in [turn for game in report.games for turn in game.turns] + list(report.skipped):
        seen.setdefault((entry.page, entry.board), []).extend(flag.code for flag in entry.reasons)
    bad = []
    for key in sorted(corrections):
        reasons = seen.get(key)
        if reasons is None and corrections[key].strip().lower() == "blank":
            continue  # a blank board has no turn: nothing to check it against
        if reasons is None or {Reason.CORRECTION_MISFIT.code, Reason.AFTER_THE_END.code} & set(reasons):
            bad.append(key)
    return bad


def not_fitting(corrections: Mapping[tuple[int, int], str], boards: list[tuple[int, int]], path: str | Path,
                why: str = "") -> InputError:
    """The one error for corrections a scan cannot take: the boards (up to five), why, and what to do."""
    named = ", ".join(f"page {p} board {b} ({short(corrections[(p, b)])!r})" for p, b in boards[:5])
    more = f" and {len(boards) - 5} more" if len(boards) > 5 else ""
    return InputError(f"corrections that no longer fit this scan: {named}{more}{why}; the pages may differ from "
                      "the ones reviewed: fix or remove those entries, or review again", path)


def absent_boards(corrections: Mapping[tuple[int, int], str], boards: Any, path: str | Path) -> None:
    """Raise :func:`not_fitting` when ``corrections`` name boards that are not among ``boards`` (page, board)."""
    absent = sorted(set(corrections) - set(boards))
    if absent:
        raise not_fitting(corrections, absent, path, " not in these pages")


def check_fit(report: Report, corrections: Mapping[tuple[int, int], str], path: str | Path) -> None:
    """Raise :class:`InputError` when a corrections file no longer fits the scan it is applied to.

    Call it with the report solved with ``corrections``. The message names
    the boards and what to do.
    """
    bad = unfitting(report, corrections)
    if bad:
        raise not_fitting(corrections, bad, path)
