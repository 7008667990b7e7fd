"""Board positions, seen from the side of the player on roll.

A side's checkers are a 26-tuple indexed by that side's own point numbers:
index 0 is borne off, 1..24 are the points counted from its home, 25 is the
bar. My point ``p`` is the opponent's point ``25 - p``.
"""

from __future__ import annotations

import base64
import enum
from dataclasses import dataclass

BAR = 25
OFF = 0
CHECKERS = 15

_START = (0, 0, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0)


class Side(enum.Enum):
    """The two players as the recording note places them."""

    #: White, the recorder's side: the left column of a ``.mat`` file.
    BOTTOM = "bottom"
    #: Black: the right column of a ``.mat`` file.
    TOP = "top"

    @property
    def opponent(self) -> Side:
        """The other player."""
        return Side.TOP if self is Side.BOTTOM else Side.BOTTOM


@dataclass(frozen=True, slots=True)
class Position:
    """Checkers of the player on roll (``mine``) and of the opponent (``theirs``)."""

    mine: tuple[int, ...]
    theirs: tuple[int, ...]

    def __post_init__(self) -> None:
        for name, side in (("mine", self.mine), ("theirs", self.theirs)):
            if len(side) != 26 or min(side) < 0 or sum(side) != CHECKERS:
                raise ValueError(f"{name} must hold 15 checkers on 26 slots, got {side!r}")
        for p in range(1, 25):
            if self.mine[p] and self.theirs[25 - p]:
                raise ValueError(f"both sides have checkers on point {p}")

    @classmethod
    def _unchecked(cls, mine: tuple[int, ...], theirs: tuple[int, ...]) -> Position:
        """A position built without validation, for the rules engine's own results.

        A legal step from a valid position is valid by construction, and
        validating every generated play's result would cost about half the
        time of :func:`~digitise.game.rules.legal_plays`.
        """
        position = object.__new__(cls)
        object.__setattr__(position, "mine", mine)
        object.__setattr__(position, "theirs", theirs)
        return position

    @classmethod
    def initial(cls) -> Position:
        """The starting position."""
        return cls(_START, _START)

    def swap(self) -> Position:
        """The same board seen by the opponent (who is now on roll)."""
        return Position(self.theirs, self.mine)

    @property
    def pip_count(self) -> tuple[int, int]:
        """Pips to bear off for (mine, theirs)."""
        return (
            sum(p * n for p, n in enumerate(self.mine)),
            sum(p * n for p, n in enumerate(self.theirs)),
        )

    @property
    def borne_off(self) -> tuple[int, int]:
        """Checkers borne off for (mine, theirs)."""
        return (self.mine[OFF], self.theirs[OFF])

    def position_id(self) -> str:
        """GNU Backgammon's position ID (14 characters of base64)."""
        bits: list[int] = []
        # gnubg's key lists the player not on roll first, points 1..24 then the bar.
        for side in (self.theirs, self.mine):
            for p in range(1, 26):
                bits.extend([1] * side[p])
                bits.append(0)
        key = bytearray(10)
        for i, bit in enumerate(bits):
            if bit:
                key[i // 8] |= 1 << (i % 8)
        return base64.b64encode(bytes(key)).decode("ascii").rstrip("=")

    @classmethod
    def from_position_id(cls, pid: str) -> Position:
        """Inverse of :meth:`position_id`; raises ``ValueError`` on a bad ID."""
        try:
            key = base64.b64decode(pid + "=" * (-len(pid) % 4), validate=True)
        except ValueError as exc:
            raise ValueError(f"not a position ID: {pid!r}") from exc
        if len(key) != 10:
            raise ValueError(f"not a position ID: {pid!r}")
        sides: list[list[int]] = [[0] * 26, [0] * 26]
        side, point = 0, 1
        for i in range(80):
            if side > 1:
                break
            if key[i // 8] >> (i % 8) & 1:
                sides[side][point] += 1
            else:
                point += 1
                if point > 25:
                    side, point = side + 1, 1
        for s in sides:
            s[OFF] = CHECKERS - sum(s)
            if s[OFF] < 0:
                raise ValueError(f"position ID {pid!r} has more than 15 checkers a side")
        return cls(tuple(sides[1]), tuple(sides[0]))

    def __repr__(self) -> str:
        def side(s: tuple[int, ...]) -> str:
            pts = " ".join(f"{p}:{n}" for p, n in enumerate(s) if n and 0 < p < 25)
            extra = "".join(f" bar:{s[BAR]}" if s[BAR] else "") + (f" off:{s[OFF]}" if s[OFF] else "")
            return pts + extra
        return f"Position({self.position_id()} mine=[{side(self.mine)}] theirs=[{side(self.theirs)}])"
