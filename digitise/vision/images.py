"""Loading page images: PNG, JPEG, TIFF (multi-page) and PDF (multi-page).

Every page comes out as an 8-bit image, grey ``(H, W)`` or colour BGR
``(H, W, 3)``, with its source file and page number. A file that cannot be
read at all raises :class:`~digitise.errors.InputError` naming the file and
the reason; one unreadable frame of a multi-page file is reported as a
:class:`~digitise.errors.PageError` in its place, so the other pages still read.
"""

from __future__ import annotations

import io
import logging
import struct
import sys
import warnings
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from digitise.errors import InputError, PageError
from digitise.fileio import why_unreadable

# A damaged TIFF makes Pillow's TIFF reader warn ("Corrupt EXIF data") on top of the one-line error we
# give for it. Only that module's UserWarnings: a decompression bomb still warns.
warnings.filterwarnings("ignore", category=UserWarning, module=r"PIL\.TiffImagePlugin")

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
    return np.minimum(np.minimum(image[:, :, 0], image[:, :, 1]), image[:, :, 2])


_ROW_OF_3 = np.ones((1, 3), np.uint8)


def histogram(grey: np.ndarray) -> np.ndarray:
    """How many pixels of a uint8 image have each of the 256 levels (int64), as ``np.bincount`` counts them.

    OpenCV's histogram: twice as fast as ``np.bincount``, which widens every
    pixel to 64 bits first.
    """
    if grey.size == 0 or grey.size >= 1 << 24:  # empty, or too many pixels for OpenCV's float32 counts
        return np.bincount(grey.ravel(), minlength=256).astype(np.int64)
    counts = cv2.calcHist([np.ascontiguousarray(grey)], [0], None, [256], [0, 256])
    return counts.ravel().astype(np.int64)


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


def _kind(head: bytes) -> str | None:
    """The file type from its first bytes (the suffix may lie)."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if head.startswith(b"\xff\xd8"):
        return "jpeg"
    if head[:4] in (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+"):
        return "tiff"
    if head.lstrip()[:5] == b"%PDF-":
        return "pdf"
    if head[:2] == b"BM":
        return "bmp"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "webp"
    return None


def _to_uint8(image: np.ndarray) -> np.ndarray:
    """8-bit grey or BGR from whatever depth and channels the decoder gave."""
    if image.dtype == np.uint16:
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
            # Transparent parts of a scan are paper: composite onto white.
            alpha = image[:, :, 3:4].astype(np.float32) / 255.0
            rgb = image[:, :, :3].astype(np.float32)
            image = (rgb * alpha + 255.0 * (1.0 - alpha)).astype(np.uint8)
        elif channels == 2:
            image = image[:, :, 0]
    if image.ndim == 3 and _is_grey(image):
        image = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    return np.ascontiguousarray(image)


def _is_grey(image: np.ndarray) -> bool:
    """True when a BGR image carries no colour (checked on a sparse sample for speed)."""
    sample = image[::17, ::17].astype(np.int16)
    return bool(np.abs(sample[:, :, 0] - sample[:, :, 1]).max() <= 2 and np.abs(sample[:, :, 1] - sample[:, :, 2]).max() <= 2)


def _check_size(image: np.ndarray, path: Path, number: int) -> PageImage | PageError:
    height, width = image.shape[:2]
    if min(height, width) < MIN_SIDE:
        return PageError(f"image too small to read ({width}x{height} px)", path, f"page {number}")
    return PageImage(str(path), number, image)


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


def _sound_chunks(data: bytes) -> list[memoryview] | None:
    """The IDAT chunks' data when every chunk's CRC-32 checks out up to IEND and none is a transparency chunk.

    None otherwise. The fast decoders do not check chunk CRCs: a damaged
    file would come out as a damaged picture. libpng refuses it, so such a
    file goes to OpenCV for its error message (the check costs ~1 ms on a
    15 MB page with ISA-L's CRC, ~5 with zlib's).
    """
    view = memoryview(data)
    size = len(data)
    at = 8
    idat: list[memoryview] = []
    unpack, crc32, append = _LENGTH_TYPE.unpack_from, _crc32, idat.append
    while at + 12 <= size:
        length, kind = unpack(data, at)
        end = at + 8 + length
        if end + 4 > size:
            return None
        if kind == b"tRNS" or crc32(view[at + 4:end]) != _CRC.unpack_from(data, end)[0]:
            return None
        if kind == b"IDAT":
            append(view[at + 8:end])
        elif kind == b"IEND":
            return idat
        at = end + 4
    return None


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
    alpha) and any file that is damaged (a bad chunk CRC, an inflate error,
    or Wuffs says so) goes to OpenCV, whose result and error messages are
    the reference.
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


def _png_cut_short(data: bytes) -> bool:
    """Whether a PNG's chunks stop before IEND (the file was cut short): no decoder can finish it."""
    at, size = 8, len(data)
    while at + 8 <= size:
        length, kind = _LENGTH_TYPE.unpack_from(data, at)
        if at + 12 + length > size:
            return True
        if kind == b"IEND":
            return False
        at += 12 + length
    return True


def _decode_single(data: bytes, path: Path) -> np.ndarray:
    png = data.startswith(b"\x89PNG\r\n\x1a\n")
    fast = _decode_png_fast(data) if png else None
    if fast is not None:
        return _to_uint8(fast)
    # Said here, not by libpng: it would print its own "libpng error" line beside our one-line error.
    if png and _png_cut_short(data):
        raise InputError("cannot decode the image (truncated or damaged file)", path)
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    if image is None or image.size == 0:
        raise InputError("cannot decode the image (truncated or damaged file)", path)
    return _to_uint8(image)


def _tiff_pages(data: bytes, path: Path) -> Iterator[PageImage | PageError]:
    from PIL import Image, ImageSequence, UnidentifiedImageError

    try:
        container = Image.open(io.BytesIO(data))
    except UnidentifiedImageError as exc:
        raise InputError("cannot open the TIFF (truncated or damaged file)", path) from exc
    except (OSError, ValueError, TypeError, SyntaxError) as exc:
        raise InputError(f"cannot open the TIFF (truncated or damaged file): {exc}", path) from exc
    produced = 0
    with container:
        frames = ImageSequence.Iterator(container)
        number = 0
        while True:
            number += 1
            try:
                frame = next(frames)
            except StopIteration:
                break
            # Pillow's TIFF reader raises what a damaged tag makes it raise (TypeError: "Missing dimensions").
            except (OSError, ValueError, EOFError, TypeError, SyntaxError, KeyError, IndexError) as exc:
                yield PageError(f"cannot decode this page (truncated or damaged file): {exc}", path,
                                f"page {number}")
                break
            try:
                frame.load()
                dpi_info = frame.info.get("dpi")
                converted = frame.convert("L") if frame.mode in ("1", "L", "I;16", "I", "F", "LA", "P") else frame.convert("RGB")
                array = np.asarray(converted)
            except (OSError, ValueError, SyntaxError, TypeError, KeyError, IndexError) as exc:
                yield PageError(f"cannot decode this page (truncated or damaged file): {exc}", path,
                                f"page {number}")
                produced += 1
                continue
            if array.ndim == 3:
                array = cv2.cvtColor(array, cv2.COLOR_RGB2BGR)
            image = _to_uint8(array)
            produced += 1
            page = _check_size(image, path, number)
            if isinstance(page, PageImage) and dpi_info:
                page = PageImage(page.source, page.number, page.image, float(dpi_info[0]))
            yield page
    if produced == 0:
        raise InputError("the TIFF holds no page", path)


def pdf_render_scale(width_pt: float, height_pt: float) -> float:
    """Pixels per PDF point for a page of this size: about 300 dpi, capped for huge pages."""
    longest = max(width_pt, height_pt, 1.0)
    dpi = min(PDF_DPI, PDF_MAX_SIDE * 72.0 / longest)
    # A tiny page (a cropped note) still needs enough pixels for its cells.
    dpi = max(dpi, min(600.0, 1200.0 * 72.0 / longest))
    return dpi / 72.0


def _pdf_pages(data: bytes, path: Path) -> Iterator[PageImage | PageError]:
    import pypdfium2 as pdfium

    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        reason = str(exc).lower()
        if "password" in reason:
            raise InputError("the PDF is encrypted (password protected)", path) from exc
        raise InputError(f"cannot open the PDF (damaged or empty): {exc}", path) from exc
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
            except pdfium.PdfiumError as exc:
                yield PageError(f"cannot render this page: {exc}", path, f"page {number}")
                continue
            image = _to_uint8(array)
            checked = _check_size(image, path, number)
            if isinstance(checked, PageImage):
                checked = PageImage(checked.source, number, checked.image, scale * 72.0)
            yield checked
    finally:
        document.close()


def iter_pages(path: str | Path) -> Iterator[PageImage | PageError]:
    """Every page of ``path`` in order: a :class:`PageImage`, or a :class:`PageError` for a bad page.

    Raises :class:`InputError` when the file itself cannot be read (missing,
    not an image, truncated, an encrypted or empty PDF).
    """
    file = Path(path)
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise InputError(why_unreadable(exc), file) from exc
    if not data:
        raise InputError("empty file", file)
    kind = _kind(data[:1024])
    if kind is None:
        raise InputError("not an image or PDF (expected PNG, JPEG, TIFF or PDF)", file)
    if kind == "pdf":
        yield from _pdf_pages(data, file)
    elif kind == "tiff":
        yield from _tiff_pages(data, file)
    else:
        yield _check_size(_decode_single(data, file), file, 1)


def page_count(path: str | Path) -> int:
    """How many pages ``path`` holds, without rendering or decoding them (1 for a single image).

    For progress only: a file that cannot be opened counts as one page (reading
    it says what is wrong with it).
    """
    file = Path(path)
    try:
        with file.open("rb") as handle:
            kind = _kind(handle.read(1024))
        if kind == "pdf":
            import pypdfium2 as pdfium

            document = pdfium.PdfDocument(str(file))
            try:
                return max(1, len(document))
            finally:
                document.close()
        if kind == "tiff":
            from PIL import Image

            with Image.open(file) as container:
                return max(1, int(getattr(container, "n_frames", 1)))
    except Exception:  # noqa: BLE001 - whatever is wrong, iter_pages reports it when the page is read
        return 1
    return 1


def load_pages(path: str | Path) -> list[PageImage | PageError]:
    """All pages of ``path`` (see :func:`iter_pages`)."""
    return list(iter_pages(path))
