"""Fixtures for the sheet tests: templates, an ArUco detector, a small glyph set."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from digitise.notation.template import Template, load_template


@pytest.fixture(scope="session")
def a4() -> Template:
    return load_template("a4")


@pytest.fixture(scope="session")
def letter() -> Template:
    return load_template("letter")


@pytest.fixture(scope="session")
def aruco() -> cv2.aruco.ArucoDetector:
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    return cv2.aruco.ArucoDetector(dictionary, cv2.aruco.DetectorParameters())


def detect_markers(detector: cv2.aruco.ArucoDetector, image: np.ndarray) -> dict[int, np.ndarray]:
    """Marker id -> its four corners (px), as OpenCV finds them."""
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    corners, ids, _ = detector.detectMarkers(np.ascontiguousarray(gray))
    if ids is None:
        return {}
    return {int(i): c.reshape(4, 2) for c, i in zip(corners, ids.ravel(), strict=True)}


@pytest.fixture(scope="session")
def glyph_bank():  # type: ignore[no-untyped-def]
    """The held-out glyphs of ../shared/data/digits.png (skips when absent)."""
    from digitise.sheet.glyphs import GlyphSubset, load_digit_glyphs
    from digitise.sheet.handwriting import GlyphBank
    from tests.conftest import DIGITS_PNG

    if not DIGITS_PNG.is_file():
        pytest.skip(f"../shared/data/digits.png not found at {DIGITS_PNG}")
    return GlyphBank(load_digit_glyphs(DIGITS_PNG, GlyphSubset.TEST))


@pytest.fixture(scope="session")
def short_match():  # type: ignore[no-untyped-def]
    """A self-played 3-point match with a closed-out turn, dances, a double and a take (39 boards)."""
    from digitise.game.selfplay import SelfPlayOptions, play_match

    return play_match(111, SelfPlayOptions(length=3, players=("Ann", "Kato"),
                                           metadata=(("Event", "Club night"), ("Round", "2"))))
