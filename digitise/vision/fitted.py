"""What fitting a note's layout from its ruled lines gives: each board found (px), and the page's fit."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from digitise.notation.template import Template


@dataclass(frozen=True, slots=True)
class FittedBoard:
    """One board found on the upright working image (px): its outer edges, its four row lines, and the
    thirteen lines of its point squares (``first`` + k * ``pitch``)."""

    left: float
    right: float
    ys: tuple[float, float, float, float]
    first: float
    pitch: float

    @property
    def xs(self) -> tuple[float, ...]:
        """Its fifteen vertical lines, left to right."""
        return (self.left, *(self.first + k * self.pitch for k in range(13)), self.right)


@dataclass(frozen=True, slots=True)
class LayoutFit:
    """A page's boards fitted from its lines: the template (page mm) and where it lies on the image."""

    template: Template
    #: Template mm -> px of the image fitted.
    homography: np.ndarray
    #: How far the page was turned (degrees, anticlockwise in the image).
    turn: float
    #: Boards seen; the others of the lattice were placed from their row and column.
    seen: int
    boards: tuple[FittedBoard, ...]
    #: The print is mirrored: off squares on the left, points 1 to 12 left to right (told by its point numbers).
    mirrored: bool = False
    #: Its printed figures said which way up the page stands (else it is taken as it lies, if it may be: see
    #: :func:`way_up`).
    way_up_seen: bool = True
    #: Point numbers are printed beside its squares (rows of them seen).
    numbered: bool = True
    #: Boards (their numbers on the page, in reading order) whose long lines were seen but not their squares, on a
    #: page of boards of unequal size: not read (none is placed from the others).
    unread: tuple[int, ...] = ()
