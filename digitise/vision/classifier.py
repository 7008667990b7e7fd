"""The handwriting glyph classifier: one small CNN, shipped as ONNX, run on the CPU.

A *glyph* is one segmented mark of a cell (a digit, a piece of line residue,
a letter, an arrow...) normalised by :func:`normalise_glyph` to a
``GLYPH_SIZE`` square, MNIST style: the mark's longer side scaled to
``GLYPH_BOX`` pixels, aspect kept, centred. The same function prepares the
training samples, so what the model saw in training is what it sees here.

The classes (:data:`CLASSES`) are the digits ``0``-``9``, the crossed digits
``1x``-``6x`` (a dice digit with an X drawn over it, as in the centre square),
``x`` (strokes of an X with no digit under them), ``arrow`` (a double's
arrow), ``letter`` (a letter of a name) and ``other`` (scribbles, pieces of
digits, several digits merged, printed-line residue). Probabilities are
calibrated: the exported model divides its logits by a temperature fitted on
held-apart training glyphs (see :mod:`digitise.training`).

PyTorch is never imported here: the model runs with onnxruntime.
"""

from __future__ import annotations

import functools
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import cv2
import numpy as np

from digitise.errors import InputError

#: Side of the square the classifier reads, in pixels.
GLYPH_SIZE = 28
#: The longer side of a normalised mark, in pixels (MNIST's 20 in 28).
GLYPH_BOX = 20

DIGIT_CLASSES: tuple[str, ...] = tuple(str(d) for d in range(10))
CROSSED_CLASSES: tuple[str, ...] = tuple(f"{d}x" for d in range(1, 7))
CLASSES: tuple[str, ...] = DIGIT_CLASSES + CROSSED_CLASSES + ("x", "arrow", "letter", "other")

MODELS_DIR = Path(__file__).resolve().parent / "models"
#: The shipped model and its metadata (classes, temperature, figures).
DEFAULT_MODEL = MODELS_DIR / "glyphs.onnx"


class GlyphClassifier(Protocol):
    """Anything that turns a batch of normalised glyphs into class probabilities."""

    classes: tuple[str, ...]

    def predict(self, glyphs: np.ndarray) -> np.ndarray:
        """``glyphs``: N x GLYPH_SIZE x GLYPH_SIZE float32 in [0, 1] -> N x len(classes) probabilities."""
        ...


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What the JSON beside a model says about it."""

    classes: tuple[str, ...]
    temperature: float
    glyph_size: int
    details: dict[str, Any]


def ink_percentile(values: np.ndarray, percent: float) -> float:
    """``np.percentile(values, percent)`` (its default, linear method) of a non-empty 1-D array, same value.

    numpy's general percentile costs ~25 us of bookkeeping, and the cell readers take one for every
    glyph and cell (thousands a batch): this is its arithmetic alone (one partition, one lerp).
    """
    n = values.size
    q = percent / 100
    index = (n - 1) * q  # numpy's virtual index for the linear method
    lo = math.floor(index)
    hi = min(lo + 1, n - 1)
    part = np.partition(values, (lo, hi) if hi != lo else lo)
    a, b = part[lo], part[hi]
    gamma = index - lo
    diff = b - a
    return float(b - diff * (1 - gamma)) if gamma >= 0.5 else float(a + diff * gamma)


def stretch_ink(ink: np.ndarray) -> np.ndarray:
    """``ink`` (float32, 1 = ink) with its level stretched so that pencil and pen look alike.

    The 90th percentile of the inked pixels (above 0.05) becomes 1, never
    more than 1 / 0.15 times as dark; all zeros when nothing is inked. Both
    readers' models see their input so.
    """
    inked = ink[ink > 0.05]
    if inked.size == 0:
        return np.zeros_like(ink)
    level = ink_percentile(inked, 90)
    return np.clip(ink / max(level, 0.15), 0.0, 1.0)


def normalise_glyph(ink: np.ndarray) -> np.ndarray:
    """One mark -> the GLYPH_SIZE square the classifier reads.

    ``ink`` is float in [0, 1] (1 = ink) holding only the mark. The mark is
    cropped to its ink, its longer side scaled to GLYPH_BOX (aspect kept, so a
    "1" stays thin and an arrow stays long), centred, and its ink level
    stretched so that pencil and pen look alike.
    """
    out = np.zeros((GLYPH_SIZE, GLYPH_SIZE), np.float32)
    ink = np.asarray(ink, np.float32)
    rows = np.flatnonzero(ink.max(axis=1) > 0.05)
    cols = np.flatnonzero(ink.max(axis=0) > 0.05)
    if rows.size == 0 or cols.size == 0:
        return out
    crop = stretch_ink(ink[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1])
    h, w = crop.shape
    scale = GLYPH_BOX / max(h, w)
    nh, nw = max(1, round(h * scale)), max(1, round(w * scale))
    interpolation = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
    small = cv2.resize(crop, (nw, nh), interpolation=interpolation)
    y0, x0 = (GLYPH_SIZE - nh) // 2, (GLYPH_SIZE - nw) // 2
    out[y0:y0 + nh, x0:x0 + nw] = small
    return np.clip(out, 0.0, 1.0)


def require_model(model: Path, what: str, train_command: str) -> None:
    """InputError naming ``model`` (a ``what``: "glyph model", "cell model") when the file is not there, with the
    command that makes it."""
    if not model.is_file():
        raise InputError(f"{what} not found (run `{train_command}`)", model)


def model_metadata(model: Path, train_command: str = "digitise train") -> dict[str, Any]:
    """The JSON object stored beside ``model`` (same name, ``.json``); InputError naming it if missing or bad.

    ``train_command`` is what the message tells the user to run when it is missing.
    """
    meta_path = model.with_suffix(".json")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise InputError(f"model metadata missing (run `{train_command}`)", meta_path) from exc
    except ValueError as exc:
        raise InputError(f"bad model metadata: {exc}", meta_path) from exc
    if not isinstance(meta, dict):
        raise InputError("bad model metadata: not an object", meta_path)
    return meta


def read_model_info(model: Path) -> ModelInfo:
    """The glyph classifier's metadata stored beside ``model`` (see :func:`model_metadata`)."""
    meta = model_metadata(model)
    try:
        classes = tuple(str(c) for c in meta["classes"])
        return ModelInfo(classes, float(meta.get("temperature", 1.0)), int(meta.get("glyph_size", GLYPH_SIZE)), meta)
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"bad model metadata: {exc}", model.with_suffix(".json")) from exc


#: The environment variables that turn onnxruntime's telemetry off (the first as 1.32 reads it, the second as later
#: releases do), each set to 1 unless the user set it.
TELEMETRY_OPT_OUTS = ("ORT_DISABLE_TELEMETRY", "ORT_TELEMETRY_DISABLED")


def open_onnx(path: Path) -> tuple[Any, str]:
    """An onnxruntime session on one CPU thread, and its input's name; InputError if unusable.

    One thread and sequential execution: pages are read in parallel by worker
    processes, not threads, and the same input must give the same output bytes.
    """
    # onnxruntime 1.2x on Linux sends usage events and keeps a device id under ~/.cache/Microsoft unless told
    # not to before it starts (and warns on every run where HOME is not writable). digitise reads sheets
    # offline; a user who wants the telemetry can still set the variable to 0.
    for opt_out in TELEMETRY_OPT_OUTS:
        os.environ.setdefault(opt_out, "1")
    import onnxruntime as ort  # heavy (~0.1 s to import): loaded only when a shipped model is, never by fakes

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    try:
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own exception types
        raise InputError(f"not a usable ONNX model: {exc}", path) from exc
    return session, session.get_inputs()[0].name


class OnnxGlyphClassifier:
    """The shipped classifier: an ONNX CNN run by onnxruntime on one CPU thread.

    The temperature is baked into the model; its output is already the
    calibrated softmax.
    """

    def __init__(self, model: str | Path = DEFAULT_MODEL, *, batch: int = 256) -> None:
        self.path = Path(model)
        require_model(self.path, "glyph model", "digitise train")
        self.info = read_model_info(self.path)
        if self.info.glyph_size != GLYPH_SIZE:
            raise InputError(f"model reads {self.info.glyph_size} px glyphs, this code {GLYPH_SIZE}", self.path)
        self.classes: tuple[str, ...] = self.info.classes
        self._session, self._input = open_onnx(self.path)
        self._batch = batch

    def predict(self, glyphs: np.ndarray) -> np.ndarray:
        """Class probabilities for a batch of normalised glyphs (N x S x S -> N x C)."""
        glyphs = np.asarray(glyphs, np.float32)
        if glyphs.ndim != 3 or glyphs.shape[1:] != (GLYPH_SIZE, GLYPH_SIZE):
            raise ValueError(f"expected N x {GLYPH_SIZE} x {GLYPH_SIZE} glyphs, got {glyphs.shape}")
        if len(glyphs) == 0:
            return np.zeros((0, len(self.classes)), np.float32)
        parts = []
        for start in range(0, len(glyphs), self._batch):
            chunk = glyphs[start:start + self._batch, None, :, :]
            parts.append(self._session.run(None, {self._input: np.ascontiguousarray(chunk)})[0])
        return np.concatenate(parts).astype(np.float32)


@functools.lru_cache(maxsize=4)
def load_classifier(model: str | None = None) -> OnnxGlyphClassifier:
    """The shipped classifier (or the one at ``model``), loaded once per process."""
    return OnnxGlyphClassifier(model if model is not None else DEFAULT_MODEL)


def class_indices(classes: Sequence[str], names: Sequence[str]) -> np.ndarray:
    """Column indices of ``names`` in ``classes`` (names the model lacks are left out)."""
    lookup = {name: i for i, name in enumerate(classes)}
    return np.array([lookup[n] for n in names if n in lookup], dtype=np.int64)


def digit_probabilities(probabilities: np.ndarray, classes: Sequence[str]) -> np.ndarray:
    """N x 10: the probability that each glyph is digit d, crossed or not."""
    probabilities = np.asarray(probabilities, np.float32)
    lookup = {name: i for i, name in enumerate(classes)}
    out = np.zeros((len(probabilities), 10), np.float32)
    for d in range(10):
        for name in (str(d), f"{d}x"):
            if name in lookup:
                out[:, d] += probabilities[:, lookup[name]]
    return out
