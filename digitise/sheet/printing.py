"""Draw the blank recording note: a vector PDF for printing and a raster image.

Both drawings come from the same :class:`~digitise.notation.template.Template`
through one list of primitives (:func:`sheet_primitives`), so a cell lands
where the geometry says in either: the PDF is exact (vector, page size to the
hundredth of a millimetre, meant to print at 100 %), the raster image places
every line and marker with sub-pixel anti-aliasing at the requested
resolution (the synthetic sheets are drawn on it directly).

What is printed: the four ArUco markers, thin mid-grey cell lines with a
thicker line between the 7 and 6 squares, small locating dots above and
below each point column, each board's index in the middle row under
``Bres``, light header labels over the header boxes, a one-line legend of
the convention in the header band, and small light point numbers outside
the rows (White's count, the recorder's: 13-24 along the top row, 12-1
along the bottom) beside the dots, further from the squares than a cell's
image reaches (:data:`NUMBER_GAP_MM`).
"""

from __future__ import annotations

import functools
import io
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from digitise.errors import InputError, OptionError
from digitise.fileio import write_atomic
from digitise.notation.template import Rect, Template, px_per_mm
from digitise.sheet.layout import FIELD_LABELS

#: Grey level of the cell lines (0 black, 1 white) when the file gives none.
LINE_GREY = 0.55
LINE_MM = 0.2
THICK_LINE_MM = 0.5
DOT_RADIUS_MM = 0.35
LABEL_GREY = 0.6
INDEX_GREY = 0.45
#: Text heights (cap height) in mm.
LABEL_MM = 1.7
INDEX_MM = 3.4
FOOTER_MM = 1.5
LEGEND_MM = 1.4
NUMBER_GREY = 0.6
NUMBER_MM = 1.1
#: The point numbers' nearest edge lies this far (mm) outside their row: beyond the margin a cell's image
#: keeps around its square (1.5 mm, vision.ink), beside the locating dots (1.6 +- 0.35 mm) and not touching them.
NUMBER_GAP_MM = 2.0
#: The point numbers start this far (mm) right of their column's centre, where its locating dot is.
NUMBER_BESIDE_DOT_MM = 0.8
#: The legend printed in the header band, above the event box.
LEGEND = ("one board per turn; write each die where its checker lands; "
          "cross out dice that cannot be played; arrow = double")


@dataclass(frozen=True, slots=True)
class Line:
    """An axis-aligned line from (x0, y0) to (x1, y1), ``width`` mm thick, centred on the segment."""

    x0: float
    y0: float
    x1: float
    y1: float
    width: float
    grey: float


@dataclass(frozen=True, slots=True)
class Dot:
    """A filled dot."""

    x: float
    y: float
    radius: float
    grey: float


@dataclass(frozen=True, slots=True)
class Text:
    """A line of text: ``x`` is its left edge (or centre when ``centred``), ``y`` its baseline."""

    text: str
    x: float
    y: float
    height: float
    grey: float
    centred: bool = False


@dataclass(frozen=True, slots=True)
class MarkerDrawing:
    """An ArUco marker: ``bits`` is its 6x6 black (0) / white (1) grid, border included."""

    rect: Rect
    bits: tuple[tuple[int, ...], ...]


@dataclass(frozen=True, slots=True)
class Primitives:
    """Everything printed on the blank note."""

    lines: tuple[Line, ...]
    dots: tuple[Dot, ...]
    texts: tuple[Text, ...]
    markers: tuple[MarkerDrawing, ...]


def marker_bits(marker_id: int) -> tuple[tuple[int, ...], ...]:
    """The 6x6 bit grid (1 = white) of ``marker_id`` in OpenCV's ``DICT_4X4_50``."""
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    image = cv2.aruco.generateImageMarker(dictionary, marker_id, 6)
    return tuple(tuple(int(v > 127) for v in row) for row in image)


def _grid_lines(template: Template, *, grey: float, width: float, thick: float) -> list[Line]:
    lines: list[Line] = []
    for board in template.boards:
        cells = board.cells
        for row in ("B", "W"):
            res, off = cells[f"{row}res"], cells[f"{row}off"]
            top, bottom = res.y, res.bottom
            left, right = min(res.x, off.x), max(res.right, off.right)
            lines.append(Line(left, top, right, top, width, grey))
            lines.append(Line(left, bottom, right, bottom, width, grey))
            # Every cell's sides, left to right (a mirrored print has its off square on the left).
            order = [res, *(cells[f"{row}{p}"] for p in range(12, 0, -1)), off]
            if off.x < res.x:
                order.reverse()
            edges = [order[0].x] + [cell.right for cell in order]
            six, seven = cells[f"{row}6"], cells[f"{row}7"]
            between = six.x if abs(six.x - seven.right) < 1e-6 else six.right
            for x in edges:
                w = thick if abs(x - between) < 1e-6 else width
                lines.append(Line(x, top, x, bottom, w, grey))
        centre = cells["centre"]
        lines.append(Line(centre.x, centre.y, centre.x, centre.bottom, width, grey))
        lines.append(Line(centre.right, centre.y, centre.right, centre.bottom, width, grey))
    for rect in template.fields.values():
        lines.extend(_box(rect, width, grey))
    return lines


def _box(rect: Rect, width: float, grey: float) -> list[Line]:
    return [
        Line(rect.x, rect.y, rect.right, rect.y, width, grey),
        Line(rect.x, rect.bottom, rect.right, rect.bottom, width, grey),
        Line(rect.x, rect.y, rect.x, rect.bottom, width, grey),
        Line(rect.right, rect.y, rect.right, rect.bottom, width, grey),
    ]


def sheet_primitives(
    template: Template, *, markers: bool = True, line_grey: float | None = None, labels: bool = True,
    extras: tuple[Text, ...] = (),
) -> Primitives:
    """What the blank note prints, in millimetres.

    ``markers=False`` and a darker ``line_grey`` give the photocopy look of
    an old note; ``labels=False`` leaves out the header labels and footer;
    ``extras`` is more text printed (another print's point numbers and row labels).
    """
    style = template.style
    grey = float(style.get("line_grey", LINE_GREY)) if line_grey is None else line_grey
    width = float(style.get("line_mm", LINE_MM))
    thick = float(style.get("thick_line_mm", THICK_LINE_MM))
    radius = float(style.get("dot_radius_mm", DOT_RADIUS_MM))
    lines = _grid_lines(template, grey=grey, width=width, thick=thick)
    dots = tuple(Dot(x, y, radius, grey) for board in template.boards for x, y in board.dots)
    texts: list[Text] = []
    for board in template.boards:
        label = board.label or board.cells["Bres"].union(board.cells["Wres"])
        cx, cy = label.centre
        texts.append(Text(str(board.index), cx, cy + INDEX_MM / 2, INDEX_MM, min(grey, INDEX_GREY), centred=True))
    if labels:
        for name, rect in template.fields.items():
            where = template.field_labels.get(name)
            y = where.bottom - 0.5 if where is not None else rect.y - 0.5
            texts.append(Text(FIELD_LABELS.get(name, name), rect.x + 0.3, y, LABEL_MM, LABEL_GREY))
        texts.extend(_point_numbers(template))
        event = template.field_labels.get("event")
        if event is not None:
            # Centred over the event box's label strip, clear of its "Event" label at the left.
            texts.append(Text(LEGEND, event.centre[0], event.bottom - 0.5, LEGEND_MM, LABEL_GREY, centred=True))
        page_w, page_h = template.page_mm
        footer = (f"digitise recording note - {template.name} - "
                  "point numbers are White's, the recorder's: the bottom row is White's home side")
        texts.append(Text(footer, page_w / 2, page_h - 8.5, FOOTER_MM, LABEL_GREY, centred=True))
    texts.extend(extras)
    drawings = tuple(MarkerDrawing(m.rect, marker_bits(m.id)) for m in template.markers) if markers else ()
    return Primitives(tuple(lines), dots, tuple(texts), drawings)


def _point_numbers(template: Template) -> list[Text]:
    """White's point number of every point square, above the top row and below the bottom row."""
    texts: list[Text] = []
    for board in template.boards:
        for p in range(1, 13):
            top, bottom = board.cells[f"B{p}"], board.cells[f"W{p}"]
            # B{p} is White's 25 - p point (Black's p point), W{p} White's p point.
            # Beside the column's dot, not over it: a number touching the dot would join the dot to it, and
            # a page read without markers finds its boards as outlines that nothing printed may touch.
            x = top.centre[0] + NUMBER_BESIDE_DOT_MM
            texts.append(Text(str(25 - p), x, top.y - NUMBER_GAP_MM, NUMBER_MM, NUMBER_GREY))
            texts.append(Text(str(p), x, bottom.bottom + NUMBER_GAP_MM + NUMBER_MM, NUMBER_MM, NUMBER_GREY))
    return texts


# --- PDF ---------------------------------------------------------------------------------


def template_pdf(template: Template, *, pages: int = 1) -> bytes:
    """The blank note as a vector PDF, page size exactly ``template.page_mm``.

    Deterministic (reportlab's invariant mode: no timestamps, fixed IDs).
    """
    # imported here: reportlab (~40 ms) is loaded only when a PDF is made
    from reportlab.lib.units import mm
    from reportlab.pdfgen import canvas

    page_w, page_h = template.page_mm
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=(page_w * mm, page_h * mm), invariant=1, pageCompression=1)
    pdf.setTitle(f"Game Recording Note ({template.name})")
    pdf.setAuthor("digitise")
    prims = sheet_primitives(template)
    for _ in range(pages):
        _draw_pdf_page(pdf, prims, page_h, mm)
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def _draw_pdf_page(pdf: Any, prims: Primitives, page_h: float, mm: float) -> None:
    # imported here: reportlab (~40 ms) is loaded only when a PDF is made
    from reportlab.pdfbase.pdfmetrics import stringWidth

    c = pdf  # reportlab's Canvas: Any, because reportlab ships no stubs

    def y(v: float) -> float:
        return (page_h - v) * mm

    c.setLineCap(2)  # projecting caps: lines meet at corners
    for line in prims.lines:
        c.setStrokeGray(line.grey)
        c.setLineWidth(line.width * mm)
        c.line(line.x0 * mm, y(line.y0), line.x1 * mm, y(line.y1))
    for dot in prims.dots:
        c.setFillGray(dot.grey)
        c.circle(dot.x * mm, y(dot.y), dot.radius * mm, stroke=0, fill=1)
    for text in prims.texts:
        # Helvetica's cap height is 0.718 em.
        size = text.height / 0.718 * mm
        c.setFillGray(text.grey)
        c.setFont("Helvetica", size)
        x = text.x * mm
        if text.centred:
            x -= stringWidth(text.text, "Helvetica", size) / 2
        c.drawString(x, y(text.y), text.text)
    c.setFillGray(0)
    for marker in prims.markers:
        cell = marker.rect.w / 6
        # The whole square black, then the white bits on top: no hairline gaps between bits.
        c.rect(marker.rect.x * mm, y(marker.rect.bottom), marker.rect.w * mm, marker.rect.h * mm,
               stroke=0, fill=1)
        c.setFillGray(1)
        for r, row in enumerate(marker.bits):
            for k, bit in enumerate(row):
                if bit:
                    x0 = marker.rect.x + k * cell
                    y1 = marker.rect.y + (r + 1) * cell
                    c.rect(x0 * mm, y(y1), cell * mm, cell * mm, stroke=0, fill=1)
        c.setFillGray(0)


# --- raster ------------------------------------------------------------------------------


def _coverage(start: float, stop: float, size: int) -> tuple[int, np.ndarray]:
    """Per-pixel coverage of the interval [start, stop) in pixel units: (first pixel, weights)."""
    first = max(int(np.floor(start)), 0)
    last = min(int(np.ceil(stop)), size)
    if last <= first:
        return first, np.zeros(0, dtype=np.float32)
    edges = np.arange(first, last + 1, dtype=np.float32)
    lo = np.maximum(edges[:-1], start)
    hi = np.minimum(edges[1:], stop)
    return first, np.clip(hi - lo, 0.0, 1.0).astype(np.float32)


def paint_rect(dark: np.ndarray, x0: float, y0: float, x1: float, y1: float, darkness: float) -> None:
    """Darken ``dark`` over a pixel rectangle, anti-aliased at its edges.

    ``dark`` is float32 (0 white .. 1 black) or uint8 (0 white .. 255 black).
    """
    h, w = dark.shape
    cx0, wx = _coverage(x0, x1, w)
    cy0, wy = _coverage(y0, y1, h)
    if not wx.size or not wy.size:
        return
    region = dark[cy0:cy0 + wy.size, cx0:cx0 + wx.size]
    values = np.outer(wy, wx) * darkness
    if dark.dtype == np.uint8:
        np.maximum(region, (values * 255 + 0.5).astype(np.uint8), out=region)
    else:
        np.maximum(region, values, out=region)


def render_template(
    template: Template,
    dpi: float,
    *,
    markers: bool = True,
    line_grey: float | None = None,
    labels: bool = True,
    extras: tuple[Text, ...] = (),
) -> np.ndarray:
    """The blank note as a greyscale image (uint8, white paper) at ``dpi``.

    Pixel (i, j) covers [j, j+1) x [i, i+1) in pixel units, and a point at
    (x, y) mm lies at (x, y) * dpi / 25.4 pixels: the homography of
    :func:`~digitise.notation.template.mm_to_px_matrix`. Cached per arguments;
    the returned array is read-only (copy it before drawing on it).
    """
    return _render_template(template, float(dpi), markers, line_grey, labels, extras)


@functools.lru_cache(maxsize=16)
def _render_template(
    template: Template, dpi: float, markers: bool, line_grey: float | None, labels: bool, extras: tuple[Text, ...]
) -> np.ndarray:
    s = px_per_mm(dpi)
    width, height = template.page_px(dpi)
    # One uint8 "darkness" layer (0 paper, 255 black): dots and text first (OpenCV draws over what is
    # there), then lines and markers composited by maximum.
    dark = np.zeros((height, width), dtype=np.uint8)
    prims = sheet_primitives(template, markers=markers, line_grey=line_grey, labels=labels, extras=extras)
    shift = 4
    for dot in prims.dots:
        centre = (round(dot.x * s * 16 - 8), round(dot.y * s * 16 - 8))
        radius = max(round(dot.radius * s * 16), 8)
        cv2.circle(dark, centre, radius, round(255 * (1 - dot.grey)), -1, cv2.LINE_AA, shift)
    for text in prims.texts:
        _put_text(dark, text, s)
    for line in prims.lines:
        half = line.width / 2
        # Extend by half the width so the lines of a box meet at its corners (as PDF's projecting caps).
        paint_rect(dark, (min(line.x0, line.x1) - half) * s, (min(line.y0, line.y1) - half) * s,
                   (max(line.x0, line.x1) + half) * s, (max(line.y0, line.y1) + half) * s, 1.0 - line.grey)
    for marker in prims.markers:
        r = marker.rect
        # Work in the marker's own box: black square, then its white bits cut out.
        x0, y0 = max(int(r.x * s) - 2, 0), max(int(r.y * s) - 2, 0)
        x1, y1 = min(int(r.right * s) + 3, width), min(int(r.bottom * s) + 3, height)
        box = np.zeros((y1 - y0, x1 - x0), dtype=np.float32)
        paint_rect(box, r.x * s - x0, r.y * s - y0, r.right * s - x0, r.bottom * s - y0, 1.0)
        white = np.zeros_like(box)
        cell = r.w / 6
        for row, bits in enumerate(marker.bits):
            for col, bit in enumerate(bits):
                if bit:
                    paint_rect(white, (r.x + col * cell) * s - x0, (r.y + row * cell) * s - y0,
                               (r.x + (col + 1) * cell) * s - x0, (r.y + (row + 1) * cell) * s - y0, 1.0)
        region = dark[y0:y1, x0:x1]
        np.maximum(region, (np.clip(box - white, 0, 1) * 255 + 0.5).astype(np.uint8), out=region)
    image = cv2.bitwise_not(dark)
    image.setflags(write=False)
    return image


def _put_text(layer: np.ndarray, text: Text, s: float) -> None:
    font = cv2.FONT_HERSHEY_SIMPLEX
    # Hershey simplex: cap height is about 22 px at scale 1.
    scale = text.height * s / 22.0
    thickness = max(1, round(scale * 1.6))
    (tw, _), _ = cv2.getTextSize(text.text, font, scale, thickness)
    x = text.x * s - (tw / 2 if text.centred else 0)
    cv2.putText(layer, text.text, (round(x), round(text.y * s)), font, scale, round(255 * (1 - text.grey)),
                thickness, cv2.LINE_AA)


def template_png(template: Template, dpi: float) -> bytes:
    """The blank note as PNG bytes at ``dpi`` (with the resolution recorded in the file)."""
    image = render_template(template, dpi)
    return png_with_dpi(image, dpi)


def png_with_dpi(image: np.ndarray, dpi: float, *, noisy: bool = False) -> bytes:
    """PNG bytes (OpenCV's encoder, deterministic) with a pHYs chunk recording ``dpi``.

    ``noisy``: a scan-like image, where compression gains little; use the
    cheapest filter and Huffman coding only (about twice as fast).
    """
    params = [cv2.IMWRITE_PNG_COMPRESSION, 1]
    if noisy:
        params += [cv2.IMWRITE_PNG_FILTER, cv2.IMWRITE_PNG_FILTER_UP,
                   cv2.IMWRITE_PNG_STRATEGY, cv2.IMWRITE_PNG_STRATEGY_HUFFMAN_ONLY]
    ok, data = cv2.imencode(".png", image, params)
    if not ok:
        raise InputError("cannot encode PNG")
    raw = data.tobytes()
    ppm = round(dpi / 0.0254)
    body = b"pHYs" + struct.pack(">IIB", ppm, ppm, 1)
    chunk = struct.pack(">I", 9) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
    # The signature (8 bytes) and IHDR (25 bytes) come first; pHYs must precede IDAT.
    return raw[:33] + chunk + raw[33:]


def write_template(template: Template, output: str | Path, *, dpi: float = 300, overwrite: bool = False) -> Path:
    """Write the blank note to ``output``: ``.pdf`` (vector), ``.png`` (raster at ``dpi``) or ``.json`` (its
    geometry, for ``--paper FILE.json``)."""
    target = Path(output)
    suffix = target.suffix.lower()
    if suffix == ".json":
        content: str | bytes = template.to_json()
    elif suffix == ".pdf":
        content = template_pdf(template)
    elif suffix == ".png":
        if not 50 <= dpi <= 1200:
            raise OptionError(f"--dpi must be between 50 and 1200, got {dpi:g}")
        content = template_png(template, dpi)
    else:
        raise OptionError(f"cannot write {suffix or 'a file without extension'}: use .pdf, .png or .json", target)
    return write_atomic(target, content, overwrite=overwrite)
