"""Writing ``.mat`` files exactly as GNU Backgammon 1.07 exports them, closed-out turns as dances.

The format and the record's conventions: :mod:`digitise.notation.mat`.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from digitise.errors import MatFormatError
from digitise.fileio import write_atomic
from digitise.game.match import MAX_MATCH_LENGTH, Score
from digitise.game.position import Position, Side
from digitise.game.record import Action, ActionKind, GameRecord, MatchRecord
from digitise.game.rules import ALL_ROLLS, Play, Roll, is_closed_out, legal_plays
from digitise.notation.mat_names import holds_name, kept_name
from digitise.notation.mat_read import side_column


def _points_word(points: int) -> str:
    return f"{points} point" if points == 1 else f"{points} points"


#: Width of gnubg's left column after the move number: ``"%3d) %-27s"``.
_LEFT_WIDTH = 27
_NAME_COLUMN = 31


def _play_text(roll: Roll, play: Play | None) -> str:
    """gnubg's ``52: 13/8 13/11`` (steps highest source first, ``*`` on hits, 25 bar, 0 off).

    gnubg leaves a space after each step of a play of fewer than four steps
    (and after the dice of a dance); copied so that its re-export is identical.
    """
    steps = sorted(play.steps, key=lambda s: (-s.source, -s.destination)) if play else []
    text = f"{roll}: " + " ".join(str(s) for s in steps)
    return text + " " if 0 < len(steps) < 4 else text


_DATE = re.compile(r"^\s*(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\s*$")


def _metadata_line(key: str, value: str) -> str:
    """``; [Key "value"]``; a date in gnubg's ``YYYY.MM.DD`` (it misreads other forms)."""
    value = value.replace('"', "'").replace("\n", " ").replace("\r", " ")
    date = _DATE.match(value) if key.lower() == "eventdate" else None
    if date:
        value = f"{date.group(1)}.{int(date.group(2)):02d}.{int(date.group(3)):02d}"
    return f'; [{key} "{value}"]'


def _score_line(players: tuple[str, str], score: Score) -> str:
    players = (kept_name(players[0]), kept_name(players[1]))
    left = f"{players[0]} : {score.bottom}"
    # gnubg pads with printf's %-31s, which counts bytes, not characters.
    pad = max(_NAME_COLUMN - len(left.encode("utf-8")), 1)
    return f" {left}{' ' * pad}{players[1]} : {score.top}"


class _Layout:
    """Lays entries out in gnubg's two columns, numbering lines as it goes.

    gnubg prints a left entry as ``"%3d) %-27s"`` and puts one space before a
    right entry, so the right column starts at 33 however long the left one is.
    """

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.number = 0
        self.left: str | None = None
        self.left_kind: ActionKind | None = None

    def put(self, side: Side, kind: ActionKind, text: str) -> None:
        if side is Side.BOTTOM:
            self.close()
            self.number += 1
            self.left, self.left_kind = f"{self.number:3d}) {text}", kind
            return
        if self.left is None:
            self.number += 1
            self.left = f"{self.number:3d}) "
        self.lines.append(self._padded() + " " + text)
        self.left = self.left_kind = None

    def _padded(self) -> str:
        assert self.left is not None
        return self.left.ljust(5 + _LEFT_WIDTH)

    def close(self) -> None:
        if self.left is not None:
            self.lines.append(self._padded() + " ")
            self.left = self.left_kind = None

    def result(self, winner: Side, points: int) -> None:
        words = f" Wins {_points_word(points)}"
        if winner is Side.TOP and self.left is not None:
            # gnubg's own spacing after each kind of left entry (checked against its export).
            if self.left_kind is ActionKind.MOVE:
                self.lines.append(self._padded() + words)
            elif self.left_kind is ActionKind.DROP:
                self.lines.append(self._padded() + " " + words + " ")
            else:
                self.lines.append(self._padded() + " " + words)
            self.left = self.left_kind = None
            return
        self.close()
        # Lone result lines keep gnubg's indentation (18+ characters, clear of its stale-line bug).
        self.lines.append(("     " if winner is Side.BOTTOM else " " * (6 + _LEFT_WIDTH)) + words)


#: The dice written for a closed-out turn the record does not hold (see :func:`with_closed_out_dances`).
CLOSED_OUT_ROLL = Roll(2, 1)


def with_closed_out_dances(match: MatchRecord, *, fill_gaps: bool = False) -> MatchRecord:
    """The match with every unrecorded turn of a closed-out player filled in as a dance.

    A recording note has no board for a player on the bar against a closed
    board, so a match read from notes has the opponent moving several times
    in a row. GNU Backgammon ignores the columns of a ``.mat`` file and simply
    alternates the players, so such a gap must be written as a dance: with
    :data:`CLOSED_OUT_ROLL`, since any roll dances there and the real one is
    unknown. Any other break in the alternation raises
    :class:`~digitise.errors.MatFormatError` (gnubg would silently misread it),
    unless ``fill_gaps``: then it too becomes a dance, of a roll that really
    cannot be played there when there is one. That is for matches read from
    paper whose missing boards are flagged for review: writing an approximate
    line beats losing the whole match.
    """
    games = tuple(_with_closed_out_dances(game, fill_gaps) for game in match.games)
    return match if games == match.games else replace(match, games=games)


def _dancing_roll(position: Position) -> Roll:
    """A roll with no legal play in ``position`` (player on roll), else :data:`CLOSED_OUT_ROLL`."""
    for roll in ALL_ROLLS:
        if not legal_plays(position, roll):
            return roll
    return CLOSED_OUT_ROLL


def _with_closed_out_dances(game: GameRecord, fill_gaps: bool = False) -> GameRecord:
    boards = {Side.BOTTOM: Position.initial().mine, Side.TOP: Position.initial().mine}
    actions: list[Action] = []
    last: Action | None = None
    for action in game.actions:
        if action.kind is ActionKind.RESIGN:
            actions.append(action)
            continue
        if last is not None and last.player is action.player:
            missing = action.player.opponent
            waiting = Position(boards[missing], boards[action.player])
            if last.kind is not ActionKind.MOVE or not is_closed_out(waiting):
                if not fill_gaps:
                    raise MatFormatError(f"game {game.number}: the {side_column(action.player)} player acts twice "
                                         f"in a row ({last.kind.value}, then {action.kind.value}) and the "
                                         f"{side_column(missing)} player is not closed out")
                actions.append(Action(missing, ActionKind.MOVE, roll=_dancing_roll(waiting)))
            else:
                actions.append(Action(missing, ActionKind.MOVE, roll=CLOSED_OUT_ROLL))
        actions.append(action)
        if action.play is not None:
            boards[action.player] = action.play.result.mine
            boards[action.player.opponent] = action.play.result.theirs
        last = action
    return game if len(actions) == len(game.actions) else replace(game, actions=tuple(actions))


def _game_lines(game: GameRecord, players: tuple[str, str]) -> list[str]:
    layout = _Layout()
    cube = 1
    for action in game.actions:
        if action.kind is ActionKind.MOVE:
            if action.roll is None:
                raise MatFormatError(f"game {game.number}: a move without a roll cannot be written")
            layout.put(action.player, action.kind, _play_text(action.roll, action.play))
        elif action.kind is ActionKind.DOUBLE:
            cube = action.cube or 2 * cube
            layout.put(action.player, action.kind, f" Doubles => {cube}")
        elif action.kind is ActionKind.TAKE:
            layout.put(action.player, action.kind, " Takes")
        elif action.kind is ActionKind.DROP:
            layout.put(action.player, action.kind, " Drops")
        # RESIGN writes nothing itself: the winner's "Wins N" line below says it.
    if game.winner is not None:
        resigned = [a.points for a in game.actions if a.kind is ActionKind.RESIGN and a.points]
        points = game.points if game.points is not None else (resigned or [1])[-1]
        layout.result(game.winner, points)
    layout.close()
    # gnubg ends a finished game with a blank line; an unfinished one ends the file.
    return [f" Game {game.number}", _score_line(players, game.score), *layout.lines,
            *([""] if game.winner is not None else [])]


def format_mat(match: MatchRecord, *, fill_gaps: bool = False) -> str:
    """The match as ``.mat`` text in GNU Backgammon's own layout (LF, deterministic).

    Metadata lines come first (``; [Event "..."]``), then `` N point match``
    and the games. Unrecorded turns of a closed-out player are written as dances
    (:func:`with_closed_out_dances`). Raises :class:`~digitise.errors.MatFormatError`
    for a match gnubg could not read back as meant (an empty player name crashes
    it; a player acting twice in a row is silently given to the other player),
    except that ``fill_gaps`` writes such a gap as a dance (see
    :func:`with_closed_out_dances`).
    """
    for name in match.players:
        if not name.strip() or not holds_name(name):
            raise MatFormatError(f"player name {name!r} cannot be written to a .mat file")
    if not 0 <= match.length <= MAX_MATCH_LENGTH:
        # GNU Backgammon imports nothing of a longer match, and no reader takes a negative one.
        raise MatFormatError(f"a {match.length}-point match cannot be written: GNU Backgammon takes 0 (unlimited) "
                             f"to {MAX_MATCH_LENGTH} points")
    lines = [_metadata_line(key, value) for key, value in match.metadata]
    if lines:
        lines.append("")
    lines += [f" {match.length} point match", ""]
    for game in with_closed_out_dances(match, fill_gaps=fill_gaps).games:
        lines += _game_lines(game, match.players)
    return "\n".join(lines) + "\n"


def write_mat(match: MatchRecord, path: str | Path, overwrite: bool = False) -> Path:
    """Write the match to ``path`` atomically (see :func:`format_mat`); refuses to overwrite unless asked."""
    return write_atomic(path, format_mat(match), overwrite=overwrite)
