"""PNG's fast path: the chunks read and checked, and plain 8-bit rows inflated without OpenCV."""

from __future__ import annotations

import struct
import zlib
from typing import Any

import cv2
import numpy as np

_isal: Any
try:  # ISA-L's inflate and CRC: twice zlib's speed (python-isal, a dependency; zlib and Wuffs do without it)
    from isal import isal_zlib as _isal
except ImportError:  # pragma: no cover
    _isal = None
_crc32 = _isal.crc32 if _isal is not None else zlib.crc32


_PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def png_pixel_bytes(data: bytes) -> int:
    """Bytes a PNG's pixel takes decoded, as its header declares (1 when it does not say)."""
    if len(data) < 26 or data[12:16] != b"IHDR":
        return 1
    depth, colour = data[24], data[25]
    return _PNG_CHANNELS.get(colour, 1) * (2 if depth == 16 else 1)


def png_pixel_bits(data: bytes) -> int:
    """Bits a PNG's pixel takes in its rows (before unfiltering), as its header declares."""
    return _PNG_CHANNELS.get(data[25], 1) * data[24]


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


#: A PNG chunk's head: its data length and its four-letter type.
PNG_CHUNK_HEAD = struct.Struct(">I4s")
_CRC = struct.Struct(">I")


class DamagedPng(ValueError):
    """A critical PNG chunk (header, palette, pixels, end) whose CRC-32 does not match its data."""


def png_chunks(data: bytes) -> tuple[list[memoryview], bool, list[tuple[int, int]]] | None:
    """A PNG's chunks walked up to IEND, CRCs checked: the IDAT chunks' data, whether it has a transparency chunk,
    and the byte spans of ancillary chunks whose CRC is wrong.

    None when the file stops before IEND. A critical chunk with a wrong CRC
    raises :class:`DamagedPng`: libpng refuses such a file, but prints its
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
    unpack, crc32, append = PNG_CHUNK_HEAD.unpack_from, _crc32, idat.append
    while at + 12 <= size:
        length, kind = unpack(data, at)
        end = at + 8 + length
        if end + 4 > size:
            return None
        if crc32(view[at + 4:end]) != _CRC.unpack_from(data, end)[0]:
            if kind[0] & 0x20 == 0:  # upper-case first letter: a critical chunk
                raise DamagedPng(kind.decode("latin-1"))
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
    as a damaged picture. :func:`png_chunks` checks them (and raises
    :class:`DamagedPng` for a damaged critical chunk).
    """
    walked = png_chunks(data)
    if walked is None or walked[1]:
        return None
    return walked[0]


#: Rows peeked at before inflating a whole file: adaptive filtering (Paeth, Average, Sub) shows there.
_PEEK_ROWS = 16


def decode_png_none_up(idat: list[memoryview], width: int, height: int, channels: int) -> np.ndarray | None:
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


def decode_png_fast(data: bytes) -> np.ndarray | None:
    """An 8-bit grey or colour PNG decoded without OpenCV, or None to leave the file to OpenCV.

    A 300-dpi colour scan is 10-15 MB of deflate: OpenCV's libpng (zlib)
    decodes it in ~150 ms, Wuffs in ~100, ISA-L's inflate with the rows
    unfiltered in numpy in ~55 when every row is filtered None or Up (as
    OpenCV writes them), all with the same pixels (benchmarks/README.md).
    Only the plain cases come here: 8 bits a sample, grey or RGB, not
    interlaced, no transparency chunk; anything else (16 bits, palette,
    alpha) and any file that is damaged (cut short, an inflate error, or
    Wuffs says so) goes to OpenCV, whose result and error messages are the
    reference. A critical chunk with a wrong CRC raises :class:`DamagedPng`.
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
    quick = decode_png_none_up(idat, width, height, 3 if data[25] == 2 else 1)
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
