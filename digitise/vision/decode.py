"""Decoding a single-picture file (PNG, JPEG, BMP, WebP): its declared size checked first, then its pixels."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from digitise.errors import InputError
from digitise.vision.damage import (
    capture_native_messages,
    damage_message,
    decode_failure_message,
    salvage_truncated_png,
)
from digitise.vision.decode_jpeg import (
    CANNOT_DECODE,
    decode_jpeg,
    jpeg_orientation,
    jpeg_size,
    unread_jpeg_kind,
)
from digitise.vision.decode_png import DamagedPng, decode_png_fast, png_chunks, png_pixel_bytes
from digitise.vision.page_image import orient, to_uint8, why_too_large


def declared_size(data: bytes, kind: str) -> tuple[int, int] | None:
    """Width and height as a PNG, JPEG or BMP header gives them, or None when it does not say (read before decoding)."""
    if kind == "png" and len(data) >= 24 and data[12:16] == b"IHDR":
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if kind == "bmp" and len(data) >= 26:
        if int.from_bytes(data[14:18], "little") == 12:  # the old OS/2 header: 16-bit sides
            return int.from_bytes(data[18:20], "little"), int.from_bytes(data[20:22], "little")
        return (abs(int.from_bytes(data[18:22], "little", signed=True)),
                abs(int.from_bytes(data[22:26], "little", signed=True)))
    if kind == "jpeg":
        return jpeg_size(data)
    return None


#: JPEG start-of-frame markers (SOF0-SOF15 less DHT, JPG and DAC): they carry the image's size.


def why_declared_too_large(data: bytes, kind: str) -> str | None:
    """Why a picture is too large to decode, as its header declares its size (:func:`why_too_large`), or None."""
    declared = declared_size(data, kind)
    return why_too_large(*declared, png_pixel_bytes(data) if kind == "png" else 1) if declared else None


def decode_single_image(data: bytes, path: Path, kind: str) -> tuple[np.ndarray, str | None]:
    """A single-image file's pixels, and what the decoder patched over (see :attr:`PageImage.damage`)."""
    too_large = why_declared_too_large(data, kind)
    if too_large:
        raise InputError(too_large, path)
    if kind == "jpeg":
        orientation = jpeg_orientation(data)
        decoded = decode_jpeg(data)
        if decoded is not None:
            return orient(to_uint8(decoded[0]), orientation), decoded[1]
        unread = unread_jpeg_kind(data)
    if kind != "png":
        with capture_native_messages() as said:
            image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
        if image is None or image.size == 0:
            if kind == "jpeg" and unread:
                raise InputError(f"{unread}, which digitise does not read: save the page as an ordinary JPEG or PNG",
                                 path)
            raise InputError(decode_failure_message(said), path)
        image = to_uint8(image)
        if kind == "jpeg":
            image = orient(image, orientation)
        return image, damage_message(kind.upper(), said) if said else None
    # Damage is said here, not by libpng: it would print its own "libpng error" line beside our one-line error.
    try:
        fast = decode_png_fast(data)
        if fast is not None:
            return to_uint8(fast), None
        walked = png_chunks(data)
    except DamagedPng as exc:
        raise InputError(f"{CANNOT_DECODE[:-1]}: the {exc} chunk fails its CRC check)", path) from exc
    if walked is None:
        cut = salvage_truncated_png(data)
        if cut is None:
            raise InputError(CANNOT_DECODE, path)
        return cut
    if walked[2]:
        # Ancillary chunks with a wrong CRC: libpng would drop them too, with a warning on stderr.
        keep, at = [], 0
        for start, end in walked[2]:
            keep.append(data[at:start])
            at = end
        keep.append(data[at:])
        data = b"".join(keep)
    with capture_native_messages() as said:
        image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    if image is None or image.size == 0:
        raise InputError(decode_failure_message(said), path)
    # What libpng still says of a file it decodes (a short colour profile, "iCCP: known incorrect sRGB
    # profile") is not damage to the page.
    return to_uint8(image), None


#: What a PNG cut short is said to have (the JPEG's words, :func:`jpeg_problem`).
