"""The whole-cell reader: one small CNN reads a point square or the centre strip at once.

The segmenting reader (:mod:`digitise.vision.cells`) cuts a cell into glyphs
and classifies each; most of its mistakes are cutting mistakes (a "5" in two
pieces read "1 2", residue read as a "1", four digits in a row read as
three). This reader does not cut: it looks at the whole cell and says, for
each dice value 1-6, how many times it is written there (0-4, one softmax
head per value), and whether there are letters, an X over the digits (centre)
or a double's arrow. Candidate readings are the most probable multisets,
found best first from the six heads (:func:`best_multisets`): the order of
digits in a point square does not matter to the solver, and the centre is
read as which values went unplayed.

Inputs (:func:`point_input`, :func:`centre_input`) are made from the cell ink
that :func:`digitise.vision.read.cell_ink` cuts (10 px/mm, 1.5 mm margin):

* a point or off square is resized whole to ``POINT_SHAPE`` (where the ink
  lies in the square matters: strokes at its edge are often residue);
* the centre strip is long and thin and the digits fill a small part of it:
  it is cropped to its ink with a margin and scaled (aspect kept, never
  larger than a fixed scale) into ``CENTRE_SHAPE``, padded.

Training is in :mod:`digitise.training.cellnet`; the models are ONNX files
run by onnxruntime on one thread (PyTorch is never imported here), with the
calibration temperature baked in: their outputs are probabilities.
"""

from __future__ import annotations

import base64
import functools
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import cv2
import numpy as np

from digitise.errors import InputError
from digitise.notation.readings import CellReading
from digitise.vision.classifier import model_metadata, open_onnx, require_model, stretch_ink
from digitise.vision.ink import components

#: Model input of a point/off square: (height, width) px.
POINT_SHAPE = (64, 48)
#: Model input of the centre strip: (height, width) px.
CENTRE_SHAPE = (48, 160)
#: Largest scale of the centre's crop (input px per cell-ink px): the strip's full height fits, and
#: digits under an X stay about 25 px tall (at 0.28 they were 15 and the X hid them).
CENTRE_MAX_SCALE = 0.42
#: Margin (cell-ink px, 10 px/mm) kept around the centre's ink when cropping.
CENTRE_MARGIN_PX = 12
#: Ink below this is not looked at when finding the centre's ink box.
INK_LEVEL = 0.2
#: Components smaller than this (px at 10 px/mm) do not widen the centre's ink box (specks).
MIN_BOX_COMPONENT = 25
#: Dice values and how many times each may be written in a cell.
VALUES = (1, 2, 3, 4, 5, 6)
MAX_COUNT = 4
#: Outputs of a model: VALUES x (MAX_COUNT + 1) count probabilities, then letters, crossed, arrow.
OUTPUTS = len(VALUES) * (MAX_COUNT + 1) + 3
MARKS = ("letters", "crossed", "arrow")
#: The second output of a model that can adapt to a writer: the activations its last layer reads.
FEATURES_OUTPUT = "features"
#: Metadata keys of that model's last layer (weight, bias as base64 float32; count temperature; weight's shape).
HEAD_KEYS = ("digitise.head.weight", "digitise.head.bias", "digitise.head.count_temperature", "digitise.head.shape")

MODELS_DIR = Path(__file__).resolve().parent / "models"
#: The first point model, trained on 140 matches of ``digits.png``'s glyphs (kept as it is, so that the
#: second model's errors stay apart from its own).
POINT_MODEL = MODELS_DIR / "cellnet_point.onnx"
CENTRE_MODEL = MODELS_DIR / "cellnet_centre.onnx"
#: A second centre model, trained apart: when shipped, the centre's answer is the mean of the two
#: (an ensemble is wrong less often and less sure when wrong). Not shipped: too little gained for its time.
CENTRE_MODEL_B = MODELS_DIR / "cellnet_centre_b.onnx"
#: The same for point and off squares, shipped: trained like the first but on pages written with MNIST's
#: digits too, and on many-digit squares (``digitise train --cellnet --only point --second --mnist
#: ../mnist-data --matches 420 --multi-matches 300 --seed 5``): its misreads are not the first's.
POINT_MODEL_B = MODELS_DIR / "cellnet_point_b.onnx"
#: Cells are read as the mean over their input and the input moved a pixel each way (ShiftedCellNet):
#: a reading that hangs on one pixel's placing is less sure, and less often wrong.
SHIFTS = ((0, 0), (1, 0), (-1, 0), (0, 1), (0, -1))
#: Sharpening of the mean's count heads, fitted on validation centres: the mean alone is under-confident.
SHIFT_TEMPERATURE = 0.9
#: Point and off squares get the same shifts and sharpening, but only those the model reads less surely
#: than this: as good as shifting all at a fraction of the cost, and no wrong reading sharpened past the bar.
POINT_UNSURE = 0.95


def point_input(ink: np.ndarray) -> np.ndarray:
    """A point or off square's ink (10 px/mm, with margin) as the model reads it: POINT_SHAPE float32."""
    ink = np.asarray(ink, np.float32)
    if ink.ndim != 2 or ink.size == 0:
        raise ValueError(f"cell ink must be a 2-D array, got shape {ink.shape}")
    height, width = POINT_SHAPE
    small = cv2.resize(ink, (width, height), interpolation=cv2.INTER_AREA)
    return stretch_ink(small)


def ink_box(ink: np.ndarray) -> tuple[int, int, int, int] | None:
    """x0, y0, x1, y1 (exclusive) of the ink that is more than a speck, or None when there is none."""
    binary = (np.asarray(ink) >= INK_LEVEL).astype(np.uint8)
    count, _, stats = components(binary)
    keep = [i for i in range(1, count) if stats[i, cv2.CC_STAT_AREA] >= MIN_BOX_COMPONENT]
    if not keep:
        # Only specks: take them all rather than nothing (the model then sees them and says empty).
        keep = list(range(1, count))
    if not keep:
        return None
    s = stats[keep]
    x0, y0 = int(s[:, cv2.CC_STAT_LEFT].min()), int(s[:, cv2.CC_STAT_TOP].min())
    x1 = int((s[:, cv2.CC_STAT_LEFT] + s[:, cv2.CC_STAT_WIDTH]).max())
    y1 = int((s[:, cv2.CC_STAT_TOP] + s[:, cv2.CC_STAT_HEIGHT]).max())
    return x0, y0, x1, y1


def centre_input(ink: np.ndarray) -> np.ndarray:
    """The centre strip's ink cropped to its ink box (with a margin), scaled into CENTRE_SHAPE, padded."""
    ink = np.asarray(ink, np.float32)
    if ink.ndim != 2 or ink.size == 0:
        raise ValueError(f"cell ink must be a 2-D array, got shape {ink.shape}")
    out_h, out_w = CENTRE_SHAPE
    out = np.zeros(CENTRE_SHAPE, np.float32)
    box = ink_box(ink)
    if box is None:
        return out
    m = CENTRE_MARGIN_PX
    x0, y0 = max(box[0] - m, 0), max(box[1] - m, 0)
    x1, y1 = min(box[2] + m, ink.shape[1]), min(box[3] + m, ink.shape[0])
    crop = ink[y0:y1, x0:x1]
    h, w = crop.shape
    scale = min(out_h / h, out_w / w, CENTRE_MAX_SCALE)
    nh, nw = max(1, min(out_h, round(h * scale))), max(1, min(out_w, round(w * scale)))
    small = cv2.resize(crop, (nw, nh), interpolation=cv2.INTER_AREA)
    top, left = (out_h - nh) // 2, (out_w - nw) // 2
    out[top:top + nh, left:left + nw] = small
    return stretch_ink(out)


def _readings(max_total: int) -> np.ndarray:
    """Every choice of counts (one per value) with at most ``max_total`` digits, in a fixed order."""
    grid = np.array(list(itertools.product(range(MAX_COUNT + 1), repeat=len(VALUES))), np.int64)
    readings: np.ndarray = grid[grid.sum(axis=1) <= max_total]
    return readings


#: The 210 readings of at most four dice digits, as counts per value.
READINGS = _readings(MAX_COUNT)


def digits_of(counts: Sequence[int] | np.ndarray) -> tuple[int, ...]:
    """The digits a reading writes, smallest first, from how many times each of VALUES is written."""
    return tuple(d for d, n in zip(VALUES, counts, strict=True) for _ in range(int(n)))


def best_multisets(counts: np.ndarray, top: int, max_total: int = MAX_COUNT) -> list[tuple[tuple[int, ...], float]]:
    """The ``top`` most probable readings from per-value count distributions, best first.

    ``counts`` is len(VALUES) x (MAX_COUNT + 1): row v, column c = P(value v
    written c times). The heads are taken as independent: a reading's
    probability is the product over values. Readings with more than
    ``max_total`` digits are impossible and left out (their mass is lost, so
    the candidates may sum to less than 1). There are only 210 readings of
    at most four digits: all are scored at once (exact, and faster than a
    best-first search). Ties go to the reading listed first (fewer digits).
    """
    p = np.clip(np.asarray(counts, np.float64), 0.0, 1.0)
    readings = READINGS if max_total == MAX_COUNT else _readings(max_total)
    scores = np.prod(p[np.arange(len(VALUES)), readings], axis=1)
    order = np.argsort(-scores, kind="stable")[:top]
    out = []
    for k in order:
        if scores[k] <= 0.0:
            break
        out.append((digits_of(readings[k]), float(scores[k])))
    return out


class CellNet(Protocol):
    """Anything that turns a batch of model inputs into OUTPUTS probabilities per cell."""

    def predict(self, inputs: np.ndarray) -> np.ndarray:
        """``inputs``: N x H x W float32 -> N x OUTPUTS (count softmaxes, then three mark probabilities)."""
        ...


@dataclass(frozen=True, slots=True)
class LastLayer:
    """A model's last layer: what per-match adaptation fine-tunes (:mod:`digitise.vision.adapt`)."""

    #: OUTPUTS x F and OUTPUTS, float64.
    weight: np.ndarray
    bias: np.ndarray
    #: The calibration temperature the count logits are divided by.
    count_temperature: float

    def count_probabilities(self, features: np.ndarray, weight: np.ndarray | None = None,
                            bias: np.ndarray | None = None) -> np.ndarray:
        """N x F features -> N x len(VALUES) x (MAX_COUNT + 1) count probabilities (with another weight and
        bias of the count rows when given)."""
        heads = len(VALUES) * (MAX_COUNT + 1)
        w = self.weight[:heads] if weight is None else weight
        b = self.bias[:heads] if bias is None else bias
        z = (np.asarray(features, np.float64) @ w.T + b) / self.count_temperature
        z = z.reshape(len(z), len(VALUES), MAX_COUNT + 1)
        z -= z.max(axis=2, keepdims=True)
        e = np.exp(z)
        out: np.ndarray = e / e.sum(axis=2, keepdims=True)
        return out


@dataclass(frozen=True, slots=True)
class Answer:
    """A batch of cells as a model ensemble answered it, with each member's features of the unmoved input."""

    probabilities: np.ndarray
    #: One N x F array per member model with a last layer (:attr:`FeatureCellNet.heads`), in the same order.
    features: tuple[np.ndarray, ...] = ()


class FeatureCellNet(CellNet, Protocol):
    """A cell model that also says what its last layers read, so that it can adapt to a writer."""

    #: The last layer of each member model, in the order of :attr:`Answer.features`.
    heads: tuple[LastLayer, ...]

    def answer(self, inputs: np.ndarray) -> Answer:
        """:meth:`predict`'s probabilities and the members' features."""
        ...


def last_layer(metadata: dict[str, str]) -> LastLayer | None:
    """The last layer kept in a model's metadata (:data:`HEAD_KEYS`), None when it keeps none."""
    if not all(key in metadata for key in HEAD_KEYS):
        return None
    rows, width = (int(v) for v in metadata[HEAD_KEYS[3]].split(","))
    weight = np.frombuffer(base64.b64decode(metadata[HEAD_KEYS[0]]), "<f4").astype(np.float64).reshape(rows, width)
    bias = np.frombuffer(base64.b64decode(metadata[HEAD_KEYS[1]]), "<f4").astype(np.float64)
    return LastLayer(weight, bias, float(metadata[HEAD_KEYS[2]]))


@dataclass(frozen=True, slots=True)
class CellNetOutput:
    """One cell's model output, split up."""

    #: len(VALUES) x (MAX_COUNT + 1): P(value written c times).
    counts: np.ndarray
    letters: float
    crossed: float
    arrow: float


def split_output(row: np.ndarray) -> CellNetOutput:
    """One row of a model's output as counts and mark probabilities."""
    row = np.asarray(row, np.float64)
    counts = row[: len(VALUES) * (MAX_COUNT + 1)].reshape(len(VALUES), MAX_COUNT + 1)
    letters, crossed, arrow = (float(v) for v in row[len(VALUES) * (MAX_COUNT + 1):])
    return CellNetOutput(counts, letters, crossed, arrow)


def candidates_of(output: CellNetOutput, top: int) -> tuple[CellReading, ...]:
    """Candidate readings of a cell from its model output, best first (rounded to 6 places)."""
    return tuple(CellReading(digits, round(p, 6)) for digits, p in best_multisets(output.counts, top) if p >= 1e-6)


class OnnxCellNet:
    """A shipped whole-cell model, run by onnxruntime on one CPU thread (deterministic)."""

    def __init__(self, model: str | Path, shape: tuple[int, int], *, batch: int = 64) -> None:
        self.path = Path(model)
        require_model(self.path, "cell model", "digitise train --cellnet")
        self.shape = shape
        self.info = model_metadata(self.path, "digitise train --cellnet")
        stored = tuple(self.info.get("input_shape", shape))
        if stored != tuple(shape):
            raise InputError(f"model reads {stored} inputs, this code {shape}", self.path)
        self._session, self._input = open_onnx(self.path)
        self._batch = batch
        outputs = [o.name for o in self._session.get_outputs()]
        head = last_layer(dict(self._session.get_modelmeta().custom_metadata_map))
        self._features = FEATURES_OUTPUT in outputs and head is not None
        self.heads: tuple[LastLayer, ...] = (head,) if self._features and head is not None else ()
        self._outputs = [outputs[0], FEATURES_OUTPUT] if self._features else [outputs[0]]

    def predict(self, inputs: np.ndarray) -> np.ndarray:
        """N x H x W inputs -> N x OUTPUTS probabilities."""
        return self.answer(inputs).probabilities

    def answer(self, inputs: np.ndarray) -> Answer:
        """N x H x W inputs -> their probabilities, and the features when the model exports them."""
        inputs = np.asarray(inputs, np.float32)
        if inputs.ndim != 3 or inputs.shape[1:] != self.shape:
            raise ValueError(f"expected N x {self.shape[0]} x {self.shape[1]} inputs, got {inputs.shape}")
        if len(inputs) == 0:
            width = self.heads[0].weight.shape[1] if self.heads else 0
            return Answer(np.zeros((0, OUTPUTS), np.float32), tuple(np.zeros((0, width), np.float32) for _ in self.heads))
        parts, features = [], []
        for start in range(0, len(inputs), self._batch):
            chunk = np.ascontiguousarray(inputs[start:start + self._batch, None, :, :])
            ran = self._session.run(self._outputs, {self._input: chunk})
            parts.append(ran[0])
            if self._features:
                features.append(ran[1])
        feats = (np.concatenate(features).astype(np.float32),) if self._features else ()
        return Answer(np.concatenate(parts).astype(np.float32), feats)


class MeanCellNet:
    """Several models of one kind answering as one: the mean of their probabilities."""

    def __init__(self, nets: Sequence[CellNet]) -> None:
        if not nets:
            raise ValueError("no models to average")
        self.nets = tuple(nets)
        heads = [tuple(getattr(net, "heads", ())) for net in self.nets]
        # Adapting needs every member's features: one member that keeps none leaves the mean unadaptable.
        self.heads: tuple[LastLayer, ...] = tuple(h for each in heads for h in each) if all(heads) else ()

    def predict(self, inputs: np.ndarray) -> np.ndarray:
        """N x H x W inputs -> N x OUTPUTS, the mean of every model's answer."""
        return self.answer(inputs).probabilities

    def answer(self, inputs: np.ndarray) -> Answer:
        """The mean of every model's probabilities, and every member's features (when all have them)."""
        answers = [_answer_of(net, inputs) for net in self.nets]
        mean: np.ndarray = np.mean([np.asarray(a.probabilities, np.float64) for a in answers], axis=0)
        features = tuple(f for a in answers for f in a.features) if self.heads else ()
        return Answer(mean.astype(np.float32), features)


class ShiftedCellNet:
    """A model asked about its inputs and copies of them moved a pixel each way: the mean answer.

    The cell models react to single-pixel moves of their input (the centre
    model moved one pixel up alone reads 0.9 points more validation centres
    right), so the mean over a few moves is right more often and less often
    sure when wrong. The mean is flatter than one answer: its count heads are
    sharpened by ``temperature`` (< 1) to keep the probabilities honest.
    With ``unsure_below``, only cells whose best reading the model gives less
    than that probability are asked again (on validation point squares every
    reading the moves changed was one of those).
    """

    def __init__(self, net: CellNet, shifts: Sequence[tuple[int, int]], temperature: float = 1.0,
                 unsure_below: float | None = None) -> None:
        if not shifts:
            raise ValueError("no shifts to average")
        if temperature <= 0.0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        self.net = net
        self.shifts = tuple(shifts)
        self.temperature = temperature
        self.unsure_below = unsure_below
        self.heads: tuple[LastLayer, ...] = tuple(getattr(net, "heads", ()))

    def predict(self, inputs: np.ndarray) -> np.ndarray:
        """N x H x W inputs -> N x OUTPUTS: the mean over the shifted copies, count heads sharpened."""
        return self.answer(inputs).probabilities

    def answer(self, inputs: np.ndarray) -> Answer:
        """:meth:`predict`'s probabilities, and the features of the unmoved inputs."""
        inputs = np.asarray(inputs, np.float32)
        first = _answer_of(self.net, inputs)
        return Answer(self._moved(inputs, np.asarray(first.probabilities, np.float64)), first.features)

    def _moved(self, inputs: np.ndarray, plain: np.ndarray) -> np.ndarray:
        heads = len(VALUES) * (MAX_COUNT + 1)
        if self.unsure_below is None:
            chosen = np.arange(len(inputs))
        else:
            best = [best_multisets(row[:heads].reshape(len(VALUES), MAX_COUNT + 1), 1) for row in plain]
            chosen = np.array([i for i, b in enumerate(best) if not b or b[0][1] < self.unsure_below], np.int64)
        if len(chosen) == 0:
            return plain.astype(np.float32)
        moves = [move for move in self.shifts if move != (0, 0)]
        some = inputs[chosen]
        answers = [plain[chosen]] if len(moves) < len(self.shifts) else []
        if moves:
            copies = np.concatenate([shifted(some, dx, dy) for dx, dy in moves])
            answers += list(np.asarray(self.net.predict(copies), np.float64).reshape(len(moves), len(chosen), -1))
        mean = np.mean(answers, axis=0)
        counts = np.clip(mean[:, :heads].reshape(len(chosen), len(VALUES), MAX_COUNT + 1), 1e-12, 1.0)
        counts = counts ** (1.0 / self.temperature)
        counts /= counts.sum(axis=2, keepdims=True)
        mean[:, :heads] = counts.reshape(len(chosen), heads)
        out = plain.copy()
        out[chosen] = mean
        return out.astype(np.float32)


def _answer_of(net: CellNet, inputs: np.ndarray) -> Answer:
    """``net``'s answer with features when it gives them, its probabilities alone when not."""
    answer = getattr(net, "answer", None)
    return answer(inputs) if callable(answer) else Answer(np.asarray(net.predict(inputs), np.float32))


def shifted(inputs: np.ndarray, dx: int, dy: int) -> np.ndarray:
    """N x H x W inputs moved ``dx`` px right and ``dy`` px down, blank (0) where nothing moved in."""
    out = np.zeros_like(inputs)
    _, h, w = inputs.shape
    out[:, max(dy, 0):h + min(dy, 0), max(dx, 0):w + min(dx, 0)] = \
        inputs[:, max(-dy, 0):h + min(-dy, 0), max(-dx, 0):w + min(-dx, 0)]
    return out


def cellnets_available() -> bool:
    """Whether the shipped whole-cell models are there."""
    return POINT_MODEL.is_file() and CENTRE_MODEL.is_file()


@functools.lru_cache(maxsize=2)
def load_cellnets() -> tuple[CellNet, CellNet]:
    """The shipped (point, centre) models, loaded once per process (each kind's two, averaged, when
    POINT_MODEL_B or CENTRE_MODEL_B is shipped), each asked again about shifted inputs (every centre; point squares
    it is unsure of)."""
    centre = ShiftedCellNet(_one_kind(CENTRE_MODEL, CENTRE_MODEL_B, CENTRE_SHAPE), SHIFTS, SHIFT_TEMPERATURE)
    point = ShiftedCellNet(_one_kind(POINT_MODEL, POINT_MODEL_B, POINT_SHAPE), SHIFTS, SHIFT_TEMPERATURE,
                           unsure_below=POINT_UNSURE)
    return point, centre


def point_heads() -> tuple[LastLayer, ...]:
    """The last layers of the shipped point models, which adapting to a writer fine-tunes (empty: they keep none)."""
    heads: tuple[LastLayer, ...] = getattr(load_cellnets()[0], "heads", ())
    return heads


def _one_kind(first: Path, second: Path, shape: tuple[int, int]) -> CellNet:
    """The model at ``first``, or its mean with the one at ``second`` when that is shipped too."""
    net = OnnxCellNet(first, shape)
    return MeanCellNet((net, OnnxCellNet(second, shape))) if second.is_file() else net


def prepare(ink: np.ndarray, centre: bool) -> np.ndarray:
    """The model input of a cell: :func:`centre_input` or :func:`point_input`."""
    return centre_input(ink) if centre else point_input(ink)


def run(net: CellNet, inputs: Sequence[np.ndarray], shape: tuple[int, int]) -> np.ndarray:
    """One batched model call over ``inputs`` (N x OUTPUTS; empty in, empty out)."""
    return run_answer(net, inputs, shape).probabilities


def run_answer(net: CellNet, inputs: Sequence[np.ndarray], shape: tuple[int, int]) -> Answer:
    """:func:`run`, with the members' features when ``net`` gives them (probabilities as float64)."""
    if not inputs:
        return Answer(np.zeros((0, OUTPUTS), np.float64))
    answer = _answer_of(net, np.stack(inputs).astype(np.float32))
    out = np.asarray(answer.probabilities, np.float64)
    if out.shape != (len(inputs), OUTPUTS):
        raise ValueError(f"cell model answered shape {out.shape}, expected {(len(inputs), OUTPUTS)}")
    return Answer(out, answer.features)


__all__ = [
    "CENTRE_SHAPE",
    "FEATURES_OUTPUT",
    "HEAD_KEYS",
    "OUTPUTS",
    "POINT_SHAPE",
    "VALUES",
    "Answer",
    "CellNet",
    "CellNetOutput",
    "FeatureCellNet",
    "LastLayer",
    "MeanCellNet",
    "OnnxCellNet",
    "ShiftedCellNet",
    "best_multisets",
    "candidates_of",
    "cellnets_available",
    "centre_input",
    "digits_of",
    "last_layer",
    "load_cellnets",
    "point_heads",
    "point_input",
    "prepare",
    "run",
    "run_answer",
    "shifted",
    "split_output",
]
