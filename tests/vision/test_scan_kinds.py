"""Real sample pages as scanners and phones deliver them: 16-bit grey, 1-bit dithered or thresholded, mirrored.

Each is read end to end with the shipped cell reader and compared with the
same page read from an ordinary 8-bit grey file.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from digitise.errors import PageError
from digitise.vision import images
from digitise.vision.images import PageImage, load_pages
from digitise.vision.read import MIRRORED, locate, read_pages, resolve_templates

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "alice-bruno" / "light"


def _boards(path: Path) -> dict[tuple[int, str], tuple[int, ...]]:
    """What was read on the one page of ``path``: each written cell's best reading."""
    outcome = read_pages([path], header=False)
    assert outcome.errors == ()
    (page,) = outcome.readings.pages
    return {(b.index, name): cands[0].digits for b in page.boards for name, cands in b.cells.items() if cands}


@pytest.fixture(scope="module")
def grey() -> Image.Image:
    """Sample page 1 in 8-bit grey (150 dpi)."""
    return Image.open(SAMPLES / "page-001.jpg").convert("L")


@pytest.fixture(scope="module")
def grey_300() -> Image.Image:
    """Sample page 1 in 8-bit grey at 300 dpi, as a 1-bit scan would be made at."""
    page = Image.open(SAMPLES / "page-001.jpg").convert("L")
    return page.resize((page.width * 2, page.height * 2), Image.Resampling.LANCZOS)


def test_a_16_bit_grey_tiff_reads_as_the_8_bit_page(grey: Image.Image, tmp_path: Path) -> None:
    """Pillow's own 16 -> 8 bit conversion clipped the page to white: "blank page"."""
    grey.save(tmp_path / "page.png")
    deep = Image.fromarray(np.asarray(grey).astype(np.uint16) * 257)
    assert deep.mode == "I;16"
    deep.save(tmp_path / "page16.tif")
    want = _boards(tmp_path / "page.png")
    assert len(want) >= 10
    assert _boards(tmp_path / "page16.tif") == want


def test_a_dithered_1_bit_scan_reads_as_the_grey_page(grey_300: Image.Image, tmp_path: Path) -> None:
    """Floyd-Steinberg dots read as writing in every square; blurred back to grey first, the page reads as it should."""
    grey_300.save(tmp_path / "page.png")
    grey_300.convert("1").save(tmp_path / "dithered.tif", dpi=(300, 300))  # Pillow dithers by default
    (page,) = load_pages(tmp_path / "dithered.tif")
    assert isinstance(page, PageImage)
    assert len(np.unique(page.image)) > 2  # grey levels again
    assert _boards(tmp_path / "dithered.tif") == _boards(tmp_path / "page.png")


def test_a_thresholded_1_bit_scan_is_left_as_it_is(grey_300: Image.Image, tmp_path: Path) -> None:
    """Black strokes on white: not blurred, and read as the grey page."""
    bilevel = grey_300.point(lambda v: 255 if v > 200 else 0).convert("1", dither=Image.Dither.NONE)
    bilevel.save(tmp_path / "thresholded.tif", dpi=(300, 300), compression="group4")
    (page,) = load_pages(tmp_path / "thresholded.tif")
    assert isinstance(page, PageImage)
    assert np.array_equal(page.image, np.asarray(bilevel.convert("L")))
    grey_300.save(tmp_path / "page.png")
    assert _boards(tmp_path / "thresholded.tif") == _boards(tmp_path / "page.png")


def test_a_mirrored_page_is_refused_and_says_why(tmp_path: Path) -> None:
    """A mirror image (a phone's front camera) would be read through its lines alone, as garbage."""
    page = cv2.imread(str(SAMPLES / "page-001.jpg"))
    templates = resolve_templates(None)
    fit = locate(PageImage("page.jpg", 1, page), templates)[0]
    assert fit.method == "markers"
    mirrored = cv2.flip(page, 1)
    for name, image in (("mirror.png", mirrored), ("mirror-turned.png", cv2.rotate(mirrored, cv2.ROTATE_90_CLOCKWISE))):
        cv2.imwrite(str(tmp_path / name), image)
        outcome = read_pages([tmp_path / name], header=False)
        assert outcome.readings.pages == ()
        (error,) = outcome.errors
        assert isinstance(error, PageError)
        assert error.message == f"{tmp_path / name}: page 1: {MIRRORED}"


def test_bilevel_detection_is_cheap_on_grey_pages(grey: Image.Image, monkeypatch: pytest.MonkeyPatch) -> None:
    """A grey page is told from a bilevel one on a sparse sample: the full-size work is never done."""
    calls: list[int] = []
    dilate = cv2.dilate
    monkeypatch.setattr(images.cv2, "dilate", lambda *a, **k: calls.append(1) or dilate(*a, **k))
    assert not images.is_dithered(np.asarray(grey))
    assert calls == []
