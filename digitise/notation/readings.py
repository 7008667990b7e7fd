"""Readings: what the vision layer saw on each board, as candidates with probabilities.

This is the contract between ``digitise read`` and ``digitise solve``, a JSON
document::

    {"pages": [{"source": str, "page": int, "header": {...},
                "boards": [{"index": 1..8,
                            "cells": {"B7": [[[6], 0.97], [[5], 0.02]], "centre": [[[3, 6], 0.9]]},
                            "crossed": 0.95, "arrow": 0.01, "letters": 0.0}]}]}

Each listed cell has candidate readings (digits as written, probability); the
empty reading is ``[[], p]``; probabilities may sum to less than 1. An
unlisted cell is empty for certain.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from digitise.notation.marks import CELL_NAMES, BoardMarks


@dataclass(frozen=True, slots=True)
class CellReading:
    """One candidate reading of a cell: the digits as written and its probability."""

    digits: tuple[int, ...]
    probability: float


@dataclass(frozen=True, slots=True)
class BoardReading:
    """The candidates for every written cell of one board, and its board-level marks."""

    index: int
    cells: Mapping[str, tuple[CellReading, ...]] = field(default_factory=dict)
    crossed: float = 0.0
    arrow: float = 0.0
    letters: float = 0.0
    #: Optional: where the board was found on the page, for the review page crop [x, y, w, h] px.
    box: tuple[int, int, int, int] | None = None


@dataclass(frozen=True, slots=True)
class PageReading:
    """The readings of one page of a note."""

    source: str
    page: int
    boards: tuple[BoardReading, ...]
    #: Header fields as read: {"match_length": {"value": "7", "confidence": 0.9}, ...}
    header: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Readings:
    """All pages of one match, in order."""

    pages: tuple[PageReading, ...]


def certain_reading(index: int, marks: BoardMarks) -> BoardReading:
    """The reading a perfect reader would give of ``marks``: every mark with probability 1."""
    cells = {name: (CellReading(tuple(digits), 1.0),) for name, digits in marks.cells.items()}
    return BoardReading(
        index=index,
        cells=cells,
        crossed=1.0 if marks.crossed else 0.0,
        arrow=1.0 if marks.arrow else 0.0,
        letters=1.0 if marks.letters else 0.0,
    )


__all__ = ["CELL_NAMES", "BoardReading", "CellReading", "PageReading", "Readings", "certain_reading"]
