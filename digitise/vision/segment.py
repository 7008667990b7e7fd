"""Segmenting a cell's handwriting into glyphs: components of its ink, lines, blobs and their splits.

Steps 1 to 3 of :mod:`digitise.vision.cells`: the thresholded ink's
components without specks and printed-line residue, grouped into lines and
blobs, each blob with its alternative splits into 1 to 4 glyphs.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from digitise.vision.cell_types import MAX_DIGITS, PX_PER_MM, Blob, CellKind, CellSegmentation, Cross, Segment
from digitise.vision.classifier import ink_percentile, normalise_glyph
from digitise.vision.cross import CROSS_SURE, erase_cross, find_cross
from digitise.vision.ink import components


def _threshold(ink: np.ndarray) -> float:
    """A level that keeps faint pencil strokes but not the grey haze around them."""
    strong = ink[ink > 0.1]
    if strong.size == 0:
        return 1.0
    return max(0.15, 0.45 * ink_percentile(strong, 95))


#: Hysteresis: fainter ink (down to this share of the level) counts where it touches ink above the level.
HYSTERESIS = 0.4


def _hysteresis(ink: np.ndarray, level: float) -> np.ndarray:
    """Ink at or above ``level``, plus fainter ink connected to it: a pale stretch of a stroke
    (pencil, a light touch) keeps the digit in one piece instead of breaking it."""
    strong = (ink >= level).astype(np.uint8)
    if HYSTERESIS >= 1.0:
        return strong
    weak = (ink >= level * HYSTERESIS).astype(np.uint8)
    count, labels = cv2.connectedComponents(weak, connectivity=8)
    if count <= 1:
        return strong
    keep = np.zeros(count, np.uint8)
    keep[np.unique(labels[strong > 0])] = 1
    keep[0] = 0
    kept: np.ndarray = keep[labels]
    return kept


@dataclass(slots=True)
class _Component:
    x0: int
    y0: int
    x1: int
    y1: int
    area: int
    labels: list[int]

    @property
    def width(self) -> int:
        return self.x1 - self.x0

    @property
    def height(self) -> int:
        return self.y1 - self.y0

    def absorb(self, other: _Component) -> None:
        self.x0, self.y0 = min(self.x0, other.x0), min(self.y0, other.y0)
        self.x1, self.y1 = max(self.x1, other.x1), max(self.y1, other.y1)
        self.area += other.area
        self.labels.extend(other.labels)


def _is_residue(c: _Component, shape: tuple[int, int], px_per_mm: float) -> bool:
    """Specks, and thin straight pieces of printed line along the cell's border."""
    height, width = shape
    if c.area < 0.35 * px_per_mm**2 and max(c.width, c.height) < 1.5 * px_per_mm:
        return True
    # A hairline: thinner than any pen or pencil stroke, so printed line.
    if min(c.width, c.height) <= 0.25 * px_per_mm and max(c.width, c.height) >= 1.0 * px_per_mm:
        return True
    thin = 0.9 * px_per_mm
    touches = c.x0 <= 1 or c.y0 <= 1 or c.x1 >= width - 1 or c.y1 >= height - 1
    # A horizontal sliver near the top or bottom: a digit has no stroke that flat out there.
    if c.height <= thin and c.width >= 1.2 * c.height:
        centre_y = (c.y0 + c.y1) / 2
        if centre_y < 0.2 * height or centre_y > 0.8 * height or touches:
            return True
    # A vertical sliver hugging the left or right edge, or running most of the cell's height.
    if c.width <= thin and c.height >= 1.2 * c.width:
        centre_x = (c.x0 + c.x1) / 2
        at_side = centre_x < 0.15 * width or centre_x > 0.85 * width
        if (at_side and (touches or c.height > 0.5 * height)) or c.height > 0.9 * height:
            return True
    return False


def _border_lines(binary: np.ndarray, px_per_mm: float) -> np.ndarray:
    """Pixels of long straight horizontal or vertical runs in the border bands: printed-line residue.

    Runs are looked for on a mask thickened across the line, so a line that is
    a little skewed (a staircase of pixels) still counts as one run.
    """
    height, width = binary.shape
    out = np.zeros_like(binary)
    run_h = int(min(max(3.0 * px_per_mm, 0.35 * width), 8.0 * px_per_mm))
    run_v = int(max(4.0 * px_per_mm, 0.5 * height))
    band_h, band_w = max(2, int(0.2 * height)), max(2, int(0.2 * width))
    if width > run_h:
        thick = cv2.dilate(binary, np.ones((3, 1), np.uint8))
        horizontal = cv2.morphologyEx(thick, cv2.MORPH_OPEN, np.ones((1, run_h), np.uint8)) & binary
        out[:band_h] |= horizontal[:band_h]
        out[height - band_h:] |= horizontal[height - band_h:]
    if height > run_v:
        thick = cv2.dilate(binary, np.ones((1, 3), np.uint8))
        vertical = cv2.morphologyEx(thick, cv2.MORPH_OPEN, np.ones((run_v, 1), np.uint8)) & binary
        out[:, :band_w] |= vertical[:, :band_w]
        out[:, width - band_w:] |= vertical[:, width - band_w:]
    return out


def _lines(comps: list[_Component]) -> list[list[_Component]]:
    """Group components into one or two lines by their vertical extents."""
    tallest = max(c.height for c in comps)
    major = sorted((c for c in comps if c.height >= 0.4 * tallest), key=lambda c: c.y0)
    bands: list[list[float]] = []
    for c in major:
        if bands and c.y0 < bands[-1][1] - 0.2 * min(c.height, bands[-1][1] - bands[-1][0]):
            bands[-1][1] = max(bands[-1][1], c.y1)
        else:
            bands.append([c.y0, c.y1])
    if len(bands) > 2:
        # More than two bands: keep the widest gap as the one line break.
        gaps = [bands[i + 1][0] - bands[i][1] for i in range(len(bands) - 1)]
        cut = int(np.argmax(gaps))
        bands = [[bands[0][0], bands[cut][1]], [bands[cut + 1][0], bands[-1][1]]]
    if len(bands) == 1:
        return [comps]
    split = (bands[0][1] + bands[1][0]) / 2
    top = [c for c in comps if (c.y0 + c.y1) / 2 < split]
    bottom = [c for c in comps if (c.y0 + c.y1) / 2 >= split]
    return [line for line in (top, bottom) if line]


def _blobs_of_line(line: list[_Component]) -> list[_Component]:
    """Merge components stacked over each other (broken digits) into blobs, left to right."""
    line = sorted(line, key=lambda c: (c.x0, c.y0))
    biggest = max(c.area for c in line)
    blobs: list[_Component] = []
    for c in line:
        merged = False
        for b in blobs:
            overlap = min(b.x1, c.x1) - max(b.x0, c.x0)
            if overlap >= 0.4 * min(b.width, c.width):
                b.absorb(c)
                merged = True
                break
        if not merged:
            blobs.append(_Component(c.x0, c.y0, c.x1, c.y1, c.area, list(c.labels)))
    # A small fragment right beside a blob is a broken stroke of it, not a glyph of its own.
    result: list[_Component] = []
    for b in sorted(blobs, key=lambda b: b.x0):
        if result and b.area < 0.12 * biggest and b.x0 - result[-1].x1 < 0.15 * result[-1].height:
            result[-1].absorb(b)
        else:
            result.append(b)
    return result


def _split_priors(aspect: float) -> list[tuple[int, float]]:
    """Ways to split a blob of this width/height into k glyphs, with a shape prior each."""
    out = [(1, 1.0 if aspect <= 1.1 else max(0.15, math.exp(-1.5 * (aspect - 1.1))))]
    if aspect >= 0.7:
        for k in range(2, MAX_DIGITS + 1):
            per = aspect / k
            if per < 0.25:
                break
            out.append((k, max(0.02, math.exp(-0.5 * ((per - 0.6) / 0.3) ** 2))))
    return out


def _cuts(columns: np.ndarray, k: int) -> list[int] | None:
    """Columns where a blob of ink column sums ``columns`` is cut into ``k`` pieces."""
    width = len(columns)
    step = width / k
    peak = float(columns.max()) or 1.0
    cuts = [0]
    for i in range(1, k):
        target = i * step
        lo, hi = max(cuts[-1] + 2, int(target - 0.3 * step)), min(width - 2, int(target + 0.3 * step) + 1)
        if hi <= lo:
            return None
        span = np.arange(lo, hi)
        cost = columns[lo:hi] / peak + 0.6 * np.abs(span - target) / step
        cuts.append(int(span[int(np.argmin(cost))]))
    cuts.append(width)
    return cuts


def _segment(ink: np.ndarray, mask: np.ndarray, x0: int, y0: int) -> Segment | None:
    """A segment from a mask placed at (x0, y0) of the cell, cropped to its ink."""
    rows = np.flatnonzero(mask.any(axis=1))
    cols = np.flatnonzero(mask.any(axis=0))
    if rows.size == 0 or cols.size == 0:
        return None
    mask = mask[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]
    ax0, ay0 = x0 + int(cols[0]), y0 + int(rows[0])
    ax1, ay1 = ax0 + mask.shape[1], ay0 + mask.shape[0]
    # Keep the anti-aliased rim of the strokes, which the threshold cut off.
    rim = cv2.dilate(mask.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
    glyph = normalise_glyph(np.where(rim, ink[ay0:ay1, ax0:ax1], 0.0))
    return Segment((ax0, ay0, ax1, ay1), mask, glyph)


#: Segment the centre's digits with the X taken out (placed and cut by their own ink). Off: the shipped model
#: reads worse so than cutting digits and X together; worth turning on with a model trained on this
#: segmentation (training uses segment_cell). The X found still gives the crossed probability.
CROSS_SEGMENTATION = False


def _group_under_crosses(comps: list[_Component], crosses: Sequence[Cross]) -> list[_Component]:
    """The pieces of ink under each X as one group: the digits it crossed out, cut up by its strokes.

    With the X taken out, the digits under it fall apart into pieces; as one
    group they are split again into 1-4 digits at the valleys of their own ink
    (the X no longer fills the gaps between them).
    """
    out: list[_Component] = []
    groups: dict[int, _Component] = {}
    for c in sorted(comps, key=lambda c: (c.x0, c.y0)):
        centre_x = (c.x0 + c.x1) / 2
        for k, cross in enumerate(crosses):
            xs = np.concatenate([s.points[:, 0] for s in cross.strokes])
            if xs.min() <= centre_x <= xs.max():
                if k in groups:
                    groups[k].absorb(c)
                else:
                    groups[k] = _Component(c.x0, c.y0, c.x1, c.y1, c.area, list(c.labels))
                    out.append(groups[k])
                break
        else:
            out.append(c)
    return out


def segment_cell(ink: np.ndarray, px_per_mm: float = PX_PER_MM, kind: CellKind | None = None) -> CellSegmentation:
    """Split a cell's ink into blobs in reading order, each with its alternative splits.

    In the centre strip (``kind`` CENTRE), X's drawn over the digits are found
    (:func:`find_cross`, then again with each one taken out by
    :func:`erase_cross`, until one as sure as an X gets, CROSS_SURE) and
    listed in ``crosses``; with CROSS_SEGMENTATION every X is looked for and
    the digits are also placed and cut without them.
    """
    ink = np.asarray(ink, np.float32)
    if ink.ndim != 2 or ink.size == 0:
        raise ValueError(f"cell ink must be a 2-D array, got shape {ink.shape}")
    level = _threshold(ink)
    binary = _hysteresis(ink, level)
    lines = _border_lines(binary, px_per_mm)
    dropped = bool(lines.any())
    if dropped:
        binary &= ~lines
    crosses: list[Cross] = []
    whole = binary
    if kind is CellKind.CENTRE:
        # "One X over them, or one each": look again after each X taken out.
        erased = binary
        while len(crosses) < MAX_DIGITS:
            cross = find_cross(erased, px_per_mm)
            if cross is None:
                break
            crosses.append(cross)
            if cross.confidence >= CROSS_SURE and not CROSS_SEGMENTATION:
                # Another X could not make the strip more surely crossed (the reader takes the
                # surest), and only a segmentation without the X's needs them all. Nine in ten
                # X's found are this sure: the search for none after them was a third of the
                # centre's reading time.
                break
            erased = erase_cross(erased, cross, px_per_mm)
        if CROSS_SEGMENTATION:
            binary = erased
    count, labels, stats = components(binary)
    comps: list[_Component] = []
    for i in range(1, count):
        x, y, w, h, area = (int(v) for v in stats[i])
        c = _Component(x, y, x + w, y + h, area, [i])
        if _is_residue(c, ink.shape, px_per_mm):
            dropped = True
        else:
            comps.append(c)
    if not comps:
        return CellSegmentation((), dropped, tuple(crosses))
    if crosses and CROSS_SEGMENTATION:
        comps = _group_under_crosses(comps, crosses)
    blobs: list[Blob] = []
    for line_no, line in enumerate(_lines(comps)):
        for b in _blobs_of_line(line):
            region = np.isin(labels[b.y0:b.y1, b.x0:b.x1], b.labels)
            alternatives: list[tuple[Segment, ...]] = []
            priors: list[float] = []
            columns = region.sum(axis=0).astype(np.float32)
            for k, prior in _split_priors(b.width / max(b.height, 1)):
                cuts = [0, b.width] if k == 1 else _cuts(columns, k)
                if cuts is None:
                    continue
                pieces: list[Segment] = []
                for a, z in itertools.pairwise(cuts):
                    piece = region[:, a:z]
                    top = b.y0
                    if crosses and CROSS_SEGMENTATION:
                        # Placed and cut by the digits' own ink, read with the X over them (the
                        # crossed-digit classes): a digit with its X cut away is too broken to read.
                        ys = np.concatenate([st.points[:, 1] for c in crosses for st in c.strokes])
                        top = max(0, min(b.y0, int(ys.min())))
                        bottom = min(whole.shape[0], max(b.y1, math.ceil(ys.max()) + 1))
                        piece = whole[top:bottom, b.x0 + a:b.x0 + z] > 0
                    seg = _segment(ink, piece, b.x0 + a, top)
                    # A sliver of a piece is not a digit: this split is not a reading.
                    if seg is None or seg.mask.sum() < 0.06 * region.sum():
                        pieces = []
                        break
                    pieces.append(seg)
                if pieces:
                    alternatives.append(tuple(pieces))
                    priors.append(prior)
            if alternatives:
                blobs.append(Blob(line_no, tuple(alternatives), tuple(priors)))
    return CellSegmentation(tuple(blobs), dropped, tuple(crosses))
