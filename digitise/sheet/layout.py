"""Compute the printed note's geometry and write ``templates/<paper>.json``.

The geometry files are generated, never hand-typed: every measure below is
derived from the paper size and a few design constants, so the two papers
share one layout and a change is one edit. :func:`write_templates`
regenerates the committed JSON (it is
deterministic: all measures are rounded to 0.01 mm): ``scripts/make-templates``.

Layout, landscape, millimetres from the top-left corner:

* four ArUco markers (``DICT_4X4_50``, ids 0-3 clockwise from top-left) in
  the corners, ``MARGIN`` from the edges, ``MARKER`` wide;
* a header band between the two top markers with two rows of labelled
  boxes (event, date, round / player_top, player_bottom, match_length, page);
* eight boards, two columns by four rows, in reading order (row by row:
  1 2 / 3 4 / 5 6 / 7 8), each with the rows of NOTATION.md::

      Bres | B12 .. B7 || B6 .. B1 | Boff
           |         centre          |
      Wres | W12 .. W7 || W6 .. W1 | Woff

  The board index is printed in the middle row under ``Bres``; small dots
  above the top row and below the bottom row mark every point column.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from digitise.fileio import make_folder, write_atomic
from digitise.notation.marks import BOTTOM_ROW, TOP_ROW
from digitise.notation.template import TEMPLATES_DIR

#: Paper sizes, landscape (width, height) in mm.
PAPERS: dict[str, tuple[float, float]] = {
    "a4": (297.0, 210.0),
    "letter": (279.4, 215.9),
}

MARGIN = 7.0
MARKER = 12.0
#: Space kept clear between a marker and anything printed (ArUco quiet zone).
MARKER_CLEARANCE = 3.0
#: Header: two rows, each a label line and a box.
HEADER_LABEL = 2.6
HEADER_BOX = 8.0
HEADER_ROW_GAP = 1.4
#: Gap between the two board columns.
COLUMN_GAP = {"a4": 10.0, "letter": 8.0}
MIN_CELL_W = 9.0
MIN_CELL_H = 11.0
CENTRE_H = 8.0
#: Dots sit this far outside the rows.
DOT_OFFSET = 1.6
DOT_RADIUS = 0.35

HEADER_ROWS: tuple[tuple[tuple[str, float], ...], ...] = (
    # (field, share of the row's width)
    (("event", 0.52), ("date", 0.26), ("round", 0.22)),
    (("player_top", 0.34), ("player_bottom", 0.34), ("match_length", 0.16), ("page", 0.16)),
)
#: Printed labels of the header fields.
FIELD_LABELS: dict[str, str] = {
    "event": "Event",
    "date": "Date",
    "round": "Round",
    "match_length": "Match to",
    "player_top": "Black (top)",
    "player_bottom": "White (bottom)",
    "page": "Page",
}


def _r(value: float) -> float:
    """Round to 0.01 mm so the JSON is stable across platforms."""
    return round(value + 0.0, 2)


def _rect(x: float, y: float, w: float, h: float) -> list[float]:
    return [_r(x), _r(y), _r(w), _r(h)]


def compute_geometry(paper: str) -> dict[str, Any]:
    """The geometry document of ``paper`` (see the module docstring)."""
    if paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r}; known: {', '.join(sorted(PAPERS))}")
    page_w, page_h = PAPERS[paper]

    markers = []
    corners = (
        (MARGIN, MARGIN),
        (page_w - MARGIN - MARKER, MARGIN),
        (page_w - MARGIN - MARKER, page_h - MARGIN - MARKER),
        (MARGIN, page_h - MARGIN - MARKER),
    )
    for marker_id, (x, y) in enumerate(corners):
        markers.append({"id": marker_id, "dictionary": "DICT_4X4_50", "rect_mm": _rect(x, y, MARKER, MARKER)})

    # Header band: between the top markers, starting level with their top edge.
    header_left = MARGIN + MARKER + MARKER_CLEARANCE + 2.0
    header_right = page_w - header_left
    header_w = header_right - header_left
    fields: dict[str, list[float]] = {}
    labels: dict[str, list[float]] = {}
    y = MARGIN
    field_gap = 3.0
    for header_row in HEADER_ROWS:
        usable = header_w - field_gap * (len(header_row) - 1)
        x = header_left
        for name, share in header_row:
            w = usable * share
            labels[name] = _rect(x, y, w, HEADER_LABEL)
            fields[name] = _rect(x, y + HEADER_LABEL, w, HEADER_BOX)
            x += w + field_gap
        y += HEADER_LABEL + HEADER_BOX + HEADER_ROW_GAP
    header_bottom = y - HEADER_ROW_GAP

    # Boards: two columns, cells as wide as the width allows (quarter mm steps).
    gap = COLUMN_GAP[paper]
    cell_w = math.floor((page_w - 2 * MARGIN - gap) / (2 * len(TOP_ROW)) * 4) / 4
    if cell_w < MIN_CELL_W:
        raise ValueError(f"{paper}: cells would be {cell_w} mm wide, below {MIN_CELL_W}")
    board_w = cell_w * len(TOP_ROW)
    left0 = (page_w - (2 * board_w + gap)) / 2
    area_top = header_bottom + 3.0 + DOT_OFFSET
    area_bottom = page_h - MARGIN - MARKER - MARKER_CLEARANCE - DOT_OFFSET
    # Rows as tall as the height allows (half mm steps), with at least 4 mm between boards.
    min_gap = 4.0 + 2 * DOT_OFFSET
    row_h = math.floor(((area_bottom - area_top - 3 * min_gap) / 4 - CENTRE_H) / 2 * 2) / 2
    row_h = min(row_h, 14.0)
    if row_h < MIN_CELL_H:
        raise ValueError(f"{paper}: cells would be {row_h} mm tall, below {MIN_CELL_H}")
    board_h = 2 * row_h + CENTRE_H
    board_gap = (area_bottom - area_top - 4 * board_h) / 3

    boards = []
    for index in range(1, 9):
        col, row = (index - 1) % 2, (index - 1) // 2
        bx = left0 + col * (board_w + gap)
        by = area_top + row * (board_h + board_gap)
        cells: dict[str, list[float]] = {}
        for k, name in enumerate(TOP_ROW):
            cells[name] = _rect(bx + k * cell_w, by, cell_w, row_h)
        for k, name in enumerate(BOTTOM_ROW):
            cells[name] = _rect(bx + k * cell_w, by + row_h + CENTRE_H, cell_w, row_h)
        cells["centre"] = _rect(bx + cell_w, by + row_h, 12 * cell_w, CENTRE_H)
        dots = []
        for k in range(1, 13):
            cx = bx + (k + 0.5) * cell_w
            dots.append([_r(cx), _r(by - DOT_OFFSET)])
            dots.append([_r(cx), _r(by + board_h + DOT_OFFSET)])
        boards.append({
            "index": index,
            "cells": cells,
            # Extensions: where the printed index and the locating dots are.
            "label_mm": _rect(bx, by + row_h, cell_w, CENTRE_H),
            "dots_mm": dots,
        })

    return {
        "name": paper,
        "page_mm": [_r(page_w), _r(page_h)],
        "markers": markers,
        "fields": fields,
        "boards": boards,
        "field_labels_mm": labels,
        "style": {
            "line_grey": 0.55,
            "line_mm": 0.2,
            "thick_line_mm": 0.5,
            "dot_radius_mm": DOT_RADIUS,
        },
    }


def geometry_json(paper: str) -> str:
    """The geometry of ``paper`` as the committed JSON text."""
    return json.dumps(compute_geometry(paper), indent=1, sort_keys=False) + "\n"


def write_templates(folder: Path = TEMPLATES_DIR) -> list[Path]:
    """Regenerate ``templates/*.json`` in ``folder`` (the only place these files come from); their paths."""
    make_folder(folder)
    # Replaced on purpose (this is where they come from), but never left half-written.
    return [write_atomic(folder / f"{paper}.json", geometry_json(paper), overwrite=True) for paper in sorted(PAPERS)]
