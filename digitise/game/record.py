"""What happened in a match, action by action: the record that `.mat` files hold.

This is state, not notation: :mod:`digitise.notation.mat` reads and writes it,
:mod:`digitise.notation.marks` turns it into a note's boards, and the solver
produces it from readings.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from digitise.game.match import Score
from digitise.game.position import Side
from digitise.game.rules import Play, Roll


class ActionKind(enum.Enum):
    """The kinds of action a player takes in a game."""

    #: A roll and its play (``play`` is ``None`` or empty when it cannot be played).
    MOVE = "move"
    DOUBLE = "double"
    TAKE = "take"
    DROP = "drop"
    #: The player resigns; the opponent wins ``points``.
    RESIGN = "resign"


@dataclass(frozen=True, slots=True)
class Action:
    """One action by ``player``. ``cube`` is the value offered by a double."""

    player: Side
    kind: ActionKind
    roll: Roll | None = None
    play: Play | None = None
    cube: int | None = None
    points: int | None = None


@dataclass(frozen=True, slots=True)
class GameRecord:
    """One game: the score before it, its actions, the winner and the points won."""

    number: int
    score: Score
    actions: tuple[Action, ...]
    winner: Side | None = None
    points: int | None = None


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """A whole match. ``players`` is (bottom, top): the left and right ``.mat`` columns."""

    length: int
    players: tuple[str, str]
    games: tuple[GameRecord, ...]
    #: ``; [Key "value"]`` lines, in order (Event, Round, EventDate, ...).
    metadata: tuple[tuple[str, str], ...] = field(default=())


@dataclass(frozen=True, slots=True)
class MatchOutcome:
    """How a recorded match stands at its end: what a director's list of results gives."""

    players: tuple[str, str]
    #: The match length, 0 for unlimited.
    length: int
    games: int
    #: The score after the last game ended (a game left unfinished adds nothing); a winner's points are
    #: counted up to the length, as the match ends there.
    score: Score
    #: The player who reached the length; None while nobody has (a record that stops early, or unlimited).
    winner: Side | None

    @property
    def winner_name(self) -> str | None:
        """The winner's name, None when there is none."""
        return None if self.winner is None else self.players[0 if self.winner is Side.BOTTOM else 1]


def outcome(match: MatchRecord) -> MatchOutcome:
    """Who won ``match`` and by how much, from its games' scores and results."""
    score = Score()
    for game in match.games:
        score = game.score
        if game.winner is not None and game.points:
            points = game.points
            if match.length:
                points = min(points, max(0, match.length - score.of(game.winner)))
            score = score.add(game.winner, points)
    winner = None
    if match.length and max(score.bottom, score.top) >= match.length:
        winner = Side.BOTTOM if score.bottom >= match.length else Side.TOP
    return MatchOutcome(match.players, match.length, len(match.games), score, winner)
