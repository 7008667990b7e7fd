"""JPEG headers read (size, orientation, what is not read) and JPEGs decoded strictly."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import simplejpeg

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


def jpeg_size(data: bytes) -> tuple[int, int] | None:
    """Width and height from a JPEG's frame header, or None when none comes before the image data."""
    for marker, start, end in _jpeg_segments(data):
        if marker in _JPEG_FRAMES and end - start >= 5:
            return int.from_bytes(data[start + 3:start + 5], "big"), int.from_bytes(data[start + 1:start + 3], "big")
    return None


def unread_jpeg_kind(data: bytes) -> str | None:
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


def jpeg_orientation(data: bytes) -> int:
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


#: What is said of an image no decoder can read.
CANNOT_DECODE = "cannot decode the image (truncated or damaged file)"


#: JPEG colour spaces that libjpeg-turbo's fast path cannot turn into BGR: OpenCV's decoder converts them.
JPEG_INK_SPACES = frozenset({"CMYK", "YCCK"})


#: How a PDF page's JPEG picture is named in what is said of its damage.
PDF_PICTURE_NAMES = ("the page's JPEG picture", "the data of the page's JPEG picture")


def decode_jpeg(data: bytes, named: tuple[str, str] = ("the JPEG", "the JPEG's data")
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
    space = "CMYK" if colour in JPEG_INK_SPACES else "GRAY" if colour == "Gray" else "BGR"
    try:
        return _ink_to_bgr(decode_jpeg_strictly(data, space)), None
    except ValueError as exc:
        problem = jpeg_problem(exc, *named)
    try:
        image = simplejpeg.decode_jpeg(data, colorspace=space, strict=False)
    except ValueError:
        return None
    return _ink_to_bgr(image), problem


_JPEG_END = b"\xff\xd9"


def has_jpeg_end(data: bytes) -> bool:
    """Whether JPEG data ends with its end marker (padding after it aside)."""
    return data.rstrip(b"\x00\r\n \t").endswith(_JPEG_END)


def decode_jpeg_strictly(data: bytes, space: str, **options: Any) -> np.ndarray:
    """JPEG data decoded by libjpeg-turbo with no damage patched over; ``ValueError`` (libjpeg's complaint) if any.

    Data whose only fault is a missing end marker (some cameras' and
    scripts') is sound: every pixel is there.
    """
    try:
        image: np.ndarray = simplejpeg.decode_jpeg(data, colorspace=space, **options)
        return image
    except ValueError as first:
        if has_jpeg_end(data):
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


def jpeg_problem(exc: ValueError, picture: str = "the JPEG", data: str = "the JPEG's data") -> str:
    """What libjpeg-turbo's complaint ``exc`` means, said of ``picture`` (or of its ``data``)."""
    problem = str(exc).strip().rstrip(".")
    if problem.lower().startswith("premature end of jpeg file"):
        return f"{picture} is truncated (its data ends before the picture does)"
    return f"{data} is damaged ({problem or 'libjpeg patched over it'})"
