"""Reading one cell: segment its handwriting into glyphs and turn them into candidate readings.

Input is a cell's ink (float32 in [0, 1], 1 = ink, printed lines mostly
removed) at about ``px_per_mm`` pixels per millimetre. The steps:

1. Components of the thresholded ink; specks and printed-line residue at the
   border are dropped by their shape and place.
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
"""

from __future__ import annotations

import enum
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from digitise.errors import DigitiseError
from digitise.notation.readings import CellReading
from digitise.vision.classifier import (
    GLYPH_SIZE,
    GlyphClassifier,
    class_indices,
    digit_probabilities,
    load_classifier,
    normalise_glyph,
)

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
class CellSegmentation:
    """The blobs of a cell in reading order, and whether ink was dropped as residue."""

    blobs: tuple[Blob, ...]
    dropped_ink: bool


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
    return max(0.15, 0.45 * float(np.percentile(strong, 95)))


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


def segment_cell(ink: np.ndarray, px_per_mm: float = PX_PER_MM) -> CellSegmentation:
    """Split a cell's ink into blobs in reading order, each with its alternative splits."""
    ink = np.asarray(ink, np.float32)
    if ink.ndim != 2 or ink.size == 0:
        raise ValueError(f"cell ink must be a 2-D array, got shape {ink.shape}")
    level = _threshold(ink)
    binary = (ink >= level).astype(np.uint8)
    lines = _border_lines(binary, px_per_mm)
    dropped = bool(lines.any())
    if dropped:
        binary &= ~lines
    count, labels, stats, _ = cv2.connectedComponentsWithStats(binary, connectivity=8)
    comps: list[_Component] = []
    for i in range(1, count):
        x, y, w, h, area = (int(v) for v in stats[i])
        c = _Component(x, y, x + w, y + h, area, [i])
        if _is_residue(c, ink.shape, px_per_mm):
            dropped = True
        else:
            comps.append(c)
    if not comps:
        return CellSegmentation((), dropped)
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
                    seg = _segment(ink, region[:, a:z], b.x0 + a, b.y0)
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
    return CellSegmentation(tuple(blobs), dropped)


# --- reading --------------------------------------------------------------------------------------


class CellReader:
    """Reads cells with a glyph classifier (the shipped ONNX model by default)."""

    def __init__(
        self,
        classifier: GlyphClassifier | None = None,
        *,
        px_per_mm: float = PX_PER_MM,
        top: int = TOP_CANDIDATES,
    ) -> None:
        self.classifier: GlyphClassifier = classifier if classifier is not None else load_classifier()
        self.px_per_mm = px_per_mm
        self.top = top
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
        """Read many cells with one classifier call (much faster than one call per cell)."""
        segmentations = [segment_cell(ink, self.px_per_mm) for ink, _ in cells]
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
        try:
            probabilities = np.asarray(self.classifier.predict(glyphs), np.float64)
        except DigitiseError:
            raise
        except Exception as exc:  # any failure of the model makes the cell unreadable
            raise CellReadError(f"glyph classifier failed: {type(exc).__name__}: {exc}") from exc
        if probabilities.shape != (len(glyphs), len(self._classes)):
            raise CellReadError(
                f"glyph classifier answered shape {probabilities.shape}, expected {(len(glyphs), len(self._classes))}"
            )
        if not np.all(np.isfinite(probabilities)) or probabilities.min() < -1e-6:
            raise CellReadError("glyph classifier answered non-probabilities (NaN or negative)")
        return np.clip(probabilities, 0.0, 1.0)

    def _read(
        self, seg: CellSegmentation, kind: CellKind, probabilities: np.ndarray, cursor: int
    ) -> tuple[CellAnalysis, int]:
        if not seg.blobs:
            # Only residue (or nothing) was there; dropping residue is not quite certain.
            empty = CellReading((), 0.995 if seg.dropped_ink else 1.0)
            return CellAnalysis((empty,), 0.0, 0.0, 0.0), cursor
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
        crossed = crossed_num / max(crossed_den, 1.0) if kind is CellKind.CENTRE else 0.0
        return (
            CellAnalysis(candidates, round(min(1.0, crossed), 6), round(min(1.0, arrow), 6), round(letters / len(seg.blobs), 6)),
            cursor,
        )


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


def default_reader() -> CellReader:
    """A reader on the shipped model, made once per process."""
    global _DEFAULT_READER
    if _DEFAULT_READER is None:
        _DEFAULT_READER = CellReader()
    return _DEFAULT_READER


def read_cell(ink: np.ndarray, kind: CellKind) -> tuple[CellReading, ...]:
    """Candidate readings of one cell with the shipped model (see :meth:`CellReader.read_cell`)."""
    return default_reader().read_cell(ink, kind)


def read_centre(ink: np.ndarray) -> CentreReading:
    """The centre strip read with the shipped model (see :meth:`CellReader.read_centre`)."""
    return default_reader().read_centre(ink)


@dataclass(frozen=True, slots=True)
class BoardMarkProbabilities:
    """A board's marks other than digits, from its cells' analyses."""

    crossed: float
    arrow: float
    letters: float


def board_marks_probabilities(cells: dict[str, CellAnalysis]) -> BoardMarkProbabilities:
    """Probabilities of the X over the centre's digits, of a double's arrow and of letters on a board.

    ``cells`` maps cell names (``centre``, ``B7``...) to their analyses. The X
    counts in the centre only; an arrow is usually drawn in the centre but
    counts wherever it is; a names board has letters in at least one cell.
    """
    centre = cells.get("centre")
    return BoardMarkProbabilities(
        crossed=centre.crossed if centre is not None else 0.0,
        arrow=max((a.arrow for a in cells.values()), default=0.0),
        letters=max((a.letters for a in cells.values()), default=0.0),
    )
