"""The blank note: vector PDF and raster PNG land where the geometry says."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pypdfium2 as pdfium
import pytest
from click.testing import CliRunner

from digitise.cli import cli
from digitise.errors import ExitCode, OptionError, OutputError
from digitise.notation.template import Template, load_template, px_per_mm
from digitise.sheet.printing import render_template, template_pdf, write_template

from .conftest import detect_markers

TOLERANCE_MM = 0.5


def _assert_markers_in_place(template: Template, image: np.ndarray, dpi: float, aruco) -> None:  # type: ignore[no-untyped-def]
    found = detect_markers(aruco, image)
    assert sorted(found) == [0, 1, 2, 3]
    s = px_per_mm(dpi)
    for marker_id, corners in found.items():
        expected = np.array(template.marker(marker_id).rect.corners) * s
        error_mm = np.abs(corners - expected).max() / s
        assert error_mm < TOLERANCE_MM, (marker_id, error_mm)
        centre_error = np.abs(corners.mean(axis=0) - expected.mean(axis=0)).max() / s
        assert centre_error < TOLERANCE_MM


def _line_positions(profile: np.ndarray) -> list[float]:
    """Centres (px) of the dark runs of a 1-D intensity profile."""
    dark = profile < 235
    runs, start = [], None
    for i, d in enumerate(np.append(dark, False)):
        if d and start is None:
            start = i
        elif not d and start is not None:
            weights = 255.0 - profile[start:i]
            runs.append(float((np.arange(start, i) + 0.5) @ weights / weights.sum()))
            start = None
    return runs


def _assert_cell_lines_in_place(template: Template, image: np.ndarray, dpi: float) -> None:
    s = px_per_mm(dpi)
    for index in (1, 4, 8):
        board = template.board(index)
        # Scan along the middle of the W row: every vertical cell line.
        row = board.cells["W5"]
        y = round(row.centre[1] * s)
        lo, hi = round((board.rect.x - 1) * s), round((board.rect.right + 1) * s)
        found = np.array(_line_positions(image[y, lo:hi].astype(np.float64))) + lo
        expected = [board.cells["Wres"].x] + [board.cells[n].right for n in
                                              ["Wres"] + [f"W{p}" for p in range(12, 0, -1)] + ["Woff"]]
        assert len(found) == len(expected), (index, found / s, expected)
        assert np.abs(found / s - np.array(expected)).max() < TOLERANCE_MM
        # Scan down the middle of B3: the row lines of the top and bottom rows.
        x = round(board.cells["B3"].centre[0] * s)
        top, bottom = round((board.rect.y - 1) * s), round((board.rect.bottom + 1) * s)
        found_y = np.array(_line_positions(image[top:bottom, x].astype(np.float64))) + top
        c = board.cells
        expected_y = [c["B3"].y, c["B3"].bottom, c["W3"].y, c["W3"].bottom]
        assert np.abs(found_y / s - np.array(expected_y)).max() < TOLERANCE_MM


@pytest.mark.parametrize("paper", ["a4", "letter"])
def test_png_at_300_dpi_lands_on_the_geometry(paper: str, aruco) -> None:  # type: ignore[no-untyped-def]
    template = load_template(paper)
    image = render_template(template, 300)
    assert image.shape == (round(template.page_mm[1] * 300 / 25.4), round(template.page_mm[0] * 300 / 25.4))
    _assert_markers_in_place(template, image, 300, aruco)
    _assert_cell_lines_in_place(template, image, 300)


def test_lines_are_light_grey_and_paper_white(a4: Template) -> None:
    image = render_template(a4, 300)
    s = px_per_mm(300)
    board = a4.board(2)
    y = round(board.cells["W9"].centre[1] * s)
    x = round(board.cells["W9"].x * s)
    line = image[y, x - 3:x + 4]
    assert 110 <= line.min() <= 170
    assert image[y, round(board.cells["W9"].centre[0] * s)] == 255
    # The 7|6 line is thicker than an ordinary one.
    x76 = round(board.cells["W6"].x * s)
    assert (image[y, x76 - 8:x76 + 9] < 200).sum() > (image[y, x - 8:x + 9] < 200).sum()


def test_pdf_is_vector_exact_size_and_agrees_with_png(a4: Template, aruco) -> None:  # type: ignore[no-untyped-def]
    data = template_pdf(a4)
    assert data.startswith(b"%PDF") and data == template_pdf(a4)  # deterministic
    assert b"/Subtype /Image" not in data  # nothing rasterised
    document = pdfium.PdfDocument(data)
    assert len(document) == 1
    width_pt, height_pt = document[0].get_size()
    assert width_pt == pytest.approx(297 / 25.4 * 72, abs=0.01)
    assert height_pt == pytest.approx(210 / 25.4 * 72, abs=0.01)
    bitmap = document[0].render(scale=300 / 72, grayscale=True)
    image = np.asarray(bitmap.to_numpy())[:, :, 0] if bitmap.to_numpy().ndim == 3 else bitmap.to_numpy()
    image = np.ascontiguousarray(image)
    _assert_markers_in_place(a4, image, 300, aruco)
    _assert_cell_lines_in_place(a4, image, 300)


def test_write_template_refuses_other_formats_and_overwrites(a4: Template, tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="cannot write .svg: use .pdf, .png or .json"):
        write_template(a4, tmp_path / "note.svg")
    out = write_template(a4, tmp_path / "note.png", dpi=72)
    assert cv2.imread(str(out)).shape[:2] == (595, 842)
    with pytest.raises(OutputError):
        write_template(a4, out, dpi=72)
    write_template(a4, out, dpi=72, overwrite=True)


def test_cli_template(tmp_path: Path) -> None:
    runner = CliRunner()
    pdf = tmp_path / "note.pdf"
    result = runner.invoke(cli, ["template", "--paper", "letter", "-o", str(pdf)])
    assert result.exit_code == 0, result.output
    assert pdfium.PdfDocument(pdf.read_bytes())[0].get_size()[0] == pytest.approx(792, abs=0.01)
    png = tmp_path / "note.png"
    result = runner.invoke(cli, ["template", "-o", str(png), "--dpi", "100"])
    assert result.exit_code == 0
    assert cv2.imread(str(png)).shape[:2] == (827, 1169)
    result = runner.invoke(cli, ["template", "--json"])
    assert result.exit_code == 0 and '"name": "a4"' in result.output
    # Written to a file, as a FILE.json (it printed the geometry, then failed: "cannot write .json").
    for args in (["template", "--json", "-o", str(tmp_path / "a4.json")], ["template", "-o", str(tmp_path / "b.json")]):
        written = runner.invoke(cli, args)
        assert written.exit_code == 0 and written.stdout == "", written.output
    assert (tmp_path / "a4.json").read_text() == (tmp_path / "b.json").read_text() == result.output
    result = runner.invoke(cli, ["template", "--paper", str(tmp_path / "a4.json"), "--json"])
    assert result.exit_code == 0 and result.output == (tmp_path / "a4.json").read_text()
    result = runner.invoke(cli, ["template", "--json", "-o", str(tmp_path / "c.pdf")])
    assert result.exit_code == ExitCode.USAGE and "name the file FILE.json" in result.output and "{" not in result.output
    assert not (tmp_path / "c.pdf").exists()
    result = runner.invoke(cli, ["template", "--paper", "a3", "-o", str(tmp_path / "x.pdf")])
    assert result.exit_code == ExitCode.BAD_INPUT and "unknown paper 'a3'" in result.output
    assert not (tmp_path / "x.pdf").exists()
    result = runner.invoke(cli, ["template", "-o", str(pdf)])
    assert result.exit_code == ExitCode.OUTPUT


@pytest.mark.parametrize("paper", ["a4", "letter"])
def test_point_numbers_and_legend_touch_no_square_nor_its_margin(paper: str) -> None:
    """What only teaches the writer (point numbers, legend, labels) prints nowhere a cell's or field's image reaches."""
    from digitise.vision.ink import CELL_MARGIN_MM

    template = load_template(paper)
    dpi = 300
    s = px_per_mm(dpi)
    taught = render_template(template, dpi).astype(np.int16) - render_template(template, dpi, labels=False)
    printed = np.abs(taught) > 8
    reach = CELL_MARGIN_MM + 0.3  # the margin every cell's image keeps, and a little for the page's fit
    for board in template.boards:
        for name, rect in board.cells.items():
            x0, y0 = round((rect.x - reach) * s), round((rect.y - reach) * s)
            x1, y1 = round((rect.right + reach) * s), round((rect.bottom + reach) * s)
            assert not printed[max(y0, 0):y1, max(x0, 0):x1].any(), (board.index, name)
    for name, rect in template.fields.items():
        inside = printed[round(rect.y * s):round(rect.bottom * s), round(rect.x * s):round(rect.right * s)]
        assert not inside.any(), name


def test_point_numbers_are_whites_count_beside_their_squares(a4: Template) -> None:
    """Above B1 stands 24 (White's 24 point is Black's 1), below W6 stands 6, one number a point square a row."""
    from digitise.sheet.printing import LEGEND, NUMBER_MM, sheet_primitives

    texts = sheet_primitives(a4).texts
    board = a4.board(3)

    def under_or_over(rect_name: str) -> list[str]:
        rect = board.cells[rect_name]
        return [t.text for t in texts if t.height == NUMBER_MM and 0 < t.x - rect.centre[0] < 1.5
                and (rect.y - 3.5 < t.y < rect.y if rect_name.startswith("B") else rect.bottom < t.y < rect.bottom + 3.5)]

    assert under_or_over("B1") == ["24"] and under_or_over("B12") == ["13"]
    assert under_or_over("W6") == ["6"] and under_or_over("W12") == ["12"]
    assert sum(t.height == NUMBER_MM for t in texts) == 8 * 24
    assert [t.text for t in texts].count(LEGEND) == 1
    assert not any(t.height == NUMBER_MM for t in sheet_primitives(a4, labels=False).texts)
