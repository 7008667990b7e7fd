"""The marks on a recording note: which digits stand in which squares of a board.

The cell names follow NOTATION.md: ``B1``..``B12`` (top row, Black's side),
``W1``..``W12`` (bottom row, White's side), ``Boff``, ``Woff``, ``centre``,
``Bres``, ``Wres``. White is the bottom player, Black the top one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from digitise.game.position import Side

POINT_CELLS: tuple[str, ...] = tuple(f"B{i}" for i in range(1, 13)) + tuple(f"W{i}" for i in range(1, 13))
CELL_NAMES: tuple[str, ...] = POINT_CELLS + ("Boff", "Woff", "centre", "Bres", "Wres")
#: The squares of a board's two rows as printed, left to right: result, points 12 down to 1, off.
TOP_ROW: tuple[str, ...] = ("Bres",) + tuple(f"B{i}" for i in range(12, 0, -1)) + ("Boff",)
BOTTOM_ROW: tuple[str, ...] = ("Wres",) + tuple(f"W{i}" for i in range(12, 0, -1)) + ("Woff",)
#: Cells whose digits form a number (0-9 each); elsewhere digits are dice (1-6).
NUMBER_CELLS: frozenset[str] = frozenset({"Bres", "Wres"})
BOARDS_PER_PAGE = 8


def _squares(side: Side) -> tuple[str, ...]:
    own, other = ("W", "B") if side is Side.BOTTOM else ("B", "W")
    return (f"{own}off",) + tuple(f"{own}{p}" if p <= 12 else f"{other}{25 - p}" for p in range(1, 25))


#: The square of each point 0-24, per side: the solver asks this hundreds of thousands of times a match.
_SQUARES = {side: _squares(side) for side in Side}


def cell_of_point(side: Side, point: int) -> str:
    """The square where ``side``'s point ``point`` (its own numbering; 0 = off) is written."""
    if not 0 <= point <= 24:
        raise ValueError(f"no square for point {point}")
    return _SQUARES[side][point]


def point_of_cell(side: Side, cell: str) -> int:
    """Inverse of :func:`cell_of_point`: ``side``'s point number for a point or off square."""
    if cell in ("Woff", "Boff"):
        if cell != ("Woff" if side is Side.BOTTOM else "Boff"):
            raise ValueError(f"{cell} is not {side.value}'s off square")
        return 0
    row, number = cell[0], int(cell[1:])
    own = "W" if side is Side.BOTTOM else "B"
    return number if row == own else 25 - number


def result_cell(side: Side) -> str:
    """The result square of ``side`` (where the points it won are written)."""
    return "Wres" if side is Side.BOTTOM else "Bres"


@dataclass(frozen=True, slots=True)
class BoardMarks:
    """What is written on one board.

    ``cells`` maps a cell name to its digits as written, left to right (only
    cells with digits appear). ``crossed``: an X over the centre's digits.
    ``arrow``: the arrow of a double. ``letters``: names written on a
    game-start board, cell name to text.
    """

    cells: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    crossed: bool = False
    arrow: bool = False
    letters: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name, digits in self.cells.items():
            if name not in CELL_NAMES:
                raise ValueError(f"unknown cell {name!r}")
            if not digits or len(digits) > 4:
                raise ValueError(f"cell {name} must hold 1 to 4 digits, got {digits!r}")
        # Freeze the mappings so a BoardMarks can be hashed and shared safely.
        object.__setattr__(self, "cells", _FrozenDict(sorted(self.cells.items(), key=lambda kv: CELL_NAMES.index(kv[0]))))
        object.__setattr__(self, "letters", _FrozenDict(sorted(self.letters.items())))

    @property
    def is_blank(self) -> bool:
        """True when nothing at all is written on the board."""
        return not self.cells and not self.crossed and not self.arrow and not self.letters


class _FrozenDict(dict[str, object]):
    """A dict that refuses changes and hashes by content."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self.items()))

    def _refuse(self, *args: object, **kwargs: object) -> None:
        raise TypeError("BoardMarks are immutable")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]
