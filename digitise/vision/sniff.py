"""A file's format from its first bytes, and the formats known but not read."""

from __future__ import annotations

from pathlib import Path


def file_type_of(head: bytes) -> str | None:
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
            return file_type_of(handle.read(1024))
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


def unread_format_name(head: bytes) -> str | None:
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


#: What :func:`unread_format_name` names that are pictures (not documents or archives): a page saved so is a page.
_UNREAD_PICTURES = ("image", "Photoshop file", "SVG drawing")


def unread_picture(path: str | Path) -> str | None:
    """What kind of picture digitise does not read ``path`` is by its first bytes ("a HEIC image"), or None
    (a picture it reads, a document, an archive, or unreadable)."""
    try:
        with Path(path).open("rb") as handle:
            known = unread_format_name(handle.read(1024))
    except OSError:
        return None
    return known if known is not None and known.endswith(_UNREAD_PICTURES) else None


#: The formats read, as error messages list them.
FORMATS_READ = "PNG, JPEG, TIFF, BMP, WebP or PDF"
