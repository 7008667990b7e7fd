"""Building positions for the tests: checkers as {point: count} in each side's own numbering."""

from __future__ import annotations

from digitise.game.position import BAR, CHECKERS, OFF, Position

START = {24: 2, 13: 5, 8: 3, 6: 5}


def side(points: dict[int, int]) -> tuple[int, ...]:
    """A 26-slot side from {point: count} (25 is the bar); the rest are borne off."""
    slots = [0] * 26
    for point, count in points.items():
        slots[point] += count
    slots[OFF] = CHECKERS - sum(slots)
    return tuple(slots)


def position(mine: dict[int, int], theirs: dict[int, int]) -> Position:
    """The position with the player on roll's checkers ``mine`` and the opponent's ``theirs``."""
    return Position(side(mine), side(theirs))


def points(slots: tuple[int, ...]) -> dict[int, int]:
    """The occupied points of a side (bar as 25, off left out), for readable assertions."""
    return {p: n for p, n in enumerate(slots) if n and p != OFF}


__all__ = ["BAR", "START", "points", "position", "side"]
