"""Learning the recorder's hand from the match itself: solve, learn from the sure turns, read again, solve again.

The step between the first solve and writing the match (``scan`` and
``batch`` run it unless told ``--no-adapt``):

1. the boards of turns the solver is sure of (not flagged, resting on no
   flagged board, confidence at least :data:`LEARN_SURE`) say what is written
   in each of their point and off squares (:func:`written_on_sure_boards`);
2. the point reader's last layers are fine-tuned on those squares
   (:func:`digitise.vision.adapt.learn_hand`);
3. the squares of every other board are read again with them, and the match
   is solved again; a second round learns from the turns now sure, and
   stops early when the readings no longer change;
4. a round whose solve decides any of the sure turns it learned from
   otherwise keeps the first reading of the games those turns are in and
   is solved again; it is not kept when that solve still decides one of
   them otherwise (what it learned contradicts its teacher), and the
   adapted solve is kept only when it flags no more turns than the first (a
   hand that is not one writer's): else the first is, and the report says so.

Boards the first solve was sure of keep their readings, so a match read
surely at once comes out unchanged (it is not adapted at all).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from digitise.notation.readings import BoardReading, CellReading, PageReading, Readings
from digitise.solve import SolveResult
from digitise.solve.report_types import Report, Turn
from digitise.solve.reviewed import corrected_cells, turns_by_board
from digitise.vision.adapt import MIN_SAMPLES, AdaptedHand, HandSample, learn_hand
from digitise.vision.cellnet import LastLayer
from digitise.vision.read import HandCell

#: A turn this sure (and neither flagged nor resting on a flagged board) teaches the writer's hand.
LEARN_SURE = 0.99
#: ... and one resting on an earlier flagged board this sure (above 1: never).
RESTING_SURE = 0.999
#: Rounds of learning and solving again at most.
ROUNDS = 2
#: Keep no round whose solve decides a turn it learned from otherwise.
KEEP_SURE = True
#: A round that decides a sure turn otherwise keeps the first reading of that turn's games only, not of the match.
IN_PART = True
#: Stop after a round whose solve decided every turn as the one before it did.
SETTLED = True
#: A square read empty at least this surely is left out of the readings, as the reader leaves it out.
EMPTY_SURE = 0.999

#: Why a match was not adapted (the report says it).
SURE_AT_ONCE = "every turn was sure at the first reading"
NO_FEATURES = "the reader's models keep no features to adapt"
TURNED_OFF = "turned off (--no-adapt)"
CONTRADICTED = ("read with the hand learned, {turns} of the sure turns it learned from would be decided otherwise: "
                "the first reading is kept")
FLAGGED_MORE = ("read with the hand learned, {after} turns would be flagged against {before}: the first reading is "
                "kept")
TOO_FEW = "too few squares of sure turns to learn the hand from ({samples}; {least} needed)"

Place = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Adaptation:
    """What learning the hand did to one match (the report's ``adaptation``)."""

    #: Squares of sure turns learned from (in the last round).
    learned_from: int = 0
    #: Boards read again with the adapted reader.
    boards_read_again: int = 0
    #: Turns whose decision differs from the first solve's (added or dropped ones included).
    turns_changed: int = 0
    #: Turns flagged before and after.
    flagged_before: int = 0
    flagged_after: int = 0
    #: Rounds that solved again.
    rounds: int = 0
    #: Why it did nothing, when it did nothing.
    skipped: str | None = None
    #: Boards read again that keep their first reading: the games around a sure turn the hand learned decided otherwise.
    boards_kept_first: int = 0

    def to_json(self) -> dict[str, object]:
        """The report's ``adaptation`` object."""
        return {"learned_from": self.learned_from, "boards_read_again": self.boards_read_again,
                "turns_changed": self.turns_changed, "flagged_before": self.flagged_before,
                "flagged_after": self.flagged_after, "rounds": self.rounds, "skipped": self.skipped,
                "boards_kept_first": self.boards_kept_first}


def written_on_sure_boards(solved: Report, bar: float | None = None,
                           resting_bar: float | None = None) -> dict[Place, dict[str, tuple[int, ...]]]:
    """For each board of the ``solved`` match whose only turn is a sure move: what the move writes in each
    square (NOTATION.md).

    Sure is by ``bar`` (:data:`LEARN_SURE`); a turn resting on an earlier flagged board must be sure by
    ``resting_bar`` (:data:`RESTING_SURE`): its position may be wrong, but the squares its own marks fill that
    surely are seldom."""
    bar = LEARN_SURE if bar is None else bar
    resting_bar = RESTING_SURE if resting_bar is None else resting_bar
    by_board: dict[Place, list[Turn | None]] = {}
    for game in solved.games:
        for turn in game.turns:
            by_board.setdefault((turn.page, turn.board), []).append(turn)
    # A board set aside is listed on its place too (as turns_by_board lists it): a turn beside one is not alone.
    for skipped in solved.skipped:
        by_board.setdefault((skipped.page, skipped.board), []).append(None)
    sure: dict[Place, dict[str, tuple[int, ...]]] = {}
    for place, turns in by_board.items():
        if len(turns) != 1:
            continue
        (only,) = turns
        if (only is None or only.action != "move" or only.flagged or only.confidence < bar
                or (only.follows is not None and only.confidence < resting_bar) or only.dice is None):
            continue
        text = f"{only.player} {only.dice[0]}{only.dice[1]}: {only.move or ''}"
        try:
            sure[place] = corrected_cells(text, only)
        except ValueError:
            continue
    return sure


def _learnable(name: str) -> bool:
    """Point and off squares: the squares the whole-cell point reader reads."""
    return name != "centre" and not name.endswith("res")


def hand_samples(readings: Readings, hand: Mapping[Place, Sequence[HandCell]],
                 sure: Mapping[Place, Mapping[str, tuple[int, ...]]]) -> list[HandSample]:
    """The squares of sure boards with what is written in them, where the reader listed that among its candidates
    (a digit written over a side into the next square, or read as nothing like it, teaches nothing safe)."""
    boards = _boards(readings)
    samples = []
    for place in sorted(sure):
        reading = boards.get(place)
        if reading is None:
            continue
        over = set(reading.touches) | {n for names in reading.touches.values() for n in names}
        for cell in hand.get(place, ()):
            if not _learnable(cell.name) or cell.name in over:
                continue
            written = tuple(sorted(sure[place].get(cell.name, ())))
            listed = reading.cells.get(cell.name)
            said = {tuple(sorted(c.digits)) for c in listed} if listed is not None else {()}
            if written in said:
                samples.append(HandSample(cell.whole, written))
    return samples


def read_again(readings: Readings, hand: Mapping[Place, Sequence[HandCell]], adapted: AdaptedHand,
               places: set[Place]) -> Readings:
    """``readings`` with the squares of the boards at ``places`` read again by ``adapted``."""
    pages = []
    for page in readings.pages:
        boards = []
        for board in page.boards:
            place = (page.page, board.index)
            cells = dict(board.cells)
            if place in places:
                for cell in hand.get(place, ()):
                    if not _learnable(cell.name):
                        continue
                    candidates = adapted.read_again(cell.whole)
                    if _surely_empty(candidates):
                        cells.pop(cell.name, None)
                    else:
                        cells[cell.name] = candidates
            boards.append(replace(board, cells=dict(sorted(cells.items()))) if cells != board.cells else board)
        pages.append(replace(page, boards=tuple(boards)))
    return replace(readings, pages=tuple(pages))


def _surely_empty(candidates: Sequence[CellReading]) -> bool:
    return len(candidates) == 1 and candidates[0].digits == () and candidates[0].probability >= EMPTY_SURE


def _boards(readings: Readings) -> dict[Place, BoardReading]:
    return {(page.page, board.index): board for page in readings.pages for board in page.boards}


def _decisions(report: Report) -> dict[tuple[int, int, int], tuple[object, ...]]:
    # A board set aside decides nothing: as its blank turn says it (no player, dice or play).
    return {on.key: (on.action, on.player, str(list(on.turn.dice) if on.turn and on.turn.dice else None),
                     on.turn.move if on.turn else "")
            for on in turns_by_board(report)}


def _decisions_at(report: Report, places: set[Place]) -> dict[tuple[int, int, int], tuple[object, ...]]:
    """The decisions of ``report``'s turns on the boards at ``places``."""
    return {key: decision for key, decision in _decisions(report).items() if key[:2] in places}


def games_around(reports: Sequence[Report], places: set[Place], boards: set[Place]) -> set[Place] | None:
    """The ``boards`` within the games (first board to last, in any of ``reports``) holding a turn at ``places``;
    None when a place is in no game (a board set aside: nothing says how far its contradiction reaches)."""
    spans = [(min(on), max(on)) for report in reports for game in report.games
             if (on := [(t.page, t.board) for t in game.turns]) and places & set(on)]
    if any(not any(low <= place <= high for low, high in spans) for place in places):
        return None
    return {board for board in boards if any(low <= board <= high for low, high in spans)}


def _differing(a: Mapping[tuple[int, int, int], object], b: Mapping[tuple[int, int, int], object]
               ) -> set[tuple[int, int, int]]:
    """The turns decided differently in ``a`` and ``b`` (a turn in one only counts too)."""
    return {key for key in set(a) | set(b) if a.get(key) != b.get(key)}


def turns_changed(before: Report, after: Report) -> int:
    """Turns whose decision differs between two reports (a turn in one only counts too)."""
    return len(_differing(_decisions(before), _decisions(after)))


def adapt_to_hand(readings: Readings, hand: Mapping[Place, Sequence[HandCell]], first: SolveResult,
                  solve_again: Callable[[Readings], SolveResult], heads: Sequence[LastLayer],
                  ) -> tuple[SolveResult, Readings, Adaptation]:
    """Learn the writer's hand from ``first``'s sure turns, read the other boards again, solve again.

    ``readings`` are the readings ``first`` was solved from (pages numbered as
    in its report); ``hand`` the squares read whole, by (page, board). Returns
    the result and readings to write, and what was done.
    """
    flagged = first.flagged
    if not heads:
        return first, readings, Adaptation(flagged_before=flagged, flagged_after=flagged, skipped=NO_FEATURES)
    sure = written_on_sure_boards(first.solved)
    unsure = {place for place in _boards(readings) if place not in sure}
    if not flagged:
        return first, readings, Adaptation(flagged_before=flagged, flagged_after=flagged, skipped=SURE_AT_ONCE)
    result, current, learned, rounds, kept_first = first, readings, 0, 0, 0
    kept = _decisions_at(first.solved, set(sure))
    for _ in range(ROUNDS):
        samples = hand_samples(readings, hand, written_on_sure_boards(result.solved))
        adapted = learn_hand(samples, heads)
        if adapted is None:
            if rounds == 0:
                why = TOO_FEW.format(samples=len(samples), least=MIN_SAMPLES)
                return first, readings, Adaptation(len(samples), flagged_before=flagged, flagged_after=flagged,
                                                   skipped=why)
            break
        again = read_again(readings, hand, adapted, unsure)
        if again == current:
            break
        solved = solve_again(again)
        now = _decisions_at(solved.solved, set(sure))
        changed = len(_differing(now, kept))
        partial = 0
        if KEEP_SURE and IN_PART and now != kept:
            # Only the games around the turns it decides otherwise keep their first reading; the others learn.
            first_games = games_around((first.solved, solved.solved), {(key[0], key[1]) for key in _differing(now, kept)}, unsure)
            partly = (read_again(readings, hand, adapted, unsure - first_games)
                      if first_games is not None and first_games != unsure else current)
            if partly != current:
                again, solved = partly, solve_again(partly)
                now = _decisions_at(solved.solved, set(sure))
                partial = len(first_games or ())
        if KEEP_SURE and now != kept:
            # The hand learned from the sure turns now decides one of them otherwise: it contradicts what it
            # learned from, so the round before is kept.
            if rounds == 0:
                why = CONTRADICTED.format(turns=changed)
                return first, readings, Adaptation(adapted.samples, len(unsure), 0, flagged, flagged, 0, skipped=why)
            break
        before, result, current, learned, rounds = result, solved, again, adapted.samples, rounds + 1
        kept_first = partial
        if SETTLED and not turns_changed(before.solved, result.solved):
            break
    if result.flagged > flagged:
        # Not this writer's hand after all (a second writer, writing crossed out and rewritten): the first reading.
        why = FLAGGED_MORE.format(after=result.flagged, before=flagged)
        return first, readings, Adaptation(learned, len(unsure), 0, flagged, flagged, rounds, skipped=why)
    return result, current, Adaptation(learned, len(unsure), turns_changed(first.solved, result.solved),
                                       flagged, result.flagged, rounds, boards_kept_first=kept_first)


def hand_by_place(pages: Sequence[PageReading], hand: Sequence[HandCell]) -> dict[Place, list[HandCell]]:
    """``hand``'s squares by (page, board) of ``pages`` (as read, before renumbering: pages are known by their file
    and number there); empty when two pages share a file and number (nothing to tell them apart by)."""
    index: dict[tuple[str, int], int] = {}
    for k, page in enumerate(pages, start=1):
        if (page.source, page.page) in index:
            return {}
        index[(page.source, page.page)] = k
    out: dict[Place, list[HandCell]] = {}
    for cell in hand:
        at = index.get((cell.source, cell.page))
        if at is not None:
            out.setdefault((at, cell.board), []).append(cell)
    return out


__all__ = ["TURNED_OFF", "Adaptation", "adapt_to_hand", "games_around", "hand_by_place", "hand_samples", "read_again", "turns_changed",
           "written_on_sure_boards"]
