"""The SVG board diagram: checkers where the position says, laid out like the note."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np

from digitise.game.position import Position, Side
from digitise.game.rules import Roll, play_from_moves
from digitise.review.board_svg import board_svg

NS = {"s": "http://www.w3.org/2000/svg"}


def checkers(svg: str, side: str) -> list[tuple[float, float]]:
    root = ET.fromstring(svg)
    return [
        (float(c.get("cx", 0)), float(c.get("cy", 0)))
        for c in root.iterfind(".//s:circle", NS)
        if side in (c.get("class") or "").split()
    ]


def point_columns(svg: str) -> dict[int, float]:
    """Centre x of each point's triangle, keyed by the bottom player's point number."""
    root = ET.fromstring(svg)
    found = {}
    for poly in root.iterfind(".//s:polygon", NS):
        xs = [float(p.split(",")[0]) for p in poly.get("points", "").split()]
        found[int(poly.get("data-point", 0))] = xs[2]
    return found


def test_initial_position_has_fifteen_a_side_where_the_note_puts_them() -> None:
    svg = board_svg(Position.initial(), Side.BOTTOM)
    ET.fromstring(svg)  # well-formed
    bottom, top = checkers(svg, "bottom"), checkers(svg, "top")
    assert len(bottom) == 15 and len(top) == 15
    columns = point_columns(svg)
    assert sorted(columns) == list(range(1, 25))
    # The bottom player's home (1-6) is at the bottom right, its 24 point at the top right.
    assert columns[1] > columns[6] > columns[7] > columns[12]
    assert columns[24] > columns[19] > columns[18] > columns[13]
    assert columns[1] == columns[24] and columns[12] == columns[13]
    mid = 130
    on_six = [c for c in bottom if abs(c[0] - columns[6]) < 1]
    assert len(on_six) == 5 and all(y > mid for _, y in on_six)
    on_24 = [c for c in bottom if abs(c[0] - columns[24]) < 1]
    assert len(on_24) == 2 and all(y < mid for _, y in on_24)
    # Black's 6 point is the bottom player's 19: top row.
    assert len([c for c in top if abs(c[0] - columns[19]) < 1]) == 5


def test_mover_and_numbers_follow_the_side_on_roll() -> None:
    # Top has moved 8/4 6/4: the position is seen by top (it is "mine").
    play = play_from_moves(Position.initial(), Roll(4, 2), [(8, 4), (6, 4)])
    assert play is not None
    svg = board_svg(play.result, Side.TOP, highlight=[4])
    columns = point_columns(svg)
    top = checkers(svg, "top")
    # Top's 4 point is the bottom player's 21: two checkers in the top row there.
    assert len([c for c in top if abs(c[0] - columns[21]) < 1]) == 2
    assert 'class="point marked" data-point="21"' in svg
    # Labels are top's numbers: the top row's right end reads 1.
    labels = re.findall(r'font-size="9" fill="#444">(\d+)</text>', svg)
    assert labels[:3] == ["24", "23", "22"]  # bottom player's 1, 2, 3 are top's 24, 23, 22
    assert "top on roll" in svg


def test_bar_off_and_tall_stacks() -> None:
    mine = [0] * 26
    mine[0], mine[25], mine[6] = 5, 2, 8
    theirs = [0] * 26
    theirs[0], theirs[24] = 13, 2
    svg = board_svg(Position(tuple(mine), tuple(theirs)), Side.BOTTOM)
    assert len(re.findall(r'class="checker bottom on-bar"', svg)) == 2
    assert ">8</text>" in svg  # eight on one point: five drawn, the count on top
    assert len(checkers(svg, "bottom")) == 5 + 2
    assert 'class="off bottom"' in svg and 'class="off top"' in svg
    assert ">13</text>" in svg and ">5</text>" in svg


def test_title_is_escaped_and_everything_is_inside_the_picture() -> None:
    svg = board_svg(Position.initial(), Side.TOP, title="a <title> & more")
    root = ET.fromstring(svg)
    width, height = float(root.get("width", 0)), float(root.get("height", 0))
    for circle in root.iterfind(".//s:circle", NS):
        assert 0 < float(circle.get("cx", -1)) < width and 0 < float(circle.get("cy", -1)) < height
    title = root.find("s:title", NS)
    assert title is not None and title.text == "a <title> & more"
    assert np.isfinite([width, height]).all()
