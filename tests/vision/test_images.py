"""Loading pages: formats, multi-page files, and bad files named with their reason."""

from __future__ import annotations

import importlib.util
import io
import re
import zlib
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
import simplejpeg
from PIL import Image, ImageOps

from digitise.errors import DigitiseError, InputError, PageError
from digitise.vision import decode_png, images, page_image
from digitise.vision.decode_png import decode_png_fast
from digitise.vision.images import (
    CUT_PDF,
    PNG_TRUNCATED,
    PageImage,
    cut_pdf_pictures,
    iter_pages,
    load_pages,
    page_count,
    pdf_render_scale,
    picture_damage,
)
from digitise.vision.page_image import to_uint8

#: Whether python-isal is installed: without it the quick PNG path gives way to Wuffs.
ISAL = importlib.util.find_spec("isal") is not None


def _page(value: int = 200, size: tuple[int, int] = (600, 450)) -> np.ndarray:
    image = np.full((size[1], size[0]), value, np.uint8)
    cv2.rectangle(image, (50, 50), (300, 200), 0, 3)
    return image


def test_png_grey_and_colour(tmp_path: Path) -> None:
    grey = _page()
    cv2.imwrite(str(tmp_path / "grey.png"), grey)
    colour = cv2.cvtColor(grey, cv2.COLOR_GRAY2BGR)
    colour[60:70, 60:70] = (255, 0, 0)
    cv2.imwrite(str(tmp_path / "colour.png"), colour)
    (page,) = load_pages(tmp_path / "grey.png")
    assert isinstance(page, PageImage)
    assert page.image.ndim == 2 and page.number == 1
    assert np.array_equal(page.image, grey)
    (cpage,) = load_pages(tmp_path / "colour.png")
    assert isinstance(cpage, PageImage)
    assert cpage.image.shape == (450, 600, 3)
    # The darkest channel keeps the blue patch dark (its red channel is 0).
    assert cpage.darkest[65, 65] == 0 and cpage.grey[65, 65] > 0


def test_colour_png_without_colour_becomes_grey(tmp_path: Path) -> None:
    cv2.imwrite(str(tmp_path / "g3.png"), cv2.cvtColor(_page(), cv2.COLOR_GRAY2BGR))
    (page,) = load_pages(tmp_path / "g3.png")
    assert isinstance(page, PageImage) and page.image.ndim == 2


def test_jpeg_and_16_bit_png(tmp_path: Path) -> None:
    cv2.imwrite(str(tmp_path / "p.jpg"), _page())
    (page,) = load_pages(tmp_path / "p.jpg")
    assert isinstance(page, PageImage) and page.image.dtype == np.uint8
    deep = _page().astype(np.uint16) * 257
    cv2.imwrite(str(tmp_path / "deep.png"), deep)
    (page16,) = load_pages(tmp_path / "deep.png")
    assert isinstance(page16, PageImage) and page16.image.dtype == np.uint8
    assert abs(int(page16.image[10, 10]) - 200) <= 1


def _jpeg_bytes(image: np.ndarray) -> bytes:
    ok, encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 90])
    assert ok
    return encoded.tobytes()


def _damaged(jpeg: bytes) -> bytes:
    """``jpeg`` with a restart marker where none belongs, halfway through its picture data."""
    middle = (jpeg.index(b"\xff\xda") + len(jpeg)) // 2
    return jpeg[:middle] + b"\xff\xd0" + jpeg[middle + 2:]


@pytest.mark.parametrize("colour", [False, True])
def test_a_sound_jpeg_decodes_as_opencv_decodes_it(tmp_path: Path, colour: bool) -> None:
    picture = _page()
    if colour:
        picture = cv2.cvtColor(picture, cv2.COLOR_GRAY2BGR)
        picture[60:90, 60:90] = (200, 40, 10)
    data = _jpeg_bytes(picture)
    (tmp_path / "p.jpg").write_bytes(data)
    (page,) = load_pages(tmp_path / "p.jpg")
    assert isinstance(page, PageImage) and page.damage is None
    assert np.array_equal(page.image, cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED))


def test_a_damaged_jpeg_is_read_and_said_to_be_damaged(tmp_path: Path) -> None:
    data = _jpeg_bytes(cv2.cvtColor(_page(), cv2.COLOR_GRAY2BGR) + np.uint8(1))
    (tmp_path / "bad.jpg").write_bytes(_damaged(data))
    (page,) = load_pages(tmp_path / "bad.jpg")
    assert isinstance(page, PageImage) and page.image.shape[:2] == (450, 600)
    assert page.damage is not None and "damaged" in page.damage and "premature end" in page.damage
    (tmp_path / "cut.jpg").write_bytes(data[: len(data) * 2 // 3])
    (cut,) = load_pages(tmp_path / "cut.jpg")
    assert isinstance(cut, PageImage) and cut.damage is not None and "truncated" in cut.damage


def test_a_cmyk_jpeg_decodes_as_opencv_decodes_it_and_reads_when_cut_short(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    Image.fromarray(_page()).convert("CMYK").save(buffer, "JPEG")
    data = buffer.getvalue()
    (tmp_path / "ink.jpg").write_bytes(data)
    (page,) = load_pages(tmp_path / "ink.jpg")
    assert isinstance(page, PageImage) and page.damage is None
    # Paper stays light and the drawn frame dark: the colours were converted, not taken as BGR.
    assert page.grey[10, 10] > 150 and page.grey[50, 150] < 80
    assert np.array_equal(page.image, to_uint8(cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)))
    (tmp_path / "cut.jpg").write_bytes(data[: len(data) * 2 // 3])
    (cut,) = load_pages(tmp_path / "cut.jpg")
    assert isinstance(cut, PageImage) and cut.damage is not None and "truncated" in cut.damage


def test_a_jpeg_missing_only_its_end_marker_is_sound(tmp_path: Path) -> None:
    data = _jpeg_bytes(_page())
    assert data.endswith(b"\xff\xd9")
    (tmp_path / "open.jpg").write_bytes(data[:-2])
    (page,) = load_pages(tmp_path / "open.jpg")
    assert isinstance(page, PageImage) and page.damage is None
    assert np.array_equal(page.image, cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED))


def _with_exif_orientation(jpeg: bytes, orientation: int) -> bytes:
    """``jpeg`` with an EXIF block (big-endian, as cameras write it) recording ``orientation``."""
    tiff = b"MM\x00*\x00\x00\x00\x08" + b"\x00\x01" + b"\x01\x12\x00\x03\x00\x00\x00\x01"
    tiff += orientation.to_bytes(2, "big") + b"\x00\x00" + b"\x00\x00\x00\x00"
    body = b"Exif\x00\x00" + tiff
    return jpeg[:2] + b"\xff\xe1" + (len(body) + 2).to_bytes(2, "big") + body + jpeg[2:]


@pytest.mark.parametrize("orientation", range(1, 9))
def test_a_photos_exif_orientation_is_applied(tmp_path: Path, orientation: int) -> None:
    """A phone stores the pixels as the sensor saw them and records how to turn (or mirror) them: applied as
    Pillow applies it, so a mirrored record is not refused as a page seen through the paper."""
    stored = _page()
    stored[300:420, 450:580] = 40  # a corner that tells every turn and mirroring apart
    data = _with_exif_orientation(_jpeg_bytes(stored), orientation)
    (tmp_path / "photo.jpg").write_bytes(data)
    (page,) = load_pages(tmp_path / "photo.jpg")
    assert isinstance(page, PageImage)
    upright = np.asarray(ImageOps.exif_transpose(Image.open(io.BytesIO(data))).convert("L"))
    assert page.image.shape == upright.shape
    assert np.abs(page.image.astype(int) - upright.astype(int)).max() <= 2


def _frame_header(jpeg: bytes) -> int:
    """Where a baseline JPEG's frame header (SOF0) marker is."""
    return jpeg.index(b"\xff\xc0")


@pytest.mark.parametrize(("patch", "said"), [
    (lambda data, at: data[:at + 1] + b"\xc3" + data[at + 2:], "a lossless JPEG"),
    (lambda data, at: data[:at + 4] + b"\x0c" + data[at + 5:], "a 12-bit JPEG"),
])
def test_jpegs_of_a_kind_not_read_are_named_not_called_damaged(tmp_path: Path, patch: object, said: str) -> None:
    data = _jpeg_bytes(_page())
    target = tmp_path / "odd.jpg"
    target.write_bytes(patch(data, _frame_header(data)))  # type: ignore[operator]
    with pytest.raises(InputError) as info:
        load_pages(target)
    assert info.value.reason.startswith(f"{said}, which digitise does not read")


def _fax_tiff(target: Path) -> bytes:
    """A bilevel page saved as archives keep them (CCITT group 4); its bytes."""
    page = np.full((450, 600), 255, np.uint8)
    for k in range(12):
        cv2.putText(page, f"{k} 31: 8/5 6/5", (20, 35 * (k + 1)), cv2.FONT_HERSHEY_SIMPLEX, 0.9, 0, 2)
    Image.fromarray(page).convert("1").save(target, compression="group4")
    return target.read_bytes()


def test_a_damaged_fax_tiff_is_read_and_said_to_be_damaged(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    data = _fax_tiff(tmp_path / "sound.tif")
    (sound,) = load_pages(tmp_path / "sound.tif")
    assert isinstance(sound, PageImage) and sound.damage is None
    damaged = bytearray(data)
    for k in range(5):
        damaged[len(data) // 3 + 97 * k] ^= 0x5A
    (tmp_path / "bad.tif").write_bytes(bytes(damaged))
    (page,) = load_pages(tmp_path / "bad.tif")
    assert isinstance(page, PageImage) and page.image.shape == (450, 600)
    assert page.damage is not None and page.damage.startswith("the TIFF's data is damaged (")
    assert "Fax4Decode" in page.damage and "tempfile.tif" not in page.damage
    # libtiff's own lines (one per bad line of the picture, naming a "tempfile.tif") stay off stderr.
    assert capfd.readouterr().err == ""


def test_a_tiff_libtiff_cannot_decode_names_libtiffs_reason(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    Image.fromarray(cv2.cvtColor(_page(), cv2.COLOR_GRAY2RGB)).save(tmp_path / "lzw.tif", compression="tiff_lzw")
    data = bytearray((tmp_path / "lzw.tif").read_bytes())
    for k in range(40):
        data[200 + 37 * k] ^= 0x10
    (tmp_path / "lzw.tif").write_bytes(bytes(data))
    (page,) = load_pages(tmp_path / "lzw.tif")
    assert isinstance(page, PageError)
    assert page.reason == ("cannot decode this page (truncated or damaged file): decoder error -2 "
                           "(Using code not yet in table)")
    assert capfd.readouterr().err == ""


def test_a_pdf_page_whose_jpeg_picture_is_damaged_is_found_out(tmp_path: Path) -> None:
    """PDFium renders a damaged JPEG picture without a word, patched with grey: asked, the page says so."""
    picture = cv2.cvtColor(_page(), cv2.COLOR_GRAY2RGB)
    Image.fromarray(picture).save(tmp_path / "sound.pdf", resolution=72.0)
    data = (tmp_path / "sound.pdf").read_bytes()
    start = data.index(b"stream")
    assert b"/DCTDecode" in data[:start]
    at = start + (data.index(b"endstream") - start) * 9 // 10
    (tmp_path / "bad.pdf").write_bytes(data[:at] + b"\xff\xd0" + data[at + 2:])
    (sound,) = load_pages(tmp_path / "sound.pdf")
    assert isinstance(sound, PageImage) and sound.damage is None and picture_damage(sound) is None
    (page,) = load_pages(tmp_path / "bad.pdf")
    # Rendered as PDFium renders it; asked (as for a page that then cannot be read), the picture is damaged.
    assert isinstance(page, PageImage) and page.damage is None
    assert picture_damage(page) == ("the data of the page's JPEG picture is damaged (Corrupt JPEG data: premature "
                                    "end of data segment)")


def test_multi_page_tiff(tmp_path: Path) -> None:
    frames = [Image.fromarray(_page(value)) for value in (180, 200, 220)]
    target = tmp_path / "pages.tif"
    frames[0].save(target, save_all=True, append_images=frames[1:], dpi=(200, 200))
    pages = load_pages(target)
    assert [p.number for p in pages if isinstance(p, PageImage)] == [1, 2, 3]
    assert [int(p.image[10, 10]) for p in pages if isinstance(p, PageImage)] == [180, 200, 220]
    assert all(isinstance(p, PageImage) and p.dpi == pytest.approx(200) for p in pages)


def test_multi_page_pdf_rendered_near_300_dpi(tmp_path: Path) -> None:
    frames = [Image.fromarray(_page(value, (842, 595))).convert("RGB") for value in (150, 230)]
    target = tmp_path / "pages.pdf"
    # 842 x 595 px at 72 dpi: an A4 landscape page.
    frames[0].save(target, save_all=True, append_images=frames[1:], resolution=72.0)
    pages = load_pages(target)
    assert len(pages) == 2
    first = pages[0]
    assert isinstance(first, PageImage)
    assert first.dpi == pytest.approx(300, rel=0.01)
    assert first.image.shape[1] == pytest.approx(842 / 72 * 300, abs=3)
    assert pdf_render_scale(842, 595) * 72 == pytest.approx(300)
    # A huge page is rendered at less than 300 dpi to bound the image size.
    assert pdf_render_scale(842 * 4, 595 * 4) * 72 < 300


def test_page_count_without_decoding(tmp_path: Path) -> None:
    """What a batch's progress bar counts: every page of a PDF or TIFF, one for an image or a bad file."""
    from digitise.vision.images import page_count

    frames = [Image.fromarray(_page(value)) for value in (180, 200, 220)]
    frames[0].save(tmp_path / "pages.tif", save_all=True, append_images=frames[1:])
    frames[0].convert("RGB").save(tmp_path / "pages.pdf", save_all=True, append_images=[f.convert("RGB") for f in frames[1:3]])
    frames[0].save(tmp_path / "page.png")
    (tmp_path / "cut.pdf").write_bytes((tmp_path / "pages.pdf").read_bytes()[:100])
    (tmp_path / "notes.pdf").write_text("not a PDF")
    counts = {name: page_count(tmp_path / name) for name in
              ("pages.tif", "pages.pdf", "page.png", "cut.pdf", "notes.pdf", "missing.pdf")}
    assert counts == {"pages.tif": 3, "pages.pdf": 3, "page.png": 1, "cut.pdf": 1, "notes.pdf": 1, "missing.pdf": 1}


def test_not_an_image(tmp_path: Path) -> None:
    target = tmp_path / "notes.png"
    target.write_text("these are not pixels\n")
    with pytest.raises(InputError, match="not an image") as info:
        load_pages(target)
    assert info.value.path == str(target)


@pytest.mark.parametrize("colour", [False, True])
def test_a_truncated_png_is_read_as_far_as_it_decodes(tmp_path: Path, colour: bool) -> None:
    """A PNG cut short (a transfer that stopped) was refused whole, where a JPEG cut short is read as far as
    it decodes: its rows before the cut are the file's own, the rest white paper, and it is said to be cut."""
    rng = np.random.default_rng(5)
    picture = _page() if not colour else cv2.cvtColor(_page(), cv2.COLOR_GRAY2BGR)
    picture = (picture.astype(np.int16) - rng.integers(0, 40, picture.shape)).clip(0, 255).astype(np.uint8)
    # Paeth and the other adaptive filters, as a scanner's libpng writes them (OpenCV writes None and Up only).
    buffer = io.BytesIO()
    Image.fromarray(picture if not colour else picture[:, :, ::-1]).save(buffer, "PNG", optimize=False)
    data = buffer.getvalue()
    target = tmp_path / "cut.png"
    target.write_bytes(data[: len(data) // 2])
    (page,) = load_pages(target)
    assert isinstance(page, PageImage) and page.damage == PNG_TRUNCATED
    assert page.image.shape == picture.shape
    kept = int(np.flatnonzero((page.image != 255).reshape(len(page.image), -1).any(axis=1)).max()) + 1
    assert 0.3 * len(picture) < kept < 0.7 * len(picture)
    assert np.array_equal(page.image[:kept], picture[:kept])
    assert (page.image[kept:] == 255).all()
    # Cut before a whole row: nothing to read, refused as before.
    target.write_bytes(data[:60])
    with pytest.raises(InputError, match="truncated") as info:
        load_pages(target)
    assert str(target) in info.value.message


def test_fast_png_decoder_gives_opencvs_pixels(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    colour = rng.integers(0, 256, (420, 610, 3), dtype=np.uint8)
    grey = rng.integers(0, 256, (420, 610), dtype=np.uint8)
    for name, image in (("colour.png", colour), ("grey.png", grey)):
        ok, data = cv2.imencode(".png", image)
        assert ok
        fast = decode_png_fast(data.tobytes())
        assert fast is not None and np.array_equal(fast, image)
        (page,) = load_pages(_write(tmp_path / name, data.tobytes()))
        assert isinstance(page, PageImage) and np.array_equal(page.image, image)
    # What the fast path leaves to OpenCV: 16 bits a sample, alpha.
    ok, deep = cv2.imencode(".png", colour.astype(np.uint16) * 257)
    assert ok and decode_png_fast(deep.tobytes()) is None
    ok, alpha = cv2.imencode(".png", np.dstack([colour, grey]))
    assert ok and decode_png_fast(alpha.tobytes()) is None


def _idat_stream(image: np.ndarray, filters: list[int]) -> bytes:
    """``image``'s (grey or BGR) deflated PNG rows, row r filtered with ``filters[r % len(filters)]``."""
    rgb = image if image.ndim == 2 else image[:, :, ::-1]
    height, width = image.shape[:2]
    bpp = 1 if image.ndim == 2 else 3
    rows = rgb.reshape(height, width * bpp).astype(np.int16)
    out = []
    for r in range(height):
        x = rows[r]
        b = rows[r - 1] if r else np.zeros_like(x)
        a = np.concatenate([np.zeros(bpp, np.int16), x[:-bpp]])
        c = np.concatenate([np.zeros(bpp, np.int16), b[:-bpp]])
        kind = filters[r % len(filters)]
        if kind == 0:
            pred = np.zeros_like(x)
        elif kind == 1:
            pred = a
        elif kind == 2:
            pred = b
        elif kind == 3:
            pred = (a + b) // 2
        else:
            p = a + b - c
            pa, pb, pc = np.abs(p - a), np.abs(p - b), np.abs(p - c)
            pred = np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))
        out.append(bytes([kind]) + ((x - pred) % 256).astype(np.uint8).tobytes())
    return zlib.compress(b"".join(out), 6)


def _png(image: np.ndarray, filters: list[int]) -> bytes:
    """``image`` (grey or BGR) as a PNG whose row r is filtered with ``filters[r % len(filters)]``."""
    import struct

    height, width = image.shape[:2]

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    header = struct.pack(">IIBBBBB", width, height, 8, 0 if image.ndim == 2 else 2, 0, 0, 0)
    data = _idat_stream(image, filters)
    # Several IDAT chunks, as encoders write them.
    idat = b"".join(chunk(b"IDAT", data[k:k + 4096]) for k in range(0, len(data), 4096))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + idat + chunk(b"IEND", b"")


@pytest.mark.parametrize("filters", [[2], [0], [0, 2, 2], [1], [4, 2], [3], [0, 1, 2, 3, 4]])
def test_png_filters_decode_to_the_same_pixels(filters: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(5)
    colour = rng.integers(0, 256, (150, 97, 3), dtype=np.uint8)
    grey = rng.integers(0, 256, (150, 97), dtype=np.uint8)
    quick = []
    spy = decode_png.decode_png_none_up
    monkeypatch.setattr(decode_png, "decode_png_none_up", lambda *a: quick.append(r := spy(*a)) or r)
    for image in (colour, grey):
        data = _png(image, filters)
        assert np.array_equal(cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED), image)
        fast = decode_png_fast(data)
        assert fast is not None and np.array_equal(fast, image) and fast.flags.c_contiguous
    # ISA-L and numpy decode rows filtered None and Up; others go to Wuffs.
    if ISAL:
        assert [r is not None for r in quick] == [set(filters) <= {0, 2}] * 2


def test_png_quick_path_refuses_a_short_or_long_stream() -> None:
    image = np.random.default_rng(6).integers(0, 256, (40, 30, 3), dtype=np.uint8)
    if not ISAL:
        pytest.skip("python-isal not installed")
    idat = [memoryview(_idat_stream(image, [2]))]
    assert decode_png.decode_png_none_up(idat, 30, 40, 3) is not None
    assert decode_png.decode_png_none_up(idat, 30, 41, 3) is None
    assert decode_png.decode_png_none_up(idat, 30, 39, 3) is None
    assert decode_png.decode_png_none_up([idat[0][:-10]], 30, 40, 3) is None


def test_damaged_png_is_an_error_not_a_damaged_picture(tmp_path: Path) -> None:
    image = np.random.default_rng(4).integers(0, 256, (420, 610, 3), dtype=np.uint8)
    ok, encoded = cv2.imencode(".png", image)
    assert ok
    data = bytearray(encoded.tobytes())
    # One byte changed inside the pixel data: the chunk's CRC no longer matches.
    data[len(data) // 2] ^= 0x55
    target = _write(tmp_path / "damaged.png", bytes(data))
    with pytest.raises(InputError, match="truncated or damaged") as info:
        load_pages(target)
    assert str(target) in info.value.message
    # Cut just before the end chunk: the rows it holds are read, and the page is said to be cut short.
    target = _write(tmp_path / "short.png", encoded.tobytes()[:-30])
    (cut,) = load_pages(target)
    assert isinstance(cut, PageImage) and cut.damage == PNG_TRUNCATED


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        load_pages(tmp_path / "absent.png")
    (tmp_path / "empty.png").write_bytes(b"")
    with pytest.raises(InputError, match="empty file"):
        load_pages(tmp_path / "empty.png")


def test_empty_pdf(tmp_path: Path) -> None:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument.new()
    buffer = io.BytesIO()
    document.save(buffer)
    target = tmp_path / "empty.pdf"
    target.write_bytes(buffer.getvalue())
    with pytest.raises(InputError) as info:
        load_pages(target)
    assert info.value.reason == "the PDF holds no page"


def _pdf_of_jpeg(jpeg: bytes, width: int, height: int) -> bytes:
    """A one-page PDF showing ``jpeg`` (its bytes as they are, damage and all) over the whole page."""
    content = f"q {width} 0 0 {height} 0 0 cm /Im0 Do Q".encode()
    objects = [
        b"<</Type/Catalog/Pages 2 0 R>>",
        b"<</Type/Pages/Kids[3 0 R]/Count 1>>",
        f"<</Type/Page/Parent 2 0 R/MediaBox[0 0 {width} {height}]/Resources<</XObject<</Im0 4 0 R>>>>"
        f"/Contents 5 0 R>>".encode(),
        f"<</Type/XObject/Subtype/Image/Width {width}/Height {height}/ColorSpace/DeviceGray/BitsPerComponent 8"
        f"/Filter/DCTDecode/Length {len(jpeg)}>>stream\n".encode() + jpeg + b"\nendstream",
        f"<</Length {len(content)}>>stream\n".encode() + content + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += f"trailer<</Size {len(objects) + 1}/Root 1 0 R>>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def test_a_pdf_page_whose_jpeg_picture_is_cut_short_says_so_as_it_is_read(tmp_path: Path) -> None:
    """A picture cut short is found at no cost (its end marker is missing) and noted; one missing only the end
    marker is whole."""
    data = _jpeg_bytes(_page())
    (tmp_path / "whole.pdf").write_bytes(_pdf_of_jpeg(data, 600, 450))
    (tmp_path / "open.pdf").write_bytes(_pdf_of_jpeg(data[:-2], 600, 450))
    (tmp_path / "cut.pdf").write_bytes(_pdf_of_jpeg(data[: len(data) // 2], 600, 450))
    for name in ("whole.pdf", "open.pdf"):
        (page,) = load_pages(tmp_path / name)
        assert isinstance(page, PageImage) and page.damage is None, name
    (cut,) = load_pages(tmp_path / "cut.pdf")
    assert isinstance(cut, PageImage)
    assert cut.damage == "the page's JPEG picture is truncated (its data ends before the picture does)"


def test_pdf_pictures_too_large_or_undecodable(tmp_path: Path) -> None:
    """A picture whose header claims 60000x60000 px is not decoded whole to look for damage; one whose header
    cannot be decoded is named as the page's problem (PDFium shows it as a blank page)."""
    data = _jpeg_bytes(_page())
    at = _frame_header(data)
    huge = data[:at + 5] + (60000).to_bytes(2, "big") * 2 + data[at + 9:]
    (tmp_path / "huge.pdf").write_bytes(_pdf_of_jpeg(huge, 600, 450))
    (page,) = load_pages(tmp_path / "huge.pdf")
    assert isinstance(page, PageImage) and picture_damage(page) is None
    headless = data[:at] + b"\xff\xfe\x00\x04ab" + data[data.index(b"\xff\xda"):]  # no frame header at all
    (tmp_path / "headless.pdf").write_bytes(_pdf_of_jpeg(headless, 600, 450))
    (blank,) = load_pages(tmp_path / "headless.pdf")
    assert isinstance(blank, PageImage)
    damage = picture_damage(blank)
    assert damage is not None and damage.startswith("the page's JPEG picture cannot be decoded (")


def test_a_pdf_after_a_few_bytes_of_junk_is_read(tmp_path: Path) -> None:
    pdf = _pdf_of_jpeg(_jpeg_bytes(_page()), 600, 450)
    (tmp_path / "mailed.pdf").write_bytes(b"\r\n--boundary\r\n\r\n" + pdf)
    (page,) = load_pages(tmp_path / "mailed.pdf")
    assert isinstance(page, PageImage) and page.dpi == 300.0 and page.image.shape[1] == 600 * 300 // 72


def test_encrypted_pdf(tmp_path: Path) -> None:
    from reportlab.lib import pdfencrypt
    from reportlab.pdfgen import canvas

    target = tmp_path / "locked.pdf"
    pdf = canvas.Canvas(str(target), encrypt=pdfencrypt.StandardEncryption("secret", "owner"))
    pdf.drawString(100, 100, "a recording note")
    pdf.showPage()
    pdf.save()
    with pytest.raises(InputError, match="encrypted") as info:
        load_pages(target)
    assert info.value.path == str(target)


def test_damaged_pdf(tmp_path: Path) -> None:
    target = tmp_path / "broken.pdf"
    target.write_bytes(b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n")
    with pytest.raises(InputError, match="PDF"):
        load_pages(target)


def test_too_small_page_is_a_page_error(tmp_path: Path) -> None:
    cv2.imwrite(str(tmp_path / "tiny.png"), np.full((120, 160), 255, np.uint8))
    (item,) = list(iter_pages(tmp_path / "tiny.png"))
    assert isinstance(item, PageError)
    assert "too small" in item.reason and item.where == "page 1"


def test_keep_freed_memory_is_harmless_and_once() -> None:
    """In a process of its own (an earlier call in this one makes it do nothing): glibc is told once, however
    often it is called, and allocating and freeing still work."""
    import subprocess
    import sys

    script = ("import ctypes\n"
              "import numpy as np\n"
              "from digitise.vision.images import keep_freed_memory\n"
              "real, opened = ctypes.CDLL, []\n"
              "ctypes.CDLL = lambda *a, **k: opened.append(a) or real(*a, **k)\n"
              "keep_freed_memory()\n"
              "keep_freed_memory()\n"
              "big = np.ones((3000, 3000, 3), np.uint8)\n"
              "del big\n"
              "again = np.ones((3000, 3000, 3), np.uint8)\n"
              "print(len(opened), int(again[-1, -1, -1]))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(int(sys.platform.startswith("linux"))), "1"]


def test_darkest_channel_and_histogram_match_numpy() -> None:
    rng = np.random.default_rng(7)
    colour = rng.integers(0, 256, (37, 53, 3), dtype=np.uint8)
    want = colour.min(axis=2)
    assert np.array_equal(images.darkest_channel(colour), want)
    assert np.array_equal(images.darkest_channel(colour[:, ::2]), want[:, ::2])  # not contiguous
    grey = rng.integers(0, 256, (41, 29), dtype=np.uint8)
    assert np.array_equal(images.darkest_channel(grey), grey)
    for image in (grey, grey[::2, ::3], grey[:0]):
        counts = images.histogram(image)
        assert counts.dtype == np.int64 and np.array_equal(counts, np.bincount(image.ravel(), minlength=256))


@pytest.mark.parametrize("keep", [0.3, 0.7])
@pytest.mark.filterwarnings("ignore:Corrupt EXIF data:UserWarning")  # pytest resets the module's own filter
def test_a_truncated_multi_page_tiff_is_a_bad_page_or_file_never_a_crash(tmp_path: Path, keep: float) -> None:
    """Pillow raises TypeError ("Missing dimensions") on a cut tag: that is damage, reported as such."""
    rng = np.random.default_rng(3)
    frames = [Image.fromarray((rng.random((400, 600)) * 255).astype(np.uint8)) for _ in range(3)]
    whole = io.BytesIO()
    frames[0].save(whole, format="TIFF", save_all=True, append_images=frames[1:], compression="tiff_deflate")
    data = whole.getvalue()
    target = tmp_path / "cut.tif"
    target.write_bytes(data[: int(len(data) * keep)])
    try:
        pages = load_pages(target)
    except InputError as exc:
        assert "cut.tif" in exc.message and "truncated or damaged" in exc.message
        return
    assert pages and isinstance(pages[-1], PageError)
    assert "truncated or damaged" in pages[-1].message and "cut.tif" in pages[-1].message


def _tiff(path: Path, image: Image.Image, **options: object) -> Path:
    image.save(path, format="TIFF", **options)
    return path


def test_deep_grey_tiffs_keep_their_grey_levels(tmp_path: Path) -> None:
    """16-bit, 32-bit and float grey TIFFs come out as the 8-bit page they hold, not clipped to white."""
    grey = _page(200)
    deep16 = grey.astype(np.uint16) * 257
    cases = {
        "i16.tif": Image.fromarray(deep16),  # Pillow mode I;16
        "i32.tif": Image.fromarray((grey.astype(np.int64) * (2**31 - 1) // 255).astype(np.int32)),  # mode I, signed
        "f01.tif": Image.fromarray(grey.astype(np.float32) / 255.0),  # mode F in 0..1
        "f16.tif": Image.fromarray(deep16.astype(np.float32)),  # mode F in 0..65535
    }
    for name, frame in cases.items():
        (page,) = load_pages(_tiff(tmp_path / name, frame))
        assert isinstance(page, PageImage) and page.image.dtype == np.uint8, name
        assert np.abs(page.image.astype(int) - grey).max() <= 1, name


def test_float_tiffs_with_stray_values_keep_their_page(tmp_path: Path) -> None:
    """One infinite or huge pixel must neither crash the reader nor darken the page; all NaN is refused."""
    grey = _page(200)
    for name, value in (("inf.tif", np.inf), ("hot.tif", 3e38), ("nan.tif", np.nan)):
        frame = grey.astype(np.float32) / 255.0
        frame[5, 5] = value
        (page,) = load_pages(_tiff(tmp_path / name, Image.fromarray(frame)))
        assert isinstance(page, PageImage), name
        rest = np.ones(grey.shape, bool)
        rest[5, 5] = False
        assert np.abs(page.image.astype(int) - grey)[rest].max() <= 1, name
    (bad,) = load_pages(_tiff(tmp_path / "void.tif", Image.fromarray(np.full(grey.shape, np.nan, np.float32))))
    assert isinstance(bad, DigitiseError) and "no pixel holds a number" in bad.message


def test_big_endian_and_signed_16_bit_tiffs(tmp_path: Path) -> None:
    tifffile = pytest.importorskip("tifffile")
    grey = _page(200)
    tifffile.imwrite(tmp_path / "be.tif", grey.astype(">u2") * 257)
    tifffile.imwrite(tmp_path / "s16.tif", (grey.astype(np.int16) * 128).astype(np.int16))
    for name in ("be.tif", "s16.tif"):
        (page,) = load_pages(tmp_path / name)
        assert isinstance(page, PageImage), name
        assert np.abs(page.image.astype(int) - grey).max() <= 1, name


def test_a_page_over_the_pixel_limit_is_refused_before_decoding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every format says how large the image is and what the limit is, naming the file."""
    monkeypatch.setattr(page_image, "MAX_PAGE_PIXELS", 1_000_000)
    big = _page(230, (1250, 1000))
    cv2.imwrite(str(tmp_path / "big.png"), big)
    cv2.imwrite(str(tmp_path / "big.jpg"), big)
    cv2.imwrite(str(tmp_path / "big.bmp"), big)
    for name in ("big.png", "big.jpg", "big.bmp"):
        with pytest.raises(InputError) as info:
            load_pages(tmp_path / name)
        assert info.value.message == (f"{tmp_path / name}: image too large: 1250x1000 px, 1.2 megapixels "
                                      "(over the 1.0-megapixel limit)")
    # In a multi-page TIFF the large page is refused and the others still read.
    frames = [Image.fromarray(_page(200)), Image.fromarray(big), Image.fromarray(_page(220))]
    frames[0].save(tmp_path / "pages.tif", save_all=True, append_images=frames[1:])
    first, second, third = load_pages(tmp_path / "pages.tif")
    assert isinstance(first, PageImage) and isinstance(third, PageImage)
    assert isinstance(second, PageError) and second.where == "page 2"
    assert second.reason == "image too large: 1250x1000 px, 1.2 megapixels (over the 1.0-megapixel limit)"


def test_a_png_that_would_decode_too_large_is_refused_before_decoding(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 4.5 MB PNG of 24000 x 24000 16-bit RGBA pixels is under the pixel limit, and decoded it took a batch
    to 23 GB. Its header says what it would take; the limit is on that. (Here both limits scaled down.)"""
    monkeypatch.setattr(page_image, "MAX_PAGE_BYTES", 4_000_000)
    rgba = np.full((1000, 1000, 4), 65535, np.uint16)
    cv2.imwrite(str(tmp_path / "deep.png"), rgba)
    with pytest.raises(InputError) as info:
        load_pages(tmp_path / "deep.png")
    assert info.value.message == (f"{tmp_path / 'deep.png'}: image too large: 1000x1000 px at 64 bits a pixel "
                                  "would take 0.0 GB decoded (over the 0.0 GB limit): save it with 8 bits a "
                                  "channel, or at a lower resolution")
    import tifffile

    tifffile.imwrite(tmp_path / "deep.tif", rgba[:, :, :3])  # 16-bit RGB: 6 MB decoded
    monkeypatch.setattr(page_image, "MAX_PAGE_BYTES", 2_500_000)  # what it decodes to, however it is decoded
    (refused,) = load_pages(tmp_path / "deep.tif")  # a TIFF's pages are refused one by one
    assert isinstance(refused, PageError)
    assert re.match(r"image too large: 1000x1000 px at (24|48) bits a pixel would take", refused.reason)
    cv2.imwrite(str(tmp_path / "plain.png"), _page(230, (1000, 1000)))  # 1 MB of grey: read
    (page,) = load_pages(tmp_path / "plain.png")
    assert isinstance(page, PageImage)


def test_transparency_is_composited_onto_white_a_slice_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(page_image, "ALPHA_ROWS", 7)
    rng = np.random.default_rng(3)
    rgba = rng.integers(0, 256, (50, 40, 4), dtype=np.uint8)
    alpha = rgba[:, :, 3:4].astype(np.float32) / 255.0
    expected = (rgba[:, :, :3].astype(np.float32) * alpha + 255.0 * (1.0 - alpha)).astype(np.uint8)
    assert np.array_equal(page_image.to_uint8(rgba), expected)


def test_pillows_own_size_limit_neither_warns_nor_refuses_a_page_under_ours(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pillow warns past 89 megapixels and refuses past 179: a 1200-dpi A4 scan (139) is a page like any other.

    Pillow's limit is lowered here so a small image stands for a large scan.
    """
    import warnings

    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 50_000)
    target = _tiff(tmp_path / "scan.tif", Image.fromarray(_page(210, (800, 600))))  # 480,000 px: over twice Pillow's
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (page,) = load_pages(target)
        assert images.page_count(target) == 1
    assert isinstance(page, PageImage) and page.image.shape == (600, 800)


def test_png_chunk_damage(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """A critical chunk with a bad CRC is refused by us (the fast path or not); a bad ancillary chunk is dropped.

    libpng would print its own "libpng error" or "libpng warning" on stderr: nothing reaches it.
    """
    import struct
    import zlib

    image = np.random.default_rng(8).integers(0, 256, (420, 610), dtype=np.uint8)
    for name, pixels in (("grey.png", image), ("deep.png", image.astype(np.uint16) * 257)):
        ok, encoded = cv2.imencode(".png", pixels)
        assert ok
        data = bytearray(encoded.tobytes())
        data[data.index(b"IDAT") + 100] ^= 0x55
        with pytest.raises(InputError, match=r"truncated or damaged file: the IDAT chunk fails its CRC check"):
            load_pages(_write(tmp_path / name, bytes(data)))
        # A text chunk whose CRC is wrong, before the pixels: the picture is whole.
        body = b"Comment\x00scanned"
        text = struct.pack(">I", len(body)) + b"tEXt" + body + struct.pack(">I", zlib.crc32(b"tEXt" + body) ^ 1)
        whole = encoded.tobytes()
        (page,) = load_pages(_write(tmp_path / f"text-{name}", whole[:33] + text + whole[33:]))
        assert isinstance(page, PageImage)
        assert np.abs(page.image.astype(int) - image).max() <= 1
    assert capfd.readouterr().err == ""


def test_a_damaged_png_gives_one_line_on_stderr(tmp_path: Path) -> None:
    """The whole command, stderr as the user sees it (libpng writes to the file descriptor, not to Python)."""
    import subprocess
    import sys

    ok, encoded = cv2.imencode(".png", _page(210))
    assert ok
    data = bytearray(encoded.tobytes())
    data[data.index(b"IDAT") + 40] ^= 0x55
    target = _write(tmp_path / "damaged.png", bytes(data))
    done = subprocess.run([sys.executable, "-m", "digitise.cli", "read", str(target), "-o", str(tmp_path / "r.json")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 3
    want = (f"digitise: error: {target}: cannot decode the image (truncated or damaged file: "
            "the IDAT chunk fails its CRC check)")
    assert done.stderr.splitlines() == [want]


def test_dithered_bilevel_pages_are_told_from_thresholded_ones() -> None:
    """Dithering draws grey as lone dots; a thresholded page's black pixels are strokes and lines."""
    rng = np.random.default_rng(9)
    grey = np.full((600, 800), 245, np.uint8)
    cv2.rectangle(grey, (100, 100), (700, 500), 150, 2)  # a light printed frame
    cv2.putText(grey, "53", (300, 330), cv2.FONT_HERSHEY_SIMPLEX, 4, 20, 8)
    dithered = np.asarray(Image.fromarray(grey).convert("1").convert("L"))  # Floyd-Steinberg
    thresholded = np.where(grey > 200, 255, 0).astype(np.uint8)
    assert images.is_dithered(dithered)
    assert not images.is_dithered(thresholded)
    # Not bilevel: grey pages, a noisy grey page, colour pages are never blurred.
    assert not images.is_dithered(grey)
    assert not images.is_dithered(rng.integers(0, 256, grey.shape, dtype=np.uint8))
    assert not images.is_dithered(cv2.cvtColor(dithered, cv2.COLOR_GRAY2BGR))
    assert not images.is_dithered(np.full((600, 800), 255, np.uint8))
    # Blurred back, the paper is near white and the frame grey again.
    smooth = images.undither(dithered)
    assert smooth.dtype == np.uint8 and smooth.shape == grey.shape
    assert abs(float(smooth[250:300, 150:250].mean()) - 245) < 6
    assert 120 < float(smooth[300, 99:102].mean()) < 230


def _set_tiff_tag(data: bytes, frame: int, tag: int, value: int) -> bytes:
    """``data`` (a little-endian TIFF) with a SHORT tag of directory ``frame`` set to ``value``."""
    out = bytearray(data)
    at = int.from_bytes(out[4:8], "little")
    for _ in range(frame):
        at = int.from_bytes(out[at + 2 + 12 * int.from_bytes(out[at:at + 2], "little"):][:4], "little")
    for entry in range(int.from_bytes(out[at:at + 2], "little")):
        where = at + 2 + 12 * entry
        if int.from_bytes(out[where:where + 2], "little") == tag:
            out[where + 2:where + 12] = (3).to_bytes(2, "little") + (1).to_bytes(4, "little") + value.to_bytes(
                2, "little") + b"\0\0"
            return bytes(out)
    raise AssertionError(f"no tag {tag}")


def test_a_multi_page_tiff_goes_on_past_a_page_it_cannot_read(tmp_path: Path) -> None:
    """Page 2 is compressed in a way not read (JPEG 2000): it is named, and pages 3 and 4 are still read."""
    frames = [Image.fromarray(_page(value)) for value in (170, 190, 210, 230)]
    buffer = io.BytesIO()
    frames[0].save(buffer, format="TIFF", save_all=True, append_images=frames[1:])
    target = tmp_path / "pages.tif"
    target.write_bytes(_set_tiff_tag(buffer.getvalue(), 1, 259, 34712))
    pages = load_pages(target)
    assert [type(page).__name__ for page in pages] == ["PageImage", "PageError", "PageImage", "PageImage"]
    assert isinstance(pages[1], PageError)
    assert pages[1].reason == "the TIFF is compressed as JPEG2000, which digitise does not read"
    assert [int(page.image[10, 10]) for page in pages if isinstance(page, PageImage)] == [170, 210, 230]


def test_tiffs_pillow_does_not_read_are_read_by_tifffile(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Floating-point colour, and a scanner's 90 samples a pixel (Pillow logs an error of its own for those)."""
    import tifffile

    grey = _page().astype(np.float32) / 255.0
    tifffile.imwrite(tmp_path / "float.tif", np.dstack([grey, grey, grey]), photometric="rgb")
    many = np.repeat(_page()[:, :, None], 90, axis=2)
    tifffile.imwrite(tmp_path / "many.tif", many, photometric="minisblack", planarconfig="contig")
    with caplog.at_level("DEBUG"):
        for name in ("float.tif", "many.tif"):
            (page,) = load_pages(tmp_path / name)
            assert isinstance(page, PageImage), name
            assert np.abs(page.grey.astype(int) - _page().astype(int)).max() <= 1, name
    assert [record for record in caplog.records if record.levelno >= 30] == []


def test_png_the_fast_decoder_leaves_to_libpng_keeps_libpng_quiet(tmp_path: Path,
                                                                    capfd: pytest.CaptureFixture[str]) -> None:
    """A palette PNG goes to OpenCV's libpng: its warnings (a short colour profile) are not shown, and its error
    (damaged picture data) becomes the reason."""
    palette = Image.fromarray(_page()).convert("P")
    buffer = io.BytesIO()
    palette.save(buffer, "PNG")
    data = buffer.getvalue()
    iend = data.index(b"IHDR") + 4 + 13 + 4
    iccp = b"iCCPx\0\0\x78\x9c"
    chunk = len(iccp[4:]).to_bytes(4, "big") + iccp + zlib.crc32(iccp).to_bytes(4, "big")
    (tmp_path / "profile.png").write_bytes(data[:iend] + chunk + data[iend:])
    (page,) = load_pages(tmp_path / "profile.png")
    assert isinstance(page, PageImage)
    at = data.index(b"IDAT")
    length = int.from_bytes(data[at - 4:at], "big")
    body = bytearray(data[at:at + 4 + length])
    body[6:10] = b"\xff\xff\xff\xff"  # inflate fails, the chunk's CRC still right
    broken = data[:at] + bytes(body) + zlib.crc32(bytes(body)).to_bytes(4, "big") + data[at + 8 + length:]
    (tmp_path / "broken.png").write_bytes(broken)
    with pytest.raises(InputError) as info:
        load_pages(tmp_path / "broken.png")
    assert info.value.reason.startswith("cannot decode the image (truncated or damaged file: ")
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize(("head", "said"), [
    (b"BMW service record, 2024\n" + b"x" * 40, "not an image or PDF (expected PNG, JPEG, TIFF, BMP, WebP or PDF)"),
    (b"\0\0\0\x18ftypheic\0\0\0\0mif1heic" + b"\0" * 40, "a HEIC image, which digitise does not read"),
    (b"\0\0\0\x1cftypavif\0\0\0\0avifmif1" + b"\0" * 40, "an AVIF image, which digitise does not read"),
    (b"GIF89a" + b"\0" * 40, "a GIF image, which digitise does not read"),
    (b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>', "an SVG drawing, which digitise"),
])
def test_files_not_read_are_named_for_what_they_are(tmp_path: Path, head: bytes, said: str) -> None:
    target = tmp_path / "page.png"
    target.write_bytes(head)
    with pytest.raises(InputError) as info:
        load_pages(target)
    assert info.value.reason.startswith(said)


def test_devices_and_pipes(tmp_path: Path) -> None:
    """A device is refused, not read until memory runs out; a named pipe nobody writes to is empty, not a hang;
    a pipe being written (a shell's ``<(command)``) is read."""
    import os
    import threading

    with pytest.raises(InputError) as info:
        load_pages("/dev/zero")
    assert info.value.reason == "not a file (a device or socket)"
    fifo = tmp_path / "fifo.png"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="empty: a named pipe nothing was written to"):
        load_pages(fifo)
    ok, encoded = cv2.imencode(".png", _page())
    assert ok
    read_end, write_end = os.pipe()

    def write() -> None:
        with os.fdopen(write_end, "wb") as out:
            out.write(encoded.tobytes())

    writer = threading.Thread(target=write)
    writer.start()
    try:
        (page,) = load_pages(f"/dev/fd/{read_end}")
    finally:
        writer.join()
        os.close(read_end)
    assert isinstance(page, PageImage) and np.array_equal(page.image, _page())


def _note_like(paper: int = 235, line: int = 120, ink: int = 40) -> np.ndarray:
    """A page-sized picture with ruled lines and a few dark strokes on paper."""
    image = np.full((900, 640, 3), paper, np.uint8)
    for y in range(100, 800, 60):
        cv2.line(image, (60, y), (580, y), (line, line, line), 2)
    for x in range(60, 600, 40):
        cv2.line(image, (x, 100), (x, 760), (line, line, line), 2)
    cv2.putText(image, "5 3 6", (120, 170), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (ink, ink // 2, 0), 3)
    return image


def test_a_good_page_and_a_blank_one_are_not_levelled() -> None:
    assert images.level_faint(_note_like()) is None
    grain = np.random.default_rng(3).integers(238, 246, (900, 640), dtype=np.uint8)
    assert images.level_faint(grain) is None  # blank: levelling would make marks of its grain


def test_a_washed_out_page_is_levelled_to_a_good_scans_levels() -> None:
    good = _note_like()
    faded = np.clip(good.astype(np.float32) * 0.2 + 190.0, 0, 255).astype(np.uint8)
    darkest, paper = images.page_levels(faded)
    assert 1.0 - darkest / paper < images.FAINT_PAGE
    result = images.level_faint(faded)
    assert result is not None
    levelled, before = result
    assert levelled.shape == faded.shape and levelled.dtype == np.uint8
    assert before == round(1.0 - darkest / paper, 4)
    darkest, paper = images.page_levels(levelled)
    assert abs(paper - images.LEVELLED_PAPER) <= 2 and abs(darkest - images.LEVELLED_DARKEST) <= 8
    # One map for every channel, and it keeps the order of grey levels: ink stays darker than lines,
    # lines than paper, and blue ink stays blue.
    ink, line, blank = levelled[150, 130], levelled[100, 300], levelled[50, 50]
    assert int(ink[0]) > int(ink[2]) and int(line[0]) < int(blank[0])


def test_a_washed_out_file_is_levelled_when_loaded(tmp_path: Path) -> None:
    faded = np.clip(_note_like().astype(np.float32) * 0.2 + 190.0, 0, 255).astype(np.uint8)
    cv2.imwrite(str(tmp_path / "faded.png"), faded)
    (page,) = load_pages(tmp_path / "faded.png")
    assert isinstance(page, PageImage)
    assert not np.array_equal(page.image, faded)
    assert 1.0 - np.divide(*images.page_levels(page.image)) > images.FAINT_PAGE


SAMPLE_PDF = Path(__file__).resolve().parents[2] / "samples" / "chen-dana" / "medium" / "pages.pdf"


def test_a_scanners_pdf_cut_short_is_read_from_the_page_pictures_left(tmp_path: Path) -> None:
    """A PDF's index is at its end: cut short it would not open, and every page was lost. A scanner's PDF
    stores each page as one JPEG; those before the cut are read in the order stored, the cut one as far as
    it goes, and the first page says what happened."""
    data = SAMPLE_PDF.read_bytes()
    whole = cut_pdf_pictures(data)
    assert len(whole) == 5
    target = tmp_path / "cut.pdf"
    target.write_bytes(data[: len(data) * 9 // 10])
    items = list(iter_pages(target))
    assert [type(item) for item in items] == [PageImage] * 5
    pages = [item for item in items if isinstance(item, PageImage)]
    for page, picture in zip(pages[:4], whole[:4], strict=True):
        assert np.array_equal(page.image, cv2.imdecode(np.frombuffer(picture, np.uint8), cv2.IMREAD_COLOR))
    assert pages[0].damage == CUT_PDF.format(count=5, pictures="pictures")
    assert [page.damage for page in pages[1:4]] == [None] * 3
    assert pages[4].damage == "the page's JPEG picture is truncated (its data ends before the picture does)"
    assert page_count(target) == 5


def test_a_pdf_cut_short_with_no_page_picture_is_refused(tmp_path: Path) -> None:
    """A vector PDF (the printed note) holds no picture to read: cut short, it is refused as before."""
    from digitise.notation.template import load_template
    from digitise.sheet.printing import template_pdf

    data = template_pdf(load_template("a4"))
    target = tmp_path / "cut.pdf"
    target.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="cannot open the PDF: it is damaged, cut short or not a PDF") as info:
        list(iter_pages(target))
    assert str(target) in info.value.message


def _pdf_picture_object(number: int, jpeg: bytes, length: bytes) -> bytes:
    return (b"%d 0 obj\n<< /Type /XObject /Subtype /Image /Width 8 /Height 8 /ColorSpace /DeviceGray "
            b"/BitsPerComponent 8 /Filter /DCTDecode /Length " % number + length + b" >>\nstream\n" + jpeg
            + b"\nendstream\nendobj\n")


def test_a_cut_pdfs_pictures_are_found_whatever_their_length_is_written_as() -> None:
    """"/Length 12 0 R" (the length in another object, as writers that stream their output put it) was read
    as a length of 1: the picture was dropped, and the note said the pages after the cut were lost."""
    jpeg = simplejpeg.encode_jpeg(np.full((8, 8, 1), 200, np.uint8), colorspace="GRAY")
    objects = [_pdf_picture_object(n, jpeg, b"%d 0 R" % (n + 100)) for n in (3, 12, 123)]
    objects.append(_pdf_picture_object(7, jpeg, b"%d" % len(jpeg)))
    data = b"%PDF-1.4\n" + b"".join(objects)
    assert cut_pdf_pictures(data) == [jpeg] * 4


def test_a_cut_pdfs_picture_too_large_to_decode_is_a_bad_page(tmp_path: Path) -> None:
    """The page-size limit every other picture has: a JPEG declaring 30,000 x 30,000 pixels was decoded."""
    jpeg = bytearray(simplejpeg.encode_jpeg(np.full((8, 8, 1), 200, np.uint8), colorspace="GRAY"))
    sof = jpeg.index(b"\xff\xc0")
    jpeg[sof + 5:sof + 9] = (30000).to_bytes(2, "big") * 2
    target = tmp_path / "cut.pdf"
    target.write_bytes(b"%PDF-1.4\n" + _pdf_picture_object(3, bytes(jpeg), b"%d" % len(jpeg)))
    (page,) = iter_pages(target)
    assert isinstance(page, PageError) and page.reason.startswith("image too large"), page


class _RecordedMemory:
    """Page memory that records what each page held, and when it let go."""

    def __init__(self) -> None:
        self.events: list[str] = []

    def hold(self, nbytes: int) -> Any:
        import contextlib

        @contextlib.contextmanager
        def held() -> Any:
            self.events.append(f"hold {nbytes}")
            try:
                yield
            finally:
                self.events.append(f"free {nbytes}")

        return held()


def test_a_page_holds_its_peak_in_the_shared_page_memory_while_it_is_read(tmp_path: Path) -> None:
    """A batch's N workers each held a decoded page of up to 600 megapixels (3.4 GB at its peak) at once,
    with nothing to cap the total: each page now holds its peak in the memory the batch shares while it is
    decoded and read, and lets go when the next page is asked for."""
    png, tiff = tmp_path / "p.png", tmp_path / "p.tif"
    cv2.imwrite(str(png), np.full((600, 500, 3), 200, np.uint8))
    Image.new("L", (500, 600), 255).save(tiff, save_all=True, append_images=[Image.new("L", (500, 600), 255)])
    memory = _RecordedMemory()
    before = images.share_page_memory(memory)
    try:
        pages = images.iter_pages(png)
        next(pages)
        peak = int(600 * 500 * 3 * images.PAGE_PEAK_FACTOR)
        assert memory.events == [f"hold {peak}"]  # held while the page is read
        assert list(pages) == [] and memory.events == [f"hold {peak}", f"free {peak}"]
        memory.events.clear()
        assert len(list(images.iter_pages(tiff))) == 2
        peak = int(600 * 500 * images.PAGE_PEAK_FACTOR)
        assert memory.events == [f"hold {peak}", f"free {peak}"] * 2
    finally:
        assert images.share_page_memory(before) is memory
