"""Notes of other prints: their boards fitted from their own lines, read through the real pipeline."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest
from click.testing import CliRunner

from digitise.cli import cli
from digitise.errors import ExitCode, LayoutError, PageError, TemplateError
from digitise.notation.encode import encode_match
from digitise.notation.mat import format_mat, read_mat_strict
from digitise.notation.template import Rect, Template, load_template, mm_to_px_matrix, parse_template
from digitise.pipeline import mirrored_print_note, turned_page_note, unread_boards_note
from digitise.sheet.damage import Degrade
from digitise.sheet.handwriting import GlyphBank
from digitise.sheet.printing import render_template
from digitise.sheet.prints import FEW_BOARDS, PRINTS, OtherPrint, mirrored
from digitise.sheet.synth import SynthPage, render_match_pages, render_page
from digitise.vision.images import PageImage
from digitise.vision.layout import fit_layout, reduced
from digitise.vision.page import project
from digitise.vision.read import WORK_LONG_SIDE, Readings, analyse_page
from tests.vision.conftest import turn

ROOT = Path(__file__).resolve().parents[2]
MATCH = ROOT / "samples" / "alice-bruno.mat"
DPI = 150


def blank(other: OtherPrint, angle: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """The print's blank page at DPI, turned ``angle`` degrees, and its mm -> px homography."""
    image = np.array(render_template(other.template(), DPI, labels=False, extras=other.extras()))
    return turn(image, mm_to_px_matrix(DPI), angle) if angle else (image, mm_to_px_matrix(DPI))


@pytest.mark.parametrize("name", [*PRINTS, "club-small-mirrored"])
def test_every_square_of_another_print_is_fitted_within_half_a_millimetre(name: str) -> None:
    other = mirrored(PRINTS["club-small"]) if name.endswith("-mirrored") else PRINTS[name]
    image, truth = blank(other, angle=1.5)
    small, factor = reduced(image, WORK_LONG_SIDE)
    fit = fit_layout(small)
    assert fit.seen == 8 and fit.mirrored == other.mirrored
    printed = other.template()
    scale = DPI / 25.4
    for board, found in zip(printed.boards, fit.template.boards, strict=True):
        for cell, rect in board.cells.items():
            want = project(truth, np.array(rect.corners))
            got = project(fit.homography, np.array(found.cells[cell].corners)) / factor
            assert np.linalg.norm(want - got, axis=1).max() / scale < 0.5, (name, board.index, cell)


def test_a_spreadsheet_grid_and_a_blank_page_are_refused_with_their_reason() -> None:
    sheet = np.full((1200, 1700), 255, np.uint8)
    for y in range(60, 1140, 45):
        sheet[y:y + 2, 60:1640] = 0
    for x in range(60, 1640, 70):
        sheet[60:1140, x:x + 2] = 0
    with pytest.raises(LayoutError, match="no grid of boards found"):
        fit_layout(sheet)
    with pytest.raises(LayoutError, match="blank page"):
        fit_layout(np.full((1200, 1700), 250, np.uint8))


def glyph_bank() -> GlyphBank:
    """Held-out handwritten digits (skips without them)."""
    from digitise.sheet.glyphs import GlyphSubset, load_digit_glyphs
    from tests.conftest import DIGITS_PNG

    if not DIGITS_PNG.is_file():
        pytest.skip(f"../shared/data/digits.png not found at {DIGITS_PNG}")
    return GlyphBank(load_digit_glyphs(DIGITS_PNG, GlyphSubset.TEST))


def written_page(other: OtherPrint, level: Degrade = Degrade.LIGHT) -> SynthPage:
    """The first page of the sample match, written on ``other`` (skips without the digit glyphs)."""
    bank = glyph_bank()
    boards = [(k + 1, board) for k, board in enumerate(encode_match(read_mat_strict(MATCH))[:other.boards])]
    return render_page(boards, page=1, header={}, template=other.template(), seed=3, degrade=level, bank=bank,
                       dpi=DPI, other_print=other.extras())


def boards_read_right(page: SynthPage, image: np.ndarray, templates: list[Template] | Template) -> tuple[int, str]:
    """How many boards' top readings are what was written, and how the page was found."""
    reading, _ = analyse_page(PageImage("other.png", 1, image), templates, header=False)
    right = 0
    for truth, board in zip(page.truth["boards"], reading.boards, strict=True):
        top = {cell: list(cands[0].digits) for cell, cands in board.cells.items() if cands[0].digits}
        right += top == truth["cells"]
    return right, reading.header["method"]["value"]


@pytest.mark.parametrize("name", ["club-small", "club-large", "club-small-mirrored"])
def test_a_written_page_of_another_print_reads_through_the_pipeline(name: str) -> None:
    other = mirrored(PRINTS["club-small"]) if name.endswith("-mirrored") else PRINTS[name]
    page = written_page(other)
    right, method = boards_read_right(page, page.image, [load_template("a4"), load_template("letter")])
    assert method == ("lines, mirrored print" if other.mirrored else "lines")
    assert right >= 7


@pytest.mark.parametrize(("name", "quarters"), [("club-small", 1), ("club-small", 2), ("club-small-mirrored", 3)])
def test_a_written_page_of_another_print_scanned_turned_is_read_turned_back(name: str, quarters: int) -> None:
    other = mirrored(PRINTS["club-small"]) if name.endswith("-mirrored") else PRINTS[name]
    page = written_page(other)
    # np.rot90 turns anticlockwise; a page's rotation is said clockwise, as the markers' fit says it.
    image = np.ascontiguousarray(np.rot90(page.image, quarters))
    right, method = boards_read_right(page, image, [load_template("a4"), load_template("letter")])
    turned = 360 - 90 * quarters
    assert method == ("lines, mirrored print" if other.mirrored else "lines") + f", turned {turned}"
    assert right >= 7
    reading, _ = analyse_page(PageImage("other.png", 1, image), [load_template("a4")], header=False)
    note = f"pages: other.png ({turned} degrees) was turned in the image: read turned back"
    assert [flag.text for flag in turned_page_note(Readings((reading,)))] == [note]
    assert bool(mirrored_print_note(Readings((reading,)))) == other.mirrored


def test_a_page_whose_print_cannot_say_which_way_up_is_refused_in_one_line() -> None:
    # No point numbers, and the boards' numbers printed off the page: the print is the same upside down.
    plain = replace(PRINTS["club-small"], numbers=())
    template = plain.template()
    unlabelled = replace(template, boards=tuple(replace(b, label=Rect(-40.0, -40.0, 5.0, 5.0)) for b in template.boards))
    image = np.array(render_template(unlabelled, DPI, labels=False, extras=plain.extras()))
    for quarters in (0, 1):
        with pytest.raises(LayoutError, match="page 1: the print shows neither point numbers nor boards' numbers") as err:
            analyse_page(PageImage("plain.png", 1, np.ascontiguousarray(np.rot90(image, quarters))),
                         [load_template("a4")], header=False)
        assert err.value.path == "plain.png" and "\n" not in err.value.message


def test_a_print_that_cannot_say_which_way_up_is_read_upright_with_its_layout_file(tmp_path: Path) -> None:
    # The user fitted the print with `digitise layout` and checked the overlay: upright pages are read as they lie.
    plain = replace(PRINTS["club-small"], numbers=())
    template = plain.template()
    unlabelled = replace(template, boards=tuple(replace(b, label=Rect(-40.0, -40.0, 5.0, 5.0)) for b in template.boards))
    image = np.array(render_template(unlabelled, DPI, labels=False, extras=plain.extras()))
    blank = tmp_path / "plain.png"
    cv2.imwrite(str(blank), image)
    result = CliRunner().invoke(cli, ["layout", str(blank), "-o", str(tmp_path / "plain.json")])
    assert result.exit_code == 0, result.output
    layout = load_template(tmp_path / "plain.json")
    reading, _ = analyse_page(PageImage("plain.png", 1, image), [layout], header=False)
    assert reading.header["method"]["value"] == "lines" and len(reading.boards) == 8
    with pytest.raises(LayoutError, match="neither point numbers nor boards' numbers.*digitise layout"):
        analyse_page(PageImage("plain.png", 1, np.ascontiguousarray(np.rot90(image))), [layout], header=False)


@pytest.mark.parametrize(("name", "quarters"), [("club-large-mirrored", 0), ("club-large-mirrored", 2), ("club-large", 1)])
def test_a_print_with_small_figures_is_told_which_way_up_at_full_resolution(name: str, quarters: int) -> None:
    # club-large's point numbers stand about 6 px tall on the working copy of a 150 dpi legal page, 12 px on the page.
    other = mirrored(PRINTS["club-large"]) if name.endswith("-mirrored") else PRINTS[name]
    page = written_page(other)
    image = np.ascontiguousarray(np.rot90(page.image, quarters))
    right, method = boards_read_right(page, image, [load_template("a4"), load_template("letter")])
    turned = (360 - 90 * quarters) % 360
    assert method == ("lines, mirrored print" if other.mirrored else "lines") + (f", turned {turned}" if turned else "")
    assert right >= 7


@pytest.mark.parametrize("quarters", [1, 2])
def test_a_print_without_point_numbers_is_turned_back_by_its_boards_numbers(quarters: int) -> None:
    plain = replace(PRINTS["club-small"], numbers=())
    page = written_page(plain)
    image = np.ascontiguousarray(np.rot90(page.image, quarters))
    right, method = boards_read_right(page, image, [load_template("a4"), load_template("letter")])
    assert method == f"lines, turned {360 - 90 * quarters}"
    assert right >= 7


def test_digitise_s_own_print_without_markers_is_placed_as_before() -> None:
    a4 = load_template("a4")
    image = np.array(render_template(a4, DPI, markers=False))
    reading, _ = analyse_page(PageImage("copy.png", 1, image), [a4], header=False)
    assert reading.header["method"]["value"] == "grid"


def test_layout_command_writes_a_template_that_reads_the_print(tmp_path: Path) -> None:
    page = written_page(PRINTS["photocopy-club"], Degrade.PHOTOCOPY)
    scan = tmp_path / "page.png"
    cv2.imwrite(str(scan), page.image)
    layout, overlay = tmp_path / "club-note.json", tmp_path / "fit.png"
    done = CliRunner().invoke(cli, ["layout", str(scan), "-o", str(layout), "--overlay", str(overlay)])
    assert done.exit_code == 0, done.output
    assert "8 boards fitted" in done.output
    template = load_template(layout)
    assert template.name == "club-note" and not template.markers and sorted(template.fields) == sorted(load_template("a4").fields)
    assert cv2.imread(str(overlay)) is not None
    right, method = boards_read_right(page, page.image, template)
    assert method == "lines" and right >= 7
    # Written once, replaced only when asked.
    again = CliRunner().invoke(cli, ["layout", str(scan), "-o", str(layout)])
    assert again.exit_code == ExitCode.OUTPUT


def test_layout_command_refuses_a_page_without_boards_in_one_line(tmp_path: Path) -> None:
    empty = tmp_path / "empty.png"
    cv2.imwrite(str(empty), np.full((900, 1300), 250, np.uint8))
    done = CliRunner().invoke(cli, ["layout", str(empty), "-o", str(tmp_path / "x.json")])
    assert done.exit_code == ExitCode.BAD_INPUT
    assert done.stderr.strip().splitlines() == [f"digitise: error: {empty}: page 1: blank page: no ruled lines on it"]
    assert not (tmp_path / "x.json").exists()


def test_a_template_file_has_all_its_header_fields_or_none() -> None:
    document = json.loads(load_template("a4").to_json())
    document["markers"] = []
    document["fields"] = {}
    assert not parse_template(document).markers
    document["fields"] = {"event": [20.0, 10.0, 50.0, 8.0]}
    with pytest.raises(TemplateError, match="missing header fields"):
        parse_template(document)


@pytest.mark.parametrize("name", list(FEW_BOARDS))
def test_every_square_of_a_print_of_fewer_or_unequal_boards_is_fitted_within_half_a_millimetre(name: str) -> None:
    other = FEW_BOARDS[name]
    image, truth = blank(other, angle=1.5)
    small, factor = reduced(image, WORK_LONG_SIDE)
    fit = fit_layout(small)
    assert fit.seen == other.boards and not fit.unread
    scale = DPI / 25.4
    for board, found in zip(other.template().boards, fit.template.boards, strict=True):
        assert board.index == found.index
        for cell, rect in board.cells.items():
            want = project(truth, np.array(rect.corners))
            got = project(fit.homography, np.array(found.cells[cell].corners)) / factor
            assert np.linalg.norm(want - got, axis=1).max() / scale < 0.5, (name, board.index, cell)


@pytest.mark.parametrize("name", ["club-four", "club-six"])
def test_a_match_on_a_print_of_four_or_six_boards_a_page_is_read_and_solved_across_its_pages(
        name: str, tmp_path: Path) -> None:
    from tests.test_end_to_end import compared

    other = FEW_BOARDS[name]
    match = read_mat_strict(MATCH)
    match = replace(match, games=match.games[:1])  # 16 boards: four pages of four, three of six (the last part blank)
    truth = tmp_path / "truth.mat"
    truth.write_text(format_mat(match), encoding="utf-8")
    pages = render_match_pages(match, template=other.template(), seed=5, degrade=Degrade.LIGHT, glyphs=glyph_bank(),
                               dpi=DPI, other_print=other.extras())
    files = []
    for k, page in enumerate(pages, start=1):
        cv2.imwrite(str(tmp_path / f"page-{k}.png"), page.image)
        files.append(str(tmp_path / f"page-{k}.png"))
    mat, report = tmp_path / "m.mat", tmp_path / "m.report.json"
    done = CliRunner().invoke(cli, ["scan", *files, "-o", str(mat), "--report", str(report), "--length", "3"])
    assert done.exit_code in (ExitCode.OK, ExitCode.FLAGGED), done.output
    assert f"{len(pages)} pages, 1 game" in done.stdout
    doc = json.loads(report.read_text(encoding="utf-8"))
    assert not doc.get("page_errors")
    readings = json.loads((tmp_path / "m.report.readings.json").read_text(encoding="utf-8"))
    per_page = [[b["index"] for b in page["boards"]] for page in readings["pages"]]
    assert per_page[0] == list(range(1, other.boards + 1))
    assert all(boards == per_page[0] for boards in per_page)
    got = compared(truth, mat, doc)
    assert got.silent == 0, got.differences
    assert got.right >= got.turns - 1, got.differences


@pytest.mark.parametrize("level", [Degrade.LIGHT, Degrade.MEDIUM])
def test_boards_of_unequal_size_are_read_each_by_its_own_lines(level: Degrade) -> None:
    # The smaller boards lie under larger ones: their lines fall within the larger boards' ends.
    page = written_page(FEW_BOARDS["club-six-unequal"], level)
    right, method = boards_read_right(page, page.image, [load_template("a4"), load_template("letter")])
    assert method == "lines"
    assert right >= 5


def without_squares(page: SynthPage, other: OtherPrint, index: int) -> np.ndarray:
    """``page``'s image with board ``index``'s point squares' lines rubbed out (its four long lines left)."""
    image = page.image.copy()
    board = other.template().board(index)
    to_px = np.array(page.truth["mm_to_px"])
    xs = sorted({edge for name, rect in board.cells.items() if name != "centre" for edge in (rect.x, rect.right)})
    for row in (board.cells["B1"], board.cells["W1"]):
        for x in xs:
            (x0, y0), (x1, y1) = project(to_px, np.array([[x - 1.0, row.y + 0.6], [x + 1.0, row.bottom - 0.6]]))
            image[int(y0):int(y1), int(x0):int(x1)] = 255
    return image


def test_a_board_whose_squares_cannot_be_fitted_among_boards_of_unequal_size_is_named_not_guessed(
        tmp_path: Path) -> None:
    other = FEW_BOARDS["club-six-unequal"]
    page = written_page(other)
    image = without_squares(page, other, 2)
    reading, _ = analyse_page(PageImage("other.png", 1, image), [load_template("a4"), load_template("letter")],
                              header=False)
    assert reading.header["method"]["value"] == "lines, boards not read 2"
    assert [board.index for board in reading.boards] == [1, 3, 4, 5, 6]
    truth = dict(enumerate(page.truth["boards"], start=1))
    right = sum({cell: list(cands[0].digits) for cell, cands in board.cells.items() if cands[0].digits}
                == truth[board.index]["cells"] for board in reading.boards)
    assert right >= 4
    note = ("boards not read: other.png (board 2): their ruled lines were found but not their squares (boards of "
            "unequal size); their turns are missing, not guessed")
    assert [flag.text for flag in unread_boards_note(Readings((reading,)))] == [note]
    # Through `digitise scan`, the report says so; a layout file is not made of such a page.
    scan = tmp_path / "other.png"
    cv2.imwrite(str(scan), image)
    done = CliRunner().invoke(cli, ["scan", str(scan), "-o", str(tmp_path / "m.mat"), "--length", "3"])
    assert "boards not read: other.png (board 2)" in done.stderr, done.output
    refused = CliRunner().invoke(cli, ["layout", str(scan), "-o", str(tmp_path / "x.json")])
    assert refused.exit_code == ExitCode.BAD_INPUT
    refusal = (f"digitise: error: {scan}: page 1: board 2 could not be fitted (its ruled lines were found but not its "
               "squares): fit a page where every board's squares are clear")
    assert refused.stderr.strip().splitlines() == [refusal]


def test_a_layout_file_of_a_print_of_four_boards_is_written_and_read_back(tmp_path: Path) -> None:
    page = written_page(FEW_BOARDS["club-four"])
    scan = tmp_path / "page.png"
    cv2.imwrite(str(scan), page.image)
    layout = tmp_path / "club-four.json"
    done = CliRunner().invoke(cli, ["layout", str(scan), "-o", str(layout)])
    assert done.exit_code == 0, done.output
    template = load_template(layout)
    assert [board.index for board in template.boards] == [1, 2, 3, 4]
    right, method = boards_read_right(page, page.image, template)
    assert method == "lines" and right >= 3


def test_digitise_s_own_print_with_half_its_boards_hidden_is_not_taken_for_a_print_of_four() -> None:
    a4 = load_template("a4")
    image = np.array(render_template(a4, DPI, markers=False))
    for board in a4.boards[4:]:
        rect = board.rect.inset(-3.0)
        (x0, y0), (x1, y1) = project(mm_to_px_matrix(DPI), np.array([[rect.x, rect.y], [rect.right, rect.bottom]]))
        image[int(y0):int(y1), int(x0):int(x1)] = 255
    try:
        reading, _ = analyse_page(PageImage("copy.png", 1, image), [a4], header=False)
    except PageError as exc:
        assert not isinstance(exc, LayoutError)  # placed as digitise's own print, which half a page is not
    else:
        assert reading.header["method"]["value"] == "grid"


def sheared(image: np.ndarray, h: np.ndarray, x_deg: float, y_deg: float) -> tuple[np.ndarray, np.ndarray]:
    """``image`` with its x axis turned ``x_deg`` and its y axis ``y_deg`` degrees (a scan fed in askew and
    drawn through unevenly: a turn and a shear), on a canvas that holds it all; and ``h`` carried along."""
    rows, cols = image.shape[:2]
    a, b = np.radians(x_deg), np.radians(y_deg)
    m = np.array([[np.cos(a), -np.sin(b), 0.0], [np.sin(a), np.cos(b), 0.0], [0.0, 0.0, 1.0]])
    corners = project(m, np.array([[0, 0], [cols, 0], [cols, rows], [0, rows]], np.float64))
    lo, hi = corners.min(axis=0) - 40, corners.max(axis=0) + 40
    m = np.array([[1.0, 0.0, -lo[0]], [0.0, 1.0, -lo[1]], [0.0, 0.0, 1.0]]) @ m
    size = (int(np.ceil(hi[0] - lo[0])), int(np.ceil(hi[1] - lo[1])))
    out = cv2.warpAffine(image, m[:2], size, flags=cv2.INTER_LINEAR, borderValue=255)
    return out, m @ h


def _corner_offsets_mm(boards: tuple, printed: Template, truth: np.ndarray) -> np.ndarray:
    """(squares, 4 corners, x y): how far (mm) each square's corners of ``boards`` lie from where ``truth`` drew them."""
    offsets = []
    for board in printed.boards:
        centre = project(truth, np.array([board.cells["centre"].corners[0]]))[0]
        found = min(boards, key=lambda b: float(np.linalg.norm(b.crossings[1, 1] - centre)))
        offsets += [found.cell_quad(cell) - project(truth, np.array(rect.corners)) for cell, rect in board.cells.items()]
    return np.array(offsets) / (DPI / 25.4)


def test_the_squares_of_a_sheared_page_of_another_print_lean_as_the_page_does() -> None:
    """A page of another print fed in askew and drawn through unevenly (its lines 0.9 degree off square): placed
    from its lines (a turn, no shear), its squares' sides lean as the page's do, as on a page placed by markers
    (they leaned 0.15 mm across a square: measured upright in a frame without the shear)."""
    from digitise.vision.locate import locate

    other = PRINTS["club-small"]
    image, truth = sheared(*blank(other), 2.2, 3.1)
    fit, boards, _, _, _ = locate(PageImage("sheared.png", 1, image), [load_template("a4")])
    assert fit.method.startswith("lines")
    offsets = _corner_offsets_mm(boards, other.template(), truth)
    # Top corners (TL, TR) against bottom ones (BL, BR) across: the lean; a shift common to all is no lean.
    lean = offsets[:, :2, 0].mean(axis=1) - offsets[:, 2:, 0].mean(axis=1)
    assert abs(float(lean.mean())) < 0.05
    assert float(np.linalg.norm(offsets, axis=2).max()) < 0.4


def test_a_photocopied_page_just_too_small_to_be_reduced_is_found_by_its_lines() -> None:
    """At its own 1754 px the photocopy's speckle hides its lines; halved, they fit (tests/data/README.md)."""
    image = cv2.imread(str(ROOT / "tests" / "data" / "photocopy_club_page_not_reduced.jpg"))
    assert max(image.shape[:2]) <= WORK_LONG_SIDE
    reading, _ = analyse_page(PageImage("page.jpg", 1, image), [load_template("a4"), load_template("letter")],
                              header=False)
    assert reading.header["method"]["value"] == "lines"
    assert len(reading.boards) == 8
    assert sum(1 for board in reading.boards if board.cells) >= 7
