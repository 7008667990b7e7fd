"""The cell reader: cells read whole by the cell models, or segmented and every glyph classified, in batches.

Step 4 of :mod:`digitise.vision.cells`: point and off squares and the centre
strip go to the whole-cell models when the reader has them, the others (and
the point squares the models are unsure of) are segmented (:mod:`.segment`)
and their glyphs classified in one call.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from digitise.errors import DigitiseError
from digitise.notation.readings import CellReading
from digitise.vision.cell_types import (
    MAX_DIGITS,
    PX_PER_MM,
    TOP_CANDIDATES,
    CellAnalysis,
    CellKind,
    CellReadError,
    CellSegmentation,
    CentreReading,
    WholeCell,
)
from digitise.vision.cellnet import (
    CENTRE_SHAPE,
    POINT_SHAPE,
    Answer,
    CellNet,
    candidates_of,
    prepare,
    run_answer,
    split_output,
)
from digitise.vision.classifier import (
    GLYPH_SIZE,
    GlyphClassifier,
    class_indices,
    digit_probabilities,
    load_classifier,
)
from digitise.vision.combine import POINT_COMBINATION, Combination, combine_readings
from digitise.vision.segment import segment_cell


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


#: The centre's digits: the whole-cell model's alone (None), or pooled with the segmenting reader's
#: (pooled read fewer wrong but let turns through silent end to end).
CENTRE_COMBINATION: Combination | None = None
