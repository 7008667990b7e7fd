"""The printed note's geometry (templates/<paper>.json, from digitise.sheet.layout): generated, complete, validated."""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from digitise.errors import TemplateError
from digitise.notation.marks import CELL_NAMES
from digitise.notation.template import (
    FIELD_NAMES,
    TEMPLATES_DIR,
    Rect,
    Template,
    apply_homography,
    board_rect,
    load_template,
    mm_to_px_matrix,
    parse_template,
    px_per_mm,
    template_names,
)
from digitise.sheet import layout


def _doc(name: str = "a4") -> dict:
    return json.loads((TEMPLATES_DIR / f"{name}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("paper", ["a4", "letter"])
def test_committed_json_is_what_layout_generates(paper: str) -> None:
    assert (TEMPLATES_DIR / f"{paper}.json").read_text(encoding="utf-8") == layout.geometry_json(paper)


def test_known_papers() -> None:
    assert template_names() == ["a4", "letter"]


@pytest.mark.parametrize("paper,size", [("a4", (297.0, 210.0)), ("letter", (279.4, 215.9))])
def test_layout_is_complete_and_sane(paper: str, size: tuple[float, float]) -> None:
    t = load_template(paper)
    assert t.name == paper and t.page_mm == size
    assert [m.id for m in t.markers] == [0, 1, 2, 3]
    # Markers in the corners: top-left, top-right, bottom-right, bottom-left.
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = (t.marker(i).rect.centre for i in range(4))
    assert x0 < size[0] / 2 < x1 and y0 < size[1] / 2 < y2
    assert x3 == x0 and x2 == x1 and y1 == y0 and y3 == y2
    assert set(t.fields) >= set(FIELD_NAMES)
    assert [b.index for b in t.boards] == list(range(1, 9))
    boxes = [b.rect for b in t.boards]
    for board in t.boards:
        assert set(board.cells) == set(CELL_NAMES)
        for name in CELL_NAMES[:24]:
            cell = board.cells[name]
            assert cell.w >= 9.0 and cell.h >= 11.0, (paper, board.index, name, cell)
        c = board.cells
        # NOTATION.md's rows: Bres | B12..B7 || B6..B1 | Boff over the centre over the W row.
        top = ["Bres"] + [f"B{i}" for i in range(12, 0, -1)] + ["Boff"]
        bottom = ["Wres"] + [f"W{i}" for i in range(12, 0, -1)] + ["Woff"]
        for row in (top, bottom):
            xs = [c[n].x for n in row]
            assert xs == sorted(xs) and len({c[n].y for n in row}) == 1
            for a, b in itertools.pairwise(row):
                assert c[a].right == pytest.approx(c[b].x, abs=0.011)
        assert c["B12"].bottom <= c["centre"].y and c["centre"].bottom <= c["W12"].y
        assert c["centre"].x == pytest.approx(c["B12"].x, abs=0.011)
        assert c["centre"].right == pytest.approx(c["B1"].right, abs=0.011)
        for other in t.boards:
            if other.index != board.index:
                r, o = board.rect, other.rect
                assert r.right <= o.x or o.right <= r.x or r.bottom <= o.y or o.bottom <= r.y
        for m in t.markers:
            r, o = board.rect, m.rect
            assert r.right <= o.x or o.right <= r.x or r.bottom <= o.y or o.bottom <= r.y
    # Reading order: row by row, two columns.
    assert boxes[0].x < boxes[1].x and boxes[0].y == boxes[1].y and boxes[2].y > boxes[0].y


def test_rect_helpers_and_transforms() -> None:
    r = Rect(10, 20, 30, 40)
    assert r.right == 40 and r.bottom == 60 and r.centre == (25, 40)
    assert r.inset(5) == Rect(15, 25, 20, 30)
    assert r.union(Rect(0, 0, 1, 1)) == Rect(0, 0, 40, 60)
    assert r.to_px(254) == (100, 200, 300, 400)
    assert r.contains(10, 60) and not r.contains(9.9, 30)
    m = mm_to_px_matrix(254)
    assert np.allclose(apply_homography(m, [(10, 20)]), [[100, 200]])
    assert px_per_mm(25.4) == 1.0


def test_board_rect_bounds_all_cells(a4: Template) -> None:
    b = a4.board(1)
    box = board_rect(b)
    assert box == b.rect
    assert box.x == b.cells["Bres"].x and box.right == b.cells["Boff"].right
    assert box.y == b.cells["B12"].y and box.bottom == b.cells["W12"].bottom


def test_to_json_round_trips(a4: Template) -> None:
    again = parse_template(json.loads(a4.to_json()))
    assert again.boards == a4.boards and again.markers == a4.markers and dict(again.fields) == dict(a4.fields)


def test_unknown_paper_lists_the_known_ones() -> None:
    with pytest.raises(TemplateError) as info:
        load_template("a3")
    assert "a4" in info.value.reason and "letter" in info.value.reason


def test_load_from_path(tmp_path: Path) -> None:
    target = tmp_path / "mine.json"
    target.write_text(json.dumps(_doc("letter")), encoding="utf-8")
    assert load_template(str(target)).name == "letter"


def test_unreadable_and_not_json(tmp_path: Path) -> None:
    with pytest.raises(TemplateError, match="no such file"):
        load_template(str(tmp_path / "missing.json"))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(TemplateError) as info:
        load_template(str(bad))
    assert info.value.path == str(bad) and info.value.where == "line 1 column 2"


def _mutated(change) -> TemplateError:  # type: ignore[no-untyped-def]
    doc = copy.deepcopy(_doc())
    change(doc)
    with pytest.raises(TemplateError) as info:
        parse_template(doc, "t.json")
    return info.value


@pytest.mark.parametrize(
    "change,where,words",
    [
        (lambda d: d["boards"][2]["cells"].pop("W7"), "$.boards[2].cells", "missing cells: W7"),
        (lambda d: d["boards"][2]["cells"].__setitem__("W7", [1, 2, -3, 4]), "$.boards[2].cells.W7", "positive"),
        (lambda d: d["boards"][0]["cells"].__setitem__("B1", [1, 2, 3]), "$.boards[0].cells.B1", "[x, y, w, h]"),
        (lambda d: d["boards"][5]["cells"].__setitem__("X9", [1, 2, 3, 4]), "$.boards[5].cells", "unknown cells: X9"),
        (lambda d: d["boards"][1]["cells"].__setitem__("Boff", [1, 2, "x", 4]), "$.boards[1].cells.Boff[2]", "number"),
        (lambda d: d["boards"][1]["cells"].__setitem__("Boff", [290, 2, 30, 4]), "$.boards[1].cells.Boff", "outside"),
        (lambda d: d["fields"].pop("page"), "$.fields", "page"),
        (lambda d: d["markers"][1].__setitem__("id", 7), "$.markers", "0, 1, 2, 3"),
        (lambda d: d["markers"][0].__setitem__("dictionary", "DICT_6X6_250"), "$.markers[0].dictionary", "DICT_4X4_50"),
        (lambda d: d.pop("boards"), "$.boards", "required"),
        (lambda d: d["boards"].pop(), "$.boards", "boards 1..8"),
        (lambda d: d.__setitem__("page_mm", [297]), "$.page_mm", "width, height"),
        (lambda d: d.__setitem__("colour", "red"), "$.colour", "not permitted"),
    ],
)
def test_problems_are_reported_with_their_key_path(change, where: str, words: str) -> None:  # type: ignore[no-untyped-def]
    error = _mutated(change)
    assert error.where == where
    assert words in error.reason
    assert error.message.startswith(f"t.json: {where}: ")


def test_every_problem_is_listed() -> None:
    def two(d: dict) -> None:
        d["boards"][3]["cells"]["B2"] = [0, 0, 0, 1]
        d["fields"]["date"] = [0, 0, 1]

    error = _mutated(two)
    assert "$.boards[3].cells.B2" in error.message and "$.fields.date" in error.message
