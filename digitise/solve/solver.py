"""The solve entry point: readings of a note's boards to a complete, legal, scored match."""

from __future__ import annotations

import gc
from collections.abc import Mapping, Sequence
from dataclasses import replace

from digitise.game.record import MatchRecord
from digitise.notation.mat import with_closed_out_dances
from digitise.notation.readings import Readings
from digitise.solve.correction_text import parse_correction
from digitise.solve.evidence import BoardEvidence
from digitise.solve.explain import best_explanation
from digitise.solve.header import DEFAULT_PLAYERS, read_header
from digitise.solve.length import (
    LENGTH_AGREED,
    LENGTH_EVIDENCE,
    LENGTH_SURE,
    LENGTHS_WEIGHED,
    boards_after_the_end,
    length_played,
)
from digitise.solve.nodes import Cache, Forced
from digitise.solve.page_order import (
    GapMarks,
    extra_pages,
    page_sequence,
    pile_page_name,
)
from digitise.solve.paths import best_path
from digitise.solve.prior import PlayPrior, default_prior
from digitise.solve.reasons import Flag, Reason
from digitise.solve.report import build_result, skipped_board, summarise
from digitise.solve.report_types import Report
from digitise.solve.result import SolveResult
from digitise.solve.strangers import leave_out_strangers

#: Turns less sure than this are flagged for review.
REVIEW_BELOW = 0.98


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
    header = read_header(readings, roster)
    notes: list[Flag] = []
    _, protected, gap_notes, pile_marks = page_sequence(readings)
    notes += gap_notes
    #: Other lengths to weigh against the games recorded: only what the headers read, and only when unsure.
    others: list[int] = []
    unsure: Flag | None = None
    given = length is not None
    if length is None:
        length = header.get("length", 0)
        if "length" not in header:
            notes.append(Reason.LENGTH_UNKNOWN.flag())
        elif header["length_support"] < LENGTH_SURE or header["length_share"] < LENGTH_AGREED:
            unsure = Reason.LENGTH_UNSURE.flag(length=length, support=header["length_support"],
                                               share=header["length_share"])
            notes.append(unsure)
            others = header["lengths"][1:LENGTHS_WEIGHED]
    if players is None:
        players = header.get("players", DEFAULT_PLAYERS)
        if "one_player" in header:
            players = header["one_player"]
            missing = header["missing"]
            notes.append(Reason.PLAYER_UNKNOWN.flag(side=("bottom", "top")[missing], name=players[missing]))
        elif "players" not in header:
            notes.append(Reason.PLAYERS_ALIKE.flag() if header.get("alike") else Reason.PLAYERS_UNKNOWN.flag())
        if roster:
            notes += [Reason.NOT_ON_ROSTER.flag(name=name) for name in players
                      if name not in roster and name not in DEFAULT_PLAYERS]
    forced: dict[int, Forced] = {}
    for key, text in (corrections or {}).items():
        spec = parse_correction(text, where=f"{key[0]}:{key[1]}")
        for i, place in enumerate(places):
            if place == tuple(key):
                forced[i] = spec
    if not evidence:
        match = MatchRecord(length, players, ())
        return _noted(SolveResult(match, Report((), (), summarise([], [], 0))), notes)
    prior = prior if prior is not None else default_prior()
    cache = Cache()
    final = best_explanation(evidence, length, forced, prior, cache=cache)
    voted = length
    for other in others:
        # A length misread ends the match early (every later board set aside) or makes a game the
        # Crawford game: the games recorded say which length they were played to. Only a better
        # explanation of the boards overrules the headers' vote.
        trial = best_explanation(evidence, other, forced, prior, cache=cache)
        if trial.score > final.score + LENGTH_EVIDENCE:
            final, length = trial, other
    if length != voted:
        assert unsure is not None
        notes[notes.index(unsure)] = Reason.LENGTH_FROM_GAMES.flag(voted=voted, length=length)
    overrun = boards_after_the_end(best_path(final))
    if overrun and length > 0:
        fits = length_played(evidence, forced, prior, cache, final.score, length, header.get("lengths", []))
        if fits is not None:
            # Not written as that length: the boards after the end may as well be another match's pages put
            # after this one's, which a longer match would take in silently. They stay set aside and flagged.
            notes.append(Reason.LENGTH_OVERRUN.flag(length=length, boards=overrun, fits=fits,
                                                    source=" as given" if given else " as read from the page headers"))
    final, kept = leave_out_strangers(final, evidence, sheets, forced, length, prior, cache, protected)
    result = build_result(best_path(final), [places[i] for i in kept], [evidence[i] for i in kept], length, players,
                          review_below, GapMarks(pile_marks, [sheets[i] for i in kept],
                                            frozenset((int(key[0]), int(key[1])) for key in (corrections or {}))))
    report = result.solved
    if len(kept) < len(evidence):
        left_out = set(range(len(evidence))) - set(kept)
        skipped = sorted(
            [*report.skipped,
             *(skipped_board(places[i], [Reason.PAGE_LEFT_OUT.flag()]) for i in sorted(left_out) if evidence[i].listed)],
            key=lambda s: (s.page, s.board))
        report = replace(report, skipped=tuple(skipped), summary=summarise(report.games, skipped, len(evidence)))
        extra = extra_pages(readings)
        for sheet in sorted({sheets[i] for i in left_out}):
            where = pile_page_name(readings, sheet)
            if sheet in extra:
                # Its page numbers' note said its first turn is flagged: it has no turn now.
                before, after = extra[sheet]
                notes.remove(Reason.PAGES_EXTRA.flag(where=where, before=before, after=after))
            notes.append(Reason.PAGES_LEFT_OUT.flag(where=where))
    return _noted(SolveResult(result.match, replace(report, prior=prior.described)), notes, evidence)


NO_TURNS = Reason.NO_TURNS.text
NO_GAME = Reason.NO_GAME.text


def _record_end(match: MatchRecord) -> Flag | None:
    """A note when ``match`` stops before it is over: its last game not won, or nobody at the length."""
    if not match.games:
        return None
    last = match.games[-1]
    score = last.score
    if last.winner is None:
        return Reason.GAME_UNFINISHED.flag(game=last.number, score=_score_text(match.players, score.bottom, score.top))
    if last.points is not None:
        score = score.add(last.winner, last.points)
    if match.length > 0 and max(score.bottom, score.top) < match.length:
        return Reason.MATCH_UNFINISHED.flag(score=_score_text(match.players, score.bottom, score.top), length=match.length)
    return None


def _score_text(players: tuple[str, str], bottom: int, top: int) -> str:
    """``Alice 3, Bruno 2``: a score as the note says it."""
    return f"{players[0]} {bottom}, {players[1]} {top}"


def _noted(result: SolveResult, notes: list[Flag], evidence: Sequence[BoardEvidence] = ()) -> SolveResult:
    """``result`` with the match-wide doubts (``notes``, and a match with no turn) in its report.

    A match with no turn found says whether its boards (``evidence``) were blank or held
    digits no game could follow.

    Also ``closed_out``: the turns of a player on the bar against a closed
    board, which have no board on the note and are written as dances of
    unknown dice (information, not a doubt: nothing on the note could say more).
    """
    if not result.solved.summary.turns:
        # Nothing written, or writing that no game from the start can follow.
        written = sum(1 for ev in evidence if any(ev.top(cell) for cell in ev.listed))
        notes = [*notes, Reason.NO_GAME.flag(boards=written) if written else Reason.NO_TURNS.flag()]
    else:
        ending = _record_end(result.match)
        notes = [*notes, ending] if ending else notes
    filled = with_closed_out_dances(result.match, fill_gaps=True)
    closed_out = sum(len(a.actions) - len(b.actions) for a, b in zip(filled.games, result.match.games, strict=True))
    return SolveResult(result.match, replace(result.solved, notes=tuple(notes), closed_out=closed_out))
