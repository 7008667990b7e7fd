"""PDF pages rasterised, and a PDF cut short read from the JPEG pictures left in it."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from digitise.errors import InputError, PageError
from digitise.vision.damage import pdf_picture_damage
from digitise.vision.decode import declared_size, why_declared_too_large
from digitise.vision.decode_jpeg import PDF_PICTURE_NAMES, decode_jpeg
from digitise.vision.page_image import PageImage, as_page, to_uint8
from digitise.vision.page_memory import held_in_page_memory

#: Resolution PDFs are rasterised at, unless that would make a huge image.
PDF_DPI = 300.0
#: Longest side of a rasterised PDF page, in pixels (a 300-dpi A4 is 3508).
PDF_MAX_SIDE = 4200


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
PDFIUM_NO_DOCUMENT = 3
_PDFIUM_ERRORS = {
    2: "the file cannot be opened",
    PDFIUM_NO_DOCUMENT: "it is damaged, cut short or not a PDF (PDFium finds no document in it)",
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
        too_large = why_declared_too_large(picture, "jpeg")
        if too_large:
            yield PageError(too_large, path, f"page {index + 1}")
            continue
        declared = declared_size(picture, "jpeg")
        with held_in_page_memory(declared[0] * declared[1] if declared else 0, 3):
            decoded = decode_jpeg(picture, PDF_PICTURE_NAMES)
            if decoded is None:
                yield PageError("cannot decode this page's picture (truncated or damaged)", path, f"page {index + 1}")
                continue
            image, damage = decoded
            notes = [said] if index == 0 else []
            notes += [damage] if damage is not None else []
            yield as_page(to_uint8(image), path, index + 1, None, damage="; ".join(notes) or None)


def pdf_pages(data: bytes, path: Path) -> Iterator[PageImage | PageError]:
    """Each page of a PDF rendered, or why it cannot be read."""
    import pypdfium2 as pdfium  # heavy (~80 ms to import): loaded only for a PDF

    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        reason = str(exc).lower()
        if "password" in reason:
            raise InputError("the PDF is encrypted (password protected)", path) from exc
        if _no_page(data):
            raise InputError("the PDF holds no page", path) from exc
        code = getattr(exc, "err_code", None)
        pictures = cut_pdf_pictures(data) if code == PDFIUM_NO_DOCUMENT else []
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
                damage = pdf_picture_damage(page, thorough=False)
            except pdfium.PdfiumError as exc:
                yield PageError(f"cannot render this page: {exc}", path, f"page {number}")
                continue
            yield as_page(to_uint8(array), path, number, scale * 72.0, damage=damage)
    finally:
        document.close()
