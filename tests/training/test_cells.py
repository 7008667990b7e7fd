"""Synthetic training cells drawn from any glyph source, faint ones included."""

from __future__ import annotations

import cv2
import numpy as np

from digitise.training.cells import compose_cell
from digitise.vision.cells import CellKind


def test_a_crossed_centre_of_glyphs_the_pen_thins_away_is_drawn_not_a_crash() -> None:
    """MNIST holds faint digits that a thin pen's cut can wipe out: crossing each digit then had no box to cross."""
    faint = np.zeros((20, 20), np.uint8)
    cv2.line(faint, (10, 3), (10, 16), 90, 1)  # grey 90: gone wherever the pen's cut is above 0.35
    glyphs = {d: [faint] for d in range(10)}
    vanished = 0
    for seed in range(120):
        cell = compose_cell(glyphs, np.random.default_rng(seed), CellKind.CENTRE, (3, 5), crossed=True)
        assert cell.crossed and cell.digits == (3, 5)
        vanished += sum(1 for _, mask in cell.objects if not (mask > 0.3).any())
    assert vanished > 0  # the case the guard is for did come up
