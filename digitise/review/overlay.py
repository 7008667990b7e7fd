"""A board's picture with the squares as the vision placed them drawn over it, for a board the fit is unsure of.

The reviewer sees at a glance whether the drawn squares sit on the printed ones: where they do not, the
cells were cut from the wrong squares and the turn read from them may be wrong.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

#: The drawn lines' colour (BGR): the green of ``digitise layout``'s overlay (:func:`~digitise.vision.layout.draw_layout`).
LINE_COLOUR = (40, 170, 40)


def draw_board_lines(image: np.ndarray, box: tuple[int, int, int, int], margin: float,
                     lines: Sequence[Sequence[tuple[int, int]]]) -> np.ndarray | None:
    """``box`` of ``image`` with ``margin`` (a share of its size) around it, clipped to the image, in colour, with
    the board's rows of line crossings (page px) joined: the row lines along each row, the point lines between
    the two lines of each row of squares. None when the box is empty."""
    x, y, w, h = box
    dx, dy = int(w * margin), int(h * margin)
    height, width = image.shape[:2]
    x0, y0 = max(0, x - dx), max(0, y - dy)
    x1, y1 = min(width, x + w + dx), min(height, y + h + dy)
    if x1 <= x0 or y1 <= y0:
        return None
    crop = image[y0:y1, x0:x1]
    out = cv2.cvtColor(crop, cv2.COLOR_GRAY2BGR) if crop.ndim == 2 else np.ascontiguousarray(crop[..., :3]).copy()
    points = np.array(lines, np.float64) - (x0, y0)
    thick = max(1, round(max(x1 - x0, y1 - y0) / 500))
    rows = [np.round(row).astype(np.int32) for row in points]
    for row in rows:
        cv2.polylines(out, [row.reshape(-1, 1, 2)], False, LINE_COLOUR, thick, cv2.LINE_AA)
    # The point lines join the first line of a row of squares to the second: rows 0-1 and 2-3 of the crossings.
    for top, bottom in zip(rows[0::2], rows[1::2], strict=False):
        for a, b in zip(top, bottom, strict=False):
            cv2.line(out, (int(a[0]), int(a[1])), (int(b[0]), int(b[1])), LINE_COLOUR, thick, cv2.LINE_AA)
    return out
