"""The page image type, and the pixel helpers every decoder hands its pixels through."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from digitise.errors import PageError

log = logging.getLogger(__name__)


#: Smallest image side worth trying: below this a note cannot be read.
MIN_SIDE = 400
#: Most pixels a page image may have; a larger file is refused before it is decoded. An A3 page
#: scanned at 1200 dpi is 278 megapixels: this is twice that, and still below OpenCV's own limit
#: (2^30 pixels, past which it fails without saying why). A grey page this size takes 600 MB, a
#: colour one 1.8 GB.
MAX_PAGE_PIXELS = 600_000_000
#: Most bytes a page's decoded picture may take, as its header declares it (width x height x channels x
#: bytes a sample): a 600-megapixel colour page at 8 bits; a small file may declare far more.
MAX_PAGE_BYTES = 3 * MAX_PAGE_PIXELS


#: Rows composited onto white at a time for a picture with transparency: float work a slice at a time,
#: not over the whole page (four float copies of a large RGBA page are gigabytes).
ALPHA_ROWS = 512
#: A bilevel page is taken as dithered when more than this share of its black pixels touch no other
#: black pixel (on their four sides): dithering draws paper and grey lines as such lone dots, strokes do not.
DITHERED_ISOLATED = 0.2
#: Width (mm) of the box filter that turns a dithered page back into grey levels: a few dots across,
#: far thinner than a pen stroke.
UNDITHER_MM = 0.4

# OpenCV prints decoder warnings for truncated files on stderr; we report those ourselves.
try:
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_ERROR)
except AttributeError:  # pragma: no cover - older OpenCV builds
    pass


@dataclass(frozen=True, slots=True)
class PageImage:
    """One page as pixels: ``image`` is uint8 grey (H, W) or BGR (H, W, 3)."""

    source: str
    number: int
    image: np.ndarray
    #: Resolution when the file says (or when we rasterised it); None when unknown.
    dpi: float | None = None
    #: What the decoder had to patch over to give these pixels (a damaged JPEG's data), or None when the
    #: file decoded cleanly. Such a page is read as far as it decoded, and said to be damaged.
    damage: str | None = None
    #: How much darker than its paper the page's darkest marks were (0..1), when so little that its levels
    #: were stretched (:func:`level_faint`: faded print, glare, or the other side of a sheet showing
    #: through); None for a page read as it came.
    washed_out: float | None = None

    @property
    def grey(self) -> np.ndarray:
        """The page in grey levels (uint8)."""
        if self.image.ndim == 2:
            return self.image
        return cv2.cvtColor(self.image, cv2.COLOR_BGR2GRAY)

    @property
    def darkest(self) -> np.ndarray:
        """Each pixel's darkest channel (uint8); see :func:`darkest_channel`."""
        return darkest_channel(self.image)


def darkest_channel(image: np.ndarray) -> np.ndarray:
    """Each pixel's darkest channel (uint8): grey for neutral pixels, much darker for coloured ink.

    Printed lines are neutral grey; handwriting is often blue. Luminance
    makes a light blue stroke nearly as pale as the paper, while its red
    channel stays dark: this image keeps coloured ink apart from paper.
    A grey image is returned as it is.
    """
    if image.ndim == 2:
        return image
    height, width, channels = image.shape
    if channels == 3 and image.flags.c_contiguous:
        # A pixel's three bytes lie side by side in its row: a 1x3 erosion centred on the middle
        # one is their minimum (a third faster than numpy's strided minimum).
        eroded = cv2.erode(image.reshape(height, width * 3), _ROW_OF_3)
        return np.ascontiguousarray(eroded[:, 1::3])
    darkest: np.ndarray = np.minimum(np.minimum(image[:, :, 0], image[:, :, 1]), image[:, :, 2])
    return darkest


_ROW_OF_3 = np.ones((1, 3), np.uint8)


def orient(image: np.ndarray, orientation: int) -> np.ndarray:
    """``image`` turned upright as its EXIF or TIFF orientation tag (274) says: 1 is as stored, 2-8 are the
    mirrorings and quarter turns a camera records instead of turning the pixels.

    A page found upside down or on its side is turned by the reader anyway;
    a mirrored one is not (a note is never read through the paper), so a
    phone photo stored mirrored must be turned here.
    """
    if orientation == 2:
        return cv2.flip(image, 1)
    if orientation == 3:
        return cv2.rotate(image, cv2.ROTATE_180)
    if orientation == 4:
        return cv2.flip(image, 0)
    if orientation == 5:
        return cv2.transpose(image)
    if orientation == 6:
        return cv2.rotate(image, cv2.ROTATE_90_CLOCKWISE)
    if orientation == 7:
        return cv2.rotate(cv2.transpose(image), cv2.ROTATE_180)
    if orientation == 8:
        return cv2.rotate(image, cv2.ROTATE_90_COUNTERCLOCKWISE)
    return image


def histogram(grey: np.ndarray) -> np.ndarray:
    """How many pixels of a uint8 image have each of the 256 levels (int64), as ``np.bincount`` counts them.

    OpenCV's histogram: twice as fast as ``np.bincount``, which widens every
    pixel to 64 bits first.
    """
    if grey.size == 0 or grey.size >= 1 << 24:  # empty, or too many pixels for OpenCV's float32 counts
        return np.bincount(grey.ravel(), minlength=256).astype(np.int64)
    counts = cv2.calcHist([np.ascontiguousarray(grey)], [0], None, [256], [0, 256])
    return counts.ravel().astype(np.int64)


#: A page whose darkest marks (the darkest 0.5 % of it) are less than this much darker than its
#: paper is washed out: a faded photocopy, a photo in glaring light, a scan with the brightness up.
#: The reader's bars (a line, a written square) are set as darkness against the paper, so such a
#: page is levelled first.
FAINT_PAGE = 0.4
#: Below this the page holds nothing but grain (a blank page): levelling would make marks of it.
BLANK_PAGE = 0.05
#: Where levelling puts the paper and the darkest marks (grey levels).
LEVELLED_PAPER = 235.0
LEVELLED_DARKEST = 94.0
#: Pixels sampled along the long side to measure a page's levels.
_LEVEL_SAMPLES = 250


def page_levels(image: np.ndarray) -> tuple[int, int]:
    """The grey levels of a page's darkest marks (0.5th percentile) and its paper (90th), darkest channel."""
    step = max(1, max(image.shape[:2]) // _LEVEL_SAMPLES)
    sample = darkest_channel(np.ascontiguousarray(image[::step, ::step]))
    cumulative = np.cumsum(histogram(sample))
    total = int(cumulative[-1])
    return int(np.searchsorted(cumulative, 0.005 * total)), int(np.searchsorted(cumulative, 0.9 * total))


def level_faint(image: np.ndarray) -> tuple[np.ndarray, float] | None:
    """A washed-out page (:data:`FAINT_PAGE`) with its levels stretched, and how much darker than its paper
    its darkest marks were before; or None for a page that needs none.

    One linear map of every channel: the paper to :data:`LEVELLED_PAPER`,
    the darkest marks to :data:`LEVELLED_DARKEST`, so the reader's bars
    measure it as they measure a good scan. Colour stays (blue ink is still
    told from grey lines by its channels). A page between
    :data:`BLANK_PAGE` and nothing is left alone: it is blank, and says so.
    """
    darkest, paper = page_levels(image)
    if paper <= 0:
        return None
    darkness = 1.0 - darkest / paper
    if darkness >= FAINT_PAGE or darkness < BLANK_PAGE:
        return None
    gain = (LEVELLED_PAPER - LEVELLED_DARKEST) / (paper - darkest)
    levels = LEVELLED_PAPER - (paper - np.arange(256, dtype=np.float64)) * gain
    table = np.clip(np.round(levels), 0, 255).astype(np.uint8)
    levelled: np.ndarray = cv2.LUT(image, table)
    return levelled, round(darkness, 4)


def to_uint8(image: np.ndarray) -> np.ndarray:
    """8-bit grey or BGR from whatever depth and channels the decoder gave."""
    if image.dtype == np.uint16:
        if image.flags.writeable:
            np.right_shift(image, 8, out=image)  # in place: a large 16-bit page is not copied at its own size
            image = image.astype(np.uint8)
        else:
            image = (image >> 8).astype(np.uint8)
    elif image.dtype == bool:
        image = image.astype(np.uint8) * 255
    elif image.dtype in (np.float32, np.float64):
        scale = 255.0 if float(image.max(initial=0.0)) <= 1.0 else 1.0
        image = np.clip(image * scale, 0, 255).astype(np.uint8)
    elif image.dtype != np.uint8:
        image = np.clip(image, 0, 255).astype(np.uint8)
    if image.ndim == 3:
        channels = image.shape[2]
        if channels == 1:
            image = image[:, :, 0]
        elif channels == 4:
            # Transparent parts of a scan are paper: composite onto white, a slice at a time (memory).
            out = np.empty(image.shape[:2] + (3,), np.uint8)
            for top in range(0, image.shape[0], ALPHA_ROWS):
                rows = image[top:top + ALPHA_ROWS]
                alpha = rows[:, :, 3:4].astype(np.float32) / 255.0
                out[top:top + ALPHA_ROWS] = (rows[:, :, :3].astype(np.float32) * alpha
                                             + 255.0 * (1.0 - alpha)).astype(np.uint8)
            image = out
        elif channels == 2:
            image = image[:, :, 0]
    if image.ndim == 3 and _is_grey(image):
        image = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    return np.ascontiguousarray(image)


def _is_grey(image: np.ndarray) -> bool:
    """True when a BGR image carries no colour (checked on a sparse sample for speed)."""
    sample = image[::17, ::17].astype(np.int16)
    return bool(np.abs(sample[:, :, 0] - sample[:, :, 1]).max() <= 2 and np.abs(sample[:, :, 1] - sample[:, :, 2]).max() <= 2)


def as_page(image: np.ndarray, path: Path, number: int, dpi: float | None = None,
            damage: str | None = None) -> PageImage | PageError:
    """The page, or why it cannot be read; a dithered bilevel page comes back in grey levels, a washed-out
    one levelled (:func:`level_faint`)."""
    height, width = image.shape[:2]
    if min(height, width) < MIN_SIDE:
        return PageError(f"image too small to read ({width}x{height} px)", path, f"page {number}")
    if is_dithered(image):
        image = undither(image)
    levelled = level_faint(image)
    washed_out = None
    if levelled is not None:
        log.info("%s page %d: washed out (its darkest marks barely darker than its paper): levelled", path, number)
        image, washed_out = levelled
    return PageImage(str(path), number, image, dpi, damage, washed_out)


def why_too_large(width: int, height: int, pixel_bytes: int = 1) -> str | None:
    """Why an image of this size is refused (see :data:`MAX_PAGE_PIXELS` and :data:`MAX_PAGE_BYTES`:
    ``pixel_bytes`` is what one pixel takes decoded, all channels), or None when it is not."""
    pixels = width * height
    if pixels > MAX_PAGE_PIXELS:
        return (f"image too large: {width}x{height} px, {_megapixels(pixels)} megapixels "
                f"(over the {_megapixels(MAX_PAGE_PIXELS)}-megapixel limit)")
    if pixels * pixel_bytes > MAX_PAGE_BYTES:
        return (f"image too large: {width}x{height} px at {8 * pixel_bytes} bits a pixel would take "
                f"{pixels * pixel_bytes / 1e9:.1f} GB decoded (over the {MAX_PAGE_BYTES / 1e9:.1f} GB limit): "
                "save it with 8 bits a channel, or at a lower resolution")
    return None


def pillow_pixel_bytes(mode: str, bands: int) -> int:
    """Bytes a pixel of a Pillow image of ``mode`` takes decoded."""
    if mode in ("I", "F"):
        return 4
    return bands * (2 if mode.startswith("I;16") else 1)


#: Channels of each PNG colour type (grey, RGB, palette, grey + alpha, RGBA).


def _megapixels(pixels: int) -> str:
    return f"{pixels / 1e6:.0f}" if pixels >= 10_000_000 else f"{pixels / 1e6:.1f}"


_FOUR_SIDES = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], np.uint8)


def is_dithered(image: np.ndarray) -> bool:
    """Whether ``image`` is a bilevel (black and white only) page whose grey levels were dithered.

    A scanner's 1-bit "halftone" mode (Floyd-Steinberg and the like) draws
    grey as a pattern of lone black dots: the paper's slight grey becomes
    a sprinkle of dots and the printed lines a dotted grey. Cell by cell
    that reads as writing everywhere, so such a page must be blurred back
    into grey levels first. A thresholded 1-bit scan must not be: its
    black pixels form strokes and lines, and they are almost never alone.
    Grey and colour pages are told apart on a sparse sample, at no cost.
    """
    if image.ndim != 2 or image.dtype != np.uint8:
        return False
    sample = image[::7, ::7]
    if bool(np.any((sample != 0) & (sample != 255))):
        return False
    black = (image == 0).view(np.uint8)
    count = int(np.count_nonzero(black))
    if count == 0:
        return False
    alone = np.count_nonzero(black > cv2.dilate(black, _FOUR_SIDES))
    return bool(alone > DITHERED_ISOLATED * count)


def undither(image: np.ndarray) -> np.ndarray:
    """A dithered bilevel page as grey levels: a box filter :data:`UNDITHER_MM` wide.

    The width comes from the image's long side taken as a page's (about
    297 mm): a scan's stated resolution is often missing or wrong.
    """
    px_per_mm = max(image.shape[:2]) / 297.0
    size = max(3, round(UNDITHER_MM * px_per_mm) | 1)
    return cv2.blur(image, (size, size))


#: PNG colour types the fast decoder reads (8 bits a sample): the pixel format it is asked for.
