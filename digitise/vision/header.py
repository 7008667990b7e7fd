"""The header: match length and page number by the digit model, the text fields by tesseract.

Best effort: a header field that is empty or unreadable is simply absent or
has a low confidence; the readings never depend on it. When the tesseract
program is not installed the text fields come back empty with a warning and
everything else works.
"""

from __future__ import annotations

import logging
from typing import Any

import cv2
import numpy as np

from digitise.sheet.geometry import Template
from digitise.vision.images import darkest_channel
from digitise.vision.ink import CELL_MARGIN_MM, CELL_PX_PER_MM, extract_ink, ink_amount

log = logging.getLogger(__name__)

NUMBER_FIELDS: tuple[str, ...] = ("match_length", "page")
TEXT_FIELDS: tuple[str, ...] = ("event", "date", "round", "player_top", "player_bottom")
#: Resolution the text fields are cut at for tesseract (about 300 dpi).
OCR_PX_PER_MM = 12.0
#: A field with less ink than this (mm^2) is empty.
FIELD_INK_MM2 = 0.6
TESSERACT_MISSING = "tesseract is not installed: header text not read"

_warned = False


def _cut(grey: np.ndarray, homography: np.ndarray, rect: Any, px_per_mm: float, margin_mm: float) -> np.ndarray:
    """The field rectangle ``rect`` (mm) cut upright from ``grey`` at ``px_per_mm``, with a margin."""
    shift = np.array([[1.0 / px_per_mm, 0.0, rect.x - margin_mm], [0.0, 1.0 / px_per_mm, rect.y - margin_mm], [0.0, 0.0, 1.0]])
    size = (round((rect.w + 2 * margin_mm) * px_per_mm), round((rect.h + 2 * margin_mm) * px_per_mm))
    return cv2.warpPerspective(grey, np.asarray(homography, np.float64) @ shift, size,
                               flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE)


def _field_ink(grey: np.ndarray, homography: np.ndarray, rect: Any) -> np.ndarray:
    p, m = CELL_PX_PER_MM, CELL_MARGIN_MM
    patch = darkest_channel(_cut(grey, homography, rect, p, m))
    # Only strokes inside the box count: the printed label sits just above it.
    own = (round(m * p), round(m * p), round((m + rect.w) * p), round((m + rect.h) * p))
    return extract_ink(patch, [m * p, (m + rect.h) * p], [m * p, (m + rect.w) * p], own=own)


def read_header(grey: np.ndarray, homography: np.ndarray, template: Template, reader: Any | None = None) -> dict[str, Any]:
    """Header fields as ``{name: {"value": str, "confidence": float}}`` (only fields with writing).

    ``grey`` is the page (grey or BGR); ``homography`` maps template mm to its pixels; ``reader`` is the
    cell reader for the number fields (skipped when None).
    """
    fields: dict[str, Any] = {}
    if reader is not None:
        jobs = []
        for name in NUMBER_FIELDS:
            rect = template.fields.get(name)
            if rect is None:
                continue
            ink = _field_ink(grey, homography, rect)
            if ink_amount(ink) >= FIELD_INK_MM2:
                jobs.append((name, ink))
        if jobs:
            from digitise.vision.cells import CellKind

            results = reader.analyse_many([(ink, CellKind.HEADER_NUMBER) for _, ink in jobs])
            for (name, _), result in zip(jobs, results, strict=True):
                candidates = [c for c in result.candidates if c.digits]
                if candidates:
                    best = candidates[0]
                    fields[name] = {"value": "".join(map(str, best.digits)), "confidence": round(float(best.probability), 4)}
    written: list[tuple[str, np.ndarray]] = []
    for name in TEXT_FIELDS:
        rect = template.fields.get(name)
        if rect is None:
            continue
        if ink_amount(_field_ink(grey, homography, rect)) < FIELD_INK_MM2:
            continue
        cut = _cut(grey, homography, rect.inset(0.4), OCR_PX_PER_MM, 0.0)
        written.append((name, cut if cut.ndim == 2 else cv2.cvtColor(cut, cv2.COLOR_BGR2GRAY)))
    fields.update(ocr_fields(written))
    return fields


def ocr_fields(images: list[tuple[str, np.ndarray]]) -> dict[str, Any]:
    """Several one-line fields read by one tesseract run (its start-up is the slow part).

    The fields are stacked into one image with white space between them;
    each word goes to the field whose band holds it.
    """
    if not images:
        return {}
    gap = 24
    width = max(img.shape[1] for _, img in images) + 2 * gap
    bands: list[tuple[str, int, int]] = []
    rows: list[np.ndarray] = [np.full((gap, width), 255, np.uint8)]
    y = gap
    for name, img in images:
        row = np.full((img.shape[0], width), 255, np.uint8)
        row[:, gap:gap + img.shape[1]] = img
        rows.append(row)
        bands.append((name, y, y + img.shape[0]))
        y += img.shape[0]
        rows.append(np.full((gap, width), 255, np.uint8))
        y += gap
    sheet = np.vstack(rows)
    data = _tesseract(sheet, "--psm 6")
    if data is None:
        return {}
    if "warning" in data:
        return {name: dict(data) for name, _ in images}
    words: dict[str, list[tuple[int, str, float]]] = {name: [] for name, _ in images}
    for text, conf, top, height, left in zip(data["text"], data["conf"], data["top"], data["height"], data["left"],
                                             strict=False):
        if not str(text).strip() or float(conf) < 0:
            continue
        middle = int(top) + int(height) // 2
        for name, y0, y1 in bands:
            if y0 - gap // 2 <= middle < y1 + gap // 2:
                words[name].append((int(left), str(text), float(conf)))
                break
    out: dict[str, Any] = {}
    for name, found in words.items():
        if found:
            found.sort()
            out[name] = {"value": " ".join(w for _, w, _ in found),
                         "confidence": round(sum(c for _, _, c in found) / len(found) / 100.0, 3)}
    return out


def _tesseract(image: np.ndarray, config: str) -> dict[str, Any] | None:
    """tesseract's word table for ``image``; a warning entry when it is missing; None when it fails."""
    try:
        import pytesseract
    except ImportError:
        return _missing()
    try:
        result: dict[str, Any] = pytesseract.image_to_data(image, config=config, output_type=pytesseract.Output.DICT)
    except pytesseract.TesseractNotFoundError:
        return _missing()
    except (pytesseract.TesseractError, RuntimeError, OSError) as exc:
        log.debug("tesseract failed on the header: %s", exc)
        return None
    return result


def ocr_field(image: np.ndarray) -> dict[str, Any] | None:
    """One line of text by tesseract: ``{"value", "confidence"}``, or a warning entry when tesseract is missing."""
    data = _tesseract(image, "--psm 7")
    if data is None or "warning" in data:
        return data
    words = [(w, float(c)) for w, c in zip(data["text"], data["conf"], strict=False) if str(w).strip() and float(c) >= 0]
    if not words:
        return None
    value = " ".join(w for w, _ in words)
    confidence = sum(c for _, c in words) / len(words) / 100.0
    return {"value": value, "confidence": round(confidence, 3)}


def _missing() -> dict[str, Any]:
    global _warned
    if not _warned:
        log.warning(TESSERACT_MISSING)
        _warned = True
    return {"value": "", "confidence": 0.0, "warning": TESSERACT_MISSING}
