"""Turn-by-turn comparison of a solved match with the true one: what "turns right" means.

A note cannot hold a closed-out player's rolls nor a roll thrown and then
conceded, so those are left out of the truth. A turn is a move (player, dice,
position after it), a double, a take or a drop; it is right when it is found,
in order, in the solved match. Games are compared by winner and points, the
points capped at what the winner needed.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

from digitise.game.match import MatchState
from digitise.game.position import Position, Side
from digitise.game.record import ActionKind, GameRecord, MatchRecord
from digitise.game.rules import is_closed_out, legal_plays
from digitise.solve.report_types import Report

TurnKey = tuple[object, ...]


def game_turns(game: GameRecord, *, by_line: bool = False) -> list[tuple[int, TurnKey]]:
    """(action index, key) of every turn of ``game`` a note can record, in order.

    A move's key holds the position after it; with ``by_line`` it holds the
    play as the ``.mat`` line writes it instead, so one misread turn does not
    make every later turn of its game count as wrong too.
    """
    pos = Position.initial()  # seen by the bottom player
    out: list[tuple[int, TurnKey]] = []
    for i, action in enumerate(game.actions):
        side = action.player
        mine = pos if side is Side.BOTTOM else pos.swap()
        if action.kind is ActionKind.MOVE:
            if action.roll is None:
                continue
            play = action.play if action.play is not None and action.play.steps else None
            if play is None:
                if is_closed_out(mine) or legal_plays(mine, action.roll):
                    continue  # closed out, or thrown and conceded: not on the note
                out.append((i, (side, "move", action.roll, "" if by_line else mine)))
                continue
            after = play.result
            pos = after if side is Side.BOTTOM else after.swap()
            out.append((i, (side, "move", action.roll, str(play) if by_line else after)))
        elif action.kind in (ActionKind.DOUBLE, ActionKind.TAKE, ActionKind.DROP):
            out.append((i, (side, action.kind.value)))
    return out


def game_results(match: MatchRecord) -> list[tuple[Side | None, int | None]]:
    """(winner, points capped at what the winner needed) per game."""
    state = MatchState(match.length)
    out: list[tuple[Side | None, int | None]] = []
    for game in match.games:
        if game.winner is None or game.points is None:
            out.append((None, None))
            continue
        out.append((game.winner, state.capped(game.winner, game.points)))
        state = state.after_game(game.winner, game.points)
    return out


@dataclass(frozen=True, slots=True)
class Comparison:
    """How a solved match compares with the truth."""

    #: Turns in the truth.
    turns: int
    #: Truth turns found, in order, in the solved match.
    right: int
    #: Solved turns not in the truth (wrong), and of those, the ones not flagged.
    wrong: int
    silent: int
    #: Solved turns flagged for review, or following a flagged board.
    flagged: int
    #: Games whose winner or (capped) points differ.
    results_wrong: int
    #: Separate runs of differing turns (a misread and the turns that follow from it).
    runs: int
    #: Descriptions of the first differences, for debugging.
    differences: tuple[str, ...]
    #: Truth turns whose .mat line (player, dice, play as written) is found, in order.
    lines_right: int = 0


def compare(truth: MatchRecord, solved: MatchRecord, report: Report | None = None) -> Comparison:
    """Compare ``solved`` (and its report's flags) with ``truth``, turn by turn.

    ``report``'s turns are taken by action: its n-th turn of a game is the game's n-th action.
    """
    truth_keys = [(g, key) for g, game in enumerate(truth.games) for _, key in game_turns(game)]
    solved_keys: list[tuple[int, TurnKey]] = []
    flags: list[bool] = []
    for g, game in enumerate(solved.games):
        turns = report.games[g].turns if report is not None else ()
        for i, key in game_turns(game):
            solved_keys.append((g, key))
            # A turn that follows a flagged board is covered by it: correcting that board re-decodes it.
            flags.append(turns[i].flagged or turns[i].follows is not None if i < len(turns) else False)
    matcher = difflib.SequenceMatcher(None, truth_keys, solved_keys, autojunk=False)
    matched_solved = _matched(matcher)
    right = len(matched_solved)
    wrong = [j for j in range(len(solved_keys)) if j not in matched_solved]
    silent = [j for j in wrong if not flags[j]]
    differences: list[str] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal" and len(differences) < 5:
            differences.append(f"{tag} truth[{i1}:{i2}]={_show(truth_keys[i1:i2])} "
                               f"solved[{j1}:{j2}]={_show(solved_keys[j1:j2])}")
    truth_results, solved_results = game_results(truth), game_results(solved)
    results_wrong = sum(1 for a, b in zip(truth_results, solved_results, strict=False) if a != b)
    results_wrong += abs(len(truth_results) - len(solved_results))
    runs = sum(1 for op in matcher.get_opcodes() if op[0] != "equal")
    truth_lines = [(g, key) for g, game in enumerate(truth.games) for _, key in game_turns(game, by_line=True)]
    solved_lines = [(g, key) for g, game in enumerate(solved.games) for _, key in game_turns(game, by_line=True)]
    lines = difflib.SequenceMatcher(None, truth_lines, solved_lines, autojunk=False)
    lines_right = sum(block.size for block in lines.get_matching_blocks())
    return Comparison(len(truth_keys), right, len(wrong), len(silent), sum(flags), results_wrong, runs,
                      tuple(differences), lines_right)


def solved_turns_right(truth: MatchRecord, solved: MatchRecord) -> list[tuple[int, int, bool]]:
    """(game index, action index, right) of every turn of ``solved`` a note records, in order: right
    when :func:`compare` finds it in the truth (so a report's turn can be told right or wrong)."""
    truth_keys = [(g, key) for g, game in enumerate(truth.games) for _, key in game_turns(game)]
    solved_turns = [(g, i, key) for g, game in enumerate(solved.games) for i, key in game_turns(game)]
    matcher = difflib.SequenceMatcher(None, truth_keys, [(g, key) for g, _, key in solved_turns], autojunk=False)
    matched = _matched(matcher)
    return [(g, i, j in matched) for j, (g, i, _) in enumerate(solved_turns)]


def _matched(matcher: difflib.SequenceMatcher[tuple[int, TurnKey]]) -> set[int]:
    """Indices of the second sequence inside the matcher's matching blocks."""
    out: set[int] = set()
    for block in matcher.get_matching_blocks():
        out.update(range(block.b, block.b + block.size))
    return out


def _show(keys: Sequence[tuple[int, TurnKey]]) -> str:
    out = []
    for g, key in keys[:3]:
        side, kind = key[0], key[1]
        extra = f" {key[2]} {key[3].position_id()}" if kind == "move" else ""  # type: ignore[attr-defined]
        out.append(f"g{g + 1} {side.value} {kind}{extra}")  # type: ignore[attr-defined]
    return "[" + ", ".join(out) + (", ..." if len(keys) > 3 else "") + "]"
