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

import os
import stat
from collections.abc import Iterator
from pathlib import Path

from digitise.errors import InputError, PageError
from digitise.fileio import read_input
from digitise.vision.damage import PNG_TRUNCATED, picture_damage
from digitise.vision.decode import declared_size, decode_single_image
from digitise.vision.decode_pdf import (
    CUT_PDF,
    PDF_DPI,
    PDF_MAX_SIDE,
    PDFIUM_NO_DOCUMENT,
    cut_pdf_pictures,
    pdf_pages,
    pdf_render_scale,
)
from digitise.vision.decode_png import png_pixel_bytes
from digitise.vision.decode_tiff import open_tiff, tiff_pages
from digitise.vision.page_image import (
    ALPHA_ROWS,
    BLANK_PAGE,
    DITHERED_ISOLATED,
    FAINT_PAGE,
    LEVELLED_DARKEST,
    LEVELLED_PAPER,
    MAX_PAGE_BYTES,
    MAX_PAGE_PIXELS,
    MIN_SIDE,
    UNDITHER_MM,
    PageImage,
    as_page,
    darkest_channel,
    histogram,
    is_dithered,
    level_faint,
    orient,
    page_levels,
    undither,
)
from digitise.vision.page_memory import (
    PAGE_PEAK_FACTOR,
    PageMemory,
    held_in_page_memory,
    keep_freed_memory,
    share_page_memory,
)
from digitise.vision.sniff import (
    FORMATS_READ,
    file_type_of,
    sniff_file,
    unread_format_name,
    unread_picture,
)

#: The public names of page loading, wherever they live (every ``from digitise.vision.images import X`` reads).
__all__ = [
    "ALPHA_ROWS",
    "BLANK_PAGE",
    "CUT_PDF",
    "DITHERED_ISOLATED",
    "FAINT_PAGE",
    "FORMATS_READ",
    "LEVELLED_DARKEST",
    "LEVELLED_PAPER",
    "MAX_PAGE_BYTES",
    "MAX_PAGE_PIXELS",
    "MIN_SIDE",
    "PAGE_PEAK_FACTOR",
    "PDF_DPI",
    "PDF_MAX_SIDE",
    "PNG_TRUNCATED",
    "UNDITHER_MM",
    "PageImage",
    "PageMemory",
    "cut_pdf_pictures",
    "darkest_channel",
    "histogram",
    "is_dithered",
    "iter_pages",
    "keep_freed_memory",
    "level_faint",
    "load_pages",
    "orient",
    "page_count",
    "page_levels",
    "pdf_render_scale",
    "picture_damage",
    "share_page_memory",
    "sniff_file",
    "undither",
    "unread_picture",
]


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
    kind = file_type_of(data[:1024])
    if kind is None:
        known = unread_format_name(data[:1024])
        if known is not None:
            raise InputError(f"{known}, which digitise does not read: save the page as PNG, JPEG or PDF", file)
        raise InputError(f"not an image or PDF (expected {FORMATS_READ})", file)
    if kind == "pdf":
        yield from pdf_pages(data, file)
    elif kind == "tiff":
        yield from tiff_pages(data, file)
    else:
        declared = declared_size(data, kind)
        # Held until the next page is asked for: the page is read (its copies made) in between.
        with held_in_page_memory(declared[0] * declared[1] if declared else 0,
                                 png_pixel_bytes(data) if kind == "png" else 3):
            image, damage = decode_single_image(data, file, kind)
            yield as_page(image, file, 1, damage=damage)


def page_count(path: str | Path) -> int:
    """How many pages ``path`` holds, without rendering or decoding them (1 for a single image).

    For progress only: a file that cannot be opened counts as one page (reading
    it says what is wrong with it).
    """
    file = Path(path)
    kind = sniff_file(file)
    try:
        if kind == "pdf":
            import pypdfium2 as pdfium  # heavy (~80 ms to import): loaded only for a PDF

            try:
                document = pdfium.PdfDocument(str(file))
            except pdfium.PdfiumError as exc:
                if getattr(exc, "err_code", None) != PDFIUM_NO_DOCUMENT:
                    return 1
                return max(1, len(cut_pdf_pictures(file.read_bytes())))
            try:
                return max(1, len(document))
            finally:
                document.close()
        if kind == "tiff":
            with open_tiff(file) as container:
                return max(1, int(getattr(container, "n_frames", 1)))
    except Exception:  # noqa: BLE001 - whatever is wrong, iter_pages reports it when the page is read
        return 1
    return 1


def load_pages(path: str | Path) -> list[PageImage | PageError]:
    """All pages of ``path`` (see :func:`iter_pages`)."""
    return list(iter_pages(path))
