"""Loading page images: PNG, JPEG, TIFF (multi-page) and PDF (multi-page).

Every page comes out as an 8-bit image, grey ``(H, W)`` or colour BGR
``(H, W, 3)``, with its source file and page number. A file that cannot be
read at all raises :class:`~digitise.errors.InputError` naming the file and
the reason; one unreadable frame of a multi-page file is reported as a
:class:`~digitise.errors.PageError` in its place, so the other pages still read.
An image over :data:`MAX_PAGE_PIXELS` is refused before it is decoded, and a
dithered 1-bit scan comes out in grey levels (:func:`is_dithered`). A JPEG or
TIFF whose data the decoder had to patch over comes out as far as it decodes,
with what was wrong in :attr:`PageImage.damage` (never as lines of the C
library's own on stderr); so does a PDF page whose JPEG picture is cut short.
A photo's EXIF orientation is applied. Formats that are known but not read
(HEIC, GIF, a lossless JPEG, a JPEG 2000-compressed TIFF) are named as such,
not called damaged.
"""

from __future__ import annotations

import functools
import io
import logging
import os
import re
import stat
import struct
import sys
import tempfile
import threading
import warnings
import zlib
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import cv2
import numpy as np
import simplejpeg

from digitise.errors import InputError, PageError
from digitise.fileio import read_input

# A damaged TIFF makes Pillow's TIFF reader warn ("Corrupt EXIF data") on top of the one-line error we
# give for it. Only that module's UserWarnings: a decompression bomb still warns.
warnings.filterwarnings("ignore", category=UserWarning, module=r"PIL\.TiffImagePlugin")
# It also logs some of what it refuses ("More samples per pixel than can be decoded") as an error of its own,
# which would reach the user's terminal beside ours: the page's one-line error says it.
logging.getLogger("PIL.TiffImagePlugin").setLevel(logging.CRITICAL)
# tifffile (the fallback for frames Pillow does not read) logs a broken chain of frames the same way.
logging.getLogger("tifffile").setLevel(logging.CRITICAL)

log = logging.getLogger(__name__)

_isal: Any
try:  # ISA-L's inflate and CRC: twice zlib's speed (python-isal, a dependency; zlib and Wuffs do without it)
    from isal import isal_zlib as _isal
except ImportError:  # pragma: no cover
    _isal = None
_crc32 = _isal.crc32 if _isal is not None else zlib.crc32

#: Resolution PDFs are rasterised at, unless that would make a huge image.
PDF_DPI = 300.0
#: Longest side of a rasterised PDF page, in pixels (a 300-dpi A4 is 3508).
PDF_MAX_SIDE = 4200
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
#: What a decoded page takes at its peak, for each byte of its pixels: its picture, the grey and
#: levelled copies made of it and the reduced ones (a 600-megapixel colour page: 1.8 GB of pixels,
#: 3.4 GB at its peak).
PAGE_PEAK_FACTOR = 1.9


class PageMemory(Protocol):
    """Memory shared by the processes that decode pages at once (a batch's workers): each page holds its
    share while it is decoded and read (:func:`share_page_memory`)."""

    def hold(self, nbytes: int) -> AbstractContextManager[None]:
        """Hold ``nbytes`` of the shared memory for the block, waiting while others hold too much of it."""


#: The memory pages decoded in this process hold a share of (None: no one to share with).
_page_memory: PageMemory | None = None


def share_page_memory(memory: PageMemory | None) -> PageMemory | None:
    """Make every page decoded in this process from now on hold its peak (:data:`PAGE_PEAK_FACTOR`) in
    ``memory`` while it is decoded and read; None: no more. Returns what was shared before."""
    global _page_memory
    before, _page_memory = _page_memory, memory
    return before


def _held(pixels: int, pixel_bytes: int) -> AbstractContextManager[None]:
    """Hold a page's peak in the shared page memory, if there is one."""
    memory = _page_memory
    return nullcontext() if memory is None else memory.hold(int(pixels * pixel_bytes * PAGE_PEAK_FACTOR))


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


#: glibc's mallopt parameters, and the values :func:`keep_freed_memory` sets.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_MMAP_THRESHOLD = 128 << 20
_TRIM_THRESHOLD = 256 << 20
_memory_kept = False


def keep_freed_memory() -> None:
    """Let this process reuse the memory of one page's large buffers for the next (glibc only).

    A 300-dpi colour page allocates ~70 MB in a few large blocks (the file,
    the inflated rows, the picture). glibc gives each block over its mmap
    threshold its own mapping and unmaps it when freed, so every page
    faults all of it in again: ~15,000 page faults, ~20 ms of CPU a page
    (decode 70 -> 50 ms on the batch pages). Raising the threshold to
    128 MB and the trim threshold to 256 MB keeps freed blocks in the heap
    for the next page; a process keeps at most 256 MB it does not use.
    Called once per process by :func:`digitise.vision.read.read_pages`;
    does nothing elsewhere than on glibc.
    """
    global _memory_kept
    if _memory_kept:
        return
    _memory_kept = True
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # pragma: no cover - not glibc (musl has no mallopt)
        return
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)
    mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)


_NATIVE_STDERR = threading.Lock()


@contextmanager
def _native_messages() -> Iterator[list[str]]:
    """The lines C libraries print on the process's stderr meanwhile (libtiff's, libjpeg's), kept off it.

    They name no file (libtiff calls every file "tempfile.tif"), come beside
    our own one-line message, and a damaged fax-coded TIFF prints one per
    bad line: the caller says what they mean in its own words. File
    descriptor 2 is the whole process's, so captures take turns.
    """
    lines: list[str] = []
    with _NATIVE_STDERR, tempfile.TemporaryFile() as sink:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            yield lines
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            lines.extend(line.strip() for line in sink.read().decode("utf-8", "replace").splitlines() if line.strip())


def _libtiff_errors(lines: list[str]) -> list[str]:
    """libtiff's error lines, without the file name it makes up; its warnings (an unknown private tag) are not
    damage and are dropped."""
    errors = []
    for line in lines:
        _, _, text = line.partition("tempfile.tif: ") if line.startswith("tempfile.tif: ") else ("", "", line)
        # A broken link to the next frame is that frame's problem (it fails to open), not damage to this one.
        if "Warning, " not in text and not text.startswith("TIFFAdvanceDirectory"):
            errors.append(text.rstrip("."))
    return errors


def _damage(kind: str, errors: list[str]) -> str:
    """What to say of a page decoded past ``errors`` (libtiff's or libjpeg's lines)."""
    if len(errors) == 1:
        return f"the {kind}'s data is damaged ({errors[0]})"
    return f"the {kind}'s data is damaged ({len(errors)} problems, the first: {errors[0]})"


def _kind(head: bytes) -> str | None:
    """The file type from its first bytes (the suffix may lie)."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if head.startswith(b"\xff\xd8"):
        return "jpeg"
    if head[:4] in (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+"):
        return "tiff"
    if head[:2] == b"BM" and _is_bmp(head):
        return "bmp"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "webp"
    # A PDF may start with a few bytes of junk (a mail gateway's, a scanner's): PDF readers look for the
    # header in the first kilobyte, and so does PDFium.
    if b"%PDF-" in head[:1024]:
        return "pdf"
    return None


def sniff_file(path: str | Path) -> str | None:
    """The kind of page file (png, jpeg, tiff, bmp, webp, pdf) ``path`` is by its first bytes; None when it is
    none of them, or not a regular file (a pipe is read once, by :func:`iter_pages`; a device never), or cannot
    be read."""
    file = Path(path)
    try:
        if not file.is_file():
            return None
        with file.open("rb") as handle:
            return _kind(handle.read(1024))
    except OSError:
        return None


def _is_bmp(head: bytes) -> bool:
    """Whether a file starting "BM" has a BMP's headers: a text that starts "BMW ..." must not be read as a
    picture of 1768453152 rows."""
    if len(head) < 30:
        return False
    header_size = int.from_bytes(head[14:18], "little")
    if header_size == 12:  # OS/2: planes at 22, bits at 24
        planes, bits = int.from_bytes(head[22:24], "little"), int.from_bytes(head[24:26], "little")
    elif header_size in (16, 40, 52, 56, 64, 108, 124):
        planes, bits = int.from_bytes(head[26:28], "little"), int.from_bytes(head[28:30], "little")
    else:
        return False
    return planes == 1 and bits in (1, 2, 4, 8, 16, 24, 32)


#: Picture formats that are known but not read, from their first bytes, with what to say of them.
_UNREAD_FORMATS: tuple[tuple[bytes, int, str], ...] = (
    (b"GIF87a", 0, "a GIF image"),
    (b"GIF89a", 0, "a GIF image"),
    (b"\x00\x00\x00\x0cjP  \r\n\x87\n", 0, "a JPEG 2000 image"),
    (b"\xffO\xffQ", 0, "a JPEG 2000 image"),
    (b"\xff\x0a", 0, "a JPEG XL image"),
    (b"\x00\x00\x00\x0cJXL \r\n\x87\n", 0, "a JPEG XL image"),
    (b"8BPS", 0, "a Photoshop file"),
    (b"\x00\x00\x01\x00", 0, "an icon file"),
    (b"\x49\x49\xbc", 0, "a JPEG XR image"),
    (b"PK\x03\x04", 0, "a ZIP archive (or an Office document)"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", 0, "an old Office document"),
    (b"{\\rtf", 0, "an RTF document"),
)
#: Brands of an ISO media file ("ftyp" box) that are pictures: HEIC (iPhones), AVIF.
_HEIF_BRANDS = {b"heic": "a HEIC image", b"heix": "a HEIC image", b"hevc": "a HEIC image", b"heim": "a HEIC image",
                b"heis": "a HEIC image", b"mif1": "a HEIF image", b"msf1": "a HEIF image",
                b"avif": "an AVIF image", b"avis": "an AVIF image"}


def _unread_format(head: bytes) -> str | None:
    """What a file that is not one of the formats read is, when its first bytes say (to name it in the error)."""
    if head[4:8] == b"ftyp":
        return _HEIF_BRANDS.get(head[8:12])
    for signature, at, name in _UNREAD_FORMATS:
        if head[at:at + len(signature)] == signature:
            return name
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:256].lower()
    if text.startswith(b"<svg") or (text.startswith(b"<?xml") and b"<svg" in head.lower()):
        return "an SVG drawing"
    return None


#: What :func:`_unread_format` names that are pictures (not documents or archives): a page saved so is a page.
_UNREAD_PICTURES = ("image", "Photoshop file", "SVG drawing")


def unread_picture(path: str | Path) -> str | None:
    """What kind of picture digitise does not read ``path`` is by its first bytes ("a HEIC image"), or None
    (a picture it reads, a document, an archive, or unreadable)."""
    try:
        with Path(path).open("rb") as handle:
            known = _unread_format(handle.read(1024))
    except OSError:
        return None
    return known if known is not None and known.endswith(_UNREAD_PICTURES) else None


#: The formats read, as error messages list them.
FORMATS_READ = "PNG, JPEG, TIFF, BMP, WebP or PDF"


def _to_uint8(image: np.ndarray) -> np.ndarray:
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


def _as_page(image: np.ndarray, path: Path, number: int, dpi: float | None = None,
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


def _too_large(width: int, height: int, pixel_bytes: int = 1) -> str | None:
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


def _pillow_pixel_bytes(mode: str, bands: int) -> int:
    """Bytes a pixel of a Pillow image of ``mode`` takes decoded."""
    if mode in ("I", "F"):
        return 4
    return bands * (2 if mode.startswith("I;16") else 1)


#: Channels of each PNG colour type (grey, RGB, palette, grey + alpha, RGBA).
_PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def _png_pixel_bytes(data: bytes) -> int:
    """Bytes a PNG's pixel takes decoded, as its header declares (1 when it does not say)."""
    if len(data) < 26 or data[12:16] != b"IHDR":
        return 1
    depth, colour = data[24], data[25]
    return _PNG_CHANNELS.get(colour, 1) * (2 if depth == 16 else 1)


def _png_pixel_bits(data: bytes) -> int:
    """Bits a PNG's pixel takes in its rows (before unfiltering), as its header declares."""
    return _PNG_CHANNELS.get(data[25], 1) * data[24]


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
_WUFFS_FORMATS = {0: "Y", 2: "BGR"}


def _wuffs_decoder(pixel_format: str) -> Any | None:
    """A Wuffs PNG decoder giving ``pixel_format``, or None without pywuffs.

    A new one per file (it costs a microsecond): a decoder keeps state, and
    the review server loads pages from several threads.
    """
    try:
        from pywuffs import ImageDecoderType, PixelFormat
        from pywuffs.aux import ImageDecoder, ImageDecoderConfig
    except ImportError:  # pragma: no cover - pywuffs is a dependency; OpenCV reads the same files
        return None
    config = ImageDecoderConfig()
    config.enabled_decoders = [ImageDecoderType.PNG]
    config.pixel_format = getattr(PixelFormat, pixel_format)
    return ImageDecoder(config)


_LENGTH_TYPE = struct.Struct(">I4s")
_CRC = struct.Struct(">I")


class _DamagedPng(ValueError):
    """A critical PNG chunk (header, palette, pixels, end) whose CRC-32 does not match its data."""


def _png_chunks(data: bytes) -> tuple[list[memoryview], bool, list[tuple[int, int]]] | None:
    """A PNG's chunks walked up to IEND, CRCs checked: the IDAT chunks' data, whether it has a transparency chunk,
    and the byte spans of ancillary chunks whose CRC is wrong.

    None when the file stops before IEND. A critical chunk with a wrong CRC
    raises :class:`_DamagedPng`: libpng refuses such a file, but prints its
    own "libpng error" line on stderr beside our one-line error, so it is
    refused here first. An ancillary chunk (text, resolution...) with a
    wrong CRC libpng only drops, with a "libpng warning": its span is
    returned for cutting out. The check costs ~1 ms on a 15 MB page with
    ISA-L's CRC, ~5 with zlib's.
    """
    view = memoryview(data)
    size = len(data)
    at = 8
    idat: list[memoryview] = []
    stray: list[tuple[int, int]] = []
    transparent = False
    unpack, crc32, append = _LENGTH_TYPE.unpack_from, _crc32, idat.append
    while at + 12 <= size:
        length, kind = unpack(data, at)
        end = at + 8 + length
        if end + 4 > size:
            return None
        if crc32(view[at + 4:end]) != _CRC.unpack_from(data, end)[0]:
            if kind[0] & 0x20 == 0:  # upper-case first letter: a critical chunk
                raise _DamagedPng(kind.decode("latin-1"))
            stray.append((at, end + 4))
        elif kind == b"IDAT":
            append(view[at + 8:end])
        elif kind == b"tRNS":
            transparent = True
        elif kind == b"IEND":
            return idat, transparent, stray
        at = end + 4
    return None


def _sound_chunks(data: bytes) -> list[memoryview] | None:
    """The IDAT chunks' data for the fast decoders, or None when the file is cut short or has a transparency chunk.

    The fast decoders do not check chunk CRCs: a damaged file would come out
    as a damaged picture. :func:`_png_chunks` checks them (and raises
    :class:`_DamagedPng` for a damaged critical chunk).
    """
    walked = _png_chunks(data)
    if walked is None or walked[1]:
        return None
    return walked[0]


#: Rows peeked at before inflating a whole file: adaptive filtering (Paeth, Average, Sub) shows there.
_PEEK_ROWS = 16


def _decode_png_none_up(idat: list[memoryview], width: int, height: int, channels: int) -> np.ndarray | None:
    """The pixels (BGR or grey) of a PNG whose rows are all filtered None or Up, or None for any other.

    ISA-L inflates a noisy 300-dpi page in ~45 ms against ~95 for Wuffs'
    whole decode; undoing the Up filter is one byte-wise add of the row above
    (modulo 256), ~3 ms for a page in numpy, and commutes with swapping R
    and B, so the swap comes first. The Sub, Average and Paeth filters need a
    pass along each row (compiled code): files using them go to Wuffs. The
    first rows are inflated first to see their filters, so such a file costs
    a fraction of a millisecond here.
    """
    if _isal is None or not idat:
        return None
    stride = 1 + width * channels
    size = stride * height
    try:
        head = _isal.decompressobj().decompress(idat[0], min(size, _PEEK_ROWS * stride))
        if any(f not in (0, 2) for f in head[::stride]):
            return None
        raw = _isal.decompress(b"".join(idat), 15, size)
    except _isal.error:
        return None
    if len(raw) != size:
        return None
    rows = np.frombuffer(raw, np.uint8).reshape(height, stride)
    filters = rows[:, 0]
    if bool(np.any((filters != 0) & (filters != 2))):
        return None
    pixels = rows[:, 1:]
    if channels == 3:
        image = cv2.cvtColor(pixels.reshape(height, width, 3), cv2.COLOR_RGB2BGR)
    else:
        image = np.ascontiguousarray(pixels)
    flat = image.reshape(height, width * channels)
    add = np.add
    # Row 0's Up adds a row of zeros: nothing to do.
    for r in (np.flatnonzero(filters[1:] == 2) + 1).tolist():
        add(flat[r - 1], flat[r], out=flat[r])
    return image


def _decode_png_fast(data: bytes) -> np.ndarray | None:
    """An 8-bit grey or colour PNG decoded without OpenCV, or None to leave the file to OpenCV.

    A 300-dpi colour scan is 10-15 MB of deflate: OpenCV's libpng (zlib)
    decodes it in ~150 ms, Wuffs in ~100, ISA-L's inflate with the rows
    unfiltered in numpy in ~55 when every row is filtered None or Up (as
    OpenCV writes them), all with the same pixels (benchmarks/README.md).
    Only the plain cases come here: 8 bits a sample, grey or RGB, not
    interlaced, no transparency chunk; anything else (16 bits, palette,
    alpha) and any file that is damaged (cut short, an inflate error, or
    Wuffs says so) goes to OpenCV, whose result and error messages are the
    reference. A critical chunk with a wrong CRC raises :class:`_DamagedPng`.
    """
    # Signature, then IHDR: length, type, width, height, bit depth, colour type, compression, filter, interlace.
    if len(data) < 33 or data[12:16] != b"IHDR" or data[24] != 8 or data[26] != 0 or data[27] != 0 or data[28] != 0:
        return None
    pixel_format = _WUFFS_FORMATS.get(data[25])
    if pixel_format is None:
        return None
    idat = _sound_chunks(data)
    if idat is None:
        return None
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if width == 0 or height == 0:
        return None
    quick = _decode_png_none_up(idat, width, height, 3 if data[25] == 2 else 1)
    if quick is not None:
        return quick
    decoder = _wuffs_decoder(pixel_format)
    if decoder is None:  # pragma: no cover
        return None
    result = decoder.decode(data)
    if result.error_message:
        return None
    image: np.ndarray = result.pixbuf
    if image.shape[:2] != (height, width):  # pragma: no cover - defensive: never seen
        return None
    return image[:, :, 0] if image.ndim == 3 and image.shape[2] == 1 else image


def _declared_size(data: bytes, kind: str) -> tuple[int, int] | None:
    """Width and height as a PNG, JPEG or BMP header gives them, or None when it does not say (read before decoding)."""
    if kind == "png" and len(data) >= 24 and data[12:16] == b"IHDR":
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if kind == "bmp" and len(data) >= 26:
        if int.from_bytes(data[14:18], "little") == 12:  # the old OS/2 header: 16-bit sides
            return int.from_bytes(data[18:20], "little"), int.from_bytes(data[20:22], "little")
        return (abs(int.from_bytes(data[18:22], "little", signed=True)),
                abs(int.from_bytes(data[22:26], "little", signed=True)))
    if kind == "jpeg":
        return _jpeg_size(data)
    return None


#: JPEG start-of-frame markers (SOF0-SOF15 less DHT, JPG and DAC): they carry the image's size.
_JPEG_FRAMES = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def _jpeg_segments(data: bytes) -> Iterator[tuple[int, int, int]]:
    """A JPEG's marker segments before its image data: (marker, start of the segment's data, its end)."""
    at, size = 2, len(data)
    while at + 4 <= size:
        if data[at] != 0xFF:
            return
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker == 0x01 or 0xD0 <= marker <= 0xD8:  # markers without a length
            at += 2
            continue
        if marker in (0xDA, 0xD9):  # image data (or the end) from here
            return
        end = at + 2 + int.from_bytes(data[at + 2:at + 4], "big")
        yield marker, at + 4, min(end, size)
        at = end


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """Width and height from a JPEG's frame header, or None when none comes before the image data."""
    for marker, start, end in _jpeg_segments(data):
        if marker in _JPEG_FRAMES and end - start >= 5:
            return int.from_bytes(data[start + 3:start + 5], "big"), int.from_bytes(data[start + 1:start + 3], "big")
    return None


def _jpeg_unread(data: bytes) -> str | None:
    """What kind of JPEG this is when it is one that is not read (lossless, hierarchical, over 8 bits), or None."""
    for marker, start, end in _jpeg_segments(data):
        if marker in _JPEG_FRAMES and end > start:
            if marker in (0xC3, 0xC7, 0xCB, 0xCF):
                return "a lossless JPEG"
            if marker in (0xC5, 0xC6, 0xCD, 0xCE):
                return "a hierarchical JPEG"
            if data[start] != 8:
                return f"a {data[start]}-bit JPEG"
            return None
    return None


def _jpeg_orientation(data: bytes) -> int:
    """The orientation (1-8, see :func:`orient`) a JPEG's EXIF block records, 1 when it records none."""
    for marker, start, end in _jpeg_segments(data):
        if marker == 0xE1 and data[start:start + 6] == b"Exif\x00\x00":
            return _tiff_orientation(data[start + 6:end])
    return 1


def _tiff_orientation(tiff: bytes) -> int:
    """Tag 274 of the first directory of a TIFF structure (an EXIF block is one), 1 when absent or odd."""
    order = {b"II": "little", b"MM": "big"}.get(tiff[:2])
    if order is None or len(tiff) < 8:
        return 1
    endian: Any = order
    at = int.from_bytes(tiff[4:8], endian)
    if at + 2 > len(tiff):
        return 1
    for entry in range(int.from_bytes(tiff[at:at + 2], endian)):
        where = at + 2 + 12 * entry
        if where + 12 > len(tiff):
            break
        if int.from_bytes(tiff[where:where + 2], endian) == 274:
            value = int.from_bytes(tiff[where + 8:where + 10], endian)
            return value if 1 <= value <= 8 else 1
    return 1


_DAMAGED = "cannot decode the image (truncated or damaged file)"


#: JPEG colour spaces that libjpeg-turbo's fast path cannot turn into BGR: OpenCV's decoder converts them.
_JPEG_INK_SPACES = frozenset({"CMYK", "YCCK"})


#: How a PDF page's JPEG picture is named in what is said of its damage.
_PDF_PICTURE = ("the page's JPEG picture", "the data of the page's JPEG picture")


def _decode_jpeg(data: bytes, named: tuple[str, str] = ("the JPEG", "the JPEG's data")
                 ) -> tuple[np.ndarray, str | None] | None:
    """A JPEG's pixels (BGR or grey) and what libjpeg-turbo had to patch over (None: the data is sound).

    OpenCV's decoder gives the same pixels but only prints libjpeg's
    warnings on stderr ("Corrupt JPEG data: premature end of data segment",
    naming no file) and returns a picture patched with grey or garbled
    blocks as if it were sound. simplejpeg (libjpeg-turbo) says so: the data
    is decoded strictly first, and only when that fails leniently, with the
    warning kept. A file whose only fault is a missing end marker (some
    cameras' and scripts') is sound: every pixel is there. None leaves the
    file to OpenCV (a header libjpeg-turbo cannot parse, or data it cannot
    decode at all).
    """
    try:
        _, _, colour, _ = simplejpeg.decode_jpeg_header(data)
    except ValueError:
        return None
    space = "CMYK" if colour in _JPEG_INK_SPACES else "GRAY" if colour == "Gray" else "BGR"
    try:
        return _ink_to_bgr(_decode_strictly(data, space)), None
    except ValueError as exc:
        problem = _jpeg_problem(exc, *named)
    try:
        image = simplejpeg.decode_jpeg(data, colorspace=space, strict=False)
    except ValueError:
        return None
    return _ink_to_bgr(image), problem


_JPEG_END = b"\xff\xd9"


def _ends(data: bytes) -> bool:
    """Whether JPEG data ends with its end marker (padding after it aside)."""
    return data.rstrip(b"\x00\r\n \t").endswith(_JPEG_END)


def _decode_strictly(data: bytes, space: str, **options: Any) -> np.ndarray:
    """JPEG data decoded by libjpeg-turbo with no damage patched over; ``ValueError`` (libjpeg's complaint) if any.

    Data whose only fault is a missing end marker (some cameras' and
    scripts') is sound: every pixel is there.
    """
    try:
        image: np.ndarray = simplejpeg.decode_jpeg(data, colorspace=space, **options)
        return image
    except ValueError as first:
        if _ends(data):
            raise
        try:
            image = simplejpeg.decode_jpeg(data + _JPEG_END, colorspace=space, **options)
            return image
        except ValueError:
            raise first from None


def _ink_to_bgr(image: np.ndarray) -> np.ndarray:
    """BGR from libjpeg's CMYK (as a print-shop or Adobe JPEG stores it), as OpenCV converts it; others as they are."""
    if image.ndim != 3 or image.shape[2] != 4:
        return image
    ink = image.astype(np.uint16)
    black = ink[:, :, 3]
    # OpenCV's own conversion (icvCvt_CMYK2BGR_8u): the same pixels as its decoder gives.
    bgr = [black - (((255 - ink[:, :, channel]) * black) >> 8) for channel in (2, 1, 0)]
    return np.dstack(bgr).astype(np.uint8)


def _jpeg_problem(exc: ValueError, picture: str = "the JPEG", data: str = "the JPEG's data") -> str:
    """What libjpeg-turbo's complaint ``exc`` means, said of ``picture`` (or of its ``data``)."""
    problem = str(exc).strip().rstrip(".")
    if problem.lower().startswith("premature end of jpeg file"):
        return f"{picture} is truncated (its data ends before the picture does)"
    return f"{data} is damaged ({problem or 'libjpeg patched over it'})"


def picture_damage(page: PageImage) -> str | None:
    """What is wrong with the data ``page`` was decoded from, or None: its :attr:`PageImage.damage`, or for a
    PDF page, damage in its JPEG pictures.

    PDFium decodes those silently, patching damaged data with grey: a page
    that is then not found to be a note may be one whose picture is damaged.
    Each picture is decoded again strictly, which costs about a third of
    rendering the page, so this is for a page that could not be read.
    """
    import pypdfium2 as pdfium

    if page.damage is not None:
        return page.damage
    if sniff_file(page.source) != "pdf":
        return page.damage
    try:
        document = pdfium.PdfDocument(page.source)
    except (OSError, pdfium.PdfiumError):
        return page.damage
    try:
        return _pdf_picture_damage(document[page.number - 1])
    except (pdfium.PdfiumError, IndexError):
        return None
    finally:
        document.close()


def _pdf_picture_damage(page: Any, *, thorough: bool = True) -> str | None:
    """What is wrong with a PDF page's JPEG pictures, or None.

    ``thorough`` decodes each picture strictly (about a third of rendering
    the page); otherwise only a picture whose data lacks JPEG's end marker
    is (the usual damage: a file cut short), which costs under a millisecond a page.
    """
    import pypdfium2 as pdfium

    for picture in page.get_objects(filter=[pdfium.raw.FPDF_PAGEOBJ_IMAGE]):
        try:
            filters = picture.get_filters()
            if not filters or filters[-1] != "DCTDecode":
                continue
            data = bytes(picture.get_data(decode_simple=True))
        except (pdfium.PdfiumError, ValueError):
            continue  # what cannot be looked into is judged by its rendering, as before
        if _ends(data) and not thorough:
            continue
        try:
            height, width, colour, _ = simplejpeg.decode_jpeg_header(data)
        except ValueError as exc:
            return f"the page's JPEG picture cannot be decoded ({str(exc).strip().rstrip('.')})"
        if _too_large(width, height):
            continue  # PDFium renders it at the page's size; decoding it whole here would not fit in memory
        try:
            _decode_strictly(data, "CMYK" if colour in _JPEG_INK_SPACES else "GRAY", min_factor=8)
        except ValueError as exc:
            return _jpeg_problem(exc, *_PDF_PICTURE)
    return None


def _size_refused(data: bytes, kind: str) -> str | None:
    """Why a picture is too large to decode, as its header declares its size (:func:`_too_large`), or None."""
    declared = _declared_size(data, kind)
    return _too_large(*declared, _png_pixel_bytes(data) if kind == "png" else 1) if declared else None


def _decode_single(data: bytes, path: Path, kind: str) -> tuple[np.ndarray, str | None]:
    """A single-image file's pixels, and what the decoder patched over (see :attr:`PageImage.damage`)."""
    too_large = _size_refused(data, kind)
    if too_large:
        raise InputError(too_large, path)
    if kind == "jpeg":
        orientation = _jpeg_orientation(data)
        decoded = _decode_jpeg(data)
        if decoded is not None:
            return orient(_to_uint8(decoded[0]), orientation), decoded[1]
        unread = _jpeg_unread(data)
    if kind != "png":
        with _native_messages() as said:
            image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
        if image is None or image.size == 0:
            if kind == "jpeg" and unread:
                raise InputError(f"{unread}, which digitise does not read: save the page as an ordinary JPEG or PNG",
                                 path)
            raise InputError(_decode_failure(said), path)
        image = _to_uint8(image)
        if kind == "jpeg":
            image = orient(image, orientation)
        return image, _damage(kind.upper(), said) if said else None
    # Damage is said here, not by libpng: it would print its own "libpng error" line beside our one-line error.
    try:
        fast = _decode_png_fast(data)
        if fast is not None:
            return _to_uint8(fast), None
        walked = _png_chunks(data)
    except _DamagedPng as exc:
        raise InputError(f"{_DAMAGED[:-1]}: the {exc} chunk fails its CRC check)", path) from exc
    if walked is None:
        cut = _truncated_png(data)
        if cut is None:
            raise InputError(_DAMAGED, path)
        return cut
    if walked[2]:
        # Ancillary chunks with a wrong CRC: libpng would drop them too, with a warning on stderr.
        keep, at = [], 0
        for start, end in walked[2]:
            keep.append(data[at:start])
            at = end
        keep.append(data[at:])
        data = b"".join(keep)
    with _native_messages() as said:
        image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    if image is None or image.size == 0:
        raise InputError(_decode_failure(said), path)
    # What libpng still says of a file it decodes (a short colour profile, "iCCP: known incorrect sRGB
    # profile") is not damage to the page.
    return _to_uint8(image), None


#: What a PNG cut short is said to have (the JPEG's words, :func:`_jpeg_problem`).
PNG_TRUNCATED = "the PNG is truncated (its data ends before the picture does)"


def _truncated_png(data: bytes) -> tuple[np.ndarray, str] | None:
    """The rows of a PNG cut short (a transfer that stopped) that its data still holds, the rest white, and
    what is wrong; None when it holds no whole row, or is interlaced (its rows are not in order).

    A JPEG cut short is read as far as it decodes; a PNG was refused whole.
    Its pixel data is one deflate stream, so every row before the cut can be
    inflated: they are written again as a small sound PNG (the header's
    height cut to them, every chunk before the pixels kept) for OpenCV to
    unfilter, then padded with white paper to the page's height, where a
    board is empty rather than inked.
    """
    if len(data) < 33 or data[12:16] != b"IHDR" or data[28] != 0:
        return None
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    stride = 1 + (width * _png_pixel_bits(data) + 7) // 8
    view, at, size = memoryview(data), 8, len(data)
    head: list[bytes] = []
    inflater = zlib.decompressobj()
    pixels: list[bytes] = []
    inflated, wanted = 0, height * stride
    while at + 8 <= size and inflated < wanted:
        length, kind = _LENGTH_TYPE.unpack_from(data, at)
        end = min(at + 8 + length, size)
        if kind == b"IDAT":
            try:
                pixels.append(inflater.decompress(view[at + 8:end], wanted - inflated))
            except zlib.error:
                break
            inflated += len(pixels[-1])
        elif not pixels and end + 4 <= size and kind != b"IHDR":
            head.append(bytes(view[at:end + 4]))
        at = end + 4
    rows = inflated // stride
    if rows == 0:
        return None
    raw = b"".join(pixels)[:rows * stride]
    header = data[16:20] + rows.to_bytes(4, "big") + data[24:29]

    def chunk(kind: bytes, body: bytes) -> bytes:
        return len(body).to_bytes(4, "big") + kind + body + zlib.crc32(kind + body).to_bytes(4, "big")

    sound = b"".join([data[:8], chunk(b"IHDR", header), *head, chunk(b"IDAT", zlib.compress(raw, 1)),
                      chunk(b"IEND", b"")])
    with _native_messages():
        image = cv2.imdecode(np.frombuffer(sound, np.uint8), cv2.IMREAD_UNCHANGED)
    if image is None or image.size == 0:
        return None
    image = _to_uint8(image)
    if rows < height:
        paper = np.full((height - rows, *image.shape[1:]), 255, np.uint8)
        image = np.concatenate([image, paper])
    return image, PNG_TRUNCATED


def _decode_failure(said: list[str]) -> str:
    """Why a file could not be decoded, with the decoder's own first error when it printed one."""
    errors = [line for line in said if "warning" not in line.lower()]
    if not errors:
        return _DAMAGED
    first = errors[0].removeprefix("libpng error: ").strip().rstrip(".")
    return f"{_DAMAGED[:-1]}: {first})"


def _open_tiff(source: Any) -> Any:
    """Pillow's TIFF reader on ``source`` (a path or a file object), with page images' own size limit.

    Pillow's is set for any picture from anywhere: it warns on stderr past
    89 megapixels and refuses past 179, while a 1200-dpi A4 scan has 139.
    Page images have :data:`MAX_PAGE_PIXELS`, checked on every frame before
    it is decoded (:func:`_tiff_pages`).
    """
    from PIL import Image, TiffImagePlugin

    # Pillow checks each frame's size again as it decodes it, against its module-wide limit: raised to
    # ours (never lowered), it only ever fires on a frame we have refused already.
    if Image.MAX_IMAGE_PIXELS is not None and Image.MAX_IMAGE_PIXELS < MAX_PAGE_PIXELS:
        Image.MAX_IMAGE_PIXELS = MAX_PAGE_PIXELS
    # The reader itself, not Image.open: that checks the first frame against Pillow's limit as it opens
    # the file, before ours can, and a process-wide warnings filter would be needed to keep it quiet
    # (warnings.catch_warnings is not thread-safe, and the review server loads pages in threads).
    return TiffImagePlugin.TiffImageFile(source)


def _deep_grey(array: np.ndarray, bits: int | None, signed: bool) -> np.ndarray:
    """8-bit grey from a grey TIFF frame of more than 8 bits a sample (Pillow's I;16, I and F modes).

    Pillow's own conversion to 8 bits clips every value over 255 to white, so
    a 16-bit grey scan came out as a blank page. Integers are scaled by the
    depth the file states (16 bits: the high byte, as OpenCV does for a
    16-bit PNG); floats by 1.0 when they stay within it (the usual range),
    otherwise by the smallest whole depth that holds their 99.9th
    percentile, over finite values only (one hot or infinite pixel must not
    darken the page). Raises ``ValueError`` when no value is finite.
    """
    if array.dtype.kind == "u" and array.dtype.itemsize == 2 and bits in (None, 16):
        return np.ascontiguousarray(array >> 8, dtype=np.uint8)
    if array.dtype.kind == "f":
        finite = array[np.isfinite(array)]
        if array.size and not finite.size:
            raise ValueError("no pixel holds a number (NaN or infinite everywhere)")
        top = float(np.percentile(finite, 99.9)) if finite.size else 0.0
        full = 1.0 if top <= 1.0 else float(2 ** max(8, int(np.ceil(np.log2(top + 1.0)))) - 1)
        # Past the scale is white (paper); what is no number, too.
        array = np.clip(np.where(np.isfinite(array), array, full), 0.0, full).astype(np.float32)
    else:
        if not bits:
            bits = max(8, int(array.max(initial=0)).bit_length())
        full = float((1 << (bits - 1 if signed else bits)) - 1)
    scaled = np.nan_to_num(array.astype(np.float32) * np.float32(255.0 / full), copy=False)
    grey: np.ndarray = np.clip(scaled + 0.5, 0, 255).astype(np.uint8)
    return grey


#: TIFF frame modes that Pillow's conversion to "L" gives right, and those of more than 8 bits a sample.
_GREY_MODES = frozenset({"1", "L", "LA", "P"})
_DEEP_GREY_MODES = frozenset({"I", "F", "I;16", "I;16L", "I;16B", "I;16N", "I;16S"})
#: What a damaged TIFF makes Pillow's reader raise (TypeError: "Missing dimensions" for a cut tag).
_TIFF_DAMAGE = (OSError, ValueError, EOFError, TypeError, SyntaxError, KeyError, IndexError, struct.error)


def _frame_pixels(frame: Any) -> np.ndarray:
    """One decoded TIFF frame as grey or RGB pixels."""
    mode = frame.mode
    if mode in _DEEP_GREY_MODES:
        tags = frame.tag_v2
        bits = tags.get(258)
        sample_format = tags.get(339)
        signed = bool(sample_format) and _first(sample_format) == 2
        return _deep_grey(np.asarray(frame), _first(bits) if bits else None, signed)
    return np.asarray(frame.convert("L") if mode in _GREY_MODES else frame.convert("RGB"))


def _first(value: Any) -> int:
    """A TIFF tag's first value (Pillow gives a tuple for a tag with several)."""
    return int(value[0] if isinstance(value, tuple) else value)


def _tiff_frame_count(data: bytes) -> int | None:
    """How many frames tifffile finds in the TIFF's chain of directories, or None when it cannot walk it.

    Pillow finds a frame's successor only by setting the frame up: one frame
    whose pixels it cannot read would otherwise end the file there.
    """
    import tifffile

    try:
        with tifffile.TiffFile(io.BytesIO(data)) as tiff:
            return len(tiff.pages)
    except Exception:  # noqa: BLE001 - tifffile's errors are many; Pillow then goes as far as it can
        return None


def _tifffile_frame(data: bytes, index: int) -> tuple[np.ndarray, float | None]:
    """Frame ``index`` of a TIFF decoded by tifffile, as 8-bit grey or BGR, and its resolution (dpi) when stated.

    For the frames Pillow does not read: floating-point colour, more samples
    than a colour model has (a scanner's extra channels), and the like.
    Raises ``ValueError`` saying what is not read (a compression needing the
    imagecodecs package, a colour model, a layout).
    """
    import tifffile

    with tifffile.TiffFile(io.BytesIO(data)) as tiff:
        page: Any = tiff.pages[index]  # a TiffPage: frames (TiffFrame) only when asked for
        compression = int(page.compression)
        # Bytes a pixel takes decoded: a 16-bit or many-sample TIFF takes several times its pixel count.
        pixel_bytes = max(1, int(page.samplesperpixel)) * max(1, (int(page.bitspersample) + 7) // 8)
        too_large = _too_large(int(page.imagewidth), int(page.imagelength), pixel_bytes)
        if too_large:
            raise ValueError(too_large)
        try:
            array = page.asarray()
        except ValueError as exc:
            if "imagecodecs" in str(exc):
                raise ValueError(f"the TIFF is compressed as {_tiff_name(compression)}, "
                                 "which digitise does not read") from exc
            raise
        photometric = int(page.photometric)
        samples = int(page.samplesperpixel)
        bits = int(page.bitspersample)
        signed = int(page.sampleformat) == 2
        resolution = page.get_resolution()
        dpi = float(resolution[0]) if resolution and page.resolutionunit == 2 and resolution[0] > 0 else None
    if samples > 1 and array.ndim == 3 and array.shape[0] == samples and array.shape[2] != samples:
        array = np.moveaxis(array, 0, 2)  # stored plane by plane
    if photometric in (0, 1) or (photometric not in (2, 5) and samples < 3):  # grey (extra samples dropped)
        grey = array[:, :, 0] if array.ndim == 3 else array
        grey = grey if grey.dtype == np.uint8 else _deep_grey(grey, bits, signed)
        return (255 - grey if photometric == 0 else grey), dpi
    if photometric == 2 and array.ndim == 3 and array.shape[2] >= 3:
        colour = array[:, :, :3]
        if colour.dtype.kind == "f":
            colour = np.dstack([_deep_grey(np.ascontiguousarray(colour[:, :, c]), None, False) for c in range(3)])
        return cv2.cvtColor(_to_uint8(np.ascontiguousarray(colour)), cv2.COLOR_RGB2BGR), dpi
    raise ValueError(f"the TIFF's colour model ({_tiff_name(photometric, 'PHOTOMETRIC')}, "
                     f"{samples} samples a pixel) is not read by digitise")


def _tiff_name(value: int, enum: str = "COMPRESSION") -> str:
    """The name TIFF gives a tag's value ("JPEG2000" for compression 34712), or the number."""
    import tifffile

    try:
        return str(getattr(tifffile, enum)(value).name)
    except ValueError:
        return f"code {value}"


def _tiff_pages(data: bytes, path: Path) -> Iterator[PageImage | PageError]:

    # Asked only when Pillow fails (a walk of every frame's directory: nothing to pay for a sound file).
    frames = functools.cache(lambda: _tiff_frame_count(data))
    try:
        container = _open_tiff(io.BytesIO(data))
    except _TIFF_DAMAGE as exc:
        if not frames():
            raise InputError(f"cannot open the TIFF (truncated or damaged file): {exc}", path) from exc
        container = None  # Pillow does not read its first frame: tifffile reads them all
    produced = 0
    try:
        number = 0
        while True:
            number += 1
            page = f"page {number}"
            frame = None
            if container is not None:
                try:
                    container.seek(number - 1)
                    frame = container
                except EOFError:
                    break
                except _TIFF_DAMAGE as exc:
                    if (count := frames()) is None or number > count:
                        # The chain of frames breaks here: what follows (if anything) cannot be found.
                        yield PageError(f"cannot decode this page (truncated or damaged file): {exc}", path, page)
                        produced += 1
                        break
            elif (count := frames()) is None or number > count:
                break
            produced += 1
            if frame is None:
                try:
                    array, dpi = _tifffile_frame(data, number - 1)
                except MemoryError:
                    yield PageError("image too large to decode", path, page)
                    continue
                except Exception as exc:  # noqa: BLE001 - tifffile's errors are many: each is this page's reason
                    why = str(exc)
                    yield PageError(why if why.startswith(("the TIFF", "image too large")) else
                                    f"cannot decode this page (truncated or damaged file): {why}", path, page)
                    continue
                yield _as_page(_to_uint8(array), path, number, dpi)
                continue
            width, height = frame.size
            pixel_bytes = _pillow_pixel_bytes(frame.mode, len(frame.getbands()))
            too_large = _too_large(width, height, pixel_bytes)
            if too_large:
                yield PageError(too_large, path, page)
                continue
            with _held(width * height, pixel_bytes):
                yield from _tiff_frame_page(frame, path, number)
    finally:
        if container is not None:
            container.close()
    if produced == 0:
        raise InputError("the TIFF holds no page", path)


def _tiff_frame_page(frame: Any, path: Path, number: int) -> Iterator[PageImage | PageError]:
    """The page of a TIFF frame Pillow opened, or the PageError saying why it cannot be decoded."""
    from PIL import Image

    page = f"page {number}"
    said: list[str] = []
    try:
        # libtiff decodes compressed strips (LZW, fax, deflate): it says what it patched over on stderr.
        with _native_messages() as said:
            frame.load()
        dpi_info = frame.info.get("dpi")
        orientation = frame.tag_v2.get(274)
        array = _frame_pixels(frame)
    except Image.DecompressionBombError as exc:  # pragma: no cover - our limit is checked first
        yield PageError(f"image too large: {exc}", path, page)
        return
    except _TIFF_DAMAGE as exc:
        errors = _libtiff_errors(said)
        why = f"{exc} ({errors[0]})" if errors else str(exc)
        yield PageError(f"cannot decode this page (truncated or damaged file): {why}", path, page)
        return
    if array.ndim == 3:
        array = cv2.cvtColor(array, cv2.COLOR_RGB2BGR)
    errors = _libtiff_errors(said)
    yield _as_page(orient(_to_uint8(array), _first(orientation) if orientation else 1), path, number,
                   float(dpi_info[0]) if dpi_info else None,
                   damage=_damage("TIFF", errors) if errors else None)


def pdf_render_scale(width_pt: float, height_pt: float) -> float:
    """Pixels per PDF point for a page of this size: about 300 dpi, capped for huge pages."""
    longest = max(width_pt, height_pt, 1.0)
    dpi = min(PDF_DPI, PDF_MAX_SIDE * 72.0 / longest)
    # A tiny page (a cropped note) still needs enough pixels for its cells.
    dpi = max(dpi, min(600.0, 1200.0 * 72.0 / longest))
    return dpi / 72.0


#: What PDFium's error codes mean for a file that will not open (its own words are terse: "Data format error",
#: or "Success" when it gives no reason).
#: PDFium's "data format error": no document found in the file (a PDF cut short among them).
_NO_DOCUMENT = 3
_PDFIUM_ERRORS = {
    2: "the file cannot be opened",
    _NO_DOCUMENT: "it is damaged, cut short or not a PDF (PDFium finds no document in it)",
    5: "it is protected by a security scheme PDFium does not support",
}


_PAGE_TREE = re.compile(rb"<<[^<>]*/Type\s*/Pages\b[^<>]*>>")
_ANY_PAGE = re.compile(rb"/Type\s*/Page(?![A-Za-z])")
_NO_KIDS = re.compile(rb"/Count\s+0(?![0-9])")


def _no_page(data: bytes) -> bool:
    """Whether a PDF that PDFium will not open is an empty one: a page tree of no page and no page anywhere.

    PDFium refuses a document of no page as malformed ("Data format error"),
    which would send the user looking for damage.
    """
    trees = _PAGE_TREE.findall(data)
    return bool(trees) and all(_NO_KIDS.search(tree) for tree in trees) and not _ANY_PAGE.search(data)


#: An indirect object's start, and a stream's data start (after its end-of-line).
_OBJECT = re.compile(rb"\d+\s+\d+\s+obj\b")
_STREAM = re.compile(rb"\bstream(?:\r\n|\n|\r)")
#: A length given as a number, not as a reference to another object ("/Length 12 0 R"): the lookahead's digit
#: keeps the match from backing off to "/Length 1".
_DIRECT_LENGTH = re.compile(rb"/Length\s+(\d+)(?!\d|\s+\d+\s+R)")
_JPEG_PICTURE = re.compile(rb"/Subtype\s*/Image\b")
_DCT = re.compile(rb"/DCTDecode\b")
#: Pictures that are not a scanned page as it looks: ink separations, masks, and JPEGs stored inverted.
_NOT_A_PAGE_PICTURE = re.compile(rb"/DeviceCMYK|/ImageMask\s+true|/Decode\b|/SMask\b|/Separation|/DeviceN")


def cut_pdf_pictures(data: bytes) -> list[bytes]:
    """The JPEG pictures a PDF stores, in the order stored, found in its raw data: a scanner's PDF cut short.

    A PDF's index of its objects (the cross-reference table and the page
    tree) is at its end, so a copy or transfer that stopped leaves PDFium
    nothing to open, though every page picture before the cut is whole. A
    scanner stores a page as one JPEG (an image object filtered DCTDecode):
    these are read straight from the data, each up to its declared length or
    its ``endstream``, the last one up to the cut. Pictures that would not
    show the page as it looks (CMYK, masks, inverted) are left out. Empty for
    a PDF that stores its pages otherwise (vector pages, other filters).
    """
    pictures: list[bytes] = []
    for stream in _STREAM.finditer(data):
        objects = list(_OBJECT.finditer(data, max(0, stream.start() - 4096), stream.start()))
        if not objects:
            continue
        head = data[objects[-1].end():stream.start()]
        if not (_JPEG_PICTURE.search(head) and _DCT.search(head)) or _NOT_A_PAGE_PICTURE.search(head):
            continue
        start = stream.end()
        length = _DIRECT_LENGTH.search(head)
        end = start + int(length.group(1)) if length else data.find(b"endstream", start)
        picture = data[start:len(data) if end < 0 else min(end, len(data))]
        if not length and end >= 0:
            # The end of line before "endstream" is not the stream's (PDF 1.7, 7.3.8.1).
            for eol in (b"\r\n", b"\n", b"\r"):
                if picture.endswith(eol):
                    picture = picture[:-len(eol)]
                    break
        if picture[:2] == b"\xff\xd8":
            pictures.append(picture)
    return pictures


#: The note a PDF read from its pictures gets, on its first page.
CUT_PDF = ("the PDF is cut short (its index of pages is lost): {count} page {pictures} found in what is left, read "
           "in the order stored; pages after the cut are lost")


def _cut_pdf_pages(pictures: Sequence[bytes], path: Path) -> Iterator[PageImage | PageError]:
    """The pages of a PDF cut short, from its JPEG pictures (:func:`cut_pdf_pictures`)."""
    said = CUT_PDF.format(count=len(pictures), pictures="picture" if len(pictures) == 1 else "pictures")
    for index, picture in enumerate(pictures):
        too_large = _size_refused(picture, "jpeg")
        if too_large:
            yield PageError(too_large, path, f"page {index + 1}")
            continue
        declared = _declared_size(picture, "jpeg")
        with _held(declared[0] * declared[1] if declared else 0, 3):
            decoded = _decode_jpeg(picture, _PDF_PICTURE)
            if decoded is None:
                yield PageError("cannot decode this page's picture (truncated or damaged)", path, f"page {index + 1}")
                continue
            image, damage = decoded
            notes = [said] if index == 0 else []
            notes += [damage] if damage is not None else []
            yield _as_page(_to_uint8(image), path, index + 1, None, damage="; ".join(notes) or None)


def _pdf_pages(data: bytes, path: Path) -> Iterator[PageImage | PageError]:
    import pypdfium2 as pdfium

    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        reason = str(exc).lower()
        if "password" in reason:
            raise InputError("the PDF is encrypted (password protected)", path) from exc
        if _no_page(data):
            raise InputError("the PDF holds no page", path) from exc
        code = getattr(exc, "err_code", None)
        pictures = cut_pdf_pictures(data) if code == _NO_DOCUMENT else []
        if pictures:
            yield from _cut_pdf_pages(pictures, path)
            return
        raise InputError(f"cannot open the PDF: {_PDFIUM_ERRORS.get(code or 0, 'damaged or empty')}", path) from exc
    try:
        count = len(document)
        if count == 0:
            raise InputError("the PDF holds no page", path)
        for index in range(count):
            number = index + 1
            try:
                page = document[index]
                width_pt, height_pt = page.get_size()
                scale = pdf_render_scale(width_pt, height_pt)
                bitmap = page.render(scale=scale, grayscale=True)
                array = np.array(bitmap.to_numpy(), copy=True)
                damage = _pdf_picture_damage(page, thorough=False)
            except pdfium.PdfiumError as exc:
                yield PageError(f"cannot render this page: {exc}", path, f"page {number}")
                continue
            yield _as_page(_to_uint8(array), path, number, scale * 72.0, damage=damage)
    finally:
        document.close()


def _is_fifo(path: Path) -> bool:
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def iter_pages(path: str | Path) -> Iterator[PageImage | PageError]:
    """Every page of ``path`` in order: a :class:`PageImage`, or a :class:`PageError` for a bad page.

    Raises :class:`InputError` when the file itself cannot be read (missing,
    not an image, truncated, an encrypted or empty PDF).
    """
    file = Path(path)
    data = read_input(file)
    if not data:
        raise InputError("empty: a named pipe nothing was written to" if _is_fifo(file) else "empty file", file)
    kind = _kind(data[:1024])
    if kind is None:
        known = _unread_format(data[:1024])
        if known is not None:
            raise InputError(f"{known}, which digitise does not read: save the page as PNG, JPEG or PDF", file)
        raise InputError(f"not an image or PDF (expected {FORMATS_READ})", file)
    if kind == "pdf":
        yield from _pdf_pages(data, file)
    elif kind == "tiff":
        yield from _tiff_pages(data, file)
    else:
        declared = _declared_size(data, kind)
        # Held until the next page is asked for: the page is read (its copies made) in between.
        with _held(declared[0] * declared[1] if declared else 0, _png_pixel_bytes(data) if kind == "png" else 3):
            image, damage = _decode_single(data, file, kind)
            yield _as_page(image, file, 1, damage=damage)


def page_count(path: str | Path) -> int:
    """How many pages ``path`` holds, without rendering or decoding them (1 for a single image).

    For progress only: a file that cannot be opened counts as one page (reading
    it says what is wrong with it).
    """
    file = Path(path)
    kind = sniff_file(file)
    try:
        if kind == "pdf":
            import pypdfium2 as pdfium

            try:
                document = pdfium.PdfDocument(str(file))
            except pdfium.PdfiumError as exc:
                if getattr(exc, "err_code", None) != _NO_DOCUMENT:
                    return 1
                return max(1, len(cut_pdf_pictures(file.read_bytes())))
            try:
                return max(1, len(document))
            finally:
                document.close()
        if kind == "tiff":
            with _open_tiff(file) as container:
                return max(1, int(getattr(container, "n_frames", 1)))
    except Exception:  # noqa: BLE001 - whatever is wrong, iter_pages reports it when the page is read
        return 1
    return 1


def load_pages(path: str | Path) -> list[PageImage | PageError]:
    """All pages of ``path`` (see :func:`iter_pages`)."""
    return list(iter_pages(path))
