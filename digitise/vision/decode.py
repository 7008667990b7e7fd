"""Decoding a single-picture file (PNG, JPEG, BMP, WebP): its declared size checked first, then its pixels."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from digitise.errors import InputError
from digitise.vision.damage import _damage, _decode_failure, _native_messages, _truncated_png
from digitise.vision.decode_jpeg import _DAMAGED, _decode_jpeg, _jpeg_orientation, _jpeg_size, _jpeg_unread
from digitise.vision.decode_png import _DamagedPng, _png_chunks, _png_pixel_bytes, decode_png_fast
from digitise.vision.page_image import _too_large, orient, to_uint8


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
            return orient(to_uint8(decoded[0]), orientation), decoded[1]
        unread = _jpeg_unread(data)
    if kind != "png":
        with _native_messages() as said:
            image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
        if image is None or image.size == 0:
            if kind == "jpeg" and unread:
                raise InputError(f"{unread}, which digitise does not read: save the page as an ordinary JPEG or PNG",
                                 path)
            raise InputError(_decode_failure(said), path)
        image = to_uint8(image)
        if kind == "jpeg":
            image = orient(image, orientation)
        return image, _damage(kind.upper(), said) if said else None
    # Damage is said here, not by libpng: it would print its own "libpng error" line beside our one-line error.
    try:
        fast = decode_png_fast(data)
        if fast is not None:
            return to_uint8(fast), None
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
    return to_uint8(image), None


#: What a PNG cut short is said to have (the JPEG's words, :func:`_jpeg_problem`).
