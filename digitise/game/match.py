"""Match bookkeeping: score, cube, Crawford, and who may double."""

from __future__ import annotations

from dataclasses import dataclass, replace

from digitise.game.position import Side


@dataclass(frozen=True, slots=True)
class Score:
    """Points each player has in the match."""

    bottom: int = 0
    top: int = 0

    def of(self, side: Side) -> int:
        """The points of ``side``."""
        return self.bottom if side is Side.BOTTOM else self.top

    def add(self, side: Side, points: int) -> Score:
        """The score after ``side`` wins ``points``."""
        if side is Side.BOTTOM:
            return Score(self.bottom + points, self.top)
        return Score(self.bottom, self.top + points)


@dataclass(frozen=True, slots=True)
class Cube:
    """The doubling cube: its value and owner (``None``: centred)."""

    value: int = 1
    owner: Side | None = None

    def doubled_by(self, side: Side) -> Cube:
        """The cube after ``side`` doubles and the opponent takes: the taker owns it."""
        return Cube(self.value * 2, side.opponent)


#: The longest match GNU Backgammon plays (its MAXSCORE): a longer length is a misreading or a typo.
MAX_MATCH_LENGTH = 64


@dataclass(frozen=True, slots=True)
class MatchState:
    """A match between games: its length (0 for unlimited), score and Crawford status.

    Jacoby does not apply in matches; gammons always count.
    """

    length: int
    score: Score = Score()
    #: The game about to be played is the Crawford game (no doubling).
    crawford: bool = False
    #: The Crawford game has been played (or skipped because the match began at length-1).
    crawford_done: bool = False

    @property
    def is_over(self) -> bool:
        """True once a player has reached the match length."""
        return self.length > 0 and max(self.score.bottom, self.score.top) >= self.length

    @property
    def winner(self) -> Side | None:
        """The winner of the match, once it is over."""
        if not self.is_over:
            return None
        return Side.BOTTOM if self.score.bottom >= self.length else Side.TOP

    def needs(self, side: Side) -> int:
        """Points ``side`` still needs to win the match (large for unlimited)."""
        return self.length - self.score.of(side) if self.length else 1 << 30

    def may_double(self, side: Side, cube: Cube) -> bool:
        """True when ``side`` may offer the cube in the current game.

        Never in the Crawford game, and never with a dead cube: a player who
        already wins the match by winning this game at the current value (so
        in every game of a 1-point match) gains nothing by doubling, and GNU
        Backgammon does not let them (it rolls for them at once).
        """
        if self.crawford or self.is_over:
            return False
        if self.length and self.needs(side) <= cube.value:
            return False
        return cube.owner is None or cube.owner is side

    def after_game(self, winner: Side, points: int) -> MatchState:
        """The state after ``winner`` wins ``points`` (uncapped; the score is what counts)."""
        score = self.score.add(winner, points)
        state = replace(self, score=score, crawford=False)
        if self.crawford:
            return replace(state, crawford_done=True)
        if self.length and not self.crawford_done and score.of(winner) == self.length - 1 \
                and score.of(winner.opponent) < self.length - 1:
            return replace(state, crawford=True)
        return state

    def capped(self, winner: Side, points: int) -> int:
        """``points`` capped at what ``winner`` needed to win the match."""
        return min(points, self.needs(winner)) if self.length else points
