"""A cell's reading adjusted after the readers: two readers' readings pooled, a blotted cell's discounted."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from digitise.notation.readings import CellReading
from digitise.vision.cell_types import CellAnalysis


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
