"""The solver: from readings of a note's boards to a complete, legal, scored match.

:func:`solve` searches the whole match at once (see :mod:`digitise.solve.search`):
who is on roll (alternation, the closed-out skip, the opening roll by either
player), the roll and play of every move board (candidate rolls come from the
written digits, candidate plays are the legal plays of those rolls, each
scored by how well its marks agree with the readings), doubles and their
answers (a take when the doubler rolls next, a drop when a new game starts or
the doubler's result square says so), resignations (result squares), game
ends, scores and the Crawford game. Where the marks fit several plays of a
roll, GNU Backgammon's judgement of the plays tips the balance
(:mod:`digitise.solve.prior`: players rarely blunder). A page whose boards
continue nothing (a page of another match in the pile) is left out whole
when the match explains far better without it. The match is always legal, so that GNU
Backgammon replays it: every play is one of ``legal_plays`` (an illegal move
recorded is written as the nearest legal play), a double only where
``MatchState.may_double`` allows it (an arrow elsewhere is explained
otherwise), a resignation worth the cube times 1, 2 or 3 (or that capped at
what the winner needed); what the marks say otherwise is flagged. Every turn gets a confidence and, when in
doubt, reasons for a person to review it.

The report
----------
``{"games": [...], "skipped": [...], "summary": {...}}``. Each game is
``{"number", "turns", "winner": "top"|"bottom"|null, "points"}`` (``points``
as won, not capped; ``null`` for a game the readings do not finish). Each turn:

* ``page``, ``board``: where it is written (a take or drop: its double's board);
* ``player``, ``action`` (move, double, take, drop, resign), ``dice`` ([high,
  low] or null), ``move`` (``.mat`` notation, "" for none), ``points`` (resign);
* ``confidence`` in [0, 1]: the best complete explanation against the best one
  that decided this board otherwise (1 / (1 + e^-margin)); ``flagged`` and
  ``reasons`` ("low confidence", "no legal play explains the marks", "the
  marks fit only if a cell was misread", "illegal
  move recorded" with "the marks show ...; written as the nearest legal play
  ...", "blank board inside a game", "unreadable centre" (with low confidence), "arrow where no
  double is allowed", "result square reads N, not a legal value ...", "game
  does not end", "correction does not fit", "N later turns rest on this board, and it is
  not sure enough for that" (sure by the review bar, but the turns expected wrong because of it reach
  :data:`REVIEW_EXPECTED_WRONG`), "the game's end was not recorded
  ...", "the page numbers jump from N to M before this page: a page
  missing?", "the board does not continue this game ..." and "the page does
  not continue this match ...: left out" in ``skipped``);
* ``follows``: ``{"page", "board"}`` of an earlier flagged board this turn's
  position rests on (it is not flagged itself: correcting that board
  re-decodes it), else null;
* ``candidates``: the best few decisions for the board with probabilities
  among them (``action``, ``player``, ``dice``, ``move``, ``result`` when
  they carry one, ``answer``: "take" or "drop", for a double the answer given
  on its own board, for anything else the answer to the double of the board
  before) and ``reasons``: how each compares with the decision
  taken, and that one with the best other, biggest factor first ("marks fit
  3.2x better/worse", "later boards fit 12x better/worse", between two moves
  "roll as written 2.0x likelier/less likely" and "4.1x likelier play" /
  "weaker play (4.1x less likely)", between a move and something else "2.0x
  likelier/less likely on the other odds"; "Nx likelier/less likely overall"
  when no one part reaches 2x, "about as likely on every count" when the
  whole does not);
* ``position_before`` / ``position_after``: GNU Backgammon position IDs, both
  seen by the turn's player (the player on roll in the ID).

``skipped`` lists boards that record no turn but are flagged (a blank board
inside a game). ``summary``: boards, games, turns, flagged (turns and boards
set aside), set_aside (boards in ``skipped`` that are flagged), mean_confidence.
``notes``: doubts about the whole match (a name or the length made up, a
gap in the page numbers written: a page missing, or pages out of order).
``prior``: what weighed the plays (GNU Backgammon's net and its version, or
nothing): the same readings solve differently with and without it.

Corrections
-----------
``corrections`` maps a board, ``(page, board)`` with both numbers as printed
(1-based; ``board`` is 1..8), to what that board records. The solver treats
each as a hard constraint and re-decodes everything else around it. A
correction is a string of ``;``-separated parts:

* a move in ``.mat`` notation, optionally preceded by the player:
  ``"52: 13/8 13/11"``, ``"top 64: 25/21 13/7*"``, ``"63:"`` (the roll could
  not be played); ``bar``/``25`` and ``off``/``0`` as in ``.mat`` files;
* ``double`` (the board is a double; take or drop is then inferred), or
  ``double; drop`` / ``double; take`` to say how it was answered when the
  arrow board itself carries the result;
* ``bottom wins N`` / ``top wins N``: a resignation (or drop) worth N ends the
  game on this board; ``resign N`` when the winner follows from who is on roll;
* ``blank``: the board records nothing.

So ``{(2, 5): "61: 13/7 8/7", (3, 1): "double", (4, 8): "43: 6/2 6/3; top wins 2"}``.
In JSON (the review page's corrections file) the same is
``{"2:5": "61: 13/7 8/7", ...}``; :func:`parse_corrections` reads that form.
"""

from __future__ import annotations

import gc
import itertools
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from digitise.errors import ReadingsError, short
from digitise.game.match import MAX_MATCH_LENGTH, MatchState
from digitise.game.position import Position, Side
from digitise.game.record import Action, ActionKind, GameRecord, MatchRecord
from digitise.game.rules import Roll
from digitise.notation.mat import parse_steps, writable_name
from digitise.notation.readings import Readings, written_page_number
from digitise.solve.evidence import BoardEvidence
from digitise.solve.prior import PlayPrior, default_prior
from digitise.solve.roster import roster_name
from digitise.solve.search import (
    AFTER_THE_END,
    FOREIGN,
    GAME_DOES_NOT_END,
    LOW_CONFIDENCE,
    POOR_FIT,
    Cache,
    Event,
    Forced,
    Node,
    Searcher,
    State,
    best_line,
    best_path,
    confidence,
    decisions,
    leads_to,
    misread_doubt,
    rivals,
    troubled,
    weighed_alternatives,
)

#: Turns less sure than this are flagged for review.
REVIEW_BELOW = 0.98
#: A board sure enough by REVIEW_BELOW is still flagged when the turns expected wrong because of it
#: (its doubt, times itself and the later turns that would read otherwise) reach this: a fifth of a turn.
REVIEW_EXPECTED_WRONG = 0.2
DEFAULT_PLAYERS = ("Bottom", "Top")


@dataclass(frozen=True, slots=True)
class SolveResult:
    """The solved match and the report of every turn (see :func:`solve`)."""

    match: MatchRecord
    report: dict[str, Any]

    @property
    def flagged(self) -> int:
        """How many turns (and boards) are flagged for review."""
        return int(self.report["summary"]["flagged"])


def solve(readings: Readings, *, players: tuple[str, str] | None = None, length: int | None = None,
          corrections: Mapping[tuple[int, int], str] | None = None,
          review_below: float = REVIEW_BELOW, prior: PlayPrior | None = None,
          roster: Sequence[str] = ()) -> SolveResult:
    """Turn ``readings`` into the likeliest legal match and a report of how sure each turn is.

    ``players`` is (bottom, top); ``length`` the match length (0: unlimited).
    Turns whose confidence is below ``review_below`` are flagged (lower it to
    flag fewer turns at the risk of unflagged errors; see benchmarks/README.md).
    Both default to what the page headers say (names cleaned of what a ``.mat``
    cannot hold, :func:`~digitise.notation.mat.writable_name`), else
    placeholders; with a ``roster`` (a tournament's entrants) each name read is taken as the entrant it
    spells (:func:`~digitise.solve.roster.roster_name`). Never raises on odd readings: what nothing explains is
    recorded as best it can be and flagged. Raises :class:`ReadingsError`
    only for a malformed correction.
    """
    # Python's cycle collector is held off: the search trees only grow (their parent links make every node
    # part of a cycle) and each full collection walked them whole, so a long match cost more a board the
    # longer it was. What they leave behind is collected once the solve is done.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _solve(readings, players, length, corrections, review_below, prior, roster)
    finally:
        if enabled:
            gc.enable()


def _solve(readings: Readings, players: tuple[str, str] | None, length: int | None,
           corrections: Mapping[tuple[int, int], str] | None, review_below: float, prior: PlayPrior | None,
           roster: Sequence[str]) -> SolveResult:
    """:func:`solve` itself."""
    places: list[tuple[int, int]] = []
    evidence: list[BoardEvidence] = []
    #: The sheet (its place in the pile) each board is on: page numbers as read may repeat.
    sheets: list[int] = []
    for page_number, page in enumerate(readings.pages, 1):
        number = page.page if page.page > 0 else page_number
        for board in page.boards:
            places.append((number, board.index))
            evidence.append(BoardEvidence(board))
            sheets.append(page_number)
    header = _header(readings, roster)
    notes: list[str] = []
    _, protected, gap_notes, pile_marks = _page_sequence(readings)
    notes += gap_notes
    #: Other lengths to weigh against the games recorded: only what the headers read, and only when unsure.
    others: list[int] = []
    unsure = ""
    given = length is not None
    if length is None:
        length = header.get("length", 0)
        if "length" not in header:
            notes.append(LENGTH_UNKNOWN)
        elif header["length_support"] < LENGTH_SURE or header["length_share"] < LENGTH_AGREED:
            unsure = LENGTH_UNSURE.format(length=length, support=header["length_support"],
                                          share=header["length_share"])
            notes.append(unsure)
            others = header["lengths"][1:LENGTHS_WEIGHED]
    if players is None:
        players = header.get("players", DEFAULT_PLAYERS)
        if "one_player" in header:
            players = header["one_player"]
            missing = header["missing"]
            notes.append(PLAYERS_ONE.format(side=("bottom", "top")[missing], name=players[missing]))
        elif "players" not in header:
            notes.append(PLAYERS_ALIKE if header.get("alike") else PLAYERS_UNKNOWN)
        if roster:
            notes += [NOT_ON_ROSTER.format(name=name) for name in players
                      if name not in roster and name not in DEFAULT_PLAYERS]
    forced: dict[int, Forced] = {}
    for key, text in (corrections or {}).items():
        spec = parse_correction(text, where=f"{key[0]}:{key[1]}")
        for i, place in enumerate(places):
            if place == tuple(key):
                forced[i] = spec
    if not evidence:
        match = MatchRecord(length, players, ())
        return _noted(SolveResult(match, {"games": [], "skipped": [], "summary": _summary([], [], 0)}), notes)
    prior = prior if prior is not None else default_prior()
    cache = Cache()
    final = _search(evidence, length, forced, prior, cache=cache)
    voted = length
    for other in others:
        # A length misread ends the match early (every later board set aside) or makes a game the
        # Crawford game: the games recorded say which length they were played to. Only a better
        # explanation of the boards overrules the headers' vote.
        trial = _search(evidence, other, forced, prior, cache=cache)
        if trial.score > final.score + LENGTH_EVIDENCE:
            final, length = trial, other
    if length != voted:
        notes[notes.index(unsure)] = LENGTH_FROM_GAMES.format(voted=voted, length=length)
    overrun = _overrun(best_path(final))
    if overrun and length > 0:
        fits = _length_played(evidence, forced, prior, cache, final.score, length, header.get("lengths", []))
        if fits is not None:
            # Not written as that length: the boards after the end may as well be another match's pages put
            # after this one's, which a longer match would take in silently. They stay set aside and flagged.
            notes.append(LENGTH_OVERRUN.format(length=length, boards=overrun, fits=fits,
                                               source=" as given" if given else " as read from the page headers"))
    final, kept = _leave_out_strangers(final, evidence, sheets, forced, length, prior, cache, protected)
    result = _build(best_path(final), [places[i] for i in kept], [evidence[i] for i in kept], length, players,
                    review_below, _GapMarks(pile_marks, [sheets[i] for i in kept],
                                            frozenset((int(key[0]), int(key[1])) for key in (corrections or {}))))
    if len(kept) < len(evidence):
        left_out = set(range(len(evidence))) - set(kept)
        result.report["skipped"] = sorted(
            result.report["skipped"] + [
                {"page": places[i][0], "board": places[i][1], "flagged": True, "reasons": [STRANGER_REASON]}
                for i in sorted(left_out) if evidence[i].listed],
            key=lambda s: (s["page"], s["board"]))
        result.report["summary"] = _summary(result.report["games"], result.report["skipped"], len(evidence))
        extra = extra_pages(readings)
        for sheet in sorted({sheets[i] for i in left_out}):
            where = _pile_page(readings, sheet)
            if sheet in extra:
                # Its page numbers' note said its first turn is flagged: it has no turn now.
                before, after = extra[sheet]
                notes.remove(EXTRA_NOTE.format(where=where, before=before, after=after))
            notes.append(STRANGER_NOTE.format(where=where))
    result.report["prior"] = prior.described
    return _noted(result, notes, evidence)


#: How surely each page number around a gap must be read: four numbers in step on either side of a jump
#: are seldom all misread.
GAP_SURE = 0.5
#: ... and around a gap beside the pile's first or last page, where one side has no page to confirm it.
GAP_EDGE_SURE = 0.94
#: The reason on the first turn after a gap in the page numbers, and the match's note.
GAP_REASON = "the page numbers jump from {before} to {after} before this page: a page missing?"
#: Page numbers read this surely, each once, within as many as there are pages, but not ascending: the
#: pile is out of order (low enough to see most swapped pages, with no pile in order taken for one).
ORDER_SURE = 0.6
#: How surely a page out of its place must be numbered when every other number read is in step with its place
#: (then a misread of that one number explains the pile as well as a page out of place does).
ORDER_ALONE_SURE = 0.9
#: The reason on the first turn of the first page out of its place, and the match's note.
ORDER_REASON = "the pages are out of order (their numbers read {numbers}): this one is numbered {number}"
ORDER_NOTE = ("pages: the page numbers written ({numbers}) are each there once but out of order: the first turn of "
              "{where}, numbered {number}, is flagged, and the rest of the match rests on it. Give the pages in "
              "order, or add --order header")
GAP_NOTE = ("pages: the page numbers written jump from {before} to {after} between {where}: "
            "{missing} missing? The first turn after the gap is flagged, and the rest of the match rests on it")
#: A jump whose missing numbers are read on other pages of the pile: the pages are out of order.
DISORDER_NOTE = ("pages: the page numbers written jump from {before} to {after} between {where}, and {found} "
                 "later in the pile: the pages are out of order? Give them in order, or add --order header")
#: A page between two whose numbers follow each other (each confirmed by its other neighbour): a page too many.
EXTRA_REASON = "this page sits between pages numbered {before} and {after}: a page from another match?"
EXTRA_NOTE = ("pages: {where} sits between pages numbered {before} and {after}, which follow each other: is it from "
              "another match, or given twice? Its first turn is flagged, and the rest of the match rests on it")
#: The reason and note for a page the solver left out as another match's.
STRANGER_NOTE = ("pages: {where} does not continue this match (a page from another match?): left out, its boards "
                 "listed as skipped in the report")


def _page_numbers(readings: Readings) -> tuple[list[tuple[int | None, float]], list[int | None]]:
    """Each page's written number as read (number, sureness), and the numbers read at least :data:`GAP_SURE`."""
    read = [written_page_number(page) for page in readings.pages]
    return read, [n if n is not None and sure >= GAP_SURE else None for n, sure in read]


def page_gaps(readings: Readings) -> dict[int, tuple[int, int]]:
    """Pages (their place in the pile, from 1) before which the written page numbers skip: {place: (before, after)}.

    A page missing from the middle of a pile lets the next page's boards be
    read as a new game, or as the game going on from the wrong position,
    without a misfit to flag. Page numbers are misread too often, and
    surely, to be trusted alone (a "2" for a "12"): a jump counts only where
    the pages on either side confirm both numbers (n - 1, n, then m, m + 1),
    so one misread number never makes a gap; beside the pile's first or last
    page, where one side has no page, the other side confirms and both
    numbers of the jump must be read surely (:data:`GAP_EDGE_SURE`). A
    number read less surely than :data:`GAP_SURE` shows nothing.
    """
    read, numbers = _page_numbers(readings)
    gaps: dict[int, tuple[int, int]] = {}
    for k in range(1, len(numbers)):
        before, after = numbers[k - 1], numbers[k]
        if before is None or after is None or after <= before + 1:
            continue
        left = numbers[k - 2] == before - 1 if k >= 2 else None
        right = numbers[k + 1] == after + 1 if k + 1 < len(numbers) else None
        if left is False or right is False or not (left or right):
            continue
        if (left and right) or min(read[k - 1][1], read[k][1]) >= GAP_EDGE_SURE:
            gaps[k + 1] = (before, after)
    return gaps


def extra_pages(readings: Readings) -> dict[int, tuple[int, int]]:
    """Pages (their place in the pile, from 1) with no room for them in the written numbering: {place: (before,
    after)}, the numbers of the pages either side, which follow each other.

    A page of another match put into the pile, when its boards are legal from
    where the pile left off, reads as the game going on: in a short pile the
    search has too few later boards to weigh against it. Its own number says
    little (it may even be the one due), but its neighbours do when they are
    numbered n and n + 1. As for :func:`page_gaps`, one misread number must
    not make such a page: each neighbour's number is confirmed by its other
    neighbour (n - 1 before it, n + 2 after; the pile's first or last page
    has none, but one side must confirm). Of two such pages in a row (one
    page given twice) the first is taken.
    """
    _, numbers = _page_numbers(readings)
    extra: dict[int, tuple[int, int]] = {}
    for k in range(1, len(numbers) - 1):
        before, after = numbers[k - 1], numbers[k + 1]
        if before is None or after is None or after != before + 1:
            continue
        left = numbers[k - 2] == before - 1 if k >= 2 else None
        right = numbers[k + 2] == after + 1 if k + 2 < len(numbers) else None
        # Two pages alike in a row (3, 3) each sit between numbers that follow: the first is flagged, as
        # everything after it rests on it.
        if left is not False and right is not False and (left or right) and k not in extra:
            extra[k + 1] = (before, after)
    return extra


def _pile_names(readings: Readings, left: int, right: int) -> str:
    """Two neighbouring pages (places in the pile, from 1) as messages name them."""
    a, b = readings.pages[left - 1].source, readings.pages[right - 1].source
    files = (f"{Path(a).name}, {Path(b).name}" if a != b else Path(a).name) if a and b else ""
    return f"pages {left} and {right} of the pile" + (f" ({files})" if files else "")


def _page_sequence(readings: Readings) -> tuple[dict[int, tuple[int, int]], frozenset[int], list[str],
                                                dict[int, str]]:
    """What the written page numbers say of the pile: its gaps, its own pages, notes, and the places (in the
    pile, from 1) whose first turn is flagged, with the reason.

    Gaps are :func:`page_gaps` whose missing numbers are read nowhere else in
    the pile (where they are, the pages are out of order: a note, no gap).
    A page is the pile's own (never left out as a page of another match)
    when its number is in step with both neighbours, or with the one away
    from a gap beside it.
    """
    read, numbers = _page_numbers(readings)
    gaps: dict[int, tuple[int, int]] = {}
    notes: list[str] = []
    for at, (before, after) in sorted(page_gaps(readings).items()):
        where = _pile_names(readings, at - 1, at)
        elsewhere = sorted({n for n in numbers if n is not None and before < n < after})
        if elsewhere:
            found = ("page " if len(elsewhere) == 1 else "pages ") + ", ".join(map(str, elsewhere)) + (
                " comes" if len(elsewhere) == 1 else " come")
            notes.append(DISORDER_NOTE.format(before=before, after=after, where=where, found=found))
            continue
        gaps[at] = (before, after)
        missing = f"page {before + 1}" if after == before + 2 else f"pages {before + 1} to {after - 1}"
        notes.append(GAP_NOTE.format(before=before, after=after, where=where, missing=missing))
    own: set[int] = set()
    for k, number in enumerate(numbers):
        if number is None:
            continue
        left = k > 0 and numbers[k - 1] == number - 1
        right = k + 1 < len(numbers) and numbers[k + 1] == number + 1
        if (left and right) or (left and k + 2 in gaps) or (right and k + 1 in gaps):
            own.add(k + 1)
    marks = {at: GAP_REASON.format(before=before, after=after) for at, (before, after) in gaps.items()}
    placed = [(k, n) for k, (n, how) in enumerate(read, 1) if n is not None and how >= ORDER_SURE]
    numbers_read = [n for _, n in placed]
    lowest = min(numbers_read, default=0)
    if (len(placed) >= 2 and len(set(numbers_read)) == len(placed) and numbers_read != sorted(numbers_read)
            and max(numbers_read) - lowest < len(read)):
        # Two neighbouring pages swapped make no jump that pages on both sides confirm (1, 2, 4, 3, 5):
        # the boards then read as the game going on, wrong, with nothing flagged. Numbers each read once,
        # within as many as there are pages, but not ascending: the first page not where its number puts it.
        # The number the pile's first page carries, were the lowest one read in its place.
        start = lowest - next(k for k, n in placed if n == lowest) + 1
        at = next(k for k, n in placed if n - start + 1 != k)
        number = dict(placed)[at]
        # Where every other number read is in step with its place, this one number may be a misread, not a
        # page out of place: it must then be sure.
        steps = {n - k for k, n in placed if k != at}
        misread = len(steps) == 1 and min(steps) + at >= 1
        if not misread or read[at - 1][1] >= ORDER_ALONE_SURE:
            shown = "(" + ", ".join("?" if n is None or how < ORDER_SURE else str(n) for n, how in read) + ")"
            marks.setdefault(at, ORDER_REASON.format(numbers=shown, number=number))
            if not any("out of order?" in note for note in notes):
                notes.append(ORDER_NOTE.format(numbers=shown[1:-1], number=number, where=_pile_page(readings, at)))
    for at, (before, after) in sorted(extra_pages(readings).items()):
        marks.setdefault(at, EXTRA_REASON.format(before=before, after=after))
        notes.append(EXTRA_NOTE.format(where=_pile_page(readings, at), before=before, after=after))
    return gaps, frozenset(own), notes, marks


def _pile_page(readings: Readings, at: int) -> str:
    """A page (its place in the pile, from 1) as messages name it."""
    source = readings.pages[at - 1].source
    return f"page {at} of the pile" + (f" ({Path(source).name})" if source else "")


@dataclass(frozen=True, slots=True)
class _GapMarks:
    """Where the pile's page numbers show a page missing or out of place, for flagging the first turn there."""

    #: The place in the pile (from 1) whose first turn is flagged, with the reason.
    gaps: Mapping[int, str]
    #: The sheet (place in the pile, from 1) of each board solved.
    sheets: Sequence[int]
    #: Boards (page, board) a reviewer corrected.
    corrected: frozenset[tuple[int, int]]

    def flagged(self, path: list[Node], places: list[tuple[int, int]]) -> dict[int, str]:
        """The first turn (move or double) at or after each gap, by node id, with its reason.

        None where a reviewer corrected a board from the gap up to that turn:
        they have looked at it.
        """
        out: dict[int, str] = {}
        boards = [node for node in path if node.board is not None]
        for gap, reason in sorted(self.gaps.items()):
            seen_correction = False
            for node in boards:
                assert node.board is not None
                if self.sheets[node.board] < gap:
                    continue
                seen_correction = seen_correction or places[node.board] in self.corrected
                if any(e.kind in ("move", "double") for e in node.events):
                    if not seen_correction and id(node) not in out:
                        out[id(node)] = reason
                    break
        return out


#: What the report says, and the CLI prints, when the match's length or names had to be made up.
LENGTH_UNKNOWN = "match length: not given and not read from any page header; written as 0 (unlimited)"
#: A length the headers give with less confidence than this in all (summed over pages), or with less
#: than this share of it against other lengths read, is written with a note, and each other length read
#: is tried against the games (:data:`LENGTHS_WEIGHED`): a wrong length changes the match's end and its
#: Crawford game, and only the boards after a misread end show it.
LENGTH_SURE = 0.5
LENGTH_AGREED = 0.6
LENGTH_UNSURE = ("match length: read as {length} from the page headers, but not surely (confidence {support:.2f}, "
                 "{share:.0%} of what was read): check it, or give the length (--length)")
#: At most this many of the lengths read (most voted first, the vote's own among them) are solved when unsure.
LENGTHS_WEIGHED = 3
#: How much better (log) the games must fit another length read to overrule the vote: a board set
#: aside (``search.FOREIGN``). A longer match is the looser one (a later end, another Crawford game),
#: so it can fit a little better by chance alone: a stray mark in the Crawford game taken for a double.
LENGTH_EVIDENCE = -FOREIGN
LENGTH_FROM_GAMES = ("match length: the page headers read {voted}, but not surely, and the games recorded fit a "
                     "{length}-point match better: written as {length}; check it, or give the length (--length)")
#: A length the games outrun: boards with writing after the match was won, which a longer match explains.
LENGTH_OVERRUN = ("match length: {length}{source}, but {boards} boards with writing follow the end of a {length}-point "
                  "match (set aside); the games recorded fit a {fits}-point match: if that is its length, give it "
                  "(--length {fits})")
#: Longer lengths tried, at most, when the games outrun the match.
OVERRUN_TRIED = 3


def _after_the_end(node: Node) -> bool:
    """Whether ``node`` reads its board after the match was won."""
    return node.parent is not None and node.parent.state.match.is_over


def _overrun(path: Sequence[Node]) -> int:
    """How many boards with writing ``path`` reads after its match was won."""
    return sum(1 for node in path if node.board is not None and _after_the_end(node) and node.summary != ("blank",))


def _length_played(evidence: list[BoardEvidence], forced: dict[int, Forced], prior: PlayPrior, cache: Cache,
                   score: float, length: int, read: Sequence[int]) -> int | None:
    """The match length the games recorded fit when they outrun ``length``, or ``None`` when none fits better.

    The boards are explained once with no match end (unlimited); the score
    the games reach says which lengths end the match at its last game (or,
    when the last game is unfinished, which lengths it has not reached yet).
    At most :data:`OVERRUN_TRIED` of those are solved (lengths the headers
    read first, then odd ones, as matches are, shortest first), and the best
    must explain the boards better than ``score`` by a board set aside
    (:data:`LENGTH_EVIDENCE`).
    """
    path = best_path(_search(evidence, 0, forced, prior, cache=cache))
    if not path:
        return None
    scores = [(0, 0)]
    for node in path:
        pair = (node.state.match.score.bottom, node.state.match.score.top)
        if pair != scores[-1]:
            scores.append(pair)
    last = path[-1].state
    reached = max(scores[-1])
    if last.on_roll is None and last.pending is None and len(scores) > 1:
        # The last game was finished: the match ended with it.
        lengths = list(range(max(max(scores[-2]), length) + 1, reached + 1))
    else:
        # Any longer length fits as well: the headers' other readings, else the shortest odd one.
        shortest = max(reached, length) + 1
        lengths = [n for n in read if n >= shortest] or [shortest + 1 - shortest % 2]
    lengths = sorted({n for n in lengths if 0 < n <= MAX_MATCH_LENGTH},
                     key=lambda n: (n not in read, n % 2 == 0, n))[:OVERRUN_TRIED]
    best: tuple[float, int] | None = None
    for other in lengths:
        trial = _search(evidence, other, forced, prior, cache=cache).score
        if trial > score + LENGTH_EVIDENCE and (best is None or trial > best[0]):
            best = (trial, other)
    return None if best is None else best[1]


PLAYERS_UNKNOWN = ("player names: not given and not read from any page header; written as "
                   f"{DEFAULT_PLAYERS[0]} and {DEFAULT_PLAYERS[1]}")
PLAYERS_ALIKE = ("player names: the headers give one name for both players; written as "
                 f"{DEFAULT_PLAYERS[0]} and {DEFAULT_PLAYERS[1]}")
PLAYERS_ONE = "player names: the {side} player's name was not read from any page header; written as {name}"
NOT_ON_ROSTER = "player names: {name!r}, as read from the page headers, is no entrant of the roster: check it"
NO_TURNS = "no move was found on these pages: is anything recorded on them?"
NO_GAME = ("no legal game explains the marks: {boards} boards hold writing, but no move read from them can be "
           "played from the start; are these the pages of one match, in order?")


#: A record that stops before its match is over: the last pages may be missing (or the length is wrong).
GAME_UNFINISHED = ("the record ends in game {game}, before it was won ({score}): a page missing at the end?")
MATCH_UNFINISHED = ("the record ends at {score}, before either player reached {length} points: pages missing at "
                    "the end, or a shorter match (--length)?")


def _record_end(match: MatchRecord) -> str | None:
    """A note when ``match`` stops before it is over: its last game not won, or nobody at the length."""
    if not match.games:
        return None
    last = match.games[-1]
    score = last.score
    if last.winner is None:
        return GAME_UNFINISHED.format(game=last.number, score=_score_text(match.players, score.bottom, score.top))
    if last.points is not None:
        score = score.add(last.winner, last.points)
    if match.length > 0 and max(score.bottom, score.top) < match.length:
        return MATCH_UNFINISHED.format(score=_score_text(match.players, score.bottom, score.top), length=match.length)
    return None


def _score_text(players: tuple[str, str], bottom: int, top: int) -> str:
    """``Alice 3, Bruno 2``: a score as the note says it."""
    return f"{players[0]} {bottom}, {players[1]} {top}"


def _noted(result: SolveResult, notes: list[str], evidence: Sequence[BoardEvidence] = ()) -> SolveResult:
    """``result`` with the match-wide doubts (``notes``, and a match with no turn) in its report.

    A match with no turn found says whether its boards (``evidence``) were blank or held
    digits no game could follow.

    Also ``closed_out``: the turns of a player on the bar against a closed
    board, which have no board on the note and are written as dances of
    unknown dice (information, not a doubt: nothing on the note could say more).
    """
    from digitise.notation.mat import with_closed_out_dances

    if not result.report["summary"]["turns"]:
        # Nothing written, or writing that no game from the start can follow.
        written = sum(1 for ev in evidence if any(ev.top(cell) for cell in ev.listed))
        notes = [*notes, NO_GAME.format(boards=written) if written else NO_TURNS]
    else:
        ending = _record_end(result.match)
        notes = [*notes, ending] if ending else notes
    result.report["notes"] = notes
    filled = with_closed_out_dances(result.match, fill_gaps=True)
    result.report["closed_out"] = sum(len(a.actions) - len(b.actions)
                                      for a, b in zip(filled.games, result.match.games, strict=True))
    return result


#: The cost of setting a whole page aside as belonging to another match.
STRANGER_PAGE = -25.0
STRANGER_REASON = "the page does not continue this match (a page from another match?): left out"
#: Pages tried as strangers, at most, per match.
STRANGER_TRIES = 2
#: Boards after a suspect page that weigh whether it belongs to the match: enough that a search
#: which explains a stranger page passably (every legal play of the leaders' boards) still pays
#: for the wrong position it leaves behind.
STRANGER_WINDOW = 24


def _leave_out_strangers(final: Node, evidence: list[BoardEvidence], sheets: list[int], forced: dict[int, Forced],
                         length: int, prior: PlayPrior, cache: Cache,
                         protected: frozenset[int] = frozenset()) -> tuple[Node, list[int]]:
    """The best explanation and the boards it reads, once pages of another match are left out.

    A page of another match slipped into the pile leaves every later board of
    its game explained from the wrong position: the sheet where the trouble
    starts is tried without, at most :data:`STRANGER_TRIES` sheets. The
    ``protected`` sheets (numbered in step with the pile, see
    :func:`_page_sequence`) are this match's own and never tried: the page
    after a missing one reads as badly as a stranger.
    """
    kept = list(range(len(evidence)))
    tried: set[int] = set()
    while len(tried) < STRANGER_TRIES:
        path = best_path(final)
        suspect = _stranger_sheet([sheets[i] for i in kept], path, tried | protected)
        if suspect is None:
            break
        tried.add(suspect)
        others = [i for i in kept if sheets[i] != suspect or i in forced]
        if len(others) == len(kept) or not others:
            continue
        # As costly as setting each written board of the page aside one by one (FOREIGN), and more.
        written = sum(1 for i in kept if sheets[i] == suspect and evidence[i].listed)
        cost = STRANGER_PAGE + FOREIGN * written
        # Weighed first on a stretch (the page and two after it, from the state before it), which
        # costs a fraction of searching the match again: most suspects are real pages badly read.
        if not _better_without(kept, others, path, evidence, forced, length, prior, cost, cache):
            continue
        trial = _search([evidence[i] for i in others], length, _reindexed(forced, others), prior, cache=cache)
        if trial.score + cost > final.score:
            final, kept = trial, others
    return final, kept


def _reindexed(forced: dict[int, Forced], boards: list[int]) -> dict[int, Forced]:
    """``forced`` for the list ``boards`` (indices into the full list) as a list of its own."""
    index = {old: new for new, old in enumerate(boards)}
    return {index[i]: spec for i, spec in forced.items() if i in index}


def _better_without(kept: list[int], others: list[int], path: list[Node], evidence: list[BoardEvidence],
                    forced: dict[int, Forced], length: int, prior: PlayPrior, cost: float, cache: Cache) -> bool:
    """Whether the boards around a suspect page read better without it (by more than ``cost``).

    ``kept`` are the boards now read, ``others`` the same without the page;
    ``path`` is the current best explanation of ``kept``.
    """
    remaining = set(others)
    gone = [j for j, i in enumerate(kept) if i not in remaining]
    first, last = gone[0], gone[-1]
    end = min(last + 1 + STRANGER_WINDOW, len(kept))
    stretch = kept[first:end]
    start = path[first - 1].state if first > 0 else None
    # The current explanation's share of the stretch: no better than the best one, which is
    # all the comparison needs (the full search without the page has the last word).
    with_page = path[end - 1].score - (path[first - 1].score if first > 0 else 0.0)
    rest = [i for i in stretch if i in remaining]
    if not rest:
        return with_page < cost
    without = _search([evidence[i] for i in rest], length, _reindexed(forced, rest), prior, start, cache,
                      bound=with_page - cost)
    return without.score + cost > with_page


def _stranger_sheet(sheets: list[int], path: list[Node], tried: set[int]) -> int | None:
    """The first sheet where the best explanation fits two or more boards badly (not yet tried), if any."""
    troubles: dict[int, int] = {}
    for node in path:
        if node.board is not None and troubled(node):
            sheet = sheets[node.board]
            troubles[sheet] = troubles.get(sheet, 0) + 1
            if troubles[sheet] >= 2 and sheet not in tried:
                return sheet
    return None


#: The beam's margin (``search.MARGIN`` is 6) for searching again readings whose last game does not end.
UNFINISHED_MARGIN = 9.0


def _search(evidence: list[BoardEvidence], length: int, forced: dict[int, Forced], prior: PlayPrior,
            start: State | None = None, cache: Cache | None = None, bound: float = -math.inf) -> Node:
    """The best explanation: the plain search, and where it explains boards badly, the repairing one.

    The repairing search (see :meth:`Searcher.run`) finds plays the marks do
    not spell out, but its wider boards can also crowd the truth out of the
    beam on a badly read match; whichever explains the whole match better is
    kept. With a ``bound``, a search whose every explanation falls below it
    stops early and scores ``-inf``.
    """
    cache = cache if cache is not None else Cache()
    _, final = Searcher(evidence, length, forced, repair=False, prior=prior, start=start, cache=cache,
                        bound=bound).run()
    # A plain search that fell below the bound may still be beaten by the repairing one.
    if final.score == -math.inf or any(node.board is not None and troubled(node) for node in best_path(final)):
        _, again = Searcher(evidence, length, forced, repair=True, prior=prior, start=start, cache=cache,
                            bound=bound).run()
        if again.score > final.score:
            final = again
    if GAME_DOES_NOT_END in final.tags and final.score > -math.inf and start is None:
        # Readings that stop in the middle of a game: pages missing at the end, or an early misread whose
        # true line fell out of the beam before the last boards told the two apart. Not for a stretch of a
        # match (``start``: a stranger page weighed), which ends mid-game by design.
        _, wider = Searcher(evidence, length, forced, repair=True, prior=prior, start=start, cache=cache,
                            bound=bound, margin=UNFINISHED_MARGIN).run()
        if wider.score > final.score:
            final = wider
    return final


def _header(readings: Readings, roster: Sequence[str] = ()) -> dict[str, Any]:
    """Match length and player names, when the page headers give them (with the length, how surely:
    ``length_support``, its summed confidence, ``length_share``, its share of all lengths read, and
    ``lengths``, every length read, most voted first).

    Every page's header votes, weighted by the reader's confidence: one
    misread header (a "3" read as "75") must not outvote the other pages.
    Lengths above ``MAX_MATCH_LENGTH`` are not matches GNU Backgammon can hold and are ignored.
    """
    votes: dict[str, dict[Any, float]] = {"length": {}, "bottom": {}, "top": {}}
    alike = False

    def field(header: Any, *keys: str) -> tuple[Any, float]:
        for key in keys:
            if key in header:
                value = header[key]
                if isinstance(value, dict):
                    return value.get("value"), _weight(value.get("confidence", 1.0))
                return value, 1.0
        return None, 0.0

    def vote_players(bottom: str, top: str, conf_bottom: float, conf_top: float) -> None:
        nonlocal alike
        pair = (writable_name(bottom), writable_name(top))
        if roster:
            pair = (_entrant(pair[0], roster), _entrant(pair[1], roster))
        # One name read twice is a misread header, not a match: it names neither side.
        if all(pair) and pair[0] == pair[1]:
            alike = True
            return
        # Each side votes on its own: a name misread on one page is outvoted by the other pages.
        for side, name, conf in zip(("bottom", "top"), pair, (conf_bottom, conf_top), strict=True):
            if name:
                votes[side][name] = votes[side].get(name, 0.0) + conf

    for page in readings.pages:
        raw, conf = field(page.header, "match_length", "length")
        try:
            length = int(str(raw).strip())
        except ValueError:
            length = -1
        if 0 <= length <= MAX_MATCH_LENGTH:
            votes["length"][length] = votes["length"].get(length, 0.0) + conf
        raw, conf = field(page.header, "players")
        if isinstance(raw, (list, tuple)) and len(raw) == 2 and all(raw):
            vote_players(str(raw[0]), str(raw[1]), conf, conf)
        bottom, conf_b = field(page.header, "player_bottom", "bottom")
        top, conf_t = field(page.header, "player_top", "top")
        if isinstance(bottom, str) or isinstance(top, str):
            vote_players(bottom if isinstance(bottom, str) else "", top if isinstance(top, str) else "", conf_b, conf_t)
    found: dict[str, Any] = {}
    ranked: dict[str, list[Any]] = {}
    for key, tally in votes.items():
        # Highest total confidence first; ties broken by value so the choice is deterministic. A vote
        # of no weight (a confidence that is no number) is no reading.
        ranked[key] = [value for value, weight in sorted(tally.items(), key=lambda kv: (-kv[1], str(kv[0])))
                       if weight > 0.0]
        if ranked[key]:
            found[key] = ranked[key][0]
    if "length" in found:
        support = votes["length"][found["length"]]
        found["length_support"] = round(support, 4)
        found["length_share"] = round(support / sum(votes["length"].values()), 4)
        found["lengths"] = ranked["length"]
    names = (found.get("bottom", DEFAULT_PLAYERS[0]), found.get("top", DEFAULT_PLAYERS[1]))
    if names[0] == names[1]:
        alike = alike or ("bottom" in found and "top" in found)
    elif "bottom" in found and "top" in found:
        found["players"] = names
    elif "bottom" in found or "top" in found:
        # Only one side's name was read: it is kept, a placeholder stands for the other.
        found["one_player"] = names
        found["missing"] = 1 if "bottom" in found else 0
    found["alike"] = alike
    return found


def _entrant(name: str, roster: Sequence[str]) -> str:
    """``name`` as the roster's entrant it spells, or as read when it spells none."""
    return (roster_name(name, roster) or name) if name else name


def _weight(confidence: object) -> float:
    """A header field's confidence as a vote's weight: what is not a number in [0, 1] weighs nothing."""
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)):
        return 0.0
    value = float(confidence)
    return value if 0.0 <= value <= 1.0 else 0.0


_MOVE = re.compile(r"^(?:(bottom|top)\s+)?([1-6])([1-6])\s*:\s*(.*)$", re.IGNORECASE)
_WINS = re.compile(r"^(bottom|top)\s+wins\s+(\d+)$", re.IGNORECASE)
_RESIGN = re.compile(r"^resign\s+(\d+)$", re.IGNORECASE)


def parse_correction(text: str, where: str = "") -> Forced:
    """Read one correction string (format in the module docstring); raise ReadingsError if malformed."""
    player: Side | None = None
    roll: Roll | None = None
    moves: tuple[tuple[int, int], ...] | None = None
    hits: frozenset[int] | None = None
    double = resign = blank = False
    response: str | None = None
    winner: Side | None = None
    points: int | None = None

    def bad(reason: str) -> ReadingsError:
        return ReadingsError(f"correction {short(str(text))!r}: {reason}", None, where or None)

    parts = [p.strip() for p in str(text).split(";") if p.strip()]
    if not parts:
        raise bad("empty")
    for part in parts:
        low = part.lower()
        if low == "double":
            double = True
        elif low in ("take", "drop"):
            if response is not None:
                raise bad(f"one board holds one answer to a double: {response!r} and {low!r}")
            response = low
        elif low == "blank":
            blank = True
        elif m := _WINS.match(part):
            winner, points, resign = Side(m.group(1).lower()), int(m.group(2)), True
        elif m := _RESIGN.match(part):
            points, resign = int(m.group(1)), True
        elif m := _MOVE.match(part):
            if roll is not None:
                # One board records one turn: a second move would silently start a game of its own.
                raise bad(f"one board holds one move, {part!r} is a second")
            if m.group(1):
                player = Side(m.group(1).lower())
            roll = Roll(int(m.group(2)), int(m.group(3)))
            moves, hits = _parse_moves(m.group(4), bad)
        else:
            raise bad(f"cannot read {part!r}")
    if points is not None and points < 1:
        raise bad("points must be at least 1")
    return Forced(player, roll, moves, double, response, winner, points, resign, blank, hits)


def _parse_moves(text: str, bad: Any) -> tuple[tuple[tuple[int, int], ...], frozenset[int] | None]:
    """A correction's moves, and its hit marks (None when it writes no ``*``: the marks decide)."""
    text = text.strip()
    if not text or text.lower() in ("cannot move", "can't move"):
        return (), None
    try:
        moves, hits = parse_steps(text)
    except ValueError as exc:
        raise bad(str(exc)) from None
    return tuple(moves), (frozenset(hits) if "*" in text else None)


def parse_corrections(value: Mapping[str, Any]) -> dict[tuple[int, int], str]:
    """The JSON form ``{"page:board": "correction", ...}`` as :func:`solve` takes it."""
    out: dict[tuple[int, int], str] = {}
    for key, text in value.items():
        m = re.fullmatch(r"\s*(\d+)\s*:\s*(\d+)\s*", str(key))
        if not m or not isinstance(text, str):
            raise ReadingsError(f"a correction is \"page:board\": \"text\", got {key!r}: {text!r}")
        parse_correction(text, where=str(key))
        out[(int(m.group(1)), int(m.group(2)))] = text
    return out


# -- the record and the report ---------------------------------------------------

_KIND = {"move": ActionKind.MOVE, "double": ActionKind.DOUBLE, "take": ActionKind.TAKE,
         "drop": ActionKind.DROP, "resign": ActionKind.RESIGN}


def _summary_text(summary: tuple[object, ...]) -> dict[str, Any]:
    """A candidate decision as the report shows it."""
    out: dict[str, Any] = {"action": "blank", "move": "", "dice": None}
    kinds = [s for s in summary if isinstance(s, str)]
    if "move" in kinds:
        i = summary.index("move")
        roll = summary[i + 2]
        out.update(action="move", player=_side_name(summary[i + 1]),
                   dice=[roll.high, roll.low] if isinstance(roll, Roll) else None,
                   move=str(summary[i + 3]) if summary[i + 3] is not None else "")
    elif "double" in kinds:
        i = summary.index("double")
        out.update(action="double", player=_side_name(summary[i + 1]))
        # Dropped on its own board, or taken and at once conceded: else the next board answers it.
        answered = [k for k in summary[i + 2:] if k in ("take", "drop")]
        if answered:
            out["answer"] = answered[0]
    elif "resign" in kinds:
        out.update(action="resign")
    elif "letters" in kinds:
        out.update(action="letters")
    if "resign" in kinds:
        i = len(summary) - 1 - summary[::-1].index("resign")
        out["result"] = {"winner": _side_name(summary[i + 1]), "points": summary[i + 2]}
    if kinds and kinds[0] in ("take", "drop") and out["action"] != "double":
        out["answer"] = kinds[0]
    return out


def _side_name(side: object) -> str | None:
    return side.value if isinstance(side, Side) else None


def _build(path: list[Node], places: list[tuple[int, int]], evidence: list[BoardEvidence], length: int,
           players: tuple[str, str], review_below: float,
           gaps: _GapMarks | None = None) -> SolveResult:
    games: list[GameRecord] = []
    report_games: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    actions: list[Action] = []
    turns: list[dict[str, Any]] = []
    state = MatchState(length)
    last_double_place: tuple[int, int] | None = None
    # The first turn after a gap in the page numbers: nothing on the boards may show the pages
    # missing, so it is flagged, and the rest of its game rests on it.
    after_gap = gaps.flagged(path, places) if gaps is not None else {}
    by_board = {node.board: node for node in path if node.board is not None}
    costly = _costly(path, evidence, review_below, by_board)
    inherited = _inherited_doubt(path, places, by_board, review_below, frozenset(after_gap), frozenset(costly))
    for node in path:
        place = places[node.board] if node.board is not None else (last_place(places, path, node))
        exact = confidence(node) if node.board is not None else 1.0
        conf = round(exact, 4)
        # The bar is on the exact confidence, not its rounding: the rest of the game follows this board.
        doubtful = exact < review_below
        reasons = list(node.tags)
        ev = evidence[node.board] if node.board is not None else None
        candidates = [
            {**_summary_text(summary), "probability": round(p, 4), "reasons": list(why)}
            for summary, p, why in weighed_alternatives(node)
        ] if node.board is not None else []
        board_actions = [e for e in node.events if e.kind in _KIND]
        if node.board is not None and not board_actions:
            if ev is not None and node.fit < POOR_FIT and not reasons:
                # Set aside (a names board, a blank) though the reader saw marks there: a short or
                # broken record can read better so than as turns of a game that never ends.
                if _after_the_end(node):
                    # Not a names board: the match was over, so no turn could be read there at all.
                    reasons.append(AFTER_THE_END)
                else:
                    reasons.append("the marks fit no turn: set aside" if any(e.kind == "blank" for e in node.events)
                                   else "the marks fit no turn: read as a names board")
            if reasons:
                skipped.append({"page": place[0], "board": place[1], "flagged": True, "reasons": reasons})
            continue
        if ev is not None and doubtful:
            reasons.append(LOW_CONFIDENCE)
        elif ev is not None and id(node) in costly:
            reasons.append(f"{costly[id(node)]} later turns rest on this board, and it is not sure enough for that")
        if id(node) in after_gap:
            reasons.append(after_gap[id(node)])
        if ev is not None and node.fit < POOR_FIT and "illegal move recorded" not in reasons:
            main = [e.kind for e in node.events if e.kind in ("move", "double")]
            reasons.append("no legal play explains the marks" if main == ["move"] or not main
                           else "the marks do not fit a double")
        elif ev is not None and misread_doubt(node) and "illegal move recorded" not in reasons:
            reasons.append("the marks fit only if a cell was misread")
        # An unreadable centre says why a doubtful board is in doubt; where the rest of the board and
        # the rules leave its dice no rival (confidence above the bar) it is no reason to review it.
        if ev is not None and ev.centre_unreadable and doubtful:
            reasons.append("unreadable centre")
        follows = inherited.get(id(node))
        for event in node.events:
            if event.kind == "end":
                assert event.player is not None and event.value is not None
                games.append(GameRecord(len(games) + 1, state.score, tuple(actions), event.player, event.value))
                report_games.append({"number": len(games), "turns": turns, "winner": event.player.value,
                                     "points": event.value})
                state = state.after_game(event.player, event.value)
                actions, turns = [], []
                continue
            if event.kind not in _KIND:
                continue
            assert event.player is not None
            action = _action(event)
            actions.append(action)
            where = place
            if event.kind in ("take", "drop") and last_double_place is not None:
                where = last_double_place
            if event.kind == "double":
                last_double_place = place
            turns.append(_turn(event, action, where, conf, reasons, candidates, follows))
    if actions:
        games.append(GameRecord(len(games) + 1, state.score, tuple(actions), None, None))
        if turns:
            turns[-1]["flagged"] = True
            if "game does not end" not in turns[-1]["reasons"]:
                turns[-1]["reasons"].append("game does not end")
        report_games.append({"number": len(games), "turns": turns, "winner": None, "points": None})
    match = MatchRecord(length, players, tuple(games))
    report = {"games": report_games, "skipped": skipped,
              "summary": _summary(report_games, skipped, len(evidence))}
    return SolveResult(match, report)


def _apart(node: Node, rival: Node, by_board: dict[int, Node]) -> tuple[list[Node], bool]:
    """The later boards of the path that read otherwise along ``rival``'s best line, and whether it meets
    the path again (leaves the same position as ``node``'s line); it does not when it was dropped first."""
    apart: list[Node] = []
    for alt in best_line(rival):
        mine = by_board.get(alt.board) if alt.board is not None else None
        if mine is None or _after(mine) == _after(alt):
            return apart, True
        if mine is not node:
            apart.append(mine)
    return apart, False


def _resting_turns(node: Node, by_board: dict[int, Node], rest: int) -> int:
    """How many later boards of ``node``'s game would read otherwise had its best rival been taken.

    The rival's own best line is followed board by board until it leaves
    the same position as the path again (:func:`_apart`); where it was
    dropped from the beam before that, the rest of the game counts:
    ``rest``, the boards of the game after this one.
    """
    parent = node.parent
    if parent is None:
        return 0
    others = [(value, summary) for summary, value in decisions(node).items() if summary != node.summary]
    if not others:
        return 0
    rival = leads_to(parent, max(others, key=lambda pair: pair[0])[1])
    if rival is None:
        return rest
    apart, met = _apart(node, rival, by_board)
    return len(apart) if met else rest


#: A margin (nats) that takes in every rival of a board that can be scored at all.
ALL_RIVALS = 50.0
#: How far (nats) below a flagged board's decision its rivals still count for the turns that follow it:
#: a thousandth as likely, wider than the review bar's margin, as the truth may be a third explanation.
FOLLOW_WITHIN = math.log(1000.0)
#: Only a board with a cell the reader was less sure of than this is weighed by what rests on it.
RESTING_DOUBT = 0.99


def _costly(path: list[Node], evidence: list[BoardEvidence], review_below: float,
            by_board: dict[int, Node]) -> dict[int, int]:
    """Boards sure enough on their own but with too much resting on them: node id -> later boards at stake.

    A board at 0.994 whose rival leaves a checker elsewhere for the rest of
    the game puts every later turn of it at stake: in a fresh benchmark
    match (seed 9228) one such board let 35 wrong turns through unflagged.
    So a board is also flagged when the turns expected wrong because of it,
    its doubt times itself and the later boards that would read otherwise
    (:func:`_resting_turns`), reach :data:`REVIEW_EXPECTED_WRONG`. Only
    where the reader was unsure of some cell (:data:`RESTING_DOUBT`): a board
    read surely in every cell keeps rivals only through the slips the solver
    allows for (a digit seen in the square beside its own), and a clear page
    must not be flagged for those.
    """
    if REVIEW_EXPECTED_WRONG <= 0.0:
        return {}
    # Boards of the same game after each one, counted from the end.
    rest = [0] * len(path)
    after: dict[int, int] = {}
    for index in range(len(path) - 1, -1, -1):
        node = path[index]
        game = node.parent.state.game if node.parent is not None else -1
        rest[index] = after.get(game, 0)
        if node.board is not None and node.parent is not None:
            after[game] = rest[index] + 1
    out: dict[int, int] = {}
    for index, node in enumerate(path):
        if node.board is None or not _read_unsurely(evidence[node.board]):
            continue
        sure = confidence(node)
        # Below the review bar it is flagged anyway; no more than the whole path can rest on it.
        if sure < review_below or (1.0 - sure) * len(path) < REVIEW_EXPECTED_WRONG:
            continue
        doubt = 1.0 - sure
        resting = _resting_turns(node, by_board, rest[index])
        if doubt * (1 + resting) >= REVIEW_EXPECTED_WRONG:
            out[id(node)] = resting
    return out


def _read_unsurely(evidence: BoardEvidence) -> bool:
    """Whether the reader was less sure than :data:`RESTING_DOUBT` of some cell of the board."""
    return any(max((c.probability for c in candidates), default=1.0) < RESTING_DOUBT
               for candidates in evidence.reading.cells.values())


def _inherited_doubt(path: list[Node], places: list[tuple[int, int]], by_board: dict[int, Node],
                     review_below: float, doubted: frozenset[int] = frozenset(),
                     wide: frozenset[int] = frozenset()) -> dict[int, tuple[int, int]]:
    """Turns whose position rests on an earlier doubtful board, with that board's place.

    When a doubtful board's runner-up explanation leads to a different
    position, every later turn is only as right as that choice until the two
    explanations reach the same position again. So with every rival at least
    a thousandth as likely (:data:`FOLLOW_WITHIN`): the truth of a flagged
    board is not always its runner-up. Such turns are not flagged
    themselves (correcting the doubtful board re-decodes them) but say so.
    """
    rb = min(max(review_below, 0.5), 0.9999)
    margin = math.log(rb / (1.0 - rb))
    out: dict[int, tuple[int, int]] = {}
    to_end = False
    for at, node in enumerate(path):
        if node.board is None:
            continue
        # A board explained only by a repair (a missing board, an unrecorded game end, an
        # illegal move, marks no legal play fits) or against the reader (a loose fit the solver is
        # not sure of: misread_doubt) leaves the rest of its game in doubt.
        acts = any(e.kind in ("move", "double") for e in node.events)
        unknown = acts and (bool(node.tags) or misread_doubt(node) or id(node) in doubted)
        # A board flagged for what rests on it (wide) is followed along all its rivals, however far;
        # one flagged for its doubt along every rival FOLLOW_WITHIN of it, not only those within the bar.
        within = ALL_RIVALS if id(node) in wide else margin
        if within < FOLLOW_WITHIN and confidence(node) < review_below:
            within = FOLLOW_WITHIN
        for rival in rivals(node, within):
            if rival is None:
                unknown = True  # dropped from the beam: where it leads is not known
                continue
            apart, met = _apart(node, rival, by_board)
            for mine in apart:
                out.setdefault(id(mine), places[node.board])
            if not met:
                unknown = True  # the runner-up was dropped before the two met again
        # A game end the marks do not show moves every later game's boards, scores and
        # Crawford game: the rest of the match rests on it.
        # So does a missing page: the game it cut has an unknown end, and the match's score after it.
        restart = any(tag.startswith("the game's end was not recorded") for tag in node.tags) or id(node) in doubted
        # Once an earlier board's doubt reached the path's end, every later turn already names its board.
        if (unknown or restart) and not to_end:
            # The rest of this game (of the match, after a guessed game end) rests on the doubtful board.
            game = node.parent.state.game if node.parent is not None else node.state.game
            for later in itertools.islice(path, at + 1, None):
                # The final decision (board None) too: a double the readings leave unanswered is
                # written dropped, and that drop rests on the doubt as much as any turn.
                if later.parent is None:
                    break
                if later.parent.state.game != game and not restart:
                    break
                out.setdefault(id(later), places[node.board])
            else:
                to_end = True
    return out


def _after(node: Node) -> tuple[object, ...]:
    """What a decision leaves behind, for telling whether two explanations have met again.

    A game's last move leads to the next game's opening position for every
    explanation, so it is compared by the position the move itself reached.
    """
    for event in reversed(node.events):
        if event.kind == "move" and event.before is not None:
            after = event.play.result if event.play is not None else event.before
            return (after, event.player)
    return (node.state.pos, node.state.on_roll)


def last_place(places: list[tuple[int, int]], path: list[Node], node: Node) -> tuple[int, int]:
    """Where the board before ``node`` (a board-less final decision) stands."""
    for earlier in reversed(path[: path.index(node)]):
        if earlier.board is not None:
            return places[earlier.board]
    return (1, 1)


def _action(event: Event) -> Action:
    assert event.player is not None
    kind = _KIND[event.kind]
    if kind is ActionKind.MOVE:
        play = event.play if event.play is not None and event.play.steps else None
        return Action(event.player, kind, roll=event.roll, play=play)
    if kind is ActionKind.DOUBLE:
        return Action(event.player, kind, cube=event.value)
    if kind is ActionKind.RESIGN:
        return Action(event.player, kind, points=event.value)
    return Action(event.player, kind)


def _turn(event: Event, action: Action, place: tuple[int, int], conf: float, reasons: list[str],
          candidates: list[dict[str, Any]], follows: tuple[int, int] | None = None) -> dict[str, Any]:
    before: Position | None = event.before
    after = before
    if event.kind == "move" and event.play is not None and event.play.steps:
        after = event.play.result
    turn_reasons = list(dict.fromkeys(reasons))
    assert event.player is not None
    return {
        "page": place[0],
        "board": place[1],
        "player": event.player.value,
        "action": event.kind,
        "dice": [event.roll.high, event.roll.low] if event.roll is not None else None,
        "move": str(action.play) if action.play is not None else "",
        "points": event.value if event.kind == "resign" else None,
        "confidence": conf,
        "flagged": bool(turn_reasons),
        "reasons": turn_reasons,
        "candidates": candidates if event.kind in ("move", "double") else [],
        # Not flagged itself, but only as right as that flagged earlier board: correcting it re-decodes this.
        "follows": {"page": follows[0], "board": follows[1]} if follows is not None else None,
        "position_before": before.position_id() if before is not None else None,
        "position_after": after.position_id() if after is not None else None,
    }


def _summary(games: list[dict[str, Any]], skipped: list[dict[str, Any]], boards: int) -> dict[str, Any]:
    turns = [t for g in games for t in g["turns"]]
    set_aside = sum(1 for s in skipped if s["flagged"])
    return {
        "boards": boards,
        "games": len(games),
        "turns": len(turns),
        # Turns and boards set aside alike: what the review page lists, and what the exit code follows.
        "flagged": sum(1 for t in turns if t["flagged"]) + set_aside,
        "set_aside": set_aside,
        "mean_confidence": round(sum(t["confidence"] for t in turns) / len(turns), 4) if turns else 1.0,
    }


def report_to_json(report: Mapping[str, Any]) -> str:
    """The report as deterministic JSON text."""
    return json.dumps(report, indent=1, ensure_ascii=False) + "\n"


__all__ = ["REVIEW_BELOW", "SolveResult", "parse_correction", "parse_corrections",
           "report_to_json", "solve"]
