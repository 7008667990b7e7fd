"""`digitise train`: reproduce the shipped glyph classifier.

Data: the TRAIN glyphs of ``digits.png`` only (the TEST glyphs are held out
for measuring), drawn into synthetic cells (:mod:`digitise.training.cells`)
and cut by the reader's own segmentation, so the model learns the pieces it
will be shown: whole digits, crossed digits, half digits and merged pairs
(``other``), arrows, letters, residue. The last tenth of each class's TRAIN
glyphs is kept apart for validation and fitting the temperature.

PyTorch is imported inside :func:`train_classifier` only: it is a
training-time extra (``pip install digitise[train]``), never needed to read.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from digitise.errors import InputError, OutputError
from digitise.fileio import make_folder, write_atomic
from digitise.sheet.glyphs import GlyphSubset, load_digit_glyphs
from digitise.training import require_torch
from digitise.training.calibration import expected_calibration_error, fit_temperature, reliability, softmax
from digitise.training.cells import label_segments, random_cell
from digitise.training.mnist import TENTH as MNIST_TENTH
from digitise.training.mnist import mnist_files, mnist_training_glyphs
from digitise.vision.classifier import CLASSES, GLYPH_SIZE, digit_probabilities, normalise_glyph

log = logging.getLogger(__name__)

MODEL_NAME = "glyphs"
#: Share of the dataset that may be ``other`` (there are many more wrong splits than right ones).
OTHER_SHARE = 0.3


#: Epochs of the glyph classifier, as shipped (vision/models/glyphs.json).
GLYPH_EPOCHS = 10


@dataclass(frozen=True, slots=True)
class TrainOptions:
    """What `digitise train` was asked to do."""

    output: Path
    glyphs: Path | None = None
    synth: Path | None = None
    epochs: int = GLYPH_EPOCHS
    seed: int = 1
    cells: int = 14000
    jobs: int = 2
    #: Folder of MNIST's idx files: its digits unlike any of the glyph source's join the TRAIN glyphs
    #: (:func:`digitise.training.mnist.mnist_training_glyphs`); the TEST glyphs stay the source's.
    mnist: Path | None = None
    overwrite: bool = False


@dataclass(frozen=True, slots=True)
class TrainReport:
    """Where the model went and how it measured."""

    model: Path
    metadata: Path
    figures: dict[str, Any]


# --- data -----------------------------------------------------------------------------------------


def split_validation(glyphs: Mapping[int, Sequence[np.ndarray]]) -> tuple[dict[int, list[np.ndarray]], dict[int, list[np.ndarray]]]:
    """(fit, validation): the first nine tenths of each digit's glyphs, and the last tenth held apart."""
    fit, val = {}, {}
    for d, items in glyphs.items():
        cut = (len(items) * 9) // 10
        fit[d], val[d] = list(items[:cut]), list(items[cut:])
    return fit, val


def _cell_chunk(args: tuple[dict[int, Sequence[np.ndarray]], int, int, float]) -> list[tuple[np.ndarray, str]]:
    glyphs, seed, count, damage = args
    rng = np.random.default_rng(seed)
    out: list[tuple[np.ndarray, str]] = []
    for _ in range(count):
        out.extend(label_segments(random_cell(glyphs, rng, damage=float(rng.uniform(0.2, 1.0)) * damage)))
    return out


def _clean_glyphs(glyphs: Mapping[int, Sequence[np.ndarray]]) -> list[tuple[np.ndarray, str]]:
    """The glyphs as they are (no hand, no damage), so clean writing is in the training too."""
    return [(normalise_glyph(g.astype(np.float32) / 255.0), str(d)) for d, items in sorted(glyphs.items()) for g in items]


def synthetic_samples(
    glyphs: Mapping[int, Sequence[np.ndarray]], cells: int, seed: int, jobs: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """Labelled glyphs cut from ``cells`` synthetic cells (deterministic for a seed, whatever ``jobs``)."""
    chunk = 250
    tasks = [(dict(glyphs), seed * 100_003 + i, min(chunk, cells - i * chunk), 1.0) for i in range((cells + chunk - 1) // chunk)]
    if jobs > 1:
        # forkserver, not fork: torch's threads may already run in this process (see celldata.generate).
        with multiprocessing.get_context("forkserver").Pool(jobs) as pool:
            parts = pool.map(_cell_chunk, tasks)
    else:
        parts = [_cell_chunk(t) for t in tasks]
    samples = [s for part in parts for s in part] + _clean_glyphs(glyphs)
    rng = np.random.default_rng(seed + 7)
    others = [i for i, (_, label) in enumerate(samples) if label == "other"]
    keep_others = int(OTHER_SHARE / (1 - OTHER_SHARE) * (len(samples) - len(others)))
    drop = set(rng.permutation(others)[keep_others:].tolist()) if len(others) > keep_others else set()
    index = {name: i for i, name in enumerate(CLASSES)}
    kept = [s for i, s in enumerate(samples) if i not in drop]
    x = np.stack([g for g, _ in kept]).astype(np.float32)
    y = np.array([index[label] for _, label in kept], np.int64)
    return x, y


def learned_samples(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    """Extra labelled glyph images: ``folder/<class>/*.png`` (e.g. corrected cells of a writer)."""
    index = {name: i for i, name in enumerate(CLASSES)}
    xs, ys = [], []
    for path in sorted(folder.rglob("*.png")):
        label = path.parent.name
        if label not in index:
            continue
        image = cv2.imread(str(path), cv2.IMREAD_GRAYSCALE)
        if image is None:
            raise InputError("not an image", path)
        ink = image.astype(np.float32) / 255.0
        if ink.mean() > 0.5:
            ink = 1.0 - ink  # dark ink on light paper
        xs.append(normalise_glyph(ink))
        ys.append(index[label])
    if not xs:
        raise InputError("no labelled glyph image (expected <class>/<name>.png)", folder)
    return np.stack(xs), np.array(ys, np.int64)


# --- model ----------------------------------------------------------------------------------------


def _build_model(torch: Any, classes: int) -> Any:
    nn = torch.nn
    # ~0.1 M parameters, ~1.5 M multiply-adds per glyph: fast on one CPU core.
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Dropout(0.2),
        nn.Linear(64 * 3 * 3, 128), nn.ReLU(),
        nn.Linear(128, classes),
    )


def _logits(torch: Any, model: Any, x: np.ndarray) -> np.ndarray:
    model.eval()
    out = []
    with torch.no_grad():
        for start in range(0, len(x), 1024):
            out.append(model(torch.from_numpy(x[start:start + 1024, None])).numpy())
    return np.concatenate(out) if out else np.zeros((0, len(CLASSES)), np.float32)


def _shift(torch: Any, batch: Any, generator: Any) -> Any:
    """Random shifts of up to 2 px: centring is never exact."""
    dx, dy = (int(v) for v in torch.randint(-2, 3, (2,), generator=generator))
    return torch.roll(batch, shifts=(dy, dx), dims=(2, 3))


def _fit(torch: Any, model: Any, x: np.ndarray, y: np.ndarray, epochs: int, seed: int) -> None:
    generator = torch.Generator().manual_seed(seed)
    counts = np.bincount(y, minlength=len(CLASSES)).astype(np.float64)
    # Rare classes (arrow, crossed digits) weigh more, but not all the way to balance.
    weights = torch.tensor((counts.max() / np.maximum(counts, 1)) ** 0.5, dtype=torch.float32)
    loss_fn = torch.nn.CrossEntropyLoss(weight=weights)
    optimiser = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    batch = 256
    steps = epochs * ((len(x) + batch - 1) // batch)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=3e-3, total_steps=steps)
    xt, yt = torch.from_numpy(x[:, None]), torch.from_numpy(y)
    for epoch in range(epochs):
        model.train()
        order = torch.randperm(len(x), generator=generator)
        total, right, seen = 0.0, 0, 0
        for start in range(0, len(x), batch):
            idx = order[start:start + batch]
            xb, yb = _shift(torch, xt[idx], generator), yt[idx]
            optimiser.zero_grad()
            out = model(xb)
            loss = loss_fn(out, yb)
            loss.backward()
            optimiser.step()
            schedule.step()
            total += float(loss.detach()) * len(idx)
            right += int((out.argmax(1) == yb).sum())
            seen += len(idx)
        log.info("epoch %d/%d: loss %.4f, train accuracy %.4f", epoch + 1, epochs, total / seen, right / seen)


class _Calibrated:
    """The exported graph: the network, its logits divided by the temperature, then softmax."""

    @staticmethod
    def wrap(torch: Any, model: Any, temperature: float) -> Any:
        class Wrapped(torch.nn.Module):  # type: ignore[misc, name-defined]
            def __init__(self) -> None:
                super().__init__()
                self.net = model

            def forward(self, glyphs: Any) -> Any:
                return torch.softmax(self.net(glyphs) / temperature, dim=1)

        return Wrapped().eval()


# --- measuring --------------------------------------------------------------------------------


def glyph_figures(probabilities: np.ndarray, labels: np.ndarray, digits: Sequence[int]) -> dict[str, Any]:
    """Accuracy per digit and calibration of clean glyphs, the prediction restricted to ``digits``."""
    p = digit_probabilities(probabilities, CLASSES)[:, list(digits)]
    sel = np.isin(labels, list(digits))
    p, truth = p[sel], labels[sel]
    guess = np.array(digits)[p.argmax(axis=1)]
    correct = guess == truth
    conf = p.max(axis=1)
    return {
        "count": int(sel.sum()),
        "accuracy": round(float(correct.mean()), 4),
        "per_digit": {str(d): round(float(correct[truth == d].mean()), 4) for d in digits},
        "ece": round(expected_calibration_error(conf, correct), 4),
        "reliability": [
            {"bin": [round(b.low, 2), round(b.high, 2)], "count": b.count, "confidence": round(b.confidence, 4),
             "accuracy": round(b.accuracy, 4)}
            for b in reliability(conf, correct)
        ],
    }


def train_classifier(options: TrainOptions) -> TrainReport:
    """Train the glyph CNN, calibrate it, export it to ONNX with its metadata JSON."""
    if options.mnist is not None:
        mnist_files(options.mnist)  # a wrong folder is told before any work, and before -o is made
    torch = require_torch()
    model_path = options.output / f"{MODEL_NAME}.onnx"
    meta_path = options.output / f"{MODEL_NAME}.json"
    for path in (model_path, meta_path):
        if path.exists() and not options.overwrite:
            raise OutputError("exists already (use --force to replace it)", path)
    make_folder(options.output)  # before training, not after
    torch.manual_seed(options.seed)

    if options.mnist is not None:
        with tempfile.TemporaryDirectory(prefix="digitise-glyphs-") as scratch:
            train_glyphs = load_digit_glyphs(mnist_training_glyphs(Path(scratch) / "glyphs", options.mnist,
                                                                   options.glyphs), GlyphSubset.TRAIN)
    else:
        train_glyphs = load_digit_glyphs(options.glyphs, GlyphSubset.TRAIN)
    fit_glyphs, val_glyphs = split_validation(train_glyphs)
    log.info("drawing %d synthetic cells", options.cells)
    x, y = synthetic_samples(fit_glyphs, options.cells, options.seed, options.jobs)
    if options.synth is not None:
        ex, ey = learned_samples(options.synth)
        x, y = np.concatenate([x, ex]), np.concatenate([y, ey])
    xv, yv = synthetic_samples(val_glyphs, max(1000, options.cells // 8), options.seed + 1, options.jobs)
    log.info("%d training and %d validation glyphs", len(x), len(xv))

    model = _build_model(torch, len(CLASSES))
    _fit(torch, model, x, y, options.epochs, options.seed)

    logits_v = _logits(torch, model, xv)
    temperature = fit_temperature(logits_v, yv)
    pv_raw, pv = softmax(logits_v), softmax(logits_v, temperature)
    conf_raw, conf = pv_raw.max(axis=1), pv.max(axis=1)
    correct_v = pv.argmax(axis=1) == yv

    # Held out: the TEST glyphs, never trained on nor used to choose anything.
    test_glyphs = load_digit_glyphs(options.glyphs, GlyphSubset.TEST)
    clean = _clean_glyphs(test_glyphs)
    xt = np.stack([g for g, _ in clean])
    yt = np.array([int(label) for _, label in clean])
    pt = softmax(_logits(torch, model, xt), temperature)
    xs, ys = synthetic_samples(test_glyphs, 1500, options.seed + 2, options.jobs)
    ps = softmax(_logits(torch, model, xs), temperature)

    figures = {
        "samples": {"train": len(x), "validation": len(xv), "train_by_class": {CLASSES[k]: v for k, v in sorted(Counter(y.tolist()).items())}},
        "validation": {
            "accuracy": round(float(correct_v.mean()), 4),
            "ece_before_temperature": round(expected_calibration_error(conf_raw, pv_raw.argmax(axis=1) == yv), 4),
            "ece_after_temperature": round(expected_calibration_error(conf, correct_v), 4),
        },
        "test_clean_glyphs": {
            "digits_1_6": glyph_figures(pt, yt, range(1, 7)),
            "digits_0_9": glyph_figures(pt, yt, range(10)),
        },
        "test_cell_segments": {
            "count": len(ys),
            "accuracy_all_classes": round(float((ps.argmax(axis=1) == ys).mean()), 4),
            "ece_all_classes": round(expected_calibration_error(ps.max(axis=1), ps.argmax(axis=1) == ys), 4),
        },
    }

    exported = _Calibrated.wrap(torch, model, temperature)
    tmp = options.output / f".{MODEL_NAME}.onnx.tmp"
    torch.onnx.export(
        exported, (torch.zeros(1, 1, GLYPH_SIZE, GLYPH_SIZE),), str(tmp), dynamo=False,
        input_names=["glyphs"], output_names=["probabilities"], dynamic_axes={"glyphs": {0: "n"}, "probabilities": {0: "n"}},
        opset_version=17,
    )
    data = tmp.read_bytes()
    tmp.unlink()
    write_atomic(model_path, data, overwrite=options.overwrite)
    meta = {
        "classes": list(CLASSES),
        "glyph_size": GLYPH_SIZE,
        "temperature": round(temperature, 4),
        "temperature_baked_in": True,
        "trained_with": {"glyphs": "digits.png TRAIN subset (first 80 % of each class)"
                         + (f", and MNIST's digits unlike any of digits.png's, {MNIST_TENTH * 10} TRAIN glyphs a class in all"
                            if options.mnist is not None else ""),
                         "mnist": options.mnist is not None, "epochs": options.epochs,
                         "seed": options.seed, "cells": options.cells, "extra": options.synth is not None},
        "figures": figures,
    }
    write_atomic(meta_path, json.dumps(meta, indent=1, sort_keys=True) + "\n", overwrite=options.overwrite)
    return TrainReport(model_path, meta_path, figures)
