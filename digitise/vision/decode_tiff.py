"""TIFF pages, through Pillow, with tifffile for the frames Pillow does not read."""

from __future__ import annotations

import functools
import io
import logging
import struct
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from digitise.errors import InputError, PageError
from digitise.vision.damage import capture_native_messages, damage_message, libtiff_errors
from digitise.vision.page_image import (
    MAX_PAGE_PIXELS,
    PageImage,
    as_page,
    orient,
    pillow_pixel_bytes,
    to_uint8,
    why_too_large,
)
from digitise.vision.page_memory import held_in_page_memory

# A damaged TIFF makes Pillow's TIFF reader warn ("Corrupt EXIF data") on top of the one-line error we
# give for it. Only that module's UserWarnings: a decompression bomb still warns.
warnings.filterwarnings("ignore", category=UserWarning, module=r"PIL\.TiffImagePlugin")
# It also logs some of what it refuses ("More samples per pixel than can be decoded") as an error of its own,
# which would reach the user's terminal beside ours: the page's one-line error says it.
logging.getLogger("PIL.TiffImagePlugin").setLevel(logging.CRITICAL)
# tifffile (the fallback for frames Pillow does not read) logs a broken chain of frames the same way.
logging.getLogger("tifffile").setLevel(logging.CRITICAL)


def open_tiff(source: Any) -> Any:
    """Pillow's TIFF reader on ``source`` (a path or a file object), with page images' own size limit.

    Pillow's is set for any picture from anywhere: it warns on stderr past
    89 megapixels and refuses past 179, while a 1200-dpi A4 scan has 139.
    Page images have :data:`MAX_PAGE_PIXELS`, checked on every frame before
    it is decoded (:func:`tiff_pages`).
    """
    from PIL import Image, TiffImagePlugin  # heavy (~65 ms to import): loaded only for a TIFF

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
    import tifffile  # heavy (~70 ms to import): loaded only for a TIFF

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
    import tifffile  # heavy (~70 ms to import): loaded only for a TIFF

    with tifffile.TiffFile(io.BytesIO(data)) as tiff:
        page: Any = tiff.pages[index]  # a TiffPage: frames (TiffFrame) only when asked for
        compression = int(page.compression)
        # Bytes a pixel takes decoded: a 16-bit or many-sample TIFF takes several times its pixel count.
        pixel_bytes = max(1, int(page.samplesperpixel)) * max(1, (int(page.bitspersample) + 7) // 8)
        too_large = why_too_large(int(page.imagewidth), int(page.imagelength), pixel_bytes)
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
        return cv2.cvtColor(to_uint8(np.ascontiguousarray(colour)), cv2.COLOR_RGB2BGR), dpi
    raise ValueError(f"the TIFF's colour model ({_tiff_name(photometric, 'PHOTOMETRIC')}, "
                     f"{samples} samples a pixel) is not read by digitise")


def _tiff_name(value: int, enum: str = "COMPRESSION") -> str:
    """The name TIFF gives a tag's value ("JPEG2000" for compression 34712), or the number."""
    import tifffile  # heavy (~70 ms to import): loaded only for a TIFF

    try:
        return str(getattr(tifffile, enum)(value).name)
    except ValueError:
        return f"code {value}"


def tiff_pages(data: bytes, path: Path) -> Iterator[PageImage | PageError]:
    """Each frame of a TIFF as a page, or why it cannot be read."""
    # Asked only when Pillow fails (a walk of every frame's directory: nothing to pay for a sound file).
    frames = functools.cache(lambda: _tiff_frame_count(data))
    try:
        container = open_tiff(io.BytesIO(data))
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
                yield as_page(to_uint8(array), path, number, dpi)
                continue
            width, height = frame.size
            pixel_bytes = pillow_pixel_bytes(frame.mode, len(frame.getbands()))
            too_large = why_too_large(width, height, pixel_bytes)
            if too_large:
                yield PageError(too_large, path, page)
                continue
            with held_in_page_memory(width * height, pixel_bytes):
                yield from _tiff_frame_page(frame, path, number)
    finally:
        if container is not None:
            container.close()
    if produced == 0:
        raise InputError("the TIFF holds no page", path)


def _tiff_frame_page(frame: Any, path: Path, number: int) -> Iterator[PageImage | PageError]:
    """The page of a TIFF frame Pillow opened, or the PageError saying why it cannot be decoded."""
    from PIL import Image  # heavy (~30 ms to import): loaded only for a TIFF

    page = f"page {number}"
    said: list[str] = []
    try:
        # libtiff decodes compressed strips (LZW, fax, deflate): it says what it patched over on stderr.
        with capture_native_messages() as said:
            frame.load()
        dpi_info = frame.info.get("dpi")
        orientation = frame.tag_v2.get(274)
        array = _frame_pixels(frame)
    except Image.DecompressionBombError as exc:  # pragma: no cover - our limit is checked first
        yield PageError(f"image too large: {exc}", path, page)
        return
    except _TIFF_DAMAGE as exc:
        errors = libtiff_errors(said)
        why = f"{exc} ({errors[0]})" if errors else str(exc)
        yield PageError(f"cannot decode this page (truncated or damaged file): {why}", path, page)
        return
    if array.ndim == 3:
        array = cv2.cvtColor(array, cv2.COLOR_RGB2BGR)
    errors = libtiff_errors(said)
    yield as_page(orient(to_uint8(array), _first(orientation) if orientation else 1), path, number,
                  float(dpi_info[0]) if dpi_info else None,
                  damage=damage_message("TIFF", errors) if errors else None)
