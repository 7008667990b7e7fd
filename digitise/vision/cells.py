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

This module holds the shipped reader (:func:`default_reader`,
:func:`check_models`); the steps live in :mod:`.segment` (1-3),
:mod:`.cross` (the X), :mod:`.cell_reader` (4) and :mod:`.combine` (two
readers pooled), the values they pass in :mod:`.cell_types`. Their public
names are importable from here.
"""

from __future__ import annotations

import numpy as np

from digitise.notation.readings import CellReading
from digitise.vision.cell_reader import CellReader
from digitise.vision.cell_types import (
    MAX_DIGITS,
    PX_PER_MM,
    TOP_CANDIDATES,
    Blob,
    CellAnalysis,
    CellKind,
    CellReadError,
    CellSegmentation,
    CentreReading,
    Cross,
    Segment,
    Stroke,
    WholeCell,
)
from digitise.vision.cellnet import CENTRE_MODEL, POINT_MODEL, CellNet, load_cellnets
from digitise.vision.classifier import DEFAULT_MODEL, model_metadata, require_model
from digitise.vision.combine import POINT_COMBINATION, Combination, combine_readings, obscured
from digitise.vision.cross import erase_cross, find_cross
from digitise.vision.segment import segment_cell

_DEFAULT_READER: CellReader | None = None


#: Read point/off squares with the whole-cell model when it is shipped.
USE_CELLNETS = True
#: Read the centre strip with its whole-cell model too (alone: combining it changed next to nothing).
USE_CENTRE_CELLNET = True


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


#: The cell reader's public names, wherever they live (:mod:`.cell_types`, :mod:`.segment`, :mod:`.cross`,
#: :mod:`.cell_reader`, :mod:`.combine`), importable from here as before.
__all__ = [
    "MAX_DIGITS",
    "POINT_COMBINATION",
    "PX_PER_MM",
    "TOP_CANDIDATES",
    "USE_CELLNETS",
    "USE_CENTRE_CELLNET",
    "Blob",
    "CellAnalysis",
    "CellKind",
    "CellReadError",
    "CellReader",
    "CellSegmentation",
    "CentreReading",
    "Combination",
    "Cross",
    "Segment",
    "Stroke",
    "WholeCell",
    "check_models",
    "combine_readings",
    "default_reader",
    "erase_cross",
    "find_cross",
    "obscured",
    "read_cell",
    "read_centre",
    "segment_cell",
]
