"""Whether a fitted layout is a known template's print: the whole page by one homography, or board by board."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np

from digitise.notation.template import Template
from digitise.vision.grid import board_lines, mirrored


def board_crossings(template: Template) -> np.ndarray:
    """Every board's line crossings (mm), boards in order: (boards * 60, 2)."""
    points = []
    for board in template.boards:
        lines = board_lines(board)
        points += [(x, y) for y in lines.ys for x in lines.xs]
    return np.array(points, np.float64)


#: A fitted layout is the template's own print when one homography (a page photographed at a slant) maps
#: every line crossing of the template within this (mm) of the fitted one ...
SAME_PRINT_MM = 1.2
#: ... stretching it no more than this much more one way than the other (the prints' own proportions differ:
#: a taller row or centre strip is no slant of the camera).
SAME_PRINT_STRETCH = 0.04
#: A board alone is its template's when it is moved and turned onto it within this (mm).
SAME_BOARD_MM = 0.6


def print_map(fitted: Template, template: Template, *, sides: bool = True) -> np.ndarray | None:
    """The homography from ``template``'s mm to ``fitted``'s (a :func:`fit_layout` template) when they are one
    print (see :data:`SAME_PRINT_MM`), else None. Without ``sides``, the lines alone are compared, not which
    side the off squares were told to be on."""
    if len(fitted.boards) != len(template.boards):
        return None
    if sides and mirrored(fitted.boards[0]) != mirrored(template.boards[0]):
        return None
    src, dst = board_crossings(template), board_crossings(fitted)
    homography, _ = cv2.findHomography(src, dst, 0)
    if homography is None:
        return None
    mapped = cv2.perspectiveTransform(src.reshape(-1, 1, 2), homography).reshape(-1, 2)
    if float(np.linalg.norm(mapped - dst, axis=1).max()) > SAME_PRINT_MM:
        return None
    centre = src.mean(axis=0)
    ends = cv2.perspectiveTransform(np.array([[centre, centre + [1.0, 0.0], centre + [0.0, 1.0]]]), homography)[0]
    across, down = float(np.linalg.norm(ends[1] - ends[0])), float(np.linalg.norm(ends[2] - ends[0]))
    if abs(across / max(down, 1e-9) - 1.0) > SAME_PRINT_STRETCH:
        return None
    return np.asarray(homography, np.float64)


def same_boards(fitted: Template, template: Template) -> bool:
    """Whether each board of ``fitted`` (a :func:`fit_layout` template of fewer boards than ``template``, say a
    page of it with boards hidden) is drawn as ``template``'s first: the same print's boards, whatever grid they
    were found in. Both are in mm of a point square 9.75 mm wide, so a board is only moved and turned onto the
    other, every line crossing within :data:`SAME_BOARD_MM` (one board alone says less than a page)."""
    if not fitted.boards or len(fitted.boards) >= len(template.boards):
        return False
    own = board_crossings(replace(template, boards=template.boards[:1])).astype(np.float32)
    for board in fitted.boards:
        seen = board_crossings(replace(fitted, boards=(board,))).astype(np.float32)
        matrix, _ = cv2.estimateAffinePartial2D(own, seen, method=cv2.LMEDS)
        if matrix is None:
            return False
        if abs(float(np.hypot(matrix[0, 0], matrix[1, 0])) - 1.0) > SAME_PRINT_STRETCH:
            return False
        mapped = own @ matrix[:, :2].T + matrix[:, 2]
        if float(np.linalg.norm(mapped - seen, axis=1).max()) > SAME_BOARD_MM:
            return False
    return True
