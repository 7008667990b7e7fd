"""The writer's glyphs: a thin pen draws a pale glyph thin and whole, not as dots."""

from __future__ import annotations

import cv2
import numpy as np

from digitise.sheet.handwriting import GlyphBank, draw_glyph, full_strength, weight_lut


def _pale_seven(core: int) -> np.ndarray:
    """A 20-px "7" whose stroke peaks at ``core`` grey, as a thin MNIST stroke does once shrunk."""
    glyph = np.zeros((20, 20), np.uint8)
    cv2.polylines(glyph, [np.array([[4, 4], [15, 4], [8, 17]], np.int32)], False, 255, 2, cv2.LINE_AA)
    glyph = cv2.GaussianBlur(glyph, (0, 0), 0.9)
    return cv2.convertScaleAbs(glyph, alpha=core / max(int(glyph.max()), 1))


def _drawn(glyph: np.ndarray, weight: int) -> np.ndarray:
    ink = np.zeros((90, 90), np.uint8)
    draw_glyph(ink, glyph, x=15.0, y=75.0, height=60.0, slant=0.0, angle=0.0, aspect=1.0,
               lut=weight_lut(weight, 1.0))
    return ink


def _pieces(ink: np.ndarray) -> int:
    count, _ = cv2.connectedComponents((ink >= 128).astype(np.uint8), connectivity=8)
    return count - 1


def test_a_glyph_at_full_strength_is_left_as_it_is() -> None:
    glyph = np.zeros((20, 20), np.uint8)
    cv2.polylines(glyph, [np.array([[4, 4], [15, 4], [8, 17]], np.int32)], False, 255, 3, cv2.LINE_AA)
    assert np.array_equal(full_strength(glyph), glyph)
    assert np.array_equal(full_strength(np.zeros((5, 5), np.uint8)), np.zeros((5, 5), np.uint8))


def test_a_pale_glyph_is_brought_to_full_ink_at_its_core() -> None:
    glyph = _pale_seven(170)
    strong = full_strength(glyph)
    ink = strong[glyph > 40]
    assert np.percentile(ink, 90) >= 250
    # The shape is kept: where the glyph had no ink it still has none, and its order of greys holds.
    assert np.array_equal(strong == 0, glyph == 0)
    assert np.all(np.diff(strong.ravel()[np.argsort(glyph.ravel(), kind="stable")].astype(int)) >= 0)


def test_a_thin_pen_draws_a_pale_glyph_whole() -> None:
    pale = _pale_seven(170)
    raw = _drawn(pale, 145)
    whole = _drawn(full_strength(pale), 145)
    # As stored, the thin pen keeps only the glyph's darkest spots: dots, or nothing.
    assert _pieces(raw) != 1 or np.count_nonzero(raw >= 128) < 0.5 * np.count_nonzero(whole >= 128)
    # At full strength the same pen draws one thin, unbroken stroke, like the glyph drawn by a bold one.
    assert _pieces(whole) == 1
    assert np.count_nonzero(whole >= 128) < np.count_nonzero(_drawn(full_strength(pale), 60) >= 128)


def test_the_bank_holds_its_glyphs_at_full_strength() -> None:
    bank = GlyphBank({7: [_pale_seven(170)]})
    stored = bank.pick(7, np.random.default_rng(0))
    assert np.percentile(stored[stored > 40], 90) >= 250
