"""Reading one cell: segment its handwriting into glyphs and turn them into candidate readings.

Input is a cell's ink (float32 in [0, 1], 1 = ink, printed lines mostly
removed) at about ``px_per_mm`` pixels per millimetre. The steps:

1. Components of the thresholded ink (with hysteresis: paler ink touching
   ink above the level is kept, so a light stretch of a stroke does not
   break a digit in two); specks and printed-line residue at the border are
   dropped by their shape and place. In the centre strip an X is looked for
   by its shape (two long straight strokes of opposite slant crossing near
   their middles, :func:`find_cross`): it gives the crossed probability.
2. Lines: components whose vertical extents overlap form one line; a cell
   holds one or two lines, read top line first, left to right.
3. Blobs: components stacked above each other (a "5" whose bar came loose)
   are one blob. A blob wider than a digit may be several touching digits:
   it gets alternatives, split into 1 to 4 pieces at ink valleys.
4. Every piece of every alternative is classified in one batch; an
   alternative is weighted by its shape prior and by how digit-like its
   pieces are (a wrong split leaves half-digits, which the model calls
   ``other``), and the readings are the most probable digit strings over
   all alternatives, each piece being a digit or nothing (residue, arrow,
   letter). Probability mass on digits the cell cannot hold (a 7 in a point
   square) is left out, so a doubtful cell sums to less than 1.

The classifier is behind :class:`~digitise.vision.classifier.GlyphClassifier`;
tests pass fakes.

Point/off squares and the centre strip are read whole instead when the
reader has the whole-cell models (:mod:`digitise.vision.cellnet`; the default
reader has them when they are shipped): no segmentation, one small CNN per
kind says how many times each dice value is written, and whether the digits
are crossed or an arrow or letters are there. Result squares and header
numbers (ordered numbers 0-9) are always segmented as above.
"""

from __future__ import annotations

import enum
import functools
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from digitise.errors import DigitiseError
from digitise.notation.readings import CellReading
from digitise.vision.cellnet import (
    CENTRE_MODEL,
    CENTRE_SHAPE,
    POINT_MODEL,
    POINT_SHAPE,
    Answer,
    CellNet,
    candidates_of,
    load_cellnets,
    prepare,
    run_answer,
    split_output,
)
from digitise.vision.classifier import (
    DEFAULT_MODEL,
    GLYPH_SIZE,
    GlyphClassifier,
    class_indices,
    digit_probabilities,
    ink_percentile,
    load_classifier,
    model_metadata,
    normalise_glyph,
    require_model,
)
from digitise.vision.ink import components

#: Pixels per millimetre of the ink the vision pipeline hands over.
PX_PER_MM = 10.0
#: Candidate readings returned per cell.
TOP_CANDIDATES = 5
MAX_DIGITS = 4


class CellKind(enum.Enum):
    """What a cell may hold, which decides the digits it can be read as."""

    #: A point or off square: dice digits 1-6, up to four.
    POINT = "point"
    #: The centre strip: dice digits 1-6, possibly crossed out; or a double's arrow.
    CENTRE = "centre"
    #: A result square: digits 0-9 forming a number.
    RESULT = "result"
    #: A number field of the header (match length, page): digits 0-9.
    HEADER_NUMBER = "header_number"

    @property
    def digits(self) -> tuple[int, ...]:
        """The digits this kind of cell can hold."""
        return (1, 2, 3, 4, 5, 6) if self in (CellKind.POINT, CellKind.CENTRE) else tuple(range(10))


class CellReadError(DigitiseError):
    """A cell could not be read because the glyph classifier failed or answered nonsense."""


@dataclass(frozen=True, slots=True)
class Segment:
    """One piece of handwriting, as the classifier will see it."""

    #: Bounding box in cell pixels: x0, y0, x1, y1 (exclusive ends).
    box: tuple[int, int, int, int]
    #: Its pixels inside ``box``.
    mask: np.ndarray
    #: The normalised glyph (GLYPH_SIZE square).
    glyph: np.ndarray


@dataclass(frozen=True, slots=True)
class Blob:
    """A group of ink that is one or several glyphs, with its ways of being split."""

    line: int
    #: Alternative splits, the first one unsplit; each a left-to-right tuple of segments.
    alternatives: tuple[tuple[Segment, ...], ...]
    #: Shape prior of each alternative (unnormalised).
    priors: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class Stroke:
    """A long straight pen stroke found in a cell: a centre line and its half width, in cell pixels."""

    #: Centre line points from one end to the other (x, y), a few per stroke so it may bend a little.
    points: np.ndarray
    half_width: float

    @property
    def length(self) -> float:
        """Distance between the stroke's ends (px)."""
        return float(np.linalg.norm(self.points[-1] - self.points[0]))


@dataclass(frozen=True, slots=True)
class Cross:
    """An X: two long strokes of opposite slant crossing near their middles."""

    strokes: tuple[Stroke, Stroke]
    #: How sure the shape is an X (0-1), from how clean and how long the strokes are.
    confidence: float


@dataclass(frozen=True, slots=True)
class CellSegmentation:
    """The blobs of a cell in reading order, whether ink was dropped as residue, the X's taken out."""

    blobs: tuple[Blob, ...]
    dropped_ink: bool
    crosses: tuple[Cross, ...] = ()


@dataclass(frozen=True, slots=True)
class CellAnalysis:
    """Everything read from one cell: candidates and the marks other than digits."""

    candidates: tuple[CellReading, ...]
    #: Probability that the digits are crossed out by an X.
    crossed: float
    #: Probability that the cell holds a double's arrow.
    arrow: float
    #: Probability that the cell holds letters (a name) rather than digits.
    letters: float
    #: How the whole-cell model read a point or off square, kept to read it again adapted to the writer
    #: (:mod:`digitise.vision.adapt`); None for other cells, or a model that gives no features.
    whole: WholeCell | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class WholeCell:
    """A square as the whole-cell model read it: what adapting to the writer reads it again from."""

    #: The model's OUTPUTS probabilities (the ensemble's, moved inputs averaged in where it was unsure).
    row: np.ndarray
    #: Each member model's features of the square (:attr:`digitise.vision.cellnet.Answer.features`).
    features: tuple[np.ndarray, ...]
    #: The segmenting reader's analysis, when the two readings were combined.
    segmented: CellAnalysis | None = None


@dataclass(frozen=True, slots=True)
class CentreReading:
    """The centre strip: its candidate digits and the X and arrow probabilities."""

    candidates: tuple[CellReading, ...]
    crossed: float
    arrow: float


# --- segmentation -------------------------------------------------------------------------------


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


# --- the X over unplayable dice ------------------------------------------------------------------

#: Slants (degrees from the horizontal, both ways) an X's stroke may have: an X over one digit is
#: steep, an X over four digits in a line is flat. Arrows (horizontal or vertical) stay outside.
CROSS_ANGLES = np.deg2rad(np.arange(9.0, 82.0, 2.0))
#: Shortest X stroke (mm): the X over one small digit (digits' own straight strokes, measured on
#: synthetic sheets, stay under 7 mm; an X's, over 7).
CROSS_MIN_MM = 6.0
#: Least angle between an X's strokes (a flat X over four digits has about 30 degrees).
CROSS_MIN_ANGLE = np.deg2rad(24.0)
#: Most of a stroke's ink the other stroke may share (more: one curved stroke seen twice).
CROSS_SHARED = 0.35
#: The surest an X found by its shape is (long strokes crossing in their middles).
CROSS_SURE = 0.97
#: Pieces a stroke is followed in (a hand-drawn line bends a little).
STROKE_PIECES = 6
#: Segment the centre's digits with the X taken out (placed and cut by their own ink). Off: the shipped model
#: reads worse so than cutting digits and X together; worth turning on with a model trained on this
#: segmentation (training uses segment_cell). The X found still gives the crossed probability.
CROSS_SEGMENTATION = False


def _longest_run(occupied: np.ndarray) -> tuple[int, int, int]:
    """Row, end (exclusive) and length of the longest run of True (non-zero) along the rows of a grid."""
    # Runs found from where a row padded with empties changes (the X finder calls this ~70 times a
    # centre cell: a running maximum over the whole grid cost twice as much).
    height, width = occupied.shape
    stride = width + 2
    padded = np.zeros((height, stride), np.int8)
    padded[:, 1:-1] = occupied != 0
    change = np.diff(padded.ravel())
    starts = np.flatnonzero(change == 1) + 1
    if not starts.size:
        return round((height - 1) / 2), 1, 0
    ends = np.flatnonzero(change == -1) + 1
    lengths = ends - starts
    k = int(np.argmax(lengths))  # the first longest, in reading order
    length = int(lengths[k])
    row = int(starts[k]) // stride
    end = int(ends[k]) - row * stride - 1
    # A thick stroke gives several rows with the same longest run: take the middle one. A row
    # qualifies when its longest run is at least length - 1 (an empty row's is 0).
    near = set(range(height)) if length <= 1 else set((starts[lengths >= length - 1] // stride).tolist())
    rows = [row]
    for step in (-1, 1):
        r = row + step
        while r in near:
            rows.append(r)
            r += step
    return round(sum(rows) / len(rows)), end, length


def _stroke_candidates(xs: np.ndarray, ys: np.ndarray, px_per_mm: float, sign: int) -> list[tuple[float, float, float, float]]:
    """The longest straight ink run at each slant of one direction: (angle, offset, t0, t1)."""
    out = []
    wobble = max(2, round(0.2 * px_per_mm))
    gap = max(2, round(0.4 * px_per_mm))
    for angle in CROSS_ANGLES * sign:
        c, s = math.cos(angle), math.sin(angle)
        t = xs * c + ys * s
        r = ys * c - xs * s
        t_min, r_min = float(t.min()), float(r.min())
        ti = (t - t_min).astype(np.int32)
        ri = (r - r_min).astype(np.int32)
        dots = np.zeros((int(ri.max()) + 1, int(ti.max()) + 1), np.uint8)
        dots[ri, ti] = 1
        # Ink within a few pixels across counts (the stroke wobbles), short gaps along are bridged.
        grid = cv2.dilate(dots, np.ones((2 * wobble + 1, 1), np.uint8))
        grid = cv2.morphologyEx(grid, cv2.MORPH_CLOSE, np.ones((1, gap + 1), np.uint8))
        row, end, length = _longest_run(np.asarray(grid))
        out.append((float(angle), row + r_min + 0.5, end - length + t_min, end + t_min))
    return out


def _follow(binary: np.ndarray, xs: np.ndarray, ys: np.ndarray, line: tuple[float, float, float, float],
            px_per_mm: float) -> Stroke | None:
    """The stroke along a straight run: its centre followed piece by piece, and its width."""
    angle, offset, t0, t1 = line
    c, s = math.cos(angle), math.sin(angle)
    direction, normal = np.array([c, s]), np.array([-s, c])
    t = xs * c + ys * s
    r = ys * c - xs * s
    band = 0.6 * px_per_mm
    near = (np.abs(r - offset) <= band) & (t >= t0) & (t <= t1)
    if near.sum() < 5:
        return None
    points = []
    edges = np.linspace(t0, t1, STROKE_PIECES + 1)
    for a, b in itertools.pairwise(edges):
        inside = near & (t >= a) & (t <= b)
        centre = float(np.median(r[inside])) if inside.any() else offset
        points.append(normal * centre + direction * ((a + b) / 2))
    # Ends: the first and last piece's centres, carried out to the run's ends.
    start = normal * float(np.dot(points[0], normal)) + direction * t0
    stop = normal * float(np.dot(points[-1], normal)) + direction * t1
    path = np.array([start, *points, stop], np.float64)
    distance = cv2.distanceTransform(binary, cv2.DIST_L2, 3)
    samples = np.concatenate([np.linspace(p, q, 8, endpoint=False) for p, q in itertools.pairwise(path)])
    sx = np.clip(np.round(samples[:, 0]).astype(int), 0, binary.shape[1] - 1)
    sy = np.clip(np.round(samples[:, 1]).astype(int), 0, binary.shape[0] - 1)
    depth = distance[sy, sx]
    if not (depth > 0).any():
        return None
    return Stroke(path, float(np.median(depth[depth > 0])))


def _peaks(candidates: list[tuple[float, float, float, float]]) -> list[tuple[float, float, float, float]]:
    """The runs longest at their slant (longer than at the slants beside it), longest first.

    A run longest at the end of the slant range is the edge of something flatter or steeper
    than an X's stroke (an arrow's shaft, a "1"), not a stroke of its own.
    """
    lengths = [c[3] - c[2] for c in candidates]
    out = [c for k, c in enumerate(candidates)
           if 0 < k < len(candidates) - 1 and lengths[k] >= lengths[k - 1] and lengths[k] >= lengths[k + 1]]
    return sorted(out, key=lambda c: c[2] - c[3])


def _crossing(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> tuple[float, float] | None:
    """Where two straight runs cross, as shares of each one's length (None when parallel)."""
    pa = np.array([-math.sin(a[0]), math.cos(a[0])]) * a[1]
    pb = np.array([-math.sin(b[0]), math.cos(b[0])]) * b[1]
    da = np.array([math.cos(a[0]), math.sin(a[0])])
    db = np.array([math.cos(b[0]), math.sin(b[0])])
    matrix = np.column_stack([da, -db])
    if abs(float(np.linalg.det(matrix))) < 1e-3:
        return None
    ta, tb = np.linalg.solve(matrix, pb - pa)
    return (float(ta) - a[2]) / max(a[3] - a[2], 1e-6), (float(tb) - b[2]) / max(b[3] - b[2], 1e-6)


def find_cross(binary: np.ndarray, px_per_mm: float = PX_PER_MM) -> Cross | None:
    """The X in a cell's binary ink: the longest "\\" and "/" straight strokes that cross near their middles.

    Digits have short straight strokes and an arrow's head strokes meet at
    their ends, so two long strokes of opposite slant crossing in their
    middle third or so are an X.
    """
    ys, xs = np.nonzero(binary)
    min_len = CROSS_MIN_MM * px_per_mm
    if xs.size < min_len * 2:
        return None
    xs_f, ys_f = xs.astype(np.float64), ys.astype(np.float64)
    down = _peaks(_stroke_candidates(xs_f, ys_f, px_per_mm, 1))
    up = _peaks(_stroke_candidates(xs_f, ys_f, px_per_mm, -1))
    best: tuple[float, tuple[float, float, float, float], tuple[float, float, float, float]] | None = None
    for a in down[:6]:
        for b in up[:6]:
            la, lb = a[3] - a[2], b[3] - b[2]
            if min(la, lb) < min_len or max(la, lb) > 2.5 * min(la, lb):
                continue
            if abs(a[0] - b[0]) < CROSS_MIN_ANGLE:
                continue
            shares = _crossing(a, b)
            if shares is None or not all(0.2 <= v <= 0.8 for v in shares):
                continue
            score = min(la, lb)
            if best is None or score > best[0]:
                best = (score, a, b)
    if best is None:
        return None
    _, a, b = best
    first, second = (_follow(binary, xs_f, ys_f, line, px_per_mm) for line in (a, b))
    if first is None or second is None:
        return None
    strokes = (first, second)
    # Two separate strokes share ink only where they cross; two tangents of one curved stroke
    # (the side of a "0" or a "6") share most of it.
    bands = []
    for stroke in strokes:
        band = np.zeros_like(binary)
        fixed = np.round(stroke.points * 4).astype(np.int32).reshape(-1, 1, 2)
        cv2.polylines(band, [fixed], False, 1, max(1, round(2 * stroke.half_width + 2)), cv2.LINE_8, 2)
        bands.append(band & binary)
    shared = float((bands[0] & bands[1]).sum()) / max(1.0, float(min(bands[0].sum(), bands[1].sum())))
    if shared > CROSS_SHARED:
        return None
    # Long strokes crossing in their middles are an X; short ones are less sure (digit strokes):
    # 0.6 at the shortest, 0.97 from 2 mm longer.
    shortest = min(a[3] - a[2], b[3] - b[2]) / px_per_mm
    confidence = float(np.clip(0.6 + 0.185 * (shortest - CROSS_MIN_MM), 0.6, CROSS_SURE))
    return Cross(strokes, confidence)


def _runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """(start, end exclusive) of every run of True in a 1-D array."""
    padded = np.concatenate([[False], flags, [False]]).astype(np.int8)
    change = np.diff(padded)
    return list(zip(np.flatnonzero(change == 1).tolist(), np.flatnonzero(change == -1).tolist(), strict=True))


def erase_cross(binary: np.ndarray, cross: Cross, px_per_mm: float = PX_PER_MM) -> np.ndarray:
    """``binary`` without the X's strokes, keeping the digits' strokes that run across them.

    A band a little wider than each stroke is cleared. Then each place where
    ink leaves one edge of the band and ink arrives at the other edge close
    by (a digit's stroke running across the X) is bridged again: the ink of
    the band between the two is put back, so the digit is not cut in two.
    """
    margin = 0.12 * px_per_mm + 1.0
    bands = []
    erased = np.zeros_like(binary)
    for stroke in cross.strokes:
        band = np.zeros_like(binary)
        thickness = max(1, round(2 * (stroke.half_width + margin)))
        fixed = np.round(stroke.points * 4).astype(np.int32).reshape(-1, 1, 2)
        cv2.polylines(band, [fixed], False, 1, thickness, cv2.LINE_8, 2)
        bands.append((stroke, band, thickness / 2))
        erased |= band
    rest = binary & (1 - erased)
    lenient = cv2.dilate(rest, np.ones((3, 3), np.uint8))
    height, width = binary.shape
    keep = np.zeros_like(binary)
    for stroke, _, half in bands:
        samples, normals = [], []
        for p, q in itertools.pairwise(stroke.points):
            step = q - p
            length = float(np.linalg.norm(step))
            if length < 1e-6:
                continue
            count = max(2, math.ceil(length))
            samples.append(np.linspace(p, q, count, endpoint=False))
            normals.append(np.repeat([[-step[1] / length, step[0] / length]], count, axis=0))
        if not samples:
            continue
        along, normal = np.concatenate(samples), np.concatenate(normals)
        reach = half + 1.0
        edges, hits = [], []
        for sign in (1, -1):
            at = along + sign * reach * normal
            ix, iy = np.round(at[:, 0]).astype(int), np.round(at[:, 1]).astype(int)
            inside = (ix >= 0) & (ix < width) & (iy >= 0) & (iy < height)
            hit = np.zeros(len(along), bool)
            hit[inside] = lenient[iy[inside], ix[inside]] > 0
            edges.append(at)
            hits.append(hit)
        # A digit's stroke crosses at 30 degrees or more: it comes out within this many samples.
        shift = 2 * reach * 1.8
        other = _runs(hits[1])
        for a0, a1 in _runs(hits[0]):
            centre = (a0 + a1) / 2
            near = [(abs((b0 + b1) / 2 - centre), b0, b1) for b0, b1 in other if abs((b0 + b1) / 2 - centre) <= shift]
            if not near:
                continue
            _, b0, b1 = min(near)
            quad = np.array([edges[0][a0], edges[0][a1 - 1], edges[1][b1 - 1], edges[1][b0]])
            cv2.fillConvexPoly(keep, np.round(quad * 4).astype(np.int32), 1, cv2.LINE_8, 2)
    # Not where the two bands overlap: that is the X's own crossing.
    keep = np.asarray(cv2.dilate(keep, np.ones((3, 3), np.uint8))) & (1 - (bands[0][1] & bands[1][1]))
    result: np.ndarray = (rest | (binary & keep & erased)).astype(binary.dtype)
    return result


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



# --- reading --------------------------------------------------------------------------------------


class CellReader:
    """Reads cells with a glyph classifier (the shipped ONNX model by default)."""

    def __init__(
        self,
        classifier: GlyphClassifier | None = None,
        *,
        px_per_mm: float = PX_PER_MM,
        top: int = TOP_CANDIDATES,
        cellnets: tuple[CellNet, CellNet | None] | None = None,
    ) -> None:
        """``cellnets``: the whole-cell models (point, centre); without them every cell is segmented,
        without the centre one the centre is."""
        self.classifier: GlyphClassifier = classifier if classifier is not None else load_classifier()
        self.px_per_mm = px_per_mm
        self.top = top
        self.cellnets = cellnets
        classes = tuple(self.classifier.classes)
        self._classes = classes
        self._skip = class_indices(classes, ("other", "x", "arrow", "letter"))
        self._crossed = class_indices(classes, tuple(f"{d}x" for d in range(1, 7)) + ("x",))
        self._arrow = class_indices(classes, ("arrow",))
        self._letter = class_indices(classes, ("letter",))
        self._other = class_indices(classes, ("other",))

    # public API

    def read_cell(self, ink: np.ndarray, kind: CellKind) -> tuple[CellReading, ...]:
        """Candidate readings of one cell, best first, the empty reading ``()`` among them when plausible."""
        return self.analyse(ink, kind).candidates

    def read_centre(self, ink: np.ndarray) -> CentreReading:
        """The centre strip: candidate digits, and the probabilities of an X over them and of an arrow."""
        result = self.analyse(ink, CellKind.CENTRE)
        return CentreReading(result.candidates, result.crossed, result.arrow)

    def analyse(self, ink: np.ndarray, kind: CellKind) -> CellAnalysis:
        """Candidates and mark probabilities of one cell."""
        return self.analyse_many([(ink, kind)])[0]

    def analyse_many(self, cells: Sequence[tuple[np.ndarray, CellKind]]) -> list[CellAnalysis]:
        """Read many cells with one model call per model (much faster than one call per cell).

        With the whole-cell models, point/off squares and the centre strip go
        to them; result squares and header numbers are segmented.
        """
        if self.cellnets is None:
            return self._segmented(cells)
        kinds = (CellKind.POINT,) if self.cellnets[1] is None else (CellKind.POINT, CellKind.CENTRE)
        whole = [i for i, (_, kind) in enumerate(cells) if kind in kinds]
        rest = [i for i, (_, kind) in enumerate(cells) if kind not in kinds]
        out: list[CellAnalysis | None] = [None] * len(cells)
        # Point squares the whole-cell reader is unsure of are read both ways and the two readings
        # combined (see combine_readings, SEGMENT_POINTS_BELOW). The centre's X is the segmenting
        # reader's (its X finder): the centre model calls nearly any ink in the strip crossed
        # (unplayed dice always are), also a stroke spilled from a point. One batch per model.
        wholes = dict(zip(whole, self._whole([cells[i] for i in whole]), strict=True))
        both = [i for i in whole if (cells[i][1] is CellKind.POINT and COMBINE_POINTS and _unsure(wholes[i]))
                or (cells[i][1] is CellKind.CENTRE and CENTRE_X_SEGMENTED)]
        segmented = self._segmented([cells[i] for i in rest + both])
        by_index = dict(zip(rest + both, segmented, strict=True))
        for i, result in wholes.items():
            if i not in by_index:
                out[i] = result
            elif cells[i][1] is CellKind.POINT:
                kept = None if result.whole is None else replace(result.whole, segmented=by_index[i])
                out[i] = replace(combine_readings(result, by_index[i], self.top, POINT_COMBINATION), whole=kept)
            elif CENTRE_COMBINATION is not None:
                combined = combine_readings(result, by_index[i], self.top, CENTRE_COMBINATION)
                out[i] = replace(combined, crossed=by_index[i].crossed, arrow=result.arrow)
            else:
                out[i] = replace(result, crossed=by_index[i].crossed)
        for i in rest:
            out[i] = by_index[i]
        assert all(r is not None for r in out), "every cell is read whole or segmented"
        return [r for r in out if r is not None]

    def _whole(self, cells: Sequence[tuple[np.ndarray, CellKind]]) -> list[CellAnalysis]:
        """Cells read whole by the cell models (one batch per model)."""
        assert self.cellnets is not None
        point_net, centre_net = self.cellnets
        kinds = [kind is CellKind.CENTRE for _, kind in cells]
        outputs: list[np.ndarray | None] = [None] * len(cells)
        features: list[tuple[np.ndarray, ...]] = [()] * len(cells)
        for centre, net, shape in ((False, point_net, POINT_SHAPE), (True, centre_net, CENTRE_SHAPE)):
            chosen = [i for i, c in enumerate(kinds) if c is centre]
            if not chosen or net is None:
                continue
            inputs = [prepare(cells[i][0], centre) for i in chosen]
            answer = _cellnet_answer(functools.partial(run_answer, net, inputs, shape))
            rows = answer.probabilities
            if rows.max() > 1 + 1e-6:
                raise CellReadError("cell model answered non-probabilities (above 1)")
            for k, (i, row) in enumerate(zip(chosen, rows, strict=True)):
                outputs[i] = row
                features[i] = tuple(f[k] for f in answer.features)
        results = []
        for row, centre, feats in zip(outputs, kinds, features, strict=True):
            assert row is not None
            split = split_output(row)
            results.append(CellAnalysis(
                candidates_of(split, self.top),
                round(split.crossed, 6) if centre else 0.0,
                round(split.arrow, 6),
                round(split.letters, 6),
                WholeCell(row, feats) if feats and not centre else None,
            ))
        return results

    def _segmented(self, cells: Sequence[tuple[np.ndarray, CellKind]]) -> list[CellAnalysis]:
        """Cells segmented into glyphs, every glyph classified in one call."""
        segmentations = [segment_cell(ink, self.px_per_mm, kind) for ink, kind in cells]
        glyphs: list[np.ndarray] = []
        for seg in segmentations:
            for blob in seg.blobs:
                for alternative in blob.alternatives:
                    glyphs.extend(s.glyph for s in alternative)
        probabilities = self._classify(np.stack(glyphs) if glyphs else np.zeros((0, GLYPH_SIZE, GLYPH_SIZE), np.float32))
        results = []
        cursor = 0
        for seg, (_, kind) in zip(segmentations, cells, strict=True):
            result, cursor = self._read(seg, kind, probabilities, cursor)
            results.append(result)
        return results

    # internals

    def _classify(self, glyphs: np.ndarray) -> np.ndarray:
        if len(glyphs) == 0:
            return np.zeros((0, len(self._classes)), np.float32)
        probabilities = _model_answer("glyph classifier", lambda: self.classifier.predict(glyphs))
        if probabilities.shape != (len(glyphs), len(self._classes)):
            raise CellReadError(
                f"glyph classifier answered shape {probabilities.shape}, expected {(len(glyphs), len(self._classes))}"
            )
        clipped: np.ndarray = np.clip(probabilities, 0.0, 1.0)
        return clipped

    def _read(
        self, seg: CellSegmentation, kind: CellKind, probabilities: np.ndarray, cursor: int
    ) -> tuple[CellAnalysis, int]:
        # An X found by its shape (centre only) is the surest sign of crossed dice.
        x_found = max((c.confidence for c in seg.crosses), default=0.0)
        if not seg.blobs:
            # Only residue (or nothing) was there; dropping residue is not quite certain.
            empty = CellReading((), 0.995 if seg.dropped_ink else 1.0)
            return CellAnalysis((empty,), x_found, 0.0, 0.0), cursor
        allowed = np.array(kind.digits)
        states: dict[tuple[int, ...], float] = {(): 1.0}
        crossed_num = crossed_den = arrow = letters = 0.0
        for blob in seg.blobs:
            per_alt: list[np.ndarray] = []
            for alternative in blob.alternatives:
                per_alt.append(probabilities[cursor:cursor + len(alternative)])
                cursor += len(alternative)
            weights = np.array(
                [prior * float(np.prod(1.0 - p[:, self._other].sum(axis=1))) for prior, p in zip(blob.priors, per_alt, strict=True)]
            )
            weights = weights / weights.sum() if weights.sum() > 0 else np.eye(len(weights))[0]
            new_states: dict[tuple[int, ...], float] = {}
            for weight, p in zip(weights, per_alt, strict=True):
                if weight < 1e-4:
                    continue
                digits = digit_probabilities(p, self._classes)[:, allowed]
                skip = p[:, self._skip].sum(axis=1)
                crossed_num += weight * float(p[:, self._crossed].sum())
                crossed_den += weight * float(digits.sum() + p[:, class_indices(self._classes, ("x",))].sum())
                arrow = max(arrow, weight * float(p[:, self._arrow].sum(axis=1).max(initial=0.0)))
                letters += weight * float(p[:, self._letter].sum(axis=1).mean())
                sub = _beam(digits, skip, allowed, self.top * 4)
                for head, hp in states.items():
                    for tail, tp in sub.items():
                        reading = head + tail
                        if len(reading) <= MAX_DIGITS:
                            new_states[reading] = new_states.get(reading, 0.0) + hp * weight * tp
            states = dict(sorted(new_states.items(), key=lambda kv: (-kv[1], kv[0]))[: self.top * 4])
        ranked = sorted(states.items(), key=lambda kv: (-kv[1], kv[0]))[: self.top]
        candidates = tuple(CellReading(digits, round(float(p), 6)) for digits, p in ranked if p >= 1e-6)
        crossed = max(crossed_num / max(crossed_den, 1.0), x_found) if kind is CellKind.CENTRE else 0.0
        return (
            CellAnalysis(candidates, round(min(1.0, crossed), 6), round(min(1.0, arrow), 6), round(letters / len(seg.blobs), 6)),
            cursor,
        )


#: Read point squares both whole and segmented and combine the two: each is wrong where the other is not.
COMBINE_POINTS = True
#: ... but only the squares the whole-cell reader is less sure of than this: segmenting is most of the
#: reading time, and the surer squares it seldom corrects.
SEGMENT_POINTS_BELOW = 0.995


def _unsure(result: CellAnalysis) -> bool:
    """Whether the whole-cell reader's best reading of a square is below SEGMENT_POINTS_BELOW."""
    return not result.candidates or result.candidates[0].probability < SEGMENT_POINTS_BELOW
#: The centre's crossed probability from the segmenting reader's X finder rather than the centre model
#: (the finder calls fewer uncrossed centres crossed).
CENTRE_X_SEGMENTED = True


@dataclass(frozen=True, slots=True)
class Combination:
    """How the two readers' probabilities of a reading are pooled (see :func:`combine_readings`)."""

    #: Exponent of the whole-cell reader's probability; the segmenting reader's is 1 - weight.
    weight: float = 0.5
    #: Probability a reading gets from a reader that did not list it.
    floor: float = 0.01
    #: The pooled log-probabilities are divided by this (below 1: sharper).
    temperature: float = 1.0


#: Point and off squares: the plain geometric mean, uncalibrated on purpose, as the solver's review bar is
#: set on these probabilities as they are.
POINT_COMBINATION = Combination(0.5, 0.01, 1.0)


#: The share of a blotted cell's reading that stays on the reader's candidates: the rest is left
#: unlisted, which the solver takes as "could hold any digits" (solve.evidence.UNREADABLE_CELL).
OBSCURED_LISTED = 0.1


def obscured(analysis: CellAnalysis) -> CellAnalysis:
    """``analysis`` of a cell under a blot or scribble: its candidates kept at a tenth of their weight
    (most of the cell unreadable), no letters and no arrow (a blot is neither)."""
    candidates = tuple(CellReading(c.digits, round(c.probability * OBSCURED_LISTED, 6)) for c in analysis.candidates)
    # Not read again for the writer's hand either: the model saw the blot, not the writing.
    return replace(analysis, candidates=tuple(c for c in candidates if c.probability > 0.0), arrow=0.0, letters=0.0,
                   whole=None)


def combine_readings(whole: CellAnalysis, segmented: CellAnalysis, top: int,
                     how: Combination = Combination()) -> CellAnalysis:
    """One cell read by both readers: a product of experts over the readings either lists.

    Digits are compared as multisets (their order in a point square does not
    matter). A reading's weight is ``(a ** w * b ** (1 - w)) ** (1 / t)``,
    ``a`` and ``b`` the two readers' probabilities of it (``how.floor`` for
    a reading one reader did not list; one it listed keeps its own, however
    small), ``w`` and ``t`` ``how.weight`` and
    ``how.temperature``: with 0.5 and 1, the geometric mean, the product's
    ranking with the confidence of two readers that share most of their
    mistakes; a temperature below 1 sharpens it where the two agree more
    than that. The weights are normalised to the whole-cell reader's listed
    mass (which is below 1 when it leaves mass on impossible readings).
    """
    def by_multiset(candidates: Sequence[CellReading]) -> dict[tuple[int, ...], float]:
        out: dict[tuple[int, ...], float] = {}
        for c in candidates:
            key = tuple(sorted(c.digits))
            out[key] = out.get(key, 0.0) + c.probability
        return out

    def said(listed: dict[tuple[int, ...], float], key: tuple[int, ...]) -> float:
        # Only a reading the reader did not list gets the floor: flooring the long tail it listed too made
        # squares both readers were sure of look unsure.
        return max(listed[key], 1e-9) if key in listed else how.floor

    a, b = by_multiset(whole.candidates), by_multiset(segmented.candidates)
    keys = sorted(set(a) | set(b))
    logs = {k: (how.weight * math.log(said(a, k)) + (1.0 - how.weight) * math.log(said(b, k))) / how.temperature
            for k in keys}
    top_log = max(logs.values(), default=0.0)
    weights = {k: math.exp(v - top_log) for k, v in logs.items()}
    total = sum(weights.values())
    mass = min(1.0, sum(a.values())) if a else 1.0
    ranked = sorted(keys, key=lambda k: (-weights[k], len(k), k))[:top]
    candidates = tuple(CellReading(k, round(weights[k] / total * mass, 6)) for k in ranked
                       if weights[k] / total * mass >= 1e-6)
    return CellAnalysis(candidates, 0.0, max(whole.arrow, segmented.arrow), whole.letters)


def _cellnet_answer(call: Callable[[], Answer]) -> Answer:
    """What a cell model answered (probabilities checked as :func:`_model_answer` checks them), with its features."""
    held: list[Answer] = []

    def probabilities() -> np.ndarray:
        held.append(call())
        return held[0].probabilities

    rows = _model_answer("cell model", probabilities)
    return Answer(rows, held[0].features)


def _model_answer(name: str, call: Callable[[], np.ndarray]) -> np.ndarray:
    """What a model answered, as float64 probabilities; CellReadError if it failed or answered nonsense."""
    try:
        answer = np.asarray(call(), np.float64)
    except DigitiseError:
        raise
    except Exception as exc:  # any failure of the model makes the cells unreadable
        raise CellReadError(f"{name} failed: {type(exc).__name__}: {exc}") from exc
    if not np.all(np.isfinite(answer)) or (answer.size and answer.min() < -1e-6):
        raise CellReadError(f"{name} answered non-probabilities (NaN or negative)")
    return answer


def _beam(digits: np.ndarray, skip: np.ndarray, allowed: np.ndarray, width: int) -> dict[tuple[int, ...], float]:
    """Most probable digit strings of a row of pieces, each piece a digit or nothing."""
    states: dict[tuple[int, ...], float] = {(): 1.0}
    for row, skip_p in zip(digits, skip, strict=True):
        new: dict[tuple[int, ...], float] = {}
        for head, hp in states.items():
            if skip_p > 0:
                new[head] = new.get(head, 0.0) + hp * float(skip_p)
            for d, dp in zip(allowed, row, strict=True):
                if dp > 1e-7:
                    key = head + (int(d),)
                    new[key] = new.get(key, 0.0) + hp * float(dp)
        states = dict(sorted(new.items(), key=lambda kv: (-kv[1], kv[0]))[:width])
    return states


_DEFAULT_READER: CellReader | None = None


#: Read point/off squares with the whole-cell model when it is shipped.
USE_CELLNETS = True
#: Read the centre strip with its whole-cell model too (alone: combining it changed next to nothing).
USE_CENTRE_CELLNET = True
#: The centre's digits: the whole-cell model's alone (None), or pooled with the segmenting reader's
#: (pooled read fewer wrong but let turns through silent end to end).
CENTRE_COMBINATION: Combination | None = None


def check_models() -> None:
    """Raise :class:`InputError` naming the first shipped model that is missing or has no readable description.

    Reading checks this before its first page, so that a broken install is
    one error, not one per page or per match, and a reader missing its
    whole-cell models is never quietly a weaker one.
    """
    models = [(DEFAULT_MODEL, "glyph model", "digitise train")]
    if USE_CELLNETS:
        models += [(POINT_MODEL, "cell model", "digitise train --cellnet"),
                   (CENTRE_MODEL, "cell model", "digitise train --cellnet")]
    for path, what, command in models:
        require_model(path, what, command)
        model_metadata(path, command)


def default_reader() -> CellReader:
    """A reader on the shipped models, made once per process."""
    global _DEFAULT_READER
    if _DEFAULT_READER is None:
        nets: tuple[CellNet, CellNet | None] | None = None
        if USE_CELLNETS:
            point, centre = load_cellnets()
            nets = (point, centre if USE_CENTRE_CELLNET else None)
        _DEFAULT_READER = CellReader(cellnets=nets)
    return _DEFAULT_READER


def read_cell(ink: np.ndarray, kind: CellKind) -> tuple[CellReading, ...]:
    """Candidate readings of one cell with the shipped model (see :meth:`CellReader.read_cell`)."""
    return default_reader().read_cell(ink, kind)


def read_centre(ink: np.ndarray) -> CentreReading:
    """The centre strip read with the shipped model (see :meth:`CellReader.read_centre`)."""
    return default_reader().read_centre(ink)
