"""The search: a beam over whole-match hypotheses, scored by the readings.

A hypothesis is a match state (position, who is on roll, cube, a double
awaiting its answer, match score) plus the log-score of the explanation that
led to it. Each board is explained by every hypothesis in every way the marks
allow (a move of a roll the digits point to, a double, a result, a blank or a
names board); the best distinct states survive. Because the whole history is
kept as a tree, a misread early is repaired when later boards only make sense
from the right position, and every decision's confidence is the margin of the
best complete explanation over the best one that decided that board otherwise.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal, Protocol

from digitise.game.position import CHECKERS, OFF, Position, Side
from digitise.game.rules import ALL_ROLLS, Play, Roll, game_value, is_closed_out, legal_plays
from digitise.notation.encode import number_digits, turn_cells
from digitise.notation.marks import result_cell
from digitise.solve.evidence import EDIT, BoardEvidence
from digitise.solve.fitting import (
    fits_forced,
    game_over,
    legal_results,
    nearest_play,
    physical_play,
    resign_values,
    result_values,
    seen_by,
    with_answer,
)
from digitise.solve.nodes import (
    Cache,
    Event,
    Forced,
    Node,
    Option,
    PlayKey,
    State,
    Summary,
    first_recorded,
    record_end,
)
from digitise.solve.paths import best_path
from digitise.solve.prior import PlayPrior
from digitise.solve.reasons import Flag, Reason

#: Hypotheses kept after each board, and how far below the best one may fall: wide and shallow, as a
#: misread that leaves a checker off is explained as well as the truth for many boards, a nat or two behind.
BEAM = 128
MARGIN = 6.0
#: Priors, in log units, for things a recorder rarely does.
BLANK_IN_GAME = -5.0
ILLEGAL_MOVE = -10.0
UNFINISHED = -6.0
#: The tag of the end of readings that stop in the middle of a game.
GAME_DOES_NOT_END = Reason.GAME_DOES_NOT_END.flag()
#: When no explanation of a board scores above this, a new game is tried, at this cost.
RESTART_WHEN = -7.0
RESTART = -10.0
#: A game conceded before its first roll: rare, and GNU Backgammon cannot hold such a game.
UNPLAYED_GAME = -3.0
#: The cost of a board after the match is over.
AFTER_MATCH = -10.0
#: The reason on a board whose correction the solver could not honour (the review refuses such a change).
MISFIT_REASON = Reason.CORRECTION_MISFIT.flag()
#: The reason on a board flagged because it is not sure enough.
LOW_CONFIDENCE = Reason.LOW_CONFIDENCE.flag()
#: The tag of a board read as a turn after the match was won (a correction cannot put one there).
AFTER_THE_END = Reason.AFTER_THE_END.flag()
#: The cost of reading a board as the turn after a missing one.
MISSING = -10.0
#: The cost of setting a board aside as not belonging to the game (a stray page).
FOREIGN = -12.0
#: Below this board score no legal play is taken to explain the marks.
POOR_FIT = -4.0
#: Enumerating every legal play cannot beat this when the marks make no legal play themselves.
FALLBACK = -2.0
#: How many of the best hypotheses weigh every legal play of the likely rolls (the best before a
#: board, those tied with the first, and the parents of the best after it). Two, not one: a
#: misread that leaves a legal play (a "2" drawn like a "1") puts the truth second, and on a board
#: the marks do not spell cleanly a runner-up without the wider search explains it worse, falls
#: out of the margin and never reaches the board that would have told the two apart.
LEADERS = 2
#: How many boards before a badly explained one are searched again with every roll (and, further back,
#: those of its own game that the explanation fits loosely: a checker put on the wrong point stays
#: wrong to the game's end, and the board that shows it can come 30 boards on).
REPAIR_REACH = 8
#: ... and how many before it a board the reader was unsure of is searched again (its misread may show late).
SHAKY_REACH = 16
#: How many of the best hypotheses weigh every legal play of every roll on a board marked wide.
WIDE_LEADERS = 1
#: How many plays of a widened board's every-roll search are kept per hypothesis ...
WIDE_KEEP = 3
#: ... and how many more at most, when within TIE nats of the last of those.
WIDE_TIES = 6
TIE = 0.7
#: A board score above this reads the marks as the reader's best guesses.
CLEAN = -0.3
#: A given doublet is half as likely as a given pair of different dice.
DOUBLET = -math.log(2.0)


class Settle(Protocol):
    """How a finished search gives every explanation an estimated final score (:func:`settle_best_first`)."""

    def __call__(self, best_final: Node, finals: list[Node], deaths: list[tuple[Node, Summary, float, int]],
                 merges: list[tuple[Node, Summary, float, Node]]) -> None: ...


class Impose(Protocol):
    """How the options of a board a correction constrains are scored (:func:`impose_as_sure`)."""

    def __call__(self, options: list[Option], forced: Forced) -> list[Option]: ...


def settle_best_first(best_final: Node, finals: list[Node], deaths: list[tuple[Node, Summary, float, int]],
                      merges: list[tuple[Node, Summary, float, Node]]) -> None:
    """Give every explanation an estimated final score, so each decision can be weighed: the solver's settling.

    A dropped explanation is assumed to have fared, from where it was
    dropped, as well as the best one did from the same board: its final
    estimate is its score then plus the best explanation's later gains.
    One merged into an equal state shares that state's future exactly.
    """
    chosen: dict[int, float] = {}
    node: Node | None = best_final.parent
    while node is not None and node.board is not None:
        chosen[node.board] = node.score
        node = node.parent
    total = best_final.score
    ends: list[tuple[float, Node, Summary]] = []
    for final in finals:
        final.best = final.score
        assert final.parent is not None
        ends.append((final.score, final.parent, final.summary))
    ends += [(score + total - chosen.get(board, score), parent, summary) for parent, summary, score, board in deaths]
    # The order each node's decisions are first heard of, in list order: it breaks the report's ties.
    heard = first_recorded([(parent, summary) for _, parent, summary in ends])
    # Best first: a node is worth the best end below it in any order, and so each end climbs only as far
    # as a node not yet worth as much (a late end above the best otherwise climbs to the root, each time).
    ends.sort(key=lambda end: -end[0])
    for score, parent, summary in ends:
        record_end(parent, summary, score)
    for node, summaries in heard:
        node.kids = {summary: node.kids[summary] for summary in summaries}
    for parent, summary, score, survivor in reversed(merges):
        if survivor.best > -math.inf:
            record_end(parent, summary, score + (survivor.best - survivor.score))


def impose_as_sure(options: list[Option], forced: Forced) -> list[Option]:
    """A corrected board's options: those the correction fits, scored 0 as a sure board (a corrected double's
    answer carried on with it); when none fits, every option at a heavy cost, flagged as a misfit."""
    fitting = [replace(o, local=0.0, prior=0.0) for o in options if fits_forced(o, forced)]
    if fitting and forced.response is not None:
        # The double's answer shows on the board after it: it is carried there in the state.
        fitting = [with_answer(o, forced.response) for o in fitting]
    if fitting:
        return fitting
    return [replace(o, local=o.local - 30.0, tags=o.tags + (MISFIT_REASON,)) for o in options]


@dataclass(frozen=True)
class SearchMethod:
    """What a search does besides its beam: how it scores a corrected board, settles its estimates, keeps its tree.

    The default is the solver's. Others are for checks: the tests settle every estimate in turn and keep the
    whole tree (the same match must come out); benchmarks/first_errors.py imposes a board at the score its
    readings give it, to weigh the truth against the search's choice.
    """

    impose: Impose = impose_as_sure
    settle: Settle = settle_best_first
    #: Whether a finished search lets go of what no report reads; False keeps the whole tree.
    prune: bool = True


#: The method of every search: the solver's. A check swaps it for the whole of a solve.
METHOD = SearchMethod()


class Searcher:
    """Runs the beam over the boards of one match."""

    def __init__(self, evidence: list[BoardEvidence], length: int,
                 forced: dict[int, Forced] | None = None, wide: frozenset[int] = frozenset(),
                 repair: bool = True, prior: PlayPrior | None = None, start: State | None = None,
                 cache: Cache | None = None, bound: float = -math.inf, margin: float = MARGIN) -> None:
        self.evidence = evidence
        #: How far behind the best a hypothesis may fall and stay in the beam.
        self.margin = margin
        #: Give up once every explanation scores below this: scores only fall from board to board, so
        #: none could end above it (a trial that can only lose is not worth finishing).
        self.bound = bound
        #: Where the boards begin: a match's start, or (to weigh a stretch of it) the state before them.
        self.start = start
        self.prior = prior if prior is not None else PlayPrior(weight=0.0)
        self.length = length
        self.forced = forced or {}
        #: Boards on which the best hypotheses weigh every legal play of every roll: a confident
        #: misread there (a doublet read as a pair) spells out only wrong plays.
        self.wide = wide
        self._board = -1
        self._rank = 0
        #: Whether a badly explained board sends the search back to weigh every roll before it.
        self.repair = repair
        cache = cache if cache is not None else Cache()
        self._plays = cache.plays
        self._moves = cache.moves
        #: Whether a double was among the explanations of the board being explained.
        self.doubled = False
        #: What the search does besides its beam: :data:`METHOD` as it was when the search was made.
        self.method = METHOD

    def plays(self, pos: Position, roll: Roll) -> tuple[Play, ...]:
        """Legal plays, cached: neighbouring hypotheses share positions."""
        key = (pos, roll)
        found = self._plays.get(key)
        if found is None:
            found = legal_plays(pos, roll)
            if len(self._plays) > 20000:
                self._plays.clear()
            self._plays[key] = found
        return found

    def run(self) -> tuple[Node, Node]:
        """Search all boards; return (root, final node of the best explanation).

        When every explanation falls below :attr:`bound`, the search stops and
        the final node returned scores ``-inf`` (its path is empty).

        Plays are normally read off the marks, so a confident misread (a
        doublet's second digit missed, a dance's crossed dice read as others)
        can leave the true play unexplored; it shows a few boards later, when
        the wrong position cannot explain what follows. So when the best
        explanation of a board is poor or a repair, the search backs up,
        marks the boards its explanation fits loosely (:data:`REPAIR_REACH`
        boards back, and any board of the same game) and those the reader
        was unsure of (:data:`SHAKY_REACH` boards back) :attr:`wide` (every
        legal play of every roll is weighed there) and goes on from the
        first of them again, once per troubled board.
        """
        start = self.start if self.start is not None else State.start(self.length)
        root = Node(None, None, ("root",), (), start, 0.0, 0.0, ())
        beam = [root]
        merges: list[tuple[Node, Summary, float, Node]] = []
        # Explanations dropped from the beam: (parent, decision, score so far, board).
        deaths: list[tuple[Node, Summary, float, int]] = []
        # Before each board: the beam, and how many explanations had been dropped and merged.
        snapshots: dict[int, tuple[list[Node], int, int]] = {}
        repaired: set[int] = set()
        b = 0
        while b < len(self.evidence):
            ev = self.evidence[b]
            snapshots[b] = (list(beam), len(deaths), len(merges))
            self._board = b
            options: list[tuple[float, Node, Option]] = []
            top = -math.inf
            for rank, node in enumerate(beam):  # best first, so weak hypotheses can skip costly repairs
                floor = top - self.margin - node.score
                if floor > 0.0:
                    continue
                # The leaders also weigh every legal play of the likely rolls, not only those the
                # marks spell out, so a plausible misreading is scored and can be recovered later.
                self._rank = rank
                # Hypotheses tied with the best lead too: which of them sorts first is happenstance.
                thorough = rank < LEADERS or node.score >= beam[0].score - 1e-9
                for option in self.explain(node.state, ev, self.forced.get(b), floor, thorough=thorough):
                    score = node.score + option.local + option.prior
                    options.append((score, node, option))
                    top = max(top, score)
            options.sort(key=lambda o: -o[0])
            # The leaders again, by where they stand after this board: the old leader may have fallen behind.
            after: list[Node] = []
            for _, parent, _ in options:
                if all(parent is not seen for seen in after):
                    after.append(parent)
                    if len(after) == LEADERS:
                        break
            # Weighed again even when it was weighed as tied with the best: as the leader after the
            # board it also searches a widened board's every roll (WIDE_LEADERS), as it did not before.
            late = [(lead, node) for lead, node in enumerate(after)
                    if not any(node is first for first in beam[:LEADERS])]
            if late:
                again = {id(node) for _, node in late}
                options = [o for o in options if id(o[1]) not in again]
                top = options[0][0] if options else -math.inf
                for lead, node in late:
                    self._rank = lead
                    floor = min(top - self.margin - node.score, 0.0)
                    for option in self.explain(node.state, ev, self.forced.get(b), floor, thorough=True):
                        options.append((node.score + option.local + option.prior, node, option))
                options.sort(key=lambda o: -o[0])
            best = options[0][0]
            if best < self.bound:
                _release(root.children)
                root.children, root.merged = [], {}
                return root, Node(root, None, ("hopeless",), (), root.state, -math.inf, -math.inf, ())
            kept: list[Node] = []
            seen: dict[State, Node] = {}
            for score, parent, option in options:
                # Best first: a decision's first option is its best on this board.
                if option.summary not in parent.parts:
                    parent.parts[option.summary] = (option.local, option.local - option.writing, option.prior)
                if score < best - self.margin:
                    deaths.append((parent, option.summary, score, b))
                    continue
                events, state = option.built()
                survivor = seen.get(state)
                if survivor is not None:
                    # Same state, so the same future: settled once that future is known.
                    merges.append((parent, option.summary, score, survivor))
                    parent.merged.setdefault(option.summary, survivor)
                elif len(kept) < BEAM:
                    node = Node(parent, b, option.summary, events, state, option.local, score, option.tags,
                                option.local - option.writing)
                    parent.children.append(node)
                    seen[state] = node
                    kept.append(node)
                else:
                    deaths.append((parent, option.summary, score, b))
            beam = kept
            if self.repair and b not in repaired and troubled(kept[0]):
                repaired.add(b)
                # Widen the boards of this explanation that its marks do not fit cleanly: a misread
                # hides there. Widening clean boards too only lets wrong explanations bend later.
                added = {b}
                up: Node | None = kept[0].parent
                # The game the troubled board continues (a game's unrecorded end shows on the next one's first).
                game = up.state.game if up is not None else 0
                while up is not None and up.board is not None:
                    near, same_game = up.board >= b - SHAKY_REACH, up.state.game == game
                    if not (near or same_game):
                        break
                    # A board its explanation fits loosely, anywhere in the game: its misread may show far on.
                    loose = up.local < CLEAN and (up.board >= b - REPAIR_REACH or same_game)
                    # A board the reader was unsure of hides a misread too when the explanation took
                    # a runner-up it rated about as high as its best (a "4444" read "4" or "14").
                    if loose or (near and self.evidence[up.board].shaky):
                        added.add(up.board)
                    up = up.parent
                added -= self.wide
                if added:
                    self.wide = self.wide | frozenset(added)
                    b = min(added)
                    restart, dead, merged = snapshots[b]
                    beam = list(restart)
                    del deaths[dead:], merges[merged:]
                    for node in beam:
                        _release(node.children)
                        node.children, node.merged, node.parts = [], {}, {}
                    continue
            b += 1
        finals: list[Node] = []
        for node in beam:
            events, local, tags = self.finish(node.state)
            final = Node(node, None, ("final",) + tuple(e.kind for e in events), events,
                         node.state, local, node.score + local, tags)
            finals.append(final)
        best_final = max(finals, key=lambda n: n.score)
        self.method.settle(best_final, finals, deaths, merges)
        if self.method.prune:
            _prune(best_final)
        return root, best_final

    def finish(self, state: State) -> tuple[tuple[Event, ...], float, tuple[Flag, ...]]:
        """What the end of the readings implies: a double never answered was dropped."""
        if state.pending is not None:
            doubler = state.pending
            pos = state.pos
            return ((Event("drop", doubler.opponent, before=pos.swap()),
                     Event("end", doubler, value=state.cube.value)), 0.0, ())
        if state.on_roll is not None:
            return (), UNFINISHED, (GAME_DOES_NOT_END,)
        return (), 0.0, ()

    # -- explanations of one board ------------------------------------------------

    def explain(self, state: State, ev: BoardEvidence, forced: Forced | None,
                floor: float = -math.inf, thorough: bool = True) -> list[Option]:
        """Every way ``ev`` can follow ``state``, with its board score.

        Repairs that cannot score above ``floor`` (rolls a digit away from the
        reading, illegal moves) are not tried.
        """
        if forced is not None:
            floor = -math.inf
        options: list[Option] = []
        # A blank (or unreadable) board changes nothing; inside a game it is a recorder's slip.
        in_game = state.on_roll is not None
        blank_local = ev.score({}) + (BLANK_IN_GAME if in_game else 0.0)
        options.append(Option(("blank",), blank_local, (Event("blank"),), state,
                                (Reason.BLANK_IN_GAME.flag(),) if in_game else ()))
        if not in_game and state.pending is None:
            options.append(Option(("letters",), ev.letters_score, (Event("letters"),), state, ()))
        self.doubled = False
        for pre_events, pre, pre_name in self._answers(state):
            self._explain_turn(pre, pre_events, pre_name, ev, options, floor, thorough)
            if forced is not None and forced.roll is not None and not (pre.on_roll is None and forced.roll.is_double):
                # The reviewer's roll may be one the marks never suggested (but a game never opens with a
                # doublet: such a correction fits nowhere, and is refused as one that does not fit).
                sides = (pre.on_roll,) if pre.on_roll is not None else (Side.BOTTOM, Side.TOP)
                results = [(cell, ev.numbers(cell)[:3]) for cell in ("Wres", "Bres") if cell in ev.listed]
                for side in sides:
                    assert side is not None
                    for play, cells in self.moves(pre.pos, forced.roll, side):
                        self._add_move(pre, pre_events, pre_name, side, forced.roll, play, cells, ev.score(cells),
                                       False, ev, results, options)
        if not self.doubled and ev.arrow_yes > ev.arrow_no:
            # An arrow that cannot be a legal double: every reading of the board leaves it unexplained.
            for option in options:
                if not any(e.kind == "double" for e in option.events):
                    option.tags = option.tags + (Reason.ARROW_NO_DOUBLE.flag(),)
        if in_game and state.pending is None and thorough and forced is None:
            best = max((o.local for o in options), default=0.0)
            if best < RESTART_WHEN:
                self._restart(state, ev, options, floor)
                self._missing_turn(state, ev, options, floor)
                if FOREIGN >= floor:
                    # A board from another match (a stray page): it records nothing of this game.
                    options.append(Option(("foreign",), FOREIGN, (Event("blank"),), state,
                                          (Reason.NOT_THIS_GAME.flag(),)))
        if state.match.is_over:
            # Boards after the match was won: a misread result ended it too early, or they
            # belong to another match.
            for option in options:
                if option.summary not in (("blank",), ("letters",)):
                    option.local += AFTER_MATCH
                    option.tags = option.tags + (AFTER_THE_END,)
        if forced is not None:
            options = self.method.impose(options, forced)
        return options

    def _missing_turn(self, state: State, ev: BoardEvidence, options: list[Option], floor: float) -> None:
        """Nothing explains the board as the turn of the player on roll: perhaps that turn's board is missing.

        The missing move itself cannot be known; the position is kept as it was
        and the board is read as the opponent's turn, flagged.
        """
        assert state.on_roll is not None
        if all(self.plays(state.pos, roll) for roll in ALL_ROLLS):
            # The .mat must still alternate: the missing turn is written as a dance, and a player
            # who can play every roll has none (GNU Backgammon would take an unplayed roll silently).
            return
        skipped = replace(state, pos=state.pos.swap(), on_roll=state.on_roll.opponent)
        start = len(options)
        self._explain_turn(skipped, (Event("skip", state.on_roll),), "missing", ev, options, floor - MISSING, True)
        for option in options[start:]:
            option.local += MISSING
            option.tags = option.tags + (Reason.BOARD_MISSING.flag(),)

    def _restart(self, state: State, ev: BoardEvidence, options: list[Option], floor: float) -> None:
        """Nothing in this game explains the board: perhaps the game ended unrecorded and a new one begins.

        It happens when an early misread left this game in the wrong position
        (its true end is then not seen) or a page is missing. The winner is
        taken to be the player with fewer pips, for the cube's value (twice
        when the loser has borne off nothing and the winner has).
        """
        assert state.on_roll is not None
        mine, theirs = state.pos.pip_count
        winner = state.on_roll if mine <= theirs else state.on_roll.opponent
        winner_view = state.pos if winner is state.on_roll else state.pos.swap()
        gammon = winner_view.mine[OFF] > 0 and winner_view.theirs[OFF] == 0
        points = state.cube.value * (2 if gammon else 1)
        fresh = state.after_game(winner, points)
        start = len(options)
        self._explain_turn(fresh, (Event("end", winner, value=points),), "restart", ev, options, floor - RESTART,
                           True)
        for option in options[start:]:
            option.local += RESTART
            option.tags = option.tags + (Reason.GAME_END_UNRECORDED.flag(),)

    def _answers(self, state: State) -> Iterable[tuple[tuple[Event, ...], State, str]]:
        """The answer to a pending double (take or drop), then the closed-out skip."""
        if state.pending is not None:
            doubler = state.pending
            taker_view = state.pos.swap()
            if state.answer != "drop":
                take = replace(state, cube=state.cube.doubled_by(doubler), pending=None, on_roll=doubler, answer=None)
                yield from self._skip((Event("take", doubler.opponent, before=taker_view),), take, "take")
            if state.answer != "take":
                dropped = state.after_game(doubler, state.cube.value)
                yield ((Event("drop", doubler.opponent, before=taker_view),
                        Event("end", doubler, value=state.cube.value)), dropped, "drop")
        else:
            yield from self._skip((), state, "")

    @staticmethod
    def _skip(events: tuple[Event, ...], state: State,
              name: str) -> Iterable[tuple[tuple[Event, ...], State, str]]:
        if state.on_roll is not None and is_closed_out(state.pos):
            # The closed-out player gets no board: the opponent is on roll again.
            skipped = replace(state, pos=state.pos.swap(), on_roll=state.on_roll.opponent)
            yield events + (Event("skip", state.on_roll),), skipped, name
        else:
            yield events, state, name

    def legal_from_marks(self, pos: Position, side: Side, roll: Roll,
                         cells: Mapping[str, tuple[int, ...]]) -> Play | None | Literal[False]:
        """The legal play the marks describe (``None``: the roll cannot be played), or False."""
        found = physical_play(pos, side, roll, cells)
        if found is None:
            return False
        play = found[1]
        if len(play.steps) == len(roll.dice):
            return play  # every die played: nothing longer exists, so it is legal
        legal = self.plays(pos, roll)
        if not play.steps:
            return None if not legal else False
        for candidate in legal:
            if candidate.result == play.result:
                return candidate
        return False

    def moves(self, pos: Position, roll: Roll, side: Side) -> tuple[tuple[Play | None, dict[str, tuple[int, ...]]], ...]:
        """Every legal play of ``roll`` with the marks it writes, cached."""
        key = (pos, roll, side)
        found = self._moves.get(key)
        if found is None:
            plays = self.plays(pos, roll)
            found = tuple((play, turn_cells(side, roll, play)) for play in (plays or (None,)))
            if len(self._moves) > 20000:
                self._moves.clear()
            self._moves[key] = found
        return found

    def _explain_turn(self, state: State, pre: tuple[Event, ...], pre_name: str, ev: BoardEvidence,
                      options: list[Option], floor: float, thorough: bool) -> None:
        sides = (state.on_roll,) if state.on_roll is not None else (Side.BOTTOM, Side.TOP)
        results = [(cell, ev.numbers(cell)[:3]) for cell in ("Wres", "Bres") if cell in ev.listed]
        # A game's opening roll is never a doublet (each player throws one die).
        opening = state.on_roll is None
        for side in sides:
            assert side is not None
            best_move = -math.inf
            best_dances = False
            for variant, rolls in ev.variants:
                for roll in rolls:
                    if opening and roll.is_double:
                        continue
                    play = self.legal_from_marks(state.pos, side, roll, variant)
                    if play is False:
                        continue
                    cells = turn_cells(side, roll, play)
                    local = ev.score(cells)
                    if local > best_move:
                        best_move, best_dances = local, play is None
                    if local < floor and not results:
                        continue  # below the beam's margin whatever its priors: it would die at once
                    self._add_move(state, pre, pre_name, side, roll, play, cells, local, False, ev, results, options)
            for variant, rolls in ev.displaced if thorough else ():
                # A digit read in the square beside its own ("1" of 9/3 3/2 read in B3 with the "6"):
                # the true play is one no reading spells, and without it the slip looks certain.
                for roll in rolls:
                    if opening and roll.is_double:
                        continue
                    play = self.legal_from_marks(state.pos, side, roll, variant)
                    if play is False or play is None:
                        continue
                    cells = turn_cells(side, roll, play)
                    local = ev.score(cells)
                    if local < floor and not results:
                        continue
                    self._add_move(state, pre, pre_name, side, roll, play, cells, local, False, ev, results, options)
            # Every legal play of the likely rolls: when the marks spell out no good legal play
            # themselves, and for the leaders when the marks are not read cleanly (a stray or
            # displaced digit can make the true play one the marks do not spell out).
            wide = (best_move < POOR_FIT and floor < FALLBACK) or (thorough and best_move < CLEAN)
            # On a board the reader was unsure of, the leaders also try rolls a digit away; and where
            # the marks read best as a dance: its record is only the crossed dice, so one digit the
            # reader missed turns a played roll into a dance (a "1" on B4 lost, a crossed "6" read as 6-6).
            unsure = thorough and (ev.shaky or best_dances)
            # Elsewhere a sure-looking misread spells another legal play: the true one is weighed for later boards.
            weighed = (ev.rolls, ev.near_rolls) if wide or unsure else (ev.doubt_rolls,) if thorough else ()
            for rolls in weighed:
                for roll in rolls:
                    if opening and roll.is_double:
                        continue
                    for play, cells in self.moves(state.pos, roll, side):
                        local = ev.score(cells)
                        if local < floor:
                            continue  # too poor to matter, even for the confidence of the others
                        best_move = max(best_move, local)
                        self._add_move(state, pre, pre_name, side, roll, play, cells, local, False, ev, results,
                                       options)
                # Rolls a digit away from the reading are only needed when nothing closer fits.
                if (best_move >= POOR_FIT and not unsure) or EDIT < floor:
                    break
            if self._board in self.wide and self._rank < WIDE_LEADERS:
                # Only the few best: many equally poor plays would crowd the truth out of the beam.
                # Ranked by the marks and the play prior: by the marks alone, blunders that fit a misread
                # a little better crowd out the sensible play that was made (a 13/11(2) 6/4(2) whose "2"s
                # read as "1 2" and "2" lost to three plays gnubg rates -2). Not by a doublet's own prior,
                # as the beam is: a 6-6 bear-off tied with a dozen other rolls then fell out of the ties.
                found: list[tuple[float, int, Roll, Play | None, dict[str, tuple[int, ...]], float]] = []
                for roll in ALL_ROLLS:
                    if opening and roll.is_double:
                        continue
                    for play, cells in self.moves(state.pos, roll, side):
                        local = ev.score(cells)
                        if local >= floor:
                            ranked = local + self.prior.log_prior(state.pos, roll, play)
                            found.append((ranked, len(found), roll, play, cells, local))
                best = heapq.nlargest(WIDE_KEEP + WIDE_TIES, found)
                # Plays as good as the kept ones are kept too (a few): left out, they would never
                # show as rivals, and a board nothing was read on would look certain.
                cut = best[min(WIDE_KEEP, len(best)) - 1][0] - TIE if best else 0.0
                for rank, (ranked, _, roll, play, cells, local) in enumerate(best):
                    if rank >= WIDE_KEEP and ranked < cut:
                        break
                    best_move = max(best_move, local)
                    self._add_move(state, pre, pre_name, side, roll, play, cells, local, False, ev,
                                   results, options)
            if best_move < POOR_FIT and ILLEGAL_MOVE > floor:
                self._illegal_moves(state, pre, pre_name, side, ev, options)
            # Never before the first roll, in the Crawford game, by the player the cube is not free to,
            # nor with a dead cube: an arrow there is read as something else and flagged (see explain).
            if state.on_roll is not None and state.match.may_double(side, state.cube):
                self._double(state, pre, pre_name, side, ev, options)
                self.doubled = True
        # A board holding only a result: a game conceded with nothing else recorded.
        for cell, _ in results:
            winner = Side.BOTTOM if cell == "Wres" else Side.TOP
            unplayed = state.on_roll is None
            for points, prior, why in resign_values(ev, cell, state, winner):
                local = ev.score({cell: number_digits(points)}) + prior + (UNPLAYED_GAME if unplayed else 0.0)
                if unplayed:
                    why = (*why, Reason.CONCEDED_UNPLAYED.flag())
                events = pre + (Event("resign", winner.opponent, before=seen_by(state, winner.opponent), value=points),
                                Event("end", winner, value=points))
                options.append(Option((pre_name, "resign", winner, points), local, events,
                                      state.after_game(winner, points), why,
                                      writing=prior + (UNPLAYED_GAME if unplayed else 0.0)))

    def _add_move(self, state: State, pre: tuple[Event, ...], pre_name: str, side: Side, roll: Roll,
                  play: Play | None, cells: dict[str, tuple[int, ...]], local: float, illegal: bool,
                  ev: BoardEvidence, results: Sequence[tuple[str, list[tuple[int, float]]]],
                  options: list[Option], why: tuple[Flag, ...] = ()) -> float:
        """Add the move (and a resignation after it, if a result square is read); the best score.

        ``play`` must be legal (``None`` only when the roll cannot be played):
        an ``illegal`` move recorded is written as the legal play ``why`` names.
        """
        doublet = DOUBLET if roll.is_double else 0.0
        local += doublet
        writing = doublet + ev.writing_prior(cells)
        play_prior = 0.0 if illegal else self.prior.log_prior(state.pos, roll, play)
        before = state.pos
        after = play.result if play is not None else before
        move = Event("move", side, roll, play, before, illegal=illegal)
        tags = ((Reason.ILLEGAL_MOVE.flag(),) if illegal else ()) + why
        summary: Summary = (pre_name, "move", side, roll, PlayKey(play))
        if after.mine[OFF] == CHECKERS:
            value = game_value(after) or 1
            points = int(value) * state.cube.value
            events = pre + (move, Event("end", side, value=points))
            options.append(Option(summary, local, events, lambda: state.after_game(side, points), tags, play_prior,
                                  writing))
            return local
        best = local
        options.append(Option(summary, local, pre + (move,),
                              lambda: replace(state, pos=after.swap(), on_roll=side.opponent), tags, play_prior,
                              writing))
        for cell, _ in results:
            winner = Side.BOTTOM if cell == "Wres" else Side.TOP
            for points, prior, wrong in resign_values(ev, cell, state, winner):
                with_result = dict(cells)
                with_result[cell] = number_digits(points)
                resign_before = after if winner.opponent is side else after.swap()
                events = pre + (move, Event("resign", winner.opponent, before=resign_before, value=points),
                                Event("end", winner, value=points))
                score = ev.score(with_result) + doublet + prior
                best = max(best, score)
                options.append(Option(summary + ("resign", winner, points), score, events,
                                      game_over(state, winner, points), tags + wrong, play_prior,
                                      doublet + ev.writing_prior(with_result) + prior))
        return best

    def _double(self, state: State, pre: tuple[Event, ...], pre_name: str, side: Side, ev: BoardEvidence,
                options: list[Option]) -> None:
        """The board as a double by ``side`` (who may double: the caller checks), answered or not."""
        value = state.cube.value * 2
        double = Event("double", side, before=state.pos, value=value)
        local = ev.score({}, arrow=True)
        options.append(Option((pre_name, "double", side), local, pre + (double,),
                              replace(state, pending=side), ()))
        taker_view = state.pos.swap()
        # The doubler taken and then resigning: the taker's result square on the arrow board.
        other = result_cell(side.opponent)
        if other in ev.listed:
            legal = legal_results(value, state.match.needs(side.opponent))
            for points, prior, why in result_values(ev, other, value, legal):
                score = ev.score({other: number_digits(points)}, arrow=True) + prior
                events = pre + (double, Event("take", side.opponent, before=taker_view),
                                Event("resign", side, before=state.pos, value=points),
                                Event("end", side.opponent, value=points))
                options.append(Option((pre_name, "double", side, "take", "resign", side.opponent, points), score,
                                      events, state.after_game(side.opponent, points), why))
        cell = result_cell(side)
        if cell not in ev.listed:
            return
        # The doubler's result square: the cube's value is a drop; more, a take and at once a resignation.
        legal = (state.cube.value,) + legal_results(value, state.match.needs(side))
        for points, prior, why in result_values(ev, cell, state.cube.value, legal):
            score = ev.score({cell: number_digits(points)}, arrow=True) + prior
            if points == state.cube.value:
                events = pre + (double, Event("drop", side.opponent, before=taker_view), Event("end", side, value=points))
                summary: Summary = (pre_name, "double", side, "drop")
            else:
                events = pre + (double, Event("take", side.opponent, before=taker_view),
                                Event("resign", side.opponent, before=taker_view, value=points),
                                Event("end", side, value=points))
                summary = (pre_name, "double", side, "take", "resign", side, points)
            options.append(Option(summary, score, events, state.after_game(side, points), why))

    def _illegal_moves(self, state: State, pre: tuple[Event, ...], pre_name: str, side: Side, ev: BoardEvidence,
                       options: list[Option]) -> None:
        """What was physically played when no legal play fits: each mark d on p came from p + d."""
        cells = {name: ev.top(name) for name in ev.listed if name not in ("Wres", "Bres")}
        cells = {k: v for k, v in cells.items() if v}
        found = physical_play(state.pos, side, None, cells)
        if found is None or not found[1].steps:
            return
        roll, play = found
        if state.on_roll is None and roll.is_double:
            return  # an opening roll is never a doublet
        legal = self.plays(state.pos, roll)
        if any(p.result == play.result for p in legal):
            return  # legal after all: already scored
        cells = turn_cells(side, roll, play)
        local = ev.score(cells) + ILLEGAL_MOVE
        # The .mat must stay legal (GNU Backgammon replays it): the nearest legal play is written
        # and followed, and the reason says which.
        chosen = nearest_play(play, legal, lambda q: ev.score(turn_cells(side, roll, q)))
        why = (Reason.ILLEGAL_MOVE_WRITTEN_AS.flag(roll=roll, shown=play, chosen=chosen) if chosen is not None
               else Reason.ILLEGAL_MOVE_UNPLAYABLE.flag(roll=roll, shown=play),)
        self._add_move(state, pre, pre_name, side, roll, chosen, cells, local, True, ev, [], options, why)


#: The reasons of a board explained only by a repair.
_REPAIRS = frozenset({Reason.GAME_END_UNRECORDED, Reason.BOARD_MISSING, Reason.ILLEGAL_MOVE})


def troubled(node: Node) -> bool:
    """A board the explanation ``node`` fits badly or explains only by a repair."""
    return node.local < POOR_FIT or any(tag.reason in _REPAIRS for tag in node.tags)


def _prune(final: Node) -> None:
    """Let go of what no report of ``final``'s explanation reads, so a finished search holds little.

    Kept: the path; its nodes' children and the kept states their decisions
    merged into (the rivals :func:`leads_to` finds), each with its
    :func:`best_line` only, which :func:`weighed_alternatives`,
    :func:`decisions` and the turns resting on a rival (``_apart``) follow.
    The rest of the tree is freed at once: the cycle collector is held off
    while a match is solved.
    """
    path = best_path(final)
    on_path = {id(node) for node in path}
    on_path.add(id(path[0].parent) if path and path[0].parent is not None else 0)
    starts: list[Node] = []
    for node in path:
        parent = node.parent
        if parent is not None:
            starts += parent.children
            starts += parent.merged.values()
    # A state a path decision merged into may sit anywhere in the tree, off another best line too.
    keep = on_path | {id(node) for node in starts}
    dropped: list[Node] = []
    seen: set[int] = set()
    for node in starts:
        # Down the node's best line: at each step the best child stays, its siblings go.
        while id(node) not in on_path and id(node) not in seen:
            seen.add(id(node))
            node.merged, node.parts = {}, {}
            if not node.children:
                break
            best = max(node.children, key=lambda c: c.best)
            dropped += [c for c in node.children if c is not best and id(c) not in keep]
            node.children = [best]
            node = best
    _release(dropped, keep)


def _release(nodes: Iterable[Node], keep: set[int] | frozenset[int] = frozenset()) -> None:
    """Free the subtrees of ``nodes`` now, but for the nodes in ``keep`` (ids) and below them: their parent
    links and children make cycles, else left to the cycle collector."""
    stack = [node for node in nodes if id(node) not in keep]
    while stack:
        node = stack.pop()
        stack += [child for child in node.children if id(child) not in keep]
        node.children, node.merged = [], {}
