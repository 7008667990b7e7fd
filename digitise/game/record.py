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
