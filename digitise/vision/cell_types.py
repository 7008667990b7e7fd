"""What reading a cell deals in: the kinds of cell, the pieces of handwriting cut from one, and what is read from it."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np

from digitise.errors import DigitiseError
from digitise.notation.readings import CellReading

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
