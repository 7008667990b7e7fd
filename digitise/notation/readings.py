"""Readings: what the vision layer saw on each board, as candidates with probabilities.

This is the contract between ``digitise read`` and ``digitise solve``, a JSON
document::

    {"pages": [{"source": str, "page": int, "bytes": int (optional), "header": {...},
                "boards": [{"index": 1..8,
                            "cells": {"B7": [[[6], 0.97], [[5], 0.02]], "centre": [[[3, 6], 0.9]]},
                            "crossed": 0.95, "arrow": 0.01, "letters": 0.0,
                            "touches": {"W5": ["W6"]},
                            "fit": 0.3, "lines": [[[x, y], ...], ...]}]}]}

Each listed cell has candidate readings (digits as written, probability); the
empty reading is ``[[], p]``; probabilities may sum to less than 1. An
unlisted cell is empty for certain. ``touches`` (optional) names, for a point
square whose writing runs over one of its sides, the point square on the
other side: a digit there may have been meant for that square. ``fit``
(optional) says how sure the vision is that the board's squares were placed
where they are printed, 0..1, when it was unsure (absent: sure, or not
measured); ``lines`` then holds where its lines were placed, rows of line
crossings [x, y] in page pixels, to draw over the board's picture.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from digitise.errors import ReadingsError, short
from digitise.fileio import parse_json, read_text
from digitise.notation.marks import BOARDS_PER_PAGE, CELL_NAMES, NUMBER_CELLS, BoardMarks


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
    #: Point squares whose writing runs over a side, and the point square on that side: {"W5": ("W6",)}.
    touches: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: Optional: how sure the squares sit where printed, 0..1, said only when unsure (None: sure or not measured).
    fit: float | None = None
    #: Optional, with ``fit``: the board's line crossings as placed, rows of (x, y) page px, for an overlay.
    lines: tuple[tuple[tuple[int, int], ...], ...] | None = None


@dataclass(frozen=True, slots=True)
class PageReading:
    """The readings of one page of a note."""

    source: str
    page: int
    boards: tuple[BoardReading, ...]
    #: Header fields as read: {"match_length": {"value": "7", "confidence": 0.9}, ...}
    header: Mapping[str, Any] = field(default_factory=dict)
    #: The size of the file ``source`` when it was read (None: not recorded), by which a review's
    #: corrections file knows its pages wherever the readings are solved.
    source_bytes: int | None = None


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


def header_entry(page: PageReading, name: str) -> tuple[Any, float | None]:
    """A header field of ``page`` as read: its value (None when absent) and confidence (None when not said)."""
    found = page.header.get(name) if isinstance(page.header, Mapping) else None
    value = found.get("value") if isinstance(found, Mapping) else found
    confidence = found.get("confidence") if isinstance(found, Mapping) else None
    sure = float(confidence) if isinstance(confidence, (int, float)) else None
    return value, sure


def written_page_number(page: PageReading) -> tuple[int | None, float]:
    """The page number written in ``page``'s header and how sure it was read (0 when not said); None if none."""
    value, sure = header_entry(page, "page")
    if value is None or not str(value).strip().isdecimal() or len(str(value).strip()) > 6:
        return None, 0.0
    return int(str(value).strip()), sure if sure is not None else 0.0


def renumbered(readings: Readings) -> Readings:
    """``readings`` with its pages numbered 1..N in pile order.

    The reader numbers pages within their own file, so single-image pages are
    all page 1; the solver, the report and corrections need one number each.
    """
    return replace(readings, pages=tuple(replace(page, page=i) for i, page in enumerate(readings.pages, start=1)))


def paginate(boards: list[BoardReading], source: str = "") -> Readings:
    """Readings of consecutive boards laid out as a note: eight boards a page, pages numbered from 1."""
    pages = []
    for start in range(0, len(boards), BOARDS_PER_PAGE):
        chunk = tuple(boards[start:start + BOARDS_PER_PAGE])
        pages.append(PageReading(source, start // BOARDS_PER_PAGE + 1, chunk))
    return Readings(tuple(pages))


def _round(value: float) -> float:
    """Four decimal places, and ``0.0`` rather than ``-0.0``: byte-stable JSON."""
    return round(float(value), 4) + 0.0


def _board_to_dict(board: BoardReading) -> dict[str, Any]:
    cells = {
        name: [[list(c.digits), _round(c.probability)] for c in board.cells[name]]
        for name in CELL_NAMES if name in board.cells
    }
    out: dict[str, Any] = {
        "index": board.index,
        "cells": cells,
        "crossed": _round(board.crossed),
        "arrow": _round(board.arrow),
        "letters": _round(board.letters),
    }
    if board.box is not None:
        out["box"] = [int(v) for v in board.box]
    if board.touches:
        out["touches"] = {name: sorted(board.touches[name], key=CELL_NAMES.index)
                          for name in CELL_NAMES if board.touches.get(name)}
    if board.fit is not None:
        out["fit"] = _round(board.fit)
    if board.lines is not None:
        out["lines"] = [[[int(x), int(y)] for x, y in row] for row in board.lines]
    return out


def readings_to_dict(readings: Readings) -> dict[str, Any]:
    """The JSON-ready form of ``readings`` (cells in :data:`CELL_NAMES` order)."""
    return {
        "pages": [
            {
                "source": page.source,
                "page": page.page,
                **({"bytes": page.source_bytes} if page.source_bytes is not None else {}),
                "header": dict(page.header),
                "boards": [_board_to_dict(b) for b in page.boards],
            }
            for page in readings.pages
        ]
    }


def readings_to_json(readings: Readings) -> str:
    """``readings`` as the contract's JSON text: fixed key order, probabilities to 4 places.

    The same readings always give the same bytes, so outputs can be compared
    and cached.
    """
    # One board per line: readable, diff-friendly, and still plain JSON.
    lines = ['{"pages": [']
    for i, page in enumerate(readings_to_dict(readings)["pages"]):
        head = {k: page[k] for k in ("source", "page", "bytes") if k in page}
        lines.append(" " + json.dumps(head, ensure_ascii=False)[:-1]
                     + ', "header": ' + json.dumps(page["header"], sort_keys=True, ensure_ascii=False)
                     + ', "boards": [')
        boards = page["boards"]
        for j, board in enumerate(boards):
            lines.append("  " + json.dumps(board, ensure_ascii=False) + ("," if j + 1 < len(boards) else ""))
        lines.append(" ]}" + ("," if i + 1 < len(readings.pages) else ""))
    lines.append("]}")
    return "\n".join(lines) + "\n"


#: The point squares beside each point square, in its row (across the bar too: B7 and B6 are neighbours).
POINT_NEIGHBOURS: dict[str, tuple[str, ...]] = {
    f"{row}{i}": tuple(f"{row}{j}" for j in (i - 1, i + 1) if 1 <= j <= 12) for row in "BW" for i in range(1, 13)
}


#: The longest header text a readings file may hold (a name, an event): the reader writes a line.
MAX_HEADER_TEXT = 1000


class _Checker:
    """Validates one readings document, naming the JSON path of the first violation."""

    def __init__(self, source: str | Path | None) -> None:
        self.source = str(source) if source is not None else None

    def fail(self, where: str, reason: str) -> ReadingsError:
        return ReadingsError(reason, self.source, where)

    def probability(self, value: Any, where: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(where, f"probability must be a number, got {short(repr(value))}")
        try:
            inside = math.isfinite(value) and 0.0 <= value <= 1.0
        except OverflowError:  # an integer too large for a float
            inside = False
        if not inside:
            raise self.fail(where, f"probability must be within [0, 1], got {short(repr(value))}")
        return float(value)

    def integer(self, value: Any, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(where, f"must be an integer, got {short(repr(value))}")
        return value

    def cell(self, name: str, value: Any, where: str) -> tuple[CellReading, ...]:
        if not isinstance(value, list):
            raise self.fail(where, "a cell must be a list of [digits, probability] candidates")
        low = 0 if name in NUMBER_CELLS else 1
        high = 9 if name in NUMBER_CELLS else 6
        candidates = []
        for i, candidate in enumerate(value):
            here = f"{where}[{i}]"
            if not isinstance(candidate, list) or len(candidate) != 2:
                raise self.fail(here, "a candidate must be [digits, probability]")
            digits, probability = candidate
            if not isinstance(digits, list):
                raise self.fail(f"{here}[0]", "digits must be a list")
            if len(digits) > 4:
                raise self.fail(f"{here}[0]", f"at most 4 digits in a cell, got {len(digits)}")
            for j, digit in enumerate(digits):
                d = self.integer(digit, f"{here}[0][{j}]")
                if not low <= d <= high:
                    raise self.fail(f"{here}[0][{j}]", f"digit {d} out of range {low}-{high} in cell {name}")
            candidates.append(CellReading(tuple(digits), self.probability(probability, f"{here}[1]")))
        total = sum(c.probability for c in candidates)
        if total > 1.0 + 1e-3:
            raise self.fail(where, f"candidate probabilities sum to {total:.4f}, more than 1")
        return tuple(candidates)

    def header_field(self, entry: Any, where: str) -> None:
        """A header field as the reader writes it: ``{"value": text or number, "confidence": 0..1}``."""
        if not isinstance(entry, dict):
            return  # older readings wrote some fields bare: the solver reads what it can of them
        sure = entry.get("confidence")
        if isinstance(sure, (int, float)) and not isinstance(sure, bool):
            # A number must be one (a confidence too large for a float stopped the solver); anything else is
            # taken as no reading of the field, as the solver always has.
            self.probability(sure, f"{where}.confidence")
        found = entry.get("value")
        if isinstance(found, str) and len(found) > MAX_HEADER_TEXT:
            raise self.fail(f"{where}.value", f"over {MAX_HEADER_TEXT} characters: no header field holds as much")
        if isinstance(found, (int, float)) and not isinstance(found, bool) and abs(found) >= 10 ** 9:
            raise self.fail(f"{where}.value", f"{short(repr(found))} is no page number, length or name")

    def board(self, value: Any, where: str) -> BoardReading:
        if not isinstance(value, dict):
            raise self.fail(where, "a board must be an object")
        unknown = sorted(set(value) - {"index", "cells", "crossed", "arrow", "letters", "box", "touches", "fit",
                                     "lines"})
        if unknown:
            raise self.fail(where, f"unknown key {unknown[0]!r}")
        if "index" not in value:
            raise self.fail(where, "missing key 'index'")
        index = self.integer(value["index"], f"{where}.index")
        if not 1 <= index <= BOARDS_PER_PAGE:
            raise self.fail(f"{where}.index", f"board index must be 1..{BOARDS_PER_PAGE}, got {index}")
        raw_cells = value.get("cells", {})
        if not isinstance(raw_cells, dict):
            raise self.fail(f"{where}.cells", "cells must be an object")
        cells: dict[str, tuple[CellReading, ...]] = {}
        for name in sorted(raw_cells, key=lambda n: (CELL_NAMES.index(n) if n in CELL_NAMES else -1, n)):
            if name not in CELL_NAMES:
                raise self.fail(f"{where}.cells.{name}", f"unknown cell {name!r}")
            cells[name] = self.cell(name, raw_cells[name], f"{where}.cells.{name}")
        flags = {
            key: self.probability(value.get(key, 0.0), f"{where}.{key}")
            for key in ("crossed", "arrow", "letters")
        }
        box = value.get("box")
        if box is not None:
            if not isinstance(box, list) or len(box) != 4:
                raise self.fail(f"{where}.box", "box must be [x, y, width, height]")
            box = tuple(self.integer(v, f"{where}.box[{i}]") for i, v in enumerate(box))
        touches = self.touches(value.get("touches", {}), f"{where}.touches")
        fit = value.get("fit")
        if fit is not None:
            fit = self.probability(fit, f"{where}.fit")
        lines = self.lines(value["lines"], f"{where}.lines") if value.get("lines") is not None else None
        return BoardReading(index, cells, flags["crossed"], flags["arrow"], flags["letters"], box, touches, fit, lines)

    def lines(self, value: Any, where: str) -> tuple[tuple[tuple[int, int], ...], ...]:
        if not isinstance(value, list) or not value or not all(isinstance(row, list) and row for row in value):
            raise self.fail(where, "lines must be rows of [x, y] line crossings")
        rows = []
        for i, row in enumerate(value):
            points = []
            for j, point in enumerate(row):
                if not isinstance(point, list) or len(point) != 2:
                    raise self.fail(f"{where}[{i}][{j}]", "a line crossing must be [x, y]")
                points.append((self.integer(point[0], f"{where}[{i}][{j}][0]"),
                               self.integer(point[1], f"{where}[{i}][{j}][1]")))
            rows.append(tuple(points))
        return tuple(rows)

    def touches(self, value: Any, where: str) -> dict[str, tuple[str, ...]]:
        if not isinstance(value, dict):
            raise self.fail(where, "touches must be an object of point square -> neighbouring point squares")
        out: dict[str, tuple[str, ...]] = {}
        for name in sorted(value, key=lambda n: (CELL_NAMES.index(n) if n in CELL_NAMES else -1, n)):
            if name not in POINT_NEIGHBOURS:
                raise self.fail(f"{where}.{name}", f"{short(repr(name))} is no point square")
            others = value[name]
            if not isinstance(others, list) or not all(isinstance(o, str) for o in others):
                raise self.fail(f"{where}.{name}", "must be a list of point squares")
            for other in others:
                if other not in POINT_NEIGHBOURS[name]:
                    raise self.fail(f"{where}.{name}", f"{short(repr(other))} is not a point square beside {name}")
            out[name] = tuple(sorted(set(others), key=CELL_NAMES.index))
        return out

    def page(self, value: Any, where: str) -> PageReading:
        if not isinstance(value, dict):
            raise self.fail(where, "a page must be an object")
        source = value.get("source", "")
        if not isinstance(source, str):
            raise self.fail(f"{where}.source", "source must be a string")
        number = self.integer(value.get("page", 0), f"{where}.page")
        size = value.get("bytes")
        if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 0):
            raise self.fail(f"{where}.bytes", f"must be the file's size in bytes, got {short(repr(size))}")
        header = value.get("header", {})
        if not isinstance(header, dict):
            raise self.fail(f"{where}.header", "header must be an object")
        for name, entry in header.items():
            self.header_field(entry, f"{where}.header.{name}")
        boards = value.get("boards", [])
        if not isinstance(boards, list):
            raise self.fail(f"{where}.boards", "boards must be a list")
        parsed = tuple(self.board(b, f"{where}.boards[{i}]") for i, b in enumerate(boards))
        seen: set[int] = set()
        for i, board in enumerate(parsed):
            if board.index in seen:
                raise self.fail(f"{where}.boards[{i}].index", f"board {board.index} is on this page twice")
            seen.add(board.index)
        return PageReading(source, number, parsed, header, size)

    def readings(self, value: Any) -> Readings:
        if not isinstance(value, dict) or not isinstance(value.get("pages"), list):
            raise self.fail("$", "a readings document is an object with a list 'pages'")
        return Readings(tuple(self.page(p, f"$.pages[{i}]") for i, p in enumerate(value["pages"])))


def parse_readings(text: str, source: str | Path | None = None) -> Readings:
    """Parse a readings JSON document; raise :class:`ReadingsError` naming the JSON path of any violation."""
    value = parse_json(text, source, "a readings file", ReadingsError)
    return _Checker(source).readings(value)


def load_readings(path: str | Path) -> Readings:
    """Read and check the readings JSON file at ``path``."""
    return parse_readings(read_text(path, "a readings file", ReadingsError), path)


__all__ = [
    "CELL_NAMES", "BoardReading", "CellReading", "PageReading", "Readings", "certain_reading",
    "load_readings", "paginate", "parse_readings", "readings_to_dict", "readings_to_json",
]
