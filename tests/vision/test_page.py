"""Finding the page by its markers: every orientation, skew, perspective, missing markers."""

from __future__ import annotations

import numpy as np
import pytest

from digitise.notation.template import Template
from digitise.vision.images import PageImage
from digitise.vision.page import detect_markers, fit_markers, project
from digitise.vision.read import locate

from .conftest import make_sheet, pixels_per_mm


def _page_error_mm(fit_h: np.ndarray, truth_h: np.ndarray, template: Template) -> float:
    corners = np.array([[0, 0], [template.page_mm[0], 0], [template.page_mm[0], template.page_mm[1]],
                        [0, template.page_mm[1]]], np.float64)
    gap = np.linalg.norm(project(fit_h, corners) - project(truth_h, corners), axis=1).max()
    return float(gap / pixels_per_mm(truth_h))


@pytest.mark.parametrize(("angle", "rotation"), [(0, 0), (-90, 90), (180, 180), (90, 270), (8.0, 0), (-9.5, 0)])
def test_markers_fix_the_page_in_any_orientation(a4: Template, angle: float, rotation: int) -> None:
    sheet = make_sheet(a4, angle=angle)
    markers = detect_markers(sheet.image, [m.id for m in a4.markers])
    assert [m.id for m in markers] == [0, 1, 2, 3]
    fit = fit_markers(markers, a4.markers, a4.page_mm)
    assert fit is not None
    assert fit.method == "markers"
    assert fit.rotation == rotation
    # The whole page lands within half a millimetre of the truth, to its far corners.
    assert _page_error_mm(fit.homography, sheet.mm_to_px, a4) < 0.5


def test_phone_perspective(a4: Template) -> None:
    sheet = make_sheet(a4, angle=4, perspective=0.12)
    fit = fit_markers(detect_markers(sheet.image, range(4)), a4.markers, a4.page_mm)
    assert fit is not None and fit.method == "markers"
    assert _page_error_mm(fit.homography, sheet.mm_to_px, a4) < 0.6


def _cover_marker(image: np.ndarray, h: np.ndarray, template: Template, marker_id: int) -> None:
    rect = template.marker(marker_id).rect.inset(-1.5)
    quad = project(h, np.array(rect.corners))
    x0, y0 = np.floor(quad.min(axis=0)).astype(int)
    x1, y1 = np.ceil(quad.max(axis=0)).astype(int)
    image[max(y0, 0):y1, max(x0, 0):x1] = 255


def test_three_markers_are_enough(a4: Template) -> None:
    sheet = make_sheet(a4, angle=3)
    image = sheet.image.copy()
    _cover_marker(image, sheet.mm_to_px, a4, 2)
    markers = detect_markers(image, range(4))
    assert [m.id for m in markers] == [0, 1, 3]
    fit = fit_markers(markers, a4.markers, a4.page_mm)
    assert fit is not None
    assert _page_error_mm(fit.homography, sheet.mm_to_px, a4) < 1.0


def test_two_markers_fall_back_to_an_affine_fit(a4: Template) -> None:
    sheet = make_sheet(a4, angle=-2)
    image = sheet.image.copy()
    _cover_marker(image, sheet.mm_to_px, a4, 1)
    _cover_marker(image, sheet.mm_to_px, a4, 3)
    fit = fit_markers(detect_markers(image, range(4)), a4.markers, a4.page_mm)
    assert fit is not None and fit.method == "markers-affine"
    # The per-board refinement then puts every cell in place.
    found, boards, _, _, _ = locate(PageImage("two.png", 1, image), a4)
    worst = max(sheet.cell_error_mm(b.cell_quad(n), a4.board(b.index).cells[n]) for b in boards for n in a4.board(1).cells)
    assert found.method == "markers-affine"
    assert worst < 1.0


def test_one_marker_is_not_a_fit(a4: Template) -> None:
    sheet = make_sheet(a4)
    markers = detect_markers(sheet.image, range(4))
    assert fit_markers(markers[:1], a4.markers, a4.page_mm) is None


def test_blank_page_has_no_markers() -> None:
    assert detect_markers(np.full((800, 1100), 250, np.uint8), range(4)) == ()
