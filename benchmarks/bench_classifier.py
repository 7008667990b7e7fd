"""Benchmark of the handwriting classifier and of cell reading, on held-out glyphs only.

    .venv/bin/python benchmarks/bench_classifier.py [--glyphs digits.png] [--cells 3000] [--json out.json]

Measures, on one core (onnxruntime and OpenCV limited to one thread):

* glyphs/s of the shipped ONNX model (batches of 256) and cells/s of the
  whole cell reading (segmentation + classification + candidates);
* accuracy on the TEST glyphs of digits.png (never trained on): digits 1-6
  (dice) and 0-9, per digit, with calibration (reliability bins, ECE);
* cell reading on synthetic cells drawn from the TEST glyphs (the training
  cell generator with a different seed, mixed damage): top-1 and top-3 exact
  reading by kind, X and arrow detection, and the calibration of the top
  candidate's probability.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from digitise.sheet.glyphs import GlyphSubset, load_digit_glyphs
from digitise.training.calibration import expected_calibration_error, reliability
from digitise.training.cells import SyntheticCell, random_cell
from digitise.vision.cells import CellKind, CellReader
from digitise.vision.classifier import digit_probabilities, load_classifier, normalise_glyph


def glyph_benchmark(glyphs: dict[int, list[np.ndarray]]) -> dict[str, Any]:
    classifier = load_classifier()
    xs = np.stack([normalise_glyph(g.astype(np.float32) / 255.0) for d in range(10) for g in glyphs[d]])
    ys = np.array([d for d in range(10) for _ in glyphs[d]])
    classifier.predict(xs[:256])  # warm up
    start = time.perf_counter()
    repeats = 5
    for _ in range(repeats):
        probabilities = classifier.predict(xs)
    elapsed = (time.perf_counter() - start) / repeats
    out: dict[str, Any] = {"glyphs": len(xs), "glyphs_per_s": round(len(xs) / elapsed)}
    digit_p = digit_probabilities(probabilities, classifier.classes)
    for name, digits in (("digits_1_6", list(range(1, 7))), ("digits_0_9", list(range(10)))):
        sel = np.isin(ys, digits)
        p = digit_p[sel][:, digits]
        p = p / np.maximum(p.sum(axis=1, keepdims=True), 1e-9)
        guess = np.array(digits)[p.argmax(axis=1)]
        truth = ys[sel]
        correct = guess == truth
        conf = p.max(axis=1)
        out[name] = {
            "accuracy": round(float(correct.mean()), 4),
            "per_digit": {str(d): round(float(correct[truth == d].mean()), 4) for d in digits},
            "ece": round(expected_calibration_error(conf, correct), 4),
            "reliability": [(round(b.low, 1), round(b.high, 1), b.count, round(b.confidence, 3), round(b.accuracy, 3))
                            for b in reliability(conf, correct)],
        }
    return out


def cell_benchmark(glyphs: dict[int, list[np.ndarray]], count: int, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    cells: list[SyntheticCell] = [random_cell(glyphs, rng, damage=0.7) for _ in range(count)]
    reader = CellReader()
    reader.analyse_many([(cells[0].ink, cells[0].kind)])  # warm up
    start = time.perf_counter()
    results = []
    for i in range(0, len(cells), 64):  # about one page's worth of written cells per call
        chunk = cells[i:i + 64]
        results.extend(reader.analyse_many([(c.ink, c.kind) for c in chunk]))
    elapsed = time.perf_counter() - start
    by_kind: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    top_conf, top_right = [], []
    crossed_right, arrow_right, letters_right = [], [], []
    for cell, result in zip(cells, results, strict=True):
        truth = cell.digits if not (cell.arrow or cell.letters) else ()
        readings = [c.digits for c in result.candidates]
        name = cell.kind.value + ("+x" if cell.crossed else "") + ("+arrow" if cell.arrow else "") + \
            ("+letters" if cell.letters else "") + ("+blank" if not (cell.digits or cell.arrow or cell.letters) else "")
        top1 = bool(readings) and readings[0] == truth
        by_kind[name].append((top1, truth in readings[:3]))
        if not cell.letters:
            top_conf.append(result.candidates[0].probability if result.candidates else 0.0)
            top_right.append(top1)
        if cell.kind is CellKind.CENTRE and not cell.arrow:
            crossed_right.append((result.crossed >= 0.5) == cell.crossed)
        if cell.kind is CellKind.CENTRE:
            arrow_right.append((result.arrow >= 0.5) == cell.arrow)
        letters_right.append((result.letters >= 0.5) == cell.letters)
    conf, right = np.array(top_conf), np.array(top_right)
    return {
        "cells": count,
        "cells_per_s": round(count / elapsed, 1),
        "by_kind": {k: {"n": len(v), "top1": round(float(np.mean([a for a, _ in v])), 4),
                        "top3": round(float(np.mean([b for _, b in v])), 4)} for k, v in sorted(by_kind.items())},
        "digit_cells_top1": round(float(right.mean()), 4),
        "crossed_detection": round(float(np.mean(crossed_right)), 4),
        "arrow_detection": round(float(np.mean(arrow_right)), 4),
        "letters_detection": round(float(np.mean(letters_right)), 4),
        "top_candidate_ece": round(expected_calibration_error(conf, right), 4),
        "top_candidate_reliability": [(round(b.low, 1), round(b.high, 1), b.count, round(b.confidence, 3),
                                       round(b.accuracy, 3)) for b in reliability(conf, right)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--glyphs", type=Path, default=None, help="digits.png (default ../shared/data/digits.png)")
    parser.add_argument("--cells", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    cv2.setNumThreads(1)
    test = load_digit_glyphs(args.glyphs, GlyphSubset.TEST)
    figures = {"glyphs": glyph_benchmark(test), "cells": cell_benchmark(test, args.cells, args.seed)}
    text = json.dumps(figures, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
