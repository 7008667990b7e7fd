"""What a damaged file is said to have, and what of it is salvaged: the C libraries' messages caught."""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import cv2
import numpy as np
import simplejpeg

from digitise.vision.decode_jpeg import (
    CANNOT_DECODE,
    JPEG_INK_SPACES,
    PDF_PICTURE_NAMES,
    decode_jpeg_strictly,
    has_jpeg_end,
    jpeg_problem,
)
from digitise.vision.decode_png import PNG_CHUNK_HEAD, png_pixel_bits
from digitise.vision.page_image import PageImage, to_uint8, why_too_large
from digitise.vision.sniff import sniff_file

_NATIVE_STDERR = threading.Lock()


@contextmanager
def capture_native_messages() -> Iterator[list[str]]:
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


def libtiff_errors(lines: list[str]) -> list[str]:
    """libtiff's error lines, without the file name it makes up; its warnings (an unknown private tag) are not
    damage and are dropped."""
    errors = []
    for line in lines:
        _, _, text = line.partition("tempfile.tif: ") if line.startswith("tempfile.tif: ") else ("", "", line)
        # A broken link to the next frame is that frame's problem (it fails to open), not damage to this one.
        if "Warning, " not in text and not text.startswith("TIFFAdvanceDirectory"):
            errors.append(text.rstrip("."))
    return errors


def damage_message(kind: str, errors: list[str]) -> str:
    """What to say of a page decoded past ``errors`` (libtiff's or libjpeg's lines)."""
    if len(errors) == 1:
        return f"the {kind}'s data is damaged ({errors[0]})"
    return f"the {kind}'s data is damaged ({len(errors)} problems, the first: {errors[0]})"


def picture_damage(page: PageImage) -> str | None:
    """What is wrong with the data ``page`` was decoded from, or None: its :attr:`PageImage.damage`, or for a
    PDF page, damage in its JPEG pictures.

    PDFium decodes those silently, patching damaged data with grey: a page
    that is then not found to be a note may be one whose picture is damaged.
    Each picture is decoded again strictly, which costs about a third of
    rendering the page, so this is for a page that could not be read.
    """
    import pypdfium2 as pdfium  # heavy (~80 ms to import): loaded only for a PDF

    if page.damage is not None:
        return page.damage
    if sniff_file(page.source) != "pdf":
        return page.damage
    try:
        document = pdfium.PdfDocument(page.source)
    except (OSError, pdfium.PdfiumError):
        return page.damage
    try:
        return pdf_picture_damage(document[page.number - 1])
    except (pdfium.PdfiumError, IndexError):
        return None
    finally:
        document.close()


def pdf_picture_damage(page: Any, *, thorough: bool = True) -> str | None:
    """What is wrong with a PDF page's JPEG pictures, or None.

    ``thorough`` decodes each picture strictly (about a third of rendering
    the page); otherwise only a picture whose data lacks JPEG's end marker
    is (the usual damage: a file cut short), which costs under a millisecond a page.
    """
    import pypdfium2 as pdfium  # heavy (~80 ms to import): loaded only for a PDF

    for picture in page.get_objects(filter=[pdfium.raw.FPDF_PAGEOBJ_IMAGE]):
        try:
            filters = picture.get_filters()
            if not filters or filters[-1] != "DCTDecode":
                continue
            data = bytes(picture.get_data(decode_simple=True))
        except (pdfium.PdfiumError, ValueError):
            continue  # what cannot be looked into is judged by its rendering, as before
        if has_jpeg_end(data) and not thorough:
            continue
        try:
            height, width, colour, _ = simplejpeg.decode_jpeg_header(data)
        except ValueError as exc:
            return f"the page's JPEG picture cannot be decoded ({str(exc).strip().rstrip('.')})"
        if why_too_large(width, height):
            continue  # PDFium renders it at the page's size; decoding it whole here would not fit in memory
        try:
            decode_jpeg_strictly(data, "CMYK" if colour in JPEG_INK_SPACES else "GRAY", min_factor=8)
        except ValueError as exc:
            return jpeg_problem(exc, *PDF_PICTURE_NAMES)
    return None


PNG_TRUNCATED = "the PNG is truncated (its data ends before the picture does)"


def salvage_truncated_png(data: bytes) -> tuple[np.ndarray, str] | None:
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
    stride = 1 + (width * png_pixel_bits(data) + 7) // 8
    view, at, size = memoryview(data), 8, len(data)
    head: list[bytes] = []
    inflater = zlib.decompressobj()
    pixels: list[bytes] = []
    inflated, wanted = 0, height * stride
    while at + 8 <= size and inflated < wanted:
        length, kind = PNG_CHUNK_HEAD.unpack_from(data, at)
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
    with capture_native_messages():
        image = cv2.imdecode(np.frombuffer(sound, np.uint8), cv2.IMREAD_UNCHANGED)
    if image is None or image.size == 0:
        return None
    image = to_uint8(image)
    if rows < height:
        paper = np.full((height - rows, *image.shape[1:]), 255, np.uint8)
        image = np.concatenate([image, paper])
    return image, PNG_TRUNCATED


def decode_failure_message(said: list[str]) -> str:
    """Why a file could not be decoded, with the decoder's own first error when it printed one."""
    errors = [line for line in said if "warning" not in line.lower()]
    if not errors:
        return CANNOT_DECODE
    first = errors[0].removeprefix("libpng error: ").strip().rstrip(".")
    return f"{CANNOT_DECODE[:-1]}: {first})"
