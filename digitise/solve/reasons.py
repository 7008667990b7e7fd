"""Every reason a board is flagged and every note about a whole match, as data: a stable code, the text, what to do.

A report carries each reason and note twice: its text (``reasons``,
``notes``, as a person reads it) and its code (``reason_codes``,
``note_codes``, what a program keys on). Codes never change once given;
texts may be reworded. :class:`Reason` lists them all; a :class:`Flag` is
one said of a board or a match, its template filled in.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import Any, Self


class Reason(Enum):
    """A reason to look at a board (a turn's or a board set aside), or a note about the whole match."""

    code: str
    #: The text as the report says it: a :meth:`str.format` template where it has ``{fields}``.
    text: str
    #: What the user should do about it.
    action: str
    #: Whether it is said of the whole match (a note) rather than of one board.
    of_match: bool

    def __new__(cls, code: str, text: str, action: str, of_match: bool = False) -> Self:
        member = object.__new__(cls)
        member._value_ = code
        member.code = code
        member.text = text
        member.action = action
        member.of_match = of_match
        return member

    def flag(self, **fields: Any) -> Flag:
        """This reason said with its template's ``fields`` filled in."""
        return Flag(self, self.text.format(**fields) if fields else self.text)

    def said(self, text: str) -> Flag:
        """This reason as ``text``, already written from its template (where a lower layer wrote it: the
        vision's notices, which may not import this)."""
        return Flag(self, text)

    # -- a board's doubt -----------------------------------------------------------------------
    LOW_CONFIDENCE = ("low-confidence", "low confidence",
                      "Compare the board with the page and correct it if the turn is not what is written.")
    RESTING_ON_BOARD = ("rests-on-board", "{turns} later turns rest on this board, and it is not sure enough for that",
                        "Check this board first: the later turns follow from it.")
    NO_LEGAL_PLAY = ("no-legal-play", "no legal play explains the marks",
                     "Read the board on the page and correct it with the move written.")
    NOT_A_DOUBLE = ("not-a-double", "the marks do not fit a double",
                    "Check whether the board records a double; correct it if not.")
    MISREAD_CELL = ("misread-cell", "the marks fit only if a cell was misread",
                    "Compare the digits read with the page; correct the board if one is wrong.")
    LATER_BOARDS_DECIDED = ("later-boards-decided",
                            ("a digit the reader was unsure of, and the board alone does not decide the turn: "
                             "later boards did"),
                            ("Compare the unsure digits with the page; correct the board if one is wrong "
                             "(the later turns follow from it)."))
    UNREADABLE_CENTRE = ("unreadable-centre", "unreadable centre",
                         "Read the dice in the board's centre on the page and correct the turn.")
    UNSURE_FIT = ("unsure-fit",
                  "the board's lines were not found clearly on the page: its squares may be misplaced",
                  ("Check the squares on the overlay: where the drawn squares do not sit on the printed ones, "
                  "read the board on the page and correct the turn."))
    ILLEGAL_MOVE = ("illegal-move", "illegal move recorded",
                    ("The player's move as written breaks the rules: check it, and correct the board with the "
                    "legal play meant."))
    ILLEGAL_MOVE_WRITTEN_AS = ("illegal-move-written-as",
                               "the marks show {roll}: {shown}; written as the nearest legal play {roll}: {chosen}",
                               "Check that the nearest legal play is the one meant; correct the board if not.")
    ILLEGAL_MOVE_UNPLAYABLE = ("illegal-move-unplayable",
                               "the marks show {roll}: {shown}; {roll} cannot be played legally: written as no play",
                               "Check the roll written; correct the board with the roll and play meant.")
    BLANK_IN_GAME = ("blank-in-game", "blank board inside a game",
                     "Check the page: a board left blank, or a turn the reader missed.")
    ARROW_NO_DOUBLE = ("arrow-no-double", "arrow where no double is allowed",
                       "Check the arrow on the page: a stray mark, or a misread earlier in the game.")
    NOT_THIS_GAME = ("not-this-game",
                     "the board does not continue this game (a page missing, or one from another match?)",
                     "Check that the page belongs to this match and that none is missing before it.")
    AFTER_THE_END = ("after-the-end", "a board after the end of the match",
                     "Check the match length and the results: the match ended before this board.")
    BOARD_MISSING = ("board-missing", "a board seems to be missing before this one",
                     "Check the board before this one on the page; correct the turns around it.")
    GAME_END_UNRECORDED = ("game-end-unrecorded", "the game's end was not recorded: a new game seems to start here",
                           "Check how the game before ended; correct the board that ends it.")
    ILLEGAL_RESULT = ("illegal-result",
                      ("result square reads {written}, not a legal value with the cube at {cube} (cube x 1, 2 or 3): "
                      "{points} used"),
                      "Read the result square on the page and correct the board with the points meant.")
    CONCEDED_UNPLAYED = ("conceded-unplayed", "a game conceded before its first roll",
                         "Check the result square: a game resigned before it began is rare.")
    CORRECTION_MISFIT = ("correction-misfit", "correction does not fit",
                         ("The correction cannot be played from the position before it: check it and the boards "
                         "before."))
    GAME_DOES_NOT_END = ("game-does-not-end", "game does not end",
                         "Check that no page is missing at the end, and the last boards read.")
    SET_ASIDE = ("set-aside", "the marks fit no turn: set aside",
                 "Read the board on the page; correct it if it records a turn.")
    NAMES_BOARD = ("names-board", "the marks fit no turn: read as a names board",
                   "Read the board on the page; correct it if it records a turn.")
    PAGE_GAP = ("page-gap", "the page numbers jump from {before} to {after} before this page: a page missing?",
                "Add the missing page, or check this board's turn and those after it.")
    PAGE_OUT_OF_ORDER = ("page-out-of-order",
                         "the pages are out of order (their numbers read {numbers}): this one is numbered {number}",
                         "Give the pages in order (or --order header) and scan again.")
    PAGE_EXTRA = ("page-extra", "this page sits between pages numbered {before} and {after}: a page from another match?",
                  "Take the page out if it is another match's, and scan again.")
    PAGE_LEFT_OUT = ("page-left-out",
                     "the page does not continue this match (a page from another match?): left out",
                     "Check the page: if it is this match's, correct its first board so that it continues.")

    # -- the pages of the match ----------------------------------------------------------------
    PAGES_GAP = ("pages-gap",
                 ("pages: the page numbers written jump from {before} to {after} between {where}: {missing} missing? "
                 "The first turn after the gap is flagged, and the rest of the match rests on it"),
                 "Add the missing pages and scan again, or check the turns after the gap.", True)
    PAGES_DISORDER = ("pages-disorder",
                      ("pages: the page numbers written jump from {before} to {after} between {where}, and {found} "
                      "later in the pile: the pages are out of order? Give them in order, or add --order header"),
                      "Give the pages in order (or --order header) and scan again.", True)
    PAGES_OUT_OF_ORDER = ("pages-out-of-order",
                          ("pages: the page numbers written ({numbers}) are each there once but out of order: the "
                          "first turn of {where}, numbered {number}, is flagged, and the rest of the match rests on "
                          "it. Give the pages in order, or add --order header"),
                          "Give the pages in order (or --order header) and scan again.", True)
    PAGES_EXTRA = ("pages-extra",
                   ("pages: {where} sits between pages numbered {before} and {after}, which follow each other: is it "
                   "from another match, or given twice? Its first turn is flagged, and the rest of the match rests "
                   "on it"),
                   "Take the page out if it is another match's or a copy, and scan again.", True)
    PAGES_LEFT_OUT = ("pages-left-out",
                      ("pages: {where} does not continue this match (a page from another match?): left out, its boards "
                      "listed as skipped in the report"),
                      "Check the page: if it is this match's, correct its first board.", True)
    PAGES_NOT_IN_ORDER = ("pages-not-in-order",
                          ("pages: not in the order of their numbers (the first, {first}, is numbered {number}, and "
                          "{later} {later_number}): give them in {advice}"),
                          "Give the pages in order (or --order header) and scan again.", True)
    FIRST_PAGE_NUMBERED = ("first-page-numbered", ("pages: the first page, {first}, is numbered {number}: {missing} "
                           "missing?"), "Add the pages before it and scan again.", True)
    PAGE_TWICE = ("page-twice", "pages: {page} is given twice (as pages {first} and {again} of the match)",
                  "Give each page once and scan again.", True)
    PLAYERS_DIFFER = ("players-differ",
                      ("pages: {page} names the players {bottom} and {top}, {other} {other_bottom} and {other_top}: a "
                      "page of another match?"),
                      "Take out the page of another match and scan again.", True)
    PAGES_ALIKE = ("pages-alike", "pages: {first} and {second} read alike, board for board: one sheet scanned twice?",
                   "Give each sheet once and scan again.", True)
    MIRRORED_PRINT = ("mirrored-print",
                      ("pages: {pages} {verb} of a mirrored print (off squares on the left, point numbers 1 to 12 left "
                      "to right): read as printed"),
                      "Nothing, if the print is mirrored; else check a turn of those pages.", True)
    TURNED_PAGE = ("turned-page", "pages: {pages} {verb} turned in the image: read turned back",
                   "Nothing, if the turns read right; else scan the pages upright.", True)
    UNREAD_BOARDS = ("unread-boards",
                     ("boards not read: {boards}: their ruled lines were found but not their squares (boards of "
                      "unequal size); their turns are missing, not guessed"),
                     "Enter those boards' turns by hand, or scan the pages again with their squares clear.", True)
    ORDER_KEPT = ("order-kept",
                  ("page order: not every page's number could be read surely (read: {numbers}; ? unsure); the pages "
                  "are in the order given"),
                  "Give the pages in order yourself and scan again without --order header.", True)
    ORDER_BROKEN = ("order-broken",
                    ("page order: the page numbers read ({numbers}) do not run from {first} to {last} once each (a "
                    "page missing, one from another match, or a number misread); the pages are in the order given"),
                    "Check the pile for a missing or foreign page; give the pages in order.", True)
    PAGE_DAMAGED = ("page-damaged", "{source}: page {number}: {damage}; read as far as it decodes: check its turns",
                    "Check the turns of that page, or scan it again.", True)
    CORRECTIONS_OTHER_PAGES = ("corrections-other-pages",
                               ("corrections: {name} was made on pages that differ from these ({differ}): check the "
                               "corrected turns of those pages"),
                               "Check the corrected turns of those pages on the review page.", True)

    # -- the match header ----------------------------------------------------------------------
    LENGTH_UNKNOWN = ("length-unknown",
                      "match length: not given and not read from any page header; written as 0 (unlimited)",
                      "Give the length (--length) or set it on the review page.", True)
    LENGTH_UNSURE = ("length-unsure",
                     ("match length: read as {length} from the page headers, but not surely (confidence "
                     "{support:.2f}, {share:.0%} of what was read): check it, or give the length (--length)"),
                     "Check the length on the page; give it (--length) or set it on the review page.", True)
    LENGTH_FROM_GAMES = ("length-from-games",
                         ("match length: the page headers read {voted}, but not surely, and the games recorded fit a "
                         "{length}-point match better: written as {length}; check it, or give the length (--length)"),
                         "Check the length on the page; give it (--length) or set it on the review page.", True)
    LENGTH_OVERRUN = ("length-overrun",
                      ("match length: {length}{source}, but {boards} boards with writing follow the end of a "
                      "{length}-point match (set aside); the games recorded fit a {fits}-point match: if that is its "
                      "length, give it (--length {fits})"),
                      "Check the length; if the games fit the other one, give it (--length).", True)
    PLAYERS_UNKNOWN = ("players-unknown",
                       "player names: not given and not read from any page header; written as Bottom and Top",
                       "Give the names (--players) or set them on the review page.", True)
    PLAYERS_ALIKE = ("players-alike",
                     "player names: the headers give one name for both players; written as Bottom and Top",
                     "Give the names (--players) or set them on the review page.", True)
    PLAYER_UNKNOWN = ("player-unknown",
                      "player names: the {side} player's name was not read from any page header; written as {name}",
                      "Give the names (--players) or set them on the review page.", True)
    NOT_ON_ROSTER = ("not-on-roster",
                     "player names: {name!r}, as read from the page headers, is no entrant of the roster: check it",
                     "Check the name; set it on the review page if it is misread.", True)

    # -- the record as a whole -----------------------------------------------------------------
    NO_TURNS = ("no-turns", "no move was found on these pages: is anything recorded on them?",
                "Check that these are the filled-in pages.", True)
    NO_GAME = ("no-game",
               ("no legal game explains the marks: {boards} boards hold writing, but no move read from them can be "
               "played from the start; are these the pages of one match, in order?"),
               "Check that the pages are one match's, in order, with the first page among them.", True)
    GAME_UNFINISHED = ("game-unfinished",
                       "the record ends in game {game}, before it was won ({score}): a page missing at the end?",
                       "Add the missing last page, or check the last boards.", True)
    MATCH_UNFINISHED = ("match-unfinished",
                        ("the record ends at {score}, before either player reached {length} points: pages missing at "
                        "the end, or a shorter match (--length)?"),
                        "Add the missing pages, or give the match length (--length).", True)


@dataclass(frozen=True, slots=True)
class Flag:
    """One reason said: of a board (a turn's reason) or of the whole match (a note)."""

    reason: Reason
    #: The reason's text with its fields filled in, as the report shows it.
    text: str

    @property
    def code(self) -> str:
        """The reason's stable code."""
        return self.reason.code


def texts(flags: tuple[Flag, ...] | list[Flag]) -> list[str]:
    """The flags' texts, as the report lists them."""
    return [flag.text for flag in flags]


def codes(flags: tuple[Flag, ...] | list[Flag]) -> list[str]:
    """The flags' codes, beside their texts in the report."""
    return [flag.code for flag in flags]


@cache
def _patterns() -> tuple[tuple[Reason, re.Pattern[str]], ...]:
    """Each reason's text as a pattern, its fields matching anything: for telling a text's reason."""
    out = []
    for reason in Reason:
        parts = re.split(r"\{[^{}]*\}", reason.text)
        out.append((reason, re.compile("(?s)" + ".+?".join(re.escape(part) for part in parts) + r"\Z")))
    # The most literal text first: a template of only fields matches whatever a fuller one does.
    return tuple(sorted(out, key=lambda pair: -len(re.sub(r"\{[^{}]*\}", "", pair[0].text))))


def reason_of(text: str) -> Reason | None:
    """The reason whose text ``text`` is, or ``None``: for a report written before reasons had codes."""
    return next((reason for reason, pattern in _patterns() if pattern.match(text)), None)


#: The notes that say the player names were made up or are in doubt (the review page's match form says so).
PLAYER_NOTES = frozenset({Reason.PLAYERS_UNKNOWN, Reason.PLAYERS_ALIKE, Reason.PLAYER_UNKNOWN, Reason.NOT_ON_ROSTER})
#: The notes that say the match length was made up or is in doubt.
LENGTH_NOTES = frozenset({Reason.LENGTH_UNKNOWN, Reason.LENGTH_UNSURE, Reason.LENGTH_FROM_GAMES, Reason.LENGTH_OVERRUN})


def codes_of(entry: Mapping[str, Any], key: str = "reasons") -> list[str]:
    """The codes of ``entry[key]`` (a turn's or skipped board's ``reasons``, a report's ``notes`` or
    ``scan_notes``), from ``entry[key's codes]``; a report written before reasons had codes has them told
    from the texts (``""`` for a text no reason has)."""
    texts_said = [str(text) for text in entry.get(key) or []]
    given = entry.get(CODES_KEY[key])
    if isinstance(given, list) and len(given) == len(texts_said):
        return [str(code) for code in given]
    return [found.code if (found := reason_of(text)) is not None else "" for text in texts_said]


#: Where the report keeps the codes of each list of texts.
CODES_KEY = {"reasons": "reason_codes", "notes": "note_codes", "scan_notes": "scan_note_codes"}


def reason_by_code(code: str) -> Reason | None:
    """The reason with this code, or ``None``."""
    return next((reason for reason in Reason if reason.code == code), None)


def reference_markdown() -> str:
    """Every reason and note as a Markdown page (``docs/reasons.md``): its code, its text, what to do."""
    lines = ["# Flag reasons and notes", "",
             "Generated from `digitise/solve/reasons.py` (`Reason`); a test checks this page is current.",
             "A report gives each reason's text (`reasons`, `notes`) and, beside it, its code",
             "(`reason_codes`, `note_codes`, `scan_note_codes`). Codes never change; texts may be reworded.",
             "`{...}` in a text is filled in with the board's or the match's own values.", ""]
    for of_match, title in ((False, "Reasons a board is flagged"), (True, "Notes about a whole match")):
        lines += [f"## {title}", "", "| code | the report says | what to do |", "|---|---|---|"]
        lines += [f"| `{r.code}` | {_cell(r.text)} | {_cell(r.action)} |" for r in Reason if r.of_match == of_match]
        lines.append("")
    return "\n".join(lines)


def _cell(text: str) -> str:
    """``text`` safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")
