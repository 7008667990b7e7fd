"""`digitise train --cellnet`: reproduce the shipped whole-cell models (point squares, centre strip).

Data (:mod:`digitise.training.celldata`): self-played matches rendered with
the TRAIN glyphs, read back by the real page code, every cut cell labelled
from the truth. The matches that train are written with the first nine
tenths of each digit's TRAIN glyphs; validation matches (other seeds) with
the last tenth, and fit the temperatures. Both models share one small
architecture; their outputs are, per dice value 1-6, a softmax over how many
times it is written (0-4), then sigmoids for letters, an X over the digits
and a double's arrow (:mod:`digitise.vision.cellnet`).

The shipped models, each trained on its own (``--cache`` reuses the
generated cells between runs; the model's JSON says how it was trained):

* point squares (the defaults)::

    digitise train --cellnet --only point -o digitise/vision/models

* centre strip: three times the default centre matches, augmented, 24
  epochs (validation top-1 93.6 %, against 89.2 % for the defaults)::

    digitise train --cellnet --only centre --matches 1 --centre-matches 1500 \
        --centre-epochs 24 --augment --seed 3 -o digitise/vision/models

* a second point model (``--second`` writes ``cellnet_point_b.onnx``; the
  reader answers with the mean of the two), on pages written with MNIST's
  digits that ``digits.png`` leaves out as well (``scripts/fetch-mnist``
  puts MNIST's files in ``../mnist-data``; :mod:`digitise.training.mnist`),
  three times the default whole matches and 300 matches of boards with a
  square of two or more digits (108,248 point squares against 31,848; 20 min
  of new cells with the first 140 matches' cells cached, and 48 min of
  training, on a 2-core machine)::

    digitise train --cellnet --only point --second --mnist ../mnist-data \
        --matches 420 --multi-matches 300 --seed 5 -o digitise/vision/models

A second model written with a hand drawn from fonts too (``--font-hand``)
was tried and not kept (:data:`digitise.vision.cellnet.POINT_MODEL_B`), and
so was the first retrained on the second's pages (``--matches 420
--multi-matches 300 --seed 7`` without ``--mnist``:
:data:`digitise.vision.cellnet.POINT_MODEL`).

PyTorch is imported inside the functions that need it: a training-time
extra, never needed to read.
"""

from __future__ import annotations

import functools
import io
import json
import logging
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from digitise.errors import InputError, OutputError
from digitise.fileio import make_folder, write_atomic
from digitise.sheet.fonthand import font_hand_glyphs, write_mixed_glyphs
from digitise.sheet.glyphs import GlyphSubset, load_digit_glyphs
from digitise.sheet.handwriting import HANDWRITING_VERSION
from digitise.training import require_torch
from digitise.training.calibration import expected_calibration_error, fit_temperature, softmax
from digitise.training.celldata import LEVEL_NAMES, CellSamples, generate
from digitise.training.features import with_features
from digitise.training.hands import PER_DIGIT as HAND_PER_DIGIT
from digitise.training.hands import write_hand_glyphs
from digitise.training.mnist import TENTH as MNIST_TENTH
from digitise.training.mnist import mnist_files, mnist_training_glyphs
from digitise.vision.cellnet import (
    CENTRE_MODEL,
    CENTRE_MODEL_B,
    CENTRE_SHAPE,
    MARKS,
    MAX_COUNT,
    POINT_MODEL,
    POINT_MODEL_B,
    POINT_SHAPE,
    VALUES,
    best_multisets,
    digits_of,
)

log = logging.getLogger(__name__)

HEADS = len(VALUES)
COUNTS = MAX_COUNT + 1


#: Epochs of the point-square model as shipped (its validation loss still fell at 6).
POINT_EPOCHS = 14


#: Validation matches by default (whole, centre-only).
VAL_MATCHES = (30, 150)


@dataclass(frozen=True, slots=True)
class CellNetOptions:
    """What `digitise train --cellnet` was asked to do."""

    output: Path
    glyphs: Path | None = None
    #: Matches rendered whole (point squares and centres).
    matches: int = 140
    #: Matches of which only the boards with a written centre are rendered (centres are rare).
    centre_matches: int = 500
    #: Matches of which only the boards with a square of two or more digits are rendered, for the
    #: point model (none as shipped).
    multi_matches: int = 0
    #: Validation matches (whole, centre-only), written with the held-apart tenth of the TRAIN glyphs.
    val_matches: tuple[int, int] = VAL_MATCHES
    epochs: int = POINT_EPOCHS
    #: The centre model has five times fewer cells: more passes over them.
    centre_epochs: int = 36
    seed: int = 1
    jobs: int = 2
    threads: int = 2
    #: Folder to keep the generated cells in and reuse them from (generation is most of the time).
    cache: Path | None = None
    #: Distort training cells (:func:`augment_batch`). Off by default: the shipped point model was
    #: trained without it (more point squares of the end-to-end pages read wrong with it); the shipped
    #: centre model with it.
    augment: bool = False
    #: Bend the training cells' strokes by a smooth random field of about this many pixels
    #: (:func:`elastic_batch`; 0 = off): new shapes of the same digits, for writers never seen. Off as
    #: shipped: it read fewer boards of the end-to-end pages right.
    elastic: float = 0.0
    #: Which models to train ("point", "centre").
    kinds: tuple[str, ...] = ("point", "centre")
    #: Write them as the second model of their kind (cellnet_point_b.onnx, cellnet_centre_b.onnx): shipped
    #: beside the first, the reader answers with the mean of the two.
    second: bool = False
    #: Write with font-hand glyphs too (:mod:`digitise.sheet.fonthand`, its ``training`` faces): the
    #: glyph source's 500 a digit and as many font glyphs, the splits kept (:func:`write_mixed_glyphs`).
    #: Tried as a second point model: a hand unlike MNIST's read far better, MNIST's a little worse.
    font_hand: bool = False
    #: Folder of MNIST's idx files: its digits unlike any of the glyph source's are added to the TRAIN
    #: glyphs (:func:`digitise.training.mnist.mnist_training_glyphs`: 4,320 fit glyphs a digit, not 360).
    mnist: Path | None = None
    #: Hand sources (:mod:`digitise.sheet.hands`; each a file, or files read as one) whose digits are written
    #: into the training pages beside the glyph source's (:func:`digitise.training.hands.write_hand_glyphs`).
    hands: tuple[tuple[Path, ...], ...] = ()
    overwrite: bool = False


#: Seed of the font-hand glyphs a model trains with (the benchmark's hand is the other faces, seed 20261129).
FONT_HAND_SEED = 777


@dataclass(frozen=True, slots=True)
class CellNetReport:
    """Where the models went and how they measured."""

    models: tuple[Path, ...]
    figures: dict[str, Any]


# Seed ranges (all below 9000, the benchmarks' matches): whole matches, centre-only, many-digit
# squares only, validation.
FIT_SEEDS, FIT_CENTRE_SEEDS, FIT_MULTI_SEEDS, VAL_SEEDS, VAL_CENTRE_SEEDS = 0, 1000, 5000, 8000, 8100
#: Centre-only (and many-digit) seeds generated (and cached) together.
CENTRE_CHUNK = 500
#: Whole-match seeds generated (and cached) together (the default --matches is one chunk).
FIT_CHUNK = 140


def training_samples(options: CellNetOptions) -> dict[str, dict[str, CellSamples]]:
    """{"fit" | "val": {"point" | "centre": samples}}, generated or read from the cache."""
    # Each kind of training match has its own seed range, ending where the next one begins.
    ranges = (("whole", options.matches, FIT_SEEDS, "centre-only matches'", FIT_CENTRE_SEEDS),
              ("centre", options.centre_matches, FIT_CENTRE_SEEDS, "many-digit matches'", FIT_MULTI_SEEDS),
              ("many-digit", options.multi_matches, FIT_MULTI_SEEDS, "validation's", VAL_SEEDS))
    for what, count, first, next_what, limit in ranges:
        if first + count > limit:
            raise InputError(f"at most {limit - first} {what} matches (seeds {first} up, below the {next_what} {limit})")
    # A cache file's name says which seeds it holds (and, below, which handwriting drew them), so a
    # cache made for other counts is never read as this one: the default validation sets are named
    # without their seed range.
    val_normal, val_centre = "val_normal", "val_centre"
    if options.val_matches[0] != VAL_MATCHES[0]:
        val_normal += f"-{VAL_SEEDS + options.val_matches[0]}"
    if options.val_matches[1] != VAL_MATCHES[1]:
        val_centre += f"-{VAL_CENTRE_SEEDS + options.val_matches[1]}"
    plans = {
        val_normal: (range(VAL_SEEDS, VAL_SEEDS + options.val_matches[0]), "val", None),
        val_centre: (range(VAL_CENTRE_SEEDS, VAL_CENTRE_SEEDS + options.val_matches[1]), "val", "centre"),
    }
    # Whole, centre-only and many-digit matches in chunks, each cached on its own (the first named
    # without its seed range), so that asking for more matches generates only the new ones.
    def chunked(base: str, first: int, count: int, size: int, only: str | None) -> list[str]:
        names = []
        for start in range(first, first + count, size):
            name = base if start == first else f"{base}{start}"
            end = min(start + size, first + count)
            if end - start < size:
                name += f"-{end}"
            plans[name] = (range(start, end), "fit", only)
            names.append(name)
        return names

    wholes = chunked("fit_normal", FIT_SEEDS, options.matches, FIT_CHUNK, None)
    chunks = chunked("fit_centre", FIT_CENTRE_SEEDS, options.centre_matches, CENTRE_CHUNK, "centre")
    multis = chunked("fit_multi", FIT_MULTI_SEEDS, options.multi_matches, CENTRE_CHUNK, "multi")
    parts: dict[str, dict[str, CellSamples]] = {}
    for name, (seeds, key, only) in plans.items():
        # Cells drawn by another version of the handwriting are other cells: never read as these.
        # Cells written with the font hand too are other cells (and before this, a cache of cells drawn with
        # other --glyphs would have been read as these: the glyph source is the user's to keep apart).
        hand = "_fonthand" if options.font_hand else "_mnist" if options.mnist else \
            "_hands-" + "-".join(group[0].stem for group in options.hands) if options.hands else ""
        cached = ({kind: options.cache / f"{name}{hand}_{kind}.ink{HANDWRITING_VERSION}.npz"
                   for kind in ("point", "centre")} if options.cache else {})
        if cached and all(p.is_file() for p in cached.values()):
            parts[name] = {kind: _load(p) for kind, p in cached.items()}
            continue
        began = time.perf_counter()
        parts[name] = generate(list(seeds), key, only=only, glyphs=options.glyphs, jobs=options.jobs)
        log.info("%s: %s cells in %.0f s", name, {k: len(v) for k, v in parts[name].items()}, time.perf_counter() - began)
        for kind, path in cached.items():
            make_folder(path.parent)
            s = parts[name][kind]
            # Atomic: a run stopped halfway must not leave a cut-off cache that the next run loads.
            buffer = io.BytesIO()
            np.savez(buffer, inputs=s.inputs, counts=s.counts, marks=s.marks, levels=s.levels)
            write_atomic(path, buffer.getvalue(), overwrite=True)
    # Point squares from every kind of match; centres from the centre-only matches (whole matches
    # add few, at ten times the cost).
    fit_centre = functools.reduce(_concat, (parts[name]["centre"] for name in chunks))
    # The point model keeps the point squares of the first centre chunk only (as shipped): the centre
    # matches' point squares are the same kind of squares as the whole matches'.
    fit_point = functools.reduce(_concat, [*(parts[name]["point"] for name in wholes), parts[chunks[0]]["point"],
                                           *(parts[name]["point"] for name in multis)])
    return {
        "fit": {"point": fit_point, "centre": fit_centre},
        "val": {"point": _concat(parts[val_normal]["point"], parts[val_centre]["point"]),
                "centre": parts[val_centre]["centre"]},
    }


def _load(path: Path) -> CellSamples:
    with np.load(path) as data:
        return CellSamples(data["inputs"], data["counts"], data["marks"], data["levels"])


def _concat(a: CellSamples, b: CellSamples) -> CellSamples:
    # A part with no cell of a kind (one centre-only match has no point square) has no shape to join on.
    if len(a.inputs) == 0 or len(b.inputs) == 0:
        return b if len(a.inputs) == 0 else a
    return CellSamples(*(np.concatenate([x, y]) for x, y in
                         ((a.inputs, b.inputs), (a.counts, b.counts), (a.marks, b.marks), (a.levels, b.levels))))


# --- model ----------------------------------------------------------------------------------------


def build_model(torch: Any, shape: tuple[int, int]) -> Any:
    """The whole-cell CNN for inputs of ``shape``: four conv stages, a small head, 33 logits."""
    nn = torch.nn

    def block(i: int, o: int) -> list[Any]:
        return [nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU()]

    h, w = shape[0] // 8, shape[1] // 8
    # Pool the last map to a few regions: enough to say where the ink lies, few weights.
    pool = (2, 2) if w <= 2 * h else (2, 4)
    # A few million multiply-adds a cell: small enough to train on a laptop's CPU.
    return nn.Sequential(
        *block(1, 16), nn.MaxPool2d(2),
        *block(16, 24), nn.MaxPool2d(2),
        *block(24, 48), nn.MaxPool2d(2),
        *block(48, 64),
        nn.AdaptiveAvgPool2d(pool), nn.Flatten(), nn.Dropout(0.2),
        nn.Linear(64 * pool[0] * pool[1], 128), nn.ReLU(),
        nn.Linear(128, HEADS * COUNTS + len(MARKS)),
    )


def _logits(torch: Any, model: Any, x: np.ndarray) -> np.ndarray:
    model.eval()
    out = []
    with torch.no_grad():
        for start in range(0, len(x), 512):
            batch = torch.from_numpy(x[start:start + 512, None].astype(np.float32) / 255.0)
            out.append(model(batch).numpy())
    return np.concatenate(out).astype(np.float64) if out else np.zeros((0, HEADS * COUNTS + len(MARKS)))


#: Share of training cells distorted by :func:`augment_batch`.
AUGMENT_SHARE = 0.8


def augment_batch(torch: Any, xb: Any, generator: Any, centre: bool) -> Any:
    """Handwriting and scans vary more than the rendered training pages: distort most cells of a batch.

    Per cell, with probability AUGMENT_SHARE: scale (0.88-1.12, the centre's crop scale varies
    more: 0.8-1.15), rotation (+-5 degrees) and shear (+-0.12) about the centre, in pixel space;
    fainter or stronger ink (x 0.6-1.3, clipped); strokes half a pixel thicker (15 %) or thinner
    (20 %) (a whole pixel buries the centre's small digits under its X).
    """
    n, _, h, w = xb.shape
    f = torch.nn.functional

    def uniform(low: float, high: float) -> Any:
        return low + (high - low) * torch.rand(n, generator=generator)

    on = torch.rand(n, generator=generator) < AUGMENT_SHARE
    scale = torch.where(on, uniform(0.8, 1.15) if centre else uniform(0.88, 1.12), torch.ones(n))
    angle = torch.where(on, uniform(-5.0, 5.0), torch.zeros(n)) * (np.pi / 180.0)
    shear = torch.where(on, uniform(-0.12, 0.12), torch.zeros(n))
    c, s = torch.cos(angle), torch.sin(angle)
    # Output (normalised) -> input (normalised) coordinates; rotation and shear in pixels, so the
    # aspect of the cell enters: x_n = x_px / (w / 2), y_n = y_px / (h / 2).
    a, b = c, -s + shear * c
    d, e = s, c + shear * s
    theta = torch.zeros(n, 2, 3)
    theta[:, 0, 0] = a / scale
    theta[:, 0, 1] = b * (h / w) / scale
    theta[:, 1, 0] = d * (w / h) / scale
    theta[:, 1, 1] = e / scale
    grid = f.affine_grid(theta, list(xb.shape), align_corners=False)
    out = f.grid_sample(xb, grid, mode="bilinear", padding_mode="zeros", align_corners=False)
    gain = torch.where(on, uniform(0.6, 1.3), torch.ones(n)).view(n, 1, 1, 1)
    out = torch.clamp(out * gain, 0.0, 1.0)
    pick = torch.rand(n, generator=generator)
    thicker = (on & (pick < 0.15)).view(n, 1, 1, 1)
    thinner = (on & (pick >= 0.15) & (pick < 0.35)).view(n, 1, 1, 1)
    out = torch.where(thicker, 0.5 * (out + f.max_pool2d(out, 3, stride=1, padding=1)), out)
    out = torch.where(thinner, 0.5 * (out - f.max_pool2d(-out, 3, stride=1, padding=1)), out)
    return out


#: Pixels between the elastic field's control points (7 x 5 of them over a point square, 5 x 16 over
#: the centre strip): about a digit's half-height, so a stroke bends but never zigzags.
ELASTIC_SPACING = 10.7


def elastic_batch(torch: Any, xb: Any, generator: Any, pixels: float) -> Any:
    """Bend most cells of a batch by a smooth random displacement field (Simard et al.'s elastic distortion).

    Per cell, with probability AUGMENT_SHARE: a displacement drawn at control points
    ELASTIC_SPACING apart (normal, ``pixels`` standard deviation in each direction), interpolated bicubically over
    the cell. Affine maps only lean or stretch a glyph; this changes its shape (a loop opens, a
    stroke curls), which is how one writer's digit differs from another's.
    """
    n, _, h, w = xb.shape
    f = torch.nn.functional
    on = (torch.rand(n, generator=generator) < AUGMENT_SHARE).float().view(n, 1, 1, 1)
    grid_shape = (round(h / ELASTIC_SPACING) + 1, round(w / ELASTIC_SPACING) + 1)
    coarse = torch.randn(n, 2, *grid_shape, generator=generator) * pixels
    field = f.interpolate(coarse, size=(h, w), mode="bicubic", align_corners=True) * on
    ys = torch.linspace(-1.0 + 1.0 / h, 1.0 - 1.0 / h, h)
    xs = torch.linspace(-1.0 + 1.0 / w, 1.0 - 1.0 / w, w)
    gy, gx = torch.meshgrid(ys, xs, indexing="ij")
    # Pixels to normalised coordinates (align_corners=False): x_n = (2 x + 1) / w - 1.
    grid = torch.stack([gx + field[:, 0] * (2.0 / w), gy + field[:, 1] * (2.0 / h)], dim=3)
    return f.grid_sample(xb, grid, mode="bilinear", padding_mode="zeros", align_corners=False)


def _fit(torch: Any, model: Any, data: CellSamples, epochs: int, seed: int, centre: bool,
         progress: Callable[[str], None] | None, augment: bool = False, elastic: float = 0.0) -> None:
    generator = torch.Generator().manual_seed(seed)
    optimiser = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    batch = 128
    steps = epochs * ((len(data) + batch - 1) // batch)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=3e-3, total_steps=steps)
    x = torch.from_numpy(data.inputs)
    counts = torch.from_numpy(data.counts.astype(np.int64))
    marks = torch.from_numpy(data.marks.astype(np.float32))
    ce = torch.nn.CrossEntropyLoss()
    bce = torch.nn.BCEWithLogitsLoss()
    shift = 3 if centre else 2
    for epoch in range(epochs):
        model.train()
        order = torch.randperm(len(data), generator=generator)
        total, seen, start_time = 0.0, 0, time.perf_counter()
        for start in range(0, len(data), batch):
            idx = order[start:start + batch]
            xb = x[idx, None].float() / 255.0
            # Cutting is never exact: shifts of a few pixels.
            dx, dy = (int(v) for v in torch.randint(-shift, shift + 1, (2,), generator=generator))
            xb = torch.roll(xb, shifts=(dy, dx), dims=(2, 3))
            if elastic > 0.0:
                xb = elastic_batch(torch, xb, generator, elastic)
            if augment:
                xb = augment_batch(torch, xb, generator, centre)
            out = model(xb)
            head = out[:, :HEADS * COUNTS].reshape(-1, COUNTS)
            loss = ce(head, counts[idx].reshape(-1)) * HEADS + bce(out[:, HEADS * COUNTS:], marks[idx])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += float(loss.detach()) * len(idx)
            seen += len(idx)
        message = f"epoch {epoch + 1}/{epochs}: loss {total / seen:.4f} ({time.perf_counter() - start_time:.0f} s)"
        log.info(message)
        if progress is not None:
            progress(message)


# --- calibration and figures ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Temperatures:
    """One temperature for the six count heads, one per mark."""

    counts: float
    marks: tuple[float, float, float]


def fit_temperatures(logits: np.ndarray, data: CellSamples) -> Temperatures:
    """Temperatures minimising the validation NLL of the count heads and of each mark."""
    heads = logits[:, :HEADS * COUNTS].reshape(-1, COUNTS)
    counts = fit_temperature(heads, data.counts.reshape(-1))
    marks = []
    for k in range(len(MARKS)):
        z = logits[:, HEADS * COUNTS + k]
        if data.marks[:, k].min() == data.marks[:, k].max():
            # Never (or always) there in this kind of cell: nothing to calibrate against.
            marks.append(1.0)
            continue
        # A sigmoid is a softmax over (0, z): the same 1-D search.
        marks.append(fit_temperature(np.stack([np.zeros_like(z), z], axis=1), data.marks[:, k]))
    return Temperatures(counts, (marks[0], marks[1], marks[2]))


def probabilities(logits: np.ndarray, t: Temperatures) -> np.ndarray:
    """What the exported model answers: count softmaxes and mark sigmoids, temperatures applied."""
    heads = softmax(logits[:, :HEADS * COUNTS].reshape(-1, COUNTS), t.counts).reshape(len(logits), HEADS * COUNTS)
    marks = 1.0 / (1.0 + np.exp(-logits[:, HEADS * COUNTS:] / np.array(t.marks)))
    return np.concatenate([heads, marks], axis=1)


def cell_figures(p: np.ndarray, data: CellSamples) -> dict[str, Any]:
    """Top-1 / top-3 of the cell readings (multisets), by digits written and by level; ECE of the top one."""
    right1, right3, conf = [], [], []
    for row, counts in zip(p, data.counts, strict=True):
        truth = digits_of(counts)
        found = best_multisets(row[:HEADS * COUNTS].reshape(HEADS, COUNTS), 3)
        right1.append(bool(found) and found[0][0] == truth)
        right3.append(any(digits == truth for digits, _ in found))
        conf.append(found[0][1] if found else 0.0)
    r1, r3, c = np.array(right1), np.array(right3), np.array(conf)
    n = data.counts.sum(axis=1)
    by_digits = {str(k) if k < 4 else "4": round(float(r1[(n == k)].mean()), 4) for k in range(5) if (n == k).any()}
    by_level = {LEVEL_NAMES[k]: round(float(r1[data.levels == k].mean()), 4) for k in range(len(LEVEL_NAMES))
                if (data.levels == k).any()}
    marks = {}
    for k, mark in enumerate(MARKS):
        positive = data.marks[:, k] == 1
        if positive.any():
            guess = p[:, HEADS * COUNTS + k] >= 0.5
            marks[mark] = {"positives": int(positive.sum()), "accuracy": round(float((guess == positive).mean()), 4)}
    return {
        "cells": len(data), "top1": round(float(r1.mean()), 4), "top3": round(float(r3.mean()), 4),
        "top1_by_digits": by_digits, "top1_by_level": by_level,
        "ece_top1": round(expected_calibration_error(c, r1), 4), "marks": marks,
    }


class _Exported:
    """The exported graph: the network, temperatures applied, count softmaxes and mark sigmoids."""

    @staticmethod
    def wrap(torch: Any, model: Any, t: Temperatures) -> Any:
        marks_t = torch.tensor(t.marks, dtype=torch.float32)

        class Wrapped(torch.nn.Module):  # type: ignore[misc, name-defined]
            def __init__(self) -> None:
                super().__init__()
                self.net = model
                self.register_buffer("marks_t", marks_t)

            def forward(self, cells: Any) -> Any:
                z = self.net(cells)
                heads = torch.softmax(z[:, :HEADS * COUNTS].reshape(-1, HEADS, COUNTS) / t.counts, dim=2)
                return torch.cat([heads.reshape(-1, HEADS * COUNTS), torch.sigmoid(z[:, HEADS * COUNTS:] / self.marks_t)], dim=1)

        return Wrapped().eval()


def train_cellnets(options: CellNetOptions, progress: Callable[[str], None] | None = None) -> CellNetReport:
    """Generate the cells, train both models, calibrate, export to ONNX beside their metadata JSON."""
    if sum(map(bool, (options.font_hand, options.mnist, options.hands))) > 1:
        raise InputError("the font hand, MNIST's files and hand sources are ways to train, one at a time",
                         options.mnist)
    if options.mnist:
        mnist_files(options.mnist)  # a wrong folder is told before the hours of work, and before -o is made
    torch = require_torch()
    models = (("point", POINT_MODEL_B), ("centre", CENTRE_MODEL_B)) if options.second else \
        (("point", POINT_MODEL), ("centre", CENTRE_MODEL))
    targets = {kind: options.output / model.name for kind, model in models if kind in options.kinds}
    for path in targets.values():
        for p in (path, path.with_suffix(".json")):
            if p.exists() and not options.overwrite:
                raise OutputError("exists already (use --force to replace it)", p)
    make_folder(options.output)  # before the hours of training, not after
    torch.set_num_threads(max(1, min(options.threads, 2)))
    with tempfile.TemporaryDirectory(prefix="digitise-glyphs-") as scratch:
        if options.font_hand:
            mixed = write_mixed_glyphs(Path(scratch) / "glyphs", load_digit_glyphs(options.glyphs, GlyphSubset.ALL),
                                       font_hand_glyphs(500, seed=FONT_HAND_SEED, faces="training"))
            data = training_samples(replace(options, glyphs=mixed))
        elif options.mnist:
            data = training_samples(replace(options, glyphs=mnist_training_glyphs(Path(scratch) / "glyphs", options.mnist,
                                                                          options.glyphs)))
        elif options.hands:
            data = training_samples(replace(options, glyphs=write_hand_glyphs(Path(scratch) / "glyphs", options.hands,
                                                                      options.glyphs)))
        else:
            data = training_samples(options)
    figures: dict[str, Any] = {}
    for kind, shape in (("point", POINT_SHAPE), ("centre", CENTRE_SHAPE)):
        if kind not in targets:
            continue
        fit, val = data["fit"][kind], data["val"][kind]
        torch.manual_seed(options.seed)
        model = build_model(torch, shape)
        start = time.perf_counter()
        epochs = options.centre_epochs if kind == "centre" else options.epochs
        _fit(torch, model, fit, epochs, options.seed, kind == "centre", progress, augment=options.augment,
             elastic=options.elastic)
        seconds = time.perf_counter() - start
        logits = _logits(torch, model, val.inputs)
        t = fit_temperatures(logits, val)
        before, after = cell_figures(probabilities(logits, Temperatures(1.0, (1.0, 1.0, 1.0))), val), \
            cell_figures(probabilities(logits, t), val)
        # The time goes to the log, not the model's metadata: the same training must give the same bytes.
        log.info("%s model: %d cells trained in %.0f s", kind, len(fit), seconds)
        figures[kind] = {
            "train_cells": len(fit),
            "temperature": {"counts": round(t.counts, 4), "marks": [round(v, 4) for v in t.marks]},
            "validation": after, "validation_ece_top1_before_temperature": before["ece_top1"],
        }
        exported = _Exported.wrap(torch, model, t)
        tmp = options.output / f".{targets[kind].name}.tmp"
        torch.onnx.export(exported, (torch.zeros(1, 1, *shape),), str(tmp), dynamo=False,
                          input_names=["cells"], output_names=["probabilities"],
                          dynamic_axes={"cells": {0: "n"}, "probabilities": {0: "n"}}, opset_version=17)
        # The features output and last layer let the model adapt to one writer's hand (digitise.vision.adapt).
        onnx_bytes = with_features(tmp.read_bytes())
        tmp.unlink()
        write_atomic(targets[kind], onnx_bytes, overwrite=options.overwrite)
        meta = {
            "input_shape": list(shape),
            "outputs": f"{HEADS} x {COUNTS} count softmaxes (values {VALUES[0]}-{VALUES[-1]}, counts 0-{MAX_COUNT}), "
                       f"then sigmoids {list(MARKS)}",
            "temperature_baked_in": True,
            "trained_with": {
                "glyphs": ("digits.png TRAIN subset" if options.glyphs is None else f"{options.glyphs.name} TRAIN subset")
                + (f" and font-hand glyphs (training faces, seed {FONT_HAND_SEED}), as many"
                   if options.font_hand else "")
                + (f" and MNIST's digits unlike any of its, {MNIST_TENTH * 10} a digit in all"
                   if options.mnist else "")
                + (f" and up to {HAND_PER_DIGIT} digits a digit of each hand: "
                   + ", ".join("+".join(p.name for p in group) for group in options.hands) if options.hands else "")
                + ": first 90 % trains, last 10 % writes the validation matches",
                "font_hand": options.font_hand,
                "hands": ["+".join(p.name for p in group) for group in options.hands],
                "mnist": options.mnist is not None,
                "matches": options.matches, "centre_matches": options.centre_matches,
                "multi_matches": options.multi_matches,
                "val_matches": list(options.val_matches), "epochs": options.epochs,
                "centre_epochs": options.centre_epochs, "seed": options.seed, "augment": options.augment,
                "elastic": options.elastic, "second": options.second,
                "handwriting_version": HANDWRITING_VERSION,
            },
            "figures": figures[kind],
        }
        write_atomic(targets[kind].with_suffix(".json"), json.dumps(meta, indent=1, sort_keys=True) + "\n",
                     overwrite=options.overwrite)
    return CellNetReport(tuple(targets.values()), figures)
