"""The game itself: positions, rules, match state. Pure: no I/O, no images."""

from digitise.game.match import Cube, MatchState, Score
from digitise.game.position import BAR, CHECKERS, OFF, Position, Side
from digitise.game.record import Action, ActionKind, GameRecord, MatchRecord
from digitise.game.rules import (
    ALL_ROLLS,
    GameValue,
    Play,
    Roll,
    Step,
    game_value,
    is_closed_out,
    legal_plays,
    play_from_moves,
)

__all__ = [
    "ALL_ROLLS", "BAR", "CHECKERS", "OFF", "Action", "ActionKind", "Cube", "GameRecord",
    "GameValue", "MatchRecord", "MatchState", "Play", "Position", "Roll", "Score", "Side",
    "Step", "game_value", "is_closed_out", "legal_plays", "play_from_moves",
]
