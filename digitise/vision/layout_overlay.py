"""A fitted layout drawn over its page, for a person to check (``digitise layout --overlay``)."""

from __future__ import annotations

import cv2
import numpy as np

from digitise.notation.template import Rect, Template
from digitise.vision.header_fit import draw_fields


def reduced(grey: np.ndarray, long_side: int) -> tuple[np.ndarray, float]:
    """``grey`` reduced by a whole number to about ``long_side`` px, and the factor (reduced px per px)."""
    step = int(np.ceil(max(grey.shape[:2]) / long_side))
    if step <= 1:
        return grey, 1.0
    return cv2.resize(grey, None, fx=1.0 / step, fy=1.0 / step, interpolation=cv2.INTER_AREA), 1.0 / step


def draw_layout(image: np.ndarray, template: Template, homography: np.ndarray, long_side: int = 2200) -> np.ndarray:
    """``image`` (grey or BGR) with ``template``'s cells drawn where ``homography`` (mm -> px) puts them:
    point, result and off squares in green, centre strips in blue, each board's number in red, header fields in purple."""
    canvas = image if image.ndim == 3 else cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    factor = min(1.0, long_side / max(canvas.shape[:2]))
    canvas = cv2.resize(canvas, None, fx=factor, fy=factor, interpolation=cv2.INTER_AREA) if factor < 1.0 else canvas.copy()
    to_canvas = np.diag([factor, factor, 1.0]) @ np.asarray(homography, np.float64)

    def quad(rect: Rect) -> np.ndarray:
        pts = np.array(rect.corners, np.float64).reshape(-1, 1, 2)
        return np.round(cv2.perspectiveTransform(pts, to_canvas).reshape(-1, 2)).astype(np.int32)

    for board in template.boards:
        for name, rect in board.cells.items():
            colour = (255, 120, 0) if name == "centre" else (0, 170, 0)
            cv2.polylines(canvas, [quad(rect)], True, colour, 2 if name == "centre" else 1, cv2.LINE_AA)
        corner = quad(board.cells["Bres"])[0]
        cv2.putText(canvas, str(board.index), (int(corner[0]) - 22, int(corner[1]) + 16), cv2.FONT_HERSHEY_SIMPLEX, 0.6,
                    (0, 0, 230), 2, cv2.LINE_AA)
    draw_fields(canvas, template.fields, to_canvas)
    return canvas
