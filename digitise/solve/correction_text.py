"""Corrections as text: a board's correction string parsed into a hard constraint."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from digitise.errors import ReadingsError, short
from digitise.game.position import Side
from digitise.game.rules import Roll
from digitise.notation.mat import parse_steps
from digitise.solve.nodes import Forced

_MOVE = re.compile(r"^(?:(bottom|top)\s+)?([1-6])([1-6])\s*:\s*(.*)$", re.IGNORECASE)
_WINS = re.compile(r"^(bottom|top)\s+wins\s+(\d+)$", re.IGNORECASE)
_RESIGN = re.compile(r"^resign\s+(\d+)$", re.IGNORECASE)


def parse_correction(text: str, where: str = "") -> Forced:
    """Read one correction string (format in the module docstring); raise ReadingsError if malformed."""
    player: Side | None = None
    roll: Roll | None = None
    moves: tuple[tuple[int, int], ...] | None = None
    hits: frozenset[int] | None = None
    double = resign = blank = False
    response: str | None = None
    winner: Side | None = None
    points: int | None = None

    def bad(reason: str) -> ReadingsError:
        return ReadingsError(f"correction {short(str(text))!r}: {reason}", None, where or None)

    parts = [p.strip() for p in str(text).split(";") if p.strip()]
    if not parts:
        raise bad("empty")
    for part in parts:
        low = part.lower()
        if low == "double":
            double = True
        elif low in ("take", "drop"):
            if response is not None:
                raise bad(f"one board holds one answer to a double: {response!r} and {low!r}")
            response = low
        elif low == "blank":
            blank = True
        elif m := _WINS.match(part):
            winner, points, resign = Side(m.group(1).lower()), int(m.group(2)), True
        elif m := _RESIGN.match(part):
            points, resign = int(m.group(1)), True
        elif m := _MOVE.match(part):
            if roll is not None:
                # One board records one turn: a second move would silently start a game of its own.
                raise bad(f"one board holds one move, {part!r} is a second")
            if m.group(1):
                player = Side(m.group(1).lower())
            roll = Roll(int(m.group(2)), int(m.group(3)))
            moves, hits = _parse_moves(m.group(4), bad)
        else:
            raise bad(f"cannot read {part!r}")
    if points is not None and points < 1:
        raise bad("points must be at least 1")
    return Forced(player, roll, moves, double, response, winner, points, resign, blank, hits)


def _parse_moves(text: str, bad: Any) -> tuple[tuple[tuple[int, int], ...], frozenset[int] | None]:
    """A correction's moves, and its hit marks (None when it writes no ``*``: the marks decide)."""
    text = text.strip()
    if not text or text.lower() in ("cannot move", "can't move"):
        return (), None
    try:
        moves, hits = parse_steps(text)
    except ValueError as exc:
        raise bad(str(exc)) from None
    return tuple(moves), (frozenset(hits) if "*" in text else None)


def parse_corrections(value: Mapping[str, Any]) -> dict[tuple[int, int], str]:
    """The JSON form ``{"page:board": "correction", ...}`` as :func:`solve` takes it."""
    out: dict[tuple[int, int], str] = {}
    for key, text in value.items():
        m = re.fullmatch(r"\s*(\d+)\s*:\s*(\d+)\s*", str(key))
        if not m or not isinstance(text, str):
            raise ReadingsError(f"a correction is \"page:board\": \"text\", got {key!r}: {text!r}")
        parse_correction(text, where=str(key))
        out[(int(m.group(1)), int(m.group(2)))] = text
    return out
