"""The report of a solved match: every turn with its confidence, flags, reasons and candidates."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from digitise.game.match import MatchState
from digitise.game.position import Position, Side
from digitise.game.record import Action, ActionKind, GameRecord, MatchRecord
from digitise.game.rules import Roll
from digitise.solve.alternatives import weighed_alternatives
from digitise.solve.evidence import BoardEvidence
from digitise.solve.length import after_the_end
from digitise.solve.nodes import Event, Node
from digitise.solve.page_order import GapMarks
from digitise.solve.paths import best_line, confidence, decisions, leads_to, misread_doubt, rivals, surety
from digitise.solve.reasons import Flag, Reason
from digitise.solve.report_types import (
    Candidate,
    Game,
    Place,
    Report,
    Result,
    SideName,
    Skipped,
    Summary,
    Turn,
    TurnAction,
)
from digitise.solve.result import SolveResult
from digitise.solve.search import AFTER_THE_END, GAME_DOES_NOT_END, LOW_CONFIDENCE, POOR_FIT

#: A board sure enough by REVIEW_BELOW is still flagged when the turns expected wrong because of it
#: (its doubt, times itself and the later turns that would read otherwise) reach this: a fifth of a turn.
REVIEW_EXPECTED_WRONG = 0.2
#: A board the reader was less sure of than this in some cell, and whose own marks and priors (no later
#: board counted) are less sure than this of its decision, is flagged: later boards decided it, and a writer's
#: misread digit recurs on them (one hand's "4" read "6" board after board), so their say is not a second witness.
OWN_BELOW = 0.9
#: A board whose squares the vision placed with less sureness than this (its reading's ``fit``) is flagged:
#: its cells may have been cut from the wrong squares. Clean pages' boards are not given a ``fit`` (sure).
UNSURE_FIT_BELOW = 0.5


# -- the record and the report ---------------------------------------------------

_KIND = {"move": ActionKind.MOVE, "double": ActionKind.DOUBLE, "take": ActionKind.TAKE,
         "drop": ActionKind.DROP, "resign": ActionKind.RESIGN}


def _candidate(summary: tuple[object, ...], probability: float, why: tuple[str, ...]) -> Candidate:
    """A candidate decision as the report shows it, with its probability and how it compares."""
    shown = _summary_text(summary)
    result = shown.get("result")
    return Candidate(shown["action"], shown["move"], shown["dice"], shown.get("player"), shown.get("answer"),
                     Result(result["winner"], result["points"]) if result is not None else None,
                     probability, why)


def _summary_text(summary: tuple[object, ...]) -> dict[str, Any]:
    """A candidate decision as the report shows it."""
    out: dict[str, Any] = {"action": "blank", "move": "", "dice": None}
    kinds = [s for s in summary if isinstance(s, str)]
    if "move" in kinds:
        i = summary.index("move")
        roll = summary[i + 2]
        out.update(action="move", player=_side_name(summary[i + 1]),
                   dice=(roll.high, roll.low) if isinstance(roll, Roll) else None,
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


_SIDE_NAMES: dict[Side, SideName] = {Side.BOTTOM: "bottom", Side.TOP: "top"}
_TURN_ACTIONS: dict[str, TurnAction] = {"move": "move", "double": "double", "take": "take", "drop": "drop",
                                        "resign": "resign"}


def _side_name(side: object) -> str | None:
    return side.value if isinstance(side, Side) else None


def build_result(path: list[Node], places: list[tuple[int, int]], evidence: list[BoardEvidence], length: int,
                 players: tuple[str, str], review_below: float,
                 gaps: GapMarks | None = None) -> SolveResult:
    """The solve's result for the best explanation ``path``: its games, turns, boards set aside and flags."""
    games: list[GameRecord] = []
    report_games: list[Game] = []
    skipped: list[Skipped] = []
    actions: list[Action] = []
    turns: list[Turn] = []
    state = MatchState(length)
    last_double_place: tuple[int, int] | None = None
    # The first turn after a gap in the page numbers: nothing on the boards may show the pages
    # missing, so it is flagged, and the rest of its game rests on it.
    after_gap = gaps.flagged(path, places) if gaps is not None else {}
    by_board = {node.board: node for node in path if node.board is not None}
    costly = _costly(path, evidence, review_below, by_board)
    # Boards flagged anyway (below the bar, tagged, resting) keep their own reasons and followers.
    decided_later = frozenset(id(node) for node in path
                              if node.board is not None and id(node) not in costly and not node.tags
                              and confidence(node) >= review_below and _decided_later(node, evidence[node.board]))
    inherited = _inherited_doubt(path, places, by_board, review_below, frozenset(after_gap), frozenset(costly),
                                 decided_later)
    for node in path:
        place = places[node.board] if node.board is not None else (last_place(places, path, node))
        exact = confidence(node) if node.board is not None else 1.0
        conf = round(exact, 4)
        # The bar is on the exact confidence, not its rounding: the rest of the game follows this board.
        doubtful = exact < review_below
        reasons = list(node.tags)
        ev = evidence[node.board] if node.board is not None else None
        candidates = tuple(
            _candidate(summary, round(p, 4), why) for summary, p, why in weighed_alternatives(node)
        ) if node.board is not None else ()
        board_actions = [e for e in node.events if e.kind in _KIND]
        if node.board is not None and not board_actions:
            if ev is not None and node.fit < POOR_FIT and not reasons:
                # Set aside (a names board, a blank) though the reader saw marks there: a short or
                # broken record can read better so than as turns of a game that never ends.
                if after_the_end(node):
                    # Not a names board: the match was over, so no turn could be read there at all.
                    reasons.append(AFTER_THE_END)
                else:
                    reasons.append(Reason.SET_ASIDE.flag() if any(e.kind == "blank" for e in node.events)
                                   else Reason.NAMES_BOARD.flag())
            if reasons:
                skipped.append(skipped_board(place, reasons))
            continue
        if state.is_over and board_actions:
            # A turn after the match was won is no part of it: the .mat ends with the match, as gnubg's does.
            skipped.append(skipped_board(place, reasons if AFTER_THE_END in reasons else [*reasons, AFTER_THE_END]))
            continue
        if ev is not None and doubtful:
            reasons.append(LOW_CONFIDENCE)
        elif ev is not None and id(node) in costly:
            reasons.append(Reason.RESTING_ON_BOARD.flag(turns=costly[id(node)]))
        elif ev is not None and id(node) in decided_later:
            reasons.append(Reason.LATER_BOARDS_DECIDED.flag())
        if id(node) in after_gap:
            reasons.append(after_gap[id(node)])
        if ev is not None and ev.reading.fit is not None and ev.reading.fit < UNSURE_FIT_BELOW:
            reasons.append(Reason.UNSURE_FIT.flag())
        illegal = any(reason.reason is Reason.ILLEGAL_MOVE for reason in reasons)
        if ev is not None and node.fit < POOR_FIT and not illegal:
            main = [e.kind for e in node.events if e.kind in ("move", "double")]
            reasons.append(Reason.NO_LEGAL_PLAY.flag() if main == ["move"] or not main
                           else Reason.NOT_A_DOUBLE.flag())
        elif ev is not None and misread_doubt(node) and not illegal:
            reasons.append(Reason.MISREAD_CELL.flag())
        # An unreadable centre says why a doubtful board is in doubt; where the rest of the board and
        # the rules leave its dice no rival (confidence above the bar) it is no reason to review it.
        if ev is not None and ev.centre_unreadable and doubtful:
            reasons.append(Reason.UNREADABLE_CENTRE.flag())
        follows = inherited.get(id(node))
        for event in node.events:
            if event.kind == "end":
                assert event.player is not None and event.value is not None
                games.append(GameRecord(len(games) + 1, state.score, tuple(actions), event.player, event.value))
                report_games.append(Game(len(games), tuple(turns), _SIDE_NAMES[event.player], event.value))
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
            last = turns[-1]
            turns[-1] = replace(last, flagged=True, reasons=last.reasons + (
                () if GAME_DOES_NOT_END in last.reasons else (GAME_DOES_NOT_END,)))
        report_games.append(Game(len(games), tuple(turns), None, None))
    match = MatchRecord(length, players, tuple(games))
    report = Report(tuple(report_games), tuple(skipped), summarise(report_games, skipped, len(evidence)))
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


def own_confidence(node: Node) -> float:
    """How sure ``node``'s board alone is of its decision, in [0, 1]: its marks, roll and play priors against
    the best other decision weighed for the board from the same position, no later board counted (1 when
    none was weighed)."""
    parent = node.parent
    mine = parent.parts.get(node.summary) if parent is not None else None
    if parent is None or mine is None:
        return 1.0
    others = [local + prior for summary, (local, _, prior) in parent.parts.items() if summary != node.summary]
    if not others:
        return 1.0
    return surety(mine[0] + mine[2], max(others))


def _decided_later(node: Node, evidence: BoardEvidence) -> bool:
    """Whether ``node``'s board, read unsurely (:data:`OWN_BELOW`), was decided by the later boards: its own
    marks and priors are less sure than :data:`OWN_BELOW` of the decision taken (it may even be the board's
    second choice). Moves only: a double's rivals include the same double answered elsewhere, which records the
    same (:func:`~digitise.solve.paths.decisions`)."""
    if not any(e.kind == "move" for e in node.events):
        return False
    unsure = any(max((c.probability for c in candidates), default=1.0) < OWN_BELOW
                 for candidates in evidence.reading.cells.values())
    return unsure and own_confidence(node) < OWN_BELOW


def _read_unsurely(evidence: BoardEvidence) -> bool:
    """Whether the reader was less sure than :data:`RESTING_DOUBT` of some cell of the board."""
    return any(max((c.probability for c in candidates), default=1.0) < RESTING_DOUBT
               for candidates in evidence.reading.cells.values())


def _inherited_doubt(path: list[Node], places: list[tuple[int, int]], by_board: dict[int, Node],
                     review_below: float, doubted: frozenset[int] = frozenset(),
                     wide: frozenset[int] = frozenset(),
                     flagged: frozenset[int] = frozenset()) -> dict[int, tuple[int, int]]:
    """Turns whose position rests on an earlier doubtful board, with that board's place.

    When a doubtful board's runner-up explanation leads to a different
    position, every later turn is only as right as that choice until the two
    explanations reach the same position again. So with every rival at least
    a thousandth as likely (:data:`FOLLOW_WITHIN`): the truth of a flagged
    board is not always its runner-up. Such turns are not flagged
    themselves (correcting the doubtful board re-decodes them) but say so. Boards in ``flagged``, flagged
    though sure by the bar, are followed along their rivals as a doubtful one is, as far as those are kept.
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
        if within < FOLLOW_WITHIN and (confidence(node) < review_below or id(node) in flagged):
            within = FOLLOW_WITHIN
        # One flagged though sure by the bar (``flagged``) is followed only as far as its kept rivals read
        # the later boards otherwise: a rival dropped from the beam does not put the rest of its game on it.
        sure = id(node) in flagged
        for rival in rivals(node, within):
            if rival is None:
                unknown = unknown or not sure  # dropped from the beam: where it leads is not known
                continue
            apart, met = _apart(node, rival, by_board)
            for mine in apart:
                out.setdefault(id(mine), places[node.board])
            if not met:
                unknown = unknown or not sure  # the runner-up was dropped before the two met again
        # A game end the marks do not show moves every later game's boards, scores and
        # Crawford game: the rest of the match rests on it.
        # So does a missing page: the game it cut has an unknown end, and the match's score after it.
        restart = any(tag.reason is Reason.GAME_END_UNRECORDED for tag in node.tags) or id(node) in doubted
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


def _turn(event: Event, action: Action, place: tuple[int, int], conf: float, reasons: list[Flag],
          candidates: tuple[Candidate, ...], follows: tuple[int, int] | None = None) -> Turn:
    before: Position | None = event.before
    after = before
    if event.kind == "move" and event.play is not None and event.play.steps:
        after = event.play.result
    turn_reasons = tuple(dict.fromkeys(reasons))
    assert event.player is not None
    return Turn(
        page=place[0],
        board=place[1],
        player=_SIDE_NAMES[event.player],
        action=_TURN_ACTIONS[event.kind],
        dice=(event.roll.high, event.roll.low) if event.roll is not None else None,
        move=str(action.play) if action.play is not None else "",
        points=event.value if event.kind == "resign" else None,
        confidence=conf,
        flagged=bool(turn_reasons),
        reasons=turn_reasons,
        candidates=candidates if event.kind in ("move", "double") else (),
        # Not flagged itself, but only as right as that flagged earlier board: correcting it re-decodes this.
        follows=Place(follows[0], follows[1]) if follows is not None else None,
        position_before=before.position_id() if before is not None else None,
        position_after=after.position_id() if after is not None else None,
    )


def skipped_board(place: tuple[int, int], reasons: list[Flag]) -> Skipped:
    """A board that records no turn but is flagged, as the report's ``skipped`` lists it."""
    return Skipped(place[0], place[1], True, tuple(reasons))


def summarise(games: Sequence[Game], skipped: Sequence[Skipped], boards: int) -> Summary:
    """The report's counts: boards, games, turns, flagged and set aside, and the mean confidence."""
    turns = [t for g in games for t in g.turns]
    set_aside = sum(1 for s in skipped if s.flagged)
    return Summary(
        boards=boards,
        games=len(games),
        turns=len(turns),
        # Turns and boards set aside alike: what the review page lists, and what the exit code follows.
        flagged=sum(1 for t in turns if t.flagged) + set_aside,
        set_aside=set_aside,
        mean_confidence=round(sum(t.confidence for t in turns) / len(turns), 4) if turns else 1.0,
    )


def report_to_json(report: Report | Mapping[str, Any]) -> str:
    """The report (or its JSON object, with the keys a scan adds) as deterministic JSON text."""
    doc = report.to_json() if isinstance(report, Report) else report
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
