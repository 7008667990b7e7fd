"""Handwritten digit glyphs for rendering and training, with a fixed held-out split.

The split is part of the contract between ``digitise synth`` and ``digitise
train``: the classifier never trains on the ``test`` glyphs, and the
benchmarks render their sheets with them only.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from digitise.errors import InputError
from digitise.fileio import write_atomic

#: Default glyph source when ../shared is beside the checkout.
DEFAULT_DIGITS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "digits.png"


class GlyphSubset(enum.Enum):
    """Which glyphs of each class to use."""

    #: Glyphs the classifier may learn from (the first 80 % of each class).
    TRAIN = "train"
    #: Held out: never used in training; benchmarks render with these.
    TEST = "test"
    ALL = "all"


def _split(glyphs: list[np.ndarray], subset: GlyphSubset) -> list[np.ndarray]:
    cut = (len(glyphs) * 4) // 5
    if subset is GlyphSubset.TRAIN:
        return glyphs[:cut]
    if subset is GlyphSubset.TEST:
        return glyphs[cut:]
    return glyphs


def load_digit_glyphs(source: str | Path | None = None, subset: GlyphSubset = GlyphSubset.ALL) -> dict[int, list[np.ndarray]]:
    """Digit glyphs by class (0-9): uint8 images, ink white (255) on black (0).

    ``source`` is OpenCV's ``digits.png`` sheet (20x20 cells, 5 rows of 100
    per class) or a folder of labelled images named ``<digit>_<anything>.png``
    (or in sub-folders named by digit). Raises :class:`InputError` when no
    usable glyph is found.
    """
    path = Path(source) if source is not None else DEFAULT_DIGITS
    if path.is_dir():
        glyphs = _from_folder(path)
    elif path.is_file():
        glyphs = _from_sheet(path)
    else:
        raise InputError("glyph source not found", path)
    if not any(glyphs.values()):
        raise InputError("no usable digit glyph found", path)
    return {d: _split(g, subset) for d, g in glyphs.items()}


def _from_sheet(path: Path) -> dict[int, list[np.ndarray]]:
    sheet = cv2.imread(str(path), cv2.IMREAD_GRAYSCALE)
    if sheet is None:
        raise InputError("not an image", path)
    if sheet.shape != (1000, 2000):
        raise InputError(f"expected OpenCV's 2000x1000 digits sheet, got {sheet.shape[1]}x{sheet.shape[0]}", path)
    glyphs: dict[int, list[np.ndarray]] = {d: [] for d in range(10)}
    for row in range(50):
        digit = row // 5
        for col in range(100):
            cell = sheet[row * 20:(row + 1) * 20, col * 20:(col + 1) * 20]
            if cell.max() > 0:
                glyphs[digit].append(np.ascontiguousarray(cell))
    return glyphs


def _from_folder(path: Path) -> dict[int, list[np.ndarray]]:
    glyphs: dict[int, list[np.ndarray]] = {d: [] for d in range(10)}
    for file in sorted(path.rglob("*")):
        if file.suffix.lower() not in {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff"}:
            continue
        label = file.parent.name if re.fullmatch(r"\d", file.parent.name) else file.name[0]
        if not label.isdecimal():
            continue
        image = cv2.imread(str(file), cv2.IMREAD_GRAYSCALE)
        if image is None or image.size == 0 or image.max() == image.min():
            continue
        # Accept dark-on-light images too: glyphs are kept as white ink on black.
        if float(image.mean()) > 127:
            image = 255 - image
        glyphs[int(label)].append(image)
    return glyphs


def write_digit_glyphs(folder: Path, digit: int, glyphs: Sequence[np.ndarray], *, overwrite: bool = False) -> None:
    """``glyphs`` of ``digit`` into a glyph folder (``<digit>_<n>.png``), in the order the loader reads them back."""
    for n, glyph in enumerate(glyphs):
        ok, png = cv2.imencode(".png", glyph)
        if not ok:  # pragma: no cover - OpenCV encodes any uint8 image
            raise InputError("glyph not encodable", folder)
        write_atomic(folder / f"{digit}_{n:05d}.png", png.tobytes(), overwrite=overwrite)
