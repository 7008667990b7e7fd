"""The marker-less path and the per-board refinement, on rendered notes."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from digitise.notation.template import Template, mm_to_px_matrix, parse_template
from digitise.sheet.printing import render_template
from digitise.vision.grid import board_lines, find_grid, refine_board
from digitise.vision.images import PageImage
from digitise.vision.layout import SAME_PRINT_STRETCH
from digitise.vision.page import project
from digitise.vision.read import locate

from .conftest import TEST_DPI, WRITTEN, Sheet, make_sheet, turn, write_marks


def _worst_cell_mm(sheet: Sheet, boards: tuple, truth_template: Template) -> float:
    return max(
        sheet.cell_error_mm(b.cell_quad(name), truth_template.board(b.index).cells[name])
        for b in boards
        for name in truth_template.board(b.index).cells
    )


@pytest.mark.parametrize(("angle", "rotation"), [(0, 0), (-90, 90), (180, 180), (90, 270), (7.0, 0), (-10.0, 0)])
def test_photocopy_without_markers_in_any_orientation(a4: Template, angle: float, rotation: int) -> None:
    sheet = make_sheet(a4, written=WRITTEN, angle=angle, markers=False, line_grey=0.3)
    fit, boards, _, _, _ = locate(PageImage("copy.png", 1, sheet.image), a4)
    assert fit.method == "grid"
    assert fit.rotation == rotation
    assert _worst_cell_mm(sheet, boards, a4) < 1.0


def test_ordinary_lines_without_markers(a4: Template) -> None:
    """The printed note's own mid-grey lines, its markers cut off: the grid path still finds it."""
    sheet = make_sheet(a4, written=WRITTEN, angle=2.0, markers=False)
    fit, boards, _, _, _ = locate(PageImage("nomarkers.png", 1, sheet.image), a4)
    assert fit.method == "grid"
    assert _worst_cell_mm(sheet, boards, a4) < 1.0


def _scaled_boards(template: Template, fx: float, fy: float, header: bool) -> Template:
    """The template with its boards drawn ``fx`` by ``fy`` times as large about the page centre (a hand-ruled copy).

    The header and markers stay as printed (or the header goes); the paper
    grows to hold the larger boards.
    """
    doc = json.loads(template.to_json())
    w, h = doc["page_mm"]
    grow_x, grow_y = max(0.0, (fx - 1) * w), max(0.0, (fy - 1) * h)
    cx = w / 2

    top = min(r[1] for b in doc["boards"] for r in b["cells"].values()) - 2.0

    def move(x: float, y: float) -> tuple[float, float]:
        # Wider about the centre, taller downwards from under the header.
        return cx + (x - cx) * fx + grow_x / 2, top + (y - top) * fy

    for board in doc["boards"]:
        cells = {}
        for n, r in board["cells"].items():
            x, y = move(r[0], r[1])
            cells[n] = [x, y, r[2] * fx, r[3] * fy]
        board["cells"] = cells
        if "label_mm" in board:
            r = board["label_mm"]
            board["label_mm"] = [*move(r[0], r[1]), r[2] * fx, r[3] * fy]
        board["dots_mm"] = [list(move(x, y)) for x, y in board.get("dots_mm", [])]
    for marker in doc["markers"]:
        marker["rect_mm"][0] += grow_x / 2
        if marker["rect_mm"][1] > h / 2:
            marker["rect_mm"][1] += grow_y
    if header:
        for key in ("fields", "field_labels_mm"):
            for r in doc.get(key, {}).values():
                r[0] += grow_x / 2
    else:
        # Tiny boxes in a corner stand in for the missing header (the schema wants the fields).
        doc["fields"] = {k: [1.0 + i, 1.0, 0.5, 0.5] for i, k in enumerate(doc["fields"])}
        doc.pop("field_labels_mm", None)
    doc["page_mm"] = [w + grow_x, h + grow_y]
    return parse_template(doc)


@pytest.mark.parametrize(("fx", "fy", "header"), [(1.13, 1.06, True), (0.87, 0.9, False), (1.0, 0.88, True)])
def test_boards_larger_or_smaller_than_the_template(a4: Template, fx: float, fy: float, header: bool) -> None:
    drawn = _scaled_boards(a4, fx, fy, header)
    image = np.array(render_template(drawn, TEST_DPI, markers=False, line_grey=0.3, labels=header))
    write_marks(image, drawn, TEST_DPI, WRITTEN)
    image, h = turn(image, mm_to_px_matrix(TEST_DPI), 3.0)
    sheet = Sheet(image, h, WRITTEN)
    fit, boards, _, _, _ = locate(PageImage("hand-ruled.png", 1, image), a4)
    # Boards stretched more one way than the other are another print: fitted from their own lines.
    assert fit.method == ("grid" if abs(fx / fy - 1.0) <= SAME_PRINT_STRETCH else "lines")
    assert _worst_cell_mm(sheet, boards, drawn) < 1.0


def test_curled_page_is_refined_per_board(a4: Template) -> None:
    """A page bent so that no single homography fits: each board's own lines put its cells right."""
    flat = make_sheet(a4, written=WRITTEN, angle=1.0)
    rows, cols = flat.image.shape
    s = TEST_DPI / 25.4
    amplitude = 2.2 * s  # the middle of the page bows 2.2 mm away from where the corners say
    xs = np.arange(cols, dtype=np.float32)
    bow = (amplitude * np.sin(np.pi * xs / cols)).astype(np.float32)
    map_x = np.tile(xs, (rows, 1))
    map_y = (np.arange(rows, dtype=np.float32)[:, None] - bow[None, :]).astype(np.float32)
    curled = cv2.remap(flat.image, map_x, map_y, cv2.INTER_LINEAR, borderValue=255)

    fit, boards, _, _, _ = locate(PageImage("curled.png", 1, curled), a4)
    worst = 0.0
    for b in boards:
        for name, rect in a4.board(b.index).cells.items():
            truth = project(flat.mm_to_px, np.array(rect.corners))
            truth[:, 1] += amplitude * np.sin(np.pi * truth[:, 0] / cols)
            worst = max(worst, float(np.linalg.norm(b.cell_quad(name) - truth, axis=1).max() / s))
    assert fit.method == "markers"
    assert worst < 1.0


def test_refine_board_recovers_a_shifted_start(a4: Template) -> None:
    sheet = make_sheet(a4, written=WRITTEN)
    board = a4.board(3)
    shifted = np.array([[1.0, 0.0, 1.6 * TEST_DPI / 25.4], [0.0, 1.0, -1.2 * TEST_DPI / 25.4], [0.0, 0.0, 1.0]])
    fit = refine_board(sheet.image, shifted @ sheet.mm_to_px, board)
    assert fit.found > 0.9
    worst = max(sheet.cell_error_mm(fit.cell_quad(n), r) for n, r in board.cells.items())
    assert worst < 0.5


def test_board_lines_follow_the_cells(a4: Template) -> None:
    lines = board_lines(a4.board(1))
    cells = a4.board(1).cells
    assert len(lines.xs) == 15
    assert lines.xs[0] == cells["Bres"].x and lines.xs[-1] == pytest.approx(cells["Boff"].right)
    assert lines.ys == (cells["B1"].y, cells["B1"].bottom, cells["W1"].y, cells["W1"].bottom)


def test_no_grid_on_a_photo_of_something_else(a4: Template) -> None:
    rng = np.random.default_rng(3)
    photo = np.full((900, 1200), 170, np.uint8)
    for _ in range(60):
        centre = (int(rng.integers(0, 1200)), int(rng.integers(0, 900)))
        cv2.circle(photo, centre, int(rng.integers(10, 120)), int(rng.integers(0, 255)), -1)
    assert find_grid(photo, a4) is None


def test_a_stroke_along_a_line_does_not_bend_the_board(a4: Template) -> None:
    """A pen stroke beside a printed line that faded over two squares: the crossings stay on the line."""
    sheet = make_sheet(a4, written=WRITTEN)
    image = sheet.image.copy()
    board = a4.board(4)
    left, right = board.cells["W8"], board.cells["W7"]
    s = TEST_DPI / 25.4
    x0, x1 = round((left.x + 0.4) * s), round((right.right - 0.4) * s)
    # The squares' top line gone (a fold, toner that did not take), a stroke 1.4 mm below it instead.
    cv2.rectangle(image, (x0, round((left.y - 0.5) * s)), (x1, round((left.y + 0.5) * s)), 255, -1)
    y = round((left.y + 1.4) * s)
    cv2.line(image, (x0, y), (x1, y), 0, max(1, round(0.4 * s)))
    fit = refine_board(image, sheet.mm_to_px, board)
    worst = max(sheet.cell_error_mm(fit.cell_quad(n), r) for n, r in board.cells.items())
    assert worst < 0.5


def test_faint_lines_beside_heavy_ink_are_found(a4: Template) -> None:
    """Light lines (a bright, blurred photo) on a board with thick black writing: the lines still count."""
    written = {(2, name): "5" for name in ("B1", "B3", "B5", "W2", "W4", "W6")}
    sheet = make_sheet(a4, written=written, line_grey=0.62)
    image = cv2.GaussianBlur(sheet.image, (0, 0), 1.0)
    s = TEST_DPI / 25.4
    centre = a4.board(2).cells["centre"]
    cv2.line(image, (round(centre.x * s), round(centre.y * s)), (round((centre.x + 20) * s), round(centre.bottom * s)), 0,
             max(2, round(0.8 * s)))
    fit = refine_board(image, sheet.mm_to_px, a4.board(2))
    assert fit.found > 0.9
    worst = max(sheet.cell_error_mm(fit.cell_quad(n), r) for n, r in a4.board(2).cells.items())
    assert worst < 0.5


def test_a_board_whose_own_outline_misled_is_measured_where_the_page_puts_it(a4: Template) -> None:
    """A board's outline found misshapen (something printed joined to it) gives it a fit 6 mm off, where its lines
    are not found: they are then looked for where the page fit puts them, and found."""
    from digitise.vision.locate import refine_boards

    sheet = make_sheet(a4, written=WRITTEN, angle=2.0, markers=False)
    page = sheet.mm_to_px
    off = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 6.0 * TEST_DPI / 25.4], [0.0, 0.0, 1.0]]) @ page
    boards, outside, missing = refine_boards(sheet.image, a4, {2: off}, page, 1.0)
    assert outside == [] and missing == []
    fit = next(b for b in boards if b.index == 2)
    assert fit.found > 0.9
    assert max(sheet.cell_error_mm(fit.cell_quad(n), r) for n, r in a4.board(2).cells.items()) < 0.5
