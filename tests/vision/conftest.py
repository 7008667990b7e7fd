"""Real page images for the vision tests: the printed note, written on and turned, at low dpi (fast)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np
import pytest

from digitise.notation.template import Template, load_template, mm_to_px_matrix
from digitise.sheet.printing import render_template
from digitise.vision.page import project

#: Low resolution keeps the tests fast; the pipeline works from 100 dpi up.
TEST_DPI = 130


@dataclass(frozen=True)
class Sheet:
    """A test page: the image and the truth (template mm -> image px, what is written where)."""

    image: np.ndarray
    mm_to_px: np.ndarray
    written: Mapping[tuple[int, str], str] = field(default_factory=dict)

    def cell_error_mm(self, quad: np.ndarray, rect: Any) -> float:
        """How far (mm) a found cell's corners are from the truth."""
        truth = project(self.mm_to_px, np.array(rect.corners))
        return float(np.linalg.norm(quad - truth, axis=1).max() / pixels_per_mm(self.mm_to_px))


def pixels_per_mm(h: np.ndarray) -> float:
    """Scale of a homography near the page centre."""
    p = project(h, np.array([[140.0, 100.0], [141.0, 100.0]]))
    return float(np.linalg.norm(p[1] - p[0]))


def write_marks(image: np.ndarray, template: Template, dpi: float, written: Mapping[tuple[int, str], str],
                crossed: tuple[int, ...] = ()) -> None:
    """Write digits in cells (a script font, dark blue-black strokes) and X over the centre of ``crossed`` boards."""
    s = dpi / 25.4
    for (index, name), text in sorted(written.items()):
        rect = template.board(index).cells[name]
        height = 6.0 * s
        scale = height / 30.0
        thickness = max(1, round(0.45 * s))
        (tw, _), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SCRIPT_SIMPLEX, scale, thickness)
        x = int((rect.x + rect.w / 2) * s - tw / 2)
        y = int((rect.y + rect.h / 2) * s + height / 2)
        cv2.putText(image, text, (x, y), cv2.FONT_HERSHEY_SCRIPT_SIMPLEX, scale, 30, thickness, cv2.LINE_AA)
    for index in crossed:
        rect = template.board(index).cells["centre"]
        x0, y0 = int((rect.x + 50) * s), int((rect.y + 1) * s)
        x1, y1 = int((rect.x + 62) * s), int((rect.bottom - 1) * s)
        thickness = max(1, round(0.45 * s))
        cv2.line(image, (x0, y0), (x1, y1), 30, thickness, cv2.LINE_AA)
        cv2.line(image, (x0, y1), (x1, y0), 30, thickness, cv2.LINE_AA)


def skew_board(image: np.ndarray, box: tuple[int, int, int, int], degrees: float) -> np.ndarray:
    """``image`` with the board in ``box`` (and a little around it) turned ``degrees`` about its centre, the rest
    of the page as it was: a board printed or pasted askew."""
    x, y, w, h = box
    out = image.copy()
    margin = max(w, h) // 40
    x0, y0 = max(0, x - margin), max(0, y - margin)
    patch = out[y0:y + h + margin, x0:x + w + margin].copy()
    turning = cv2.getRotationMatrix2D((patch.shape[1] / 2, patch.shape[0] / 2), degrees, 1.0)
    paper = tuple(int(v) for v in np.atleast_1d(np.median(patch.reshape(-1, *patch.shape[2:]), axis=0)))
    out[y0:y + h + margin, x0:x + w + margin] = cv2.warpAffine(patch, turning, (patch.shape[1], patch.shape[0]),
                                                              borderValue=paper)
    return out


def wave_board(image: np.ndarray, box: tuple[int, int, int, int], amplitude_px: float) -> np.ndarray:
    """``image`` with the board in ``box`` bent in waves of ``amplitude_px`` both ways: a board ruled by hand."""
    x, y, w, h = box
    out = image.copy()
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    map_y = ys + amplitude_px * np.sin(xs / w * 3 * np.pi)
    map_x = xs + amplitude_px * np.sin(ys / h * 2 * np.pi)
    out[y:y + h, x:x + w] = cv2.remap(out[y:y + h, x:x + w].copy(), map_x, map_y, cv2.INTER_LINEAR,
                                      borderMode=cv2.BORDER_REPLICATE)
    return out


def erase_board_lines(image: np.ndarray, box: tuple[int, int, int, int], share: float) -> np.ndarray:
    """``image`` with the ruled lines of the right ``share`` of the board in ``box`` rubbed out (the writing
    left): a board whose print faded or was cleaned off."""
    x, y, w, h = box
    out = image.copy()
    region = out[y:y + h, x + int(w * (1 - share)):x + w]
    grey = region if region.ndim == 2 else region.min(axis=2)
    dark = (grey < 160).astype(np.uint8)
    along = cv2.morphologyEx(dark, cv2.MORPH_OPEN, np.ones((1, 25), np.uint8))
    across = cv2.morphologyEx(dark, cv2.MORPH_OPEN, np.ones((25, 1), np.uint8))
    region[cv2.dilate(along | across, np.ones((3, 3), np.uint8)) > 0] = 245
    return out


def turn(image: np.ndarray, h: np.ndarray, angle: float, *, pad: float = 0.04, perspective: float = 0.0,
         background: int = 255) -> tuple[np.ndarray, np.ndarray]:
    """``image`` turned ``angle`` degrees counter-clockwise (any angle), on a canvas that holds it all."""
    rows, cols = image.shape[:2]
    centre = (cols / 2, rows / 2)
    m = np.vstack([cv2.getRotationMatrix2D(centre, angle, 1.0), [0.0, 0.0, 1.0]])
    if perspective:
        m = m @ np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [perspective / cols, 0.0, 1.0]])
    corners = project(m, np.array([[0, 0], [cols, 0], [cols, rows], [0, rows]], np.float64))
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    margin = pad * max(rows, cols)
    shift = np.array([[1.0, 0.0, margin - lo[0]], [0.0, 1.0, margin - lo[1]], [0.0, 0.0, 1.0]])
    m = shift @ m
    size = (int(hi[0] - lo[0] + 2 * margin), int(hi[1] - lo[1] + 2 * margin))
    out = cv2.warpPerspective(image, m, size, flags=cv2.INTER_LINEAR, borderValue=background)
    return out, m @ h


def make_sheet(
    template: Template,
    *,
    dpi: float = TEST_DPI,
    written: Mapping[tuple[int, str], str] | None = None,
    crossed: tuple[int, ...] = (),
    angle: float = 0.0,
    markers: bool = True,
    line_grey: float | None = None,
    perspective: float = 0.0,
) -> Sheet:
    """A filled, possibly turned sheet with its truth."""
    image = np.array(render_template(template, dpi, markers=markers, line_grey=line_grey))
    marks = dict(written or {})
    write_marks(image, template, dpi, marks, crossed)
    h = mm_to_px_matrix(dpi)
    if angle or perspective:
        image, h = turn(image, h, angle, perspective=perspective)
    return Sheet(image, h, marks)


#: A few written cells: single digits, several digits, a result square.
WRITTEN: dict[tuple[int, str], str] = {
    (1, "B7"): "6",
    (1, "B11"): "4",
    (2, "W5"): "31",
    (3, "Woff"): "2",
    (4, "Bres"): "2",
    (5, "W12"): "55",
    (8, "B1"): "3",
}


@pytest.fixture(scope="session")
def a4() -> Template:
    """The A4 template."""
    return load_template("a4")


@dataclass
class RecordingReader:
    """Stands in for the cell classifier (another part's model): records the cells it is given.

    Answers "1" for every cell, and an X / arrow of 0 so the board fields are
    exercised; the tests check which cells reach it and the ink they carry.
    """

    seen: list[tuple[np.ndarray, Any]] = field(default_factory=list)

    def analyse_many(self, cells: Any) -> list[Any]:
        from digitise.notation.readings import CellReading
        from digitise.vision.cells import CellAnalysis

        self.seen.extend(cells)
        return [CellAnalysis((CellReading((1,), 0.9), CellReading((), 0.05)), 0.0, 0.0, 0.0) for _ in cells]


@pytest.fixture
def recording_reader() -> RecordingReader:
    """A fresh recording reader."""
    return RecordingReader()
