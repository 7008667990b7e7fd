"""Calibration measures and temperature scaling (numpy only).

"Calibrated" means: of the answers given probability about 0.9, about 90 %
are right. :func:`reliability` bins answers by confidence and reports the
accuracy of each bin; :func:`expected_calibration_error` (ECE) is the
count-weighted gap between confidence and accuracy over the bins.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class ReliabilityBin:
    """Answers whose confidence fell in [low, high)."""

    low: float
    high: float
    count: int
    confidence: float
    accuracy: float


def reliability(confidence: np.ndarray, correct: np.ndarray, bins: int = 10) -> tuple[ReliabilityBin, ...]:
    """Equal-width confidence bins with their mean confidence and accuracy (empty bins left out)."""
    confidence = np.asarray(confidence, np.float64)
    correct = np.asarray(correct, bool)
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.digitize(confidence, edges[1:-1]), 0, bins - 1)
    out = []
    for b in range(bins):
        sel = which == b
        if sel.any():
            out.append(ReliabilityBin(float(edges[b]), float(edges[b + 1]), int(sel.sum()),
                                      float(confidence[sel].mean()), float(correct[sel].mean())))
    return tuple(out)


def expected_calibration_error(confidence: np.ndarray, correct: np.ndarray, bins: int = 10) -> float:
    """Count-weighted mean |confidence - accuracy| over the reliability bins."""
    table = reliability(confidence, correct, bins)
    total = sum(b.count for b in table)
    if total == 0:
        return 0.0
    return float(sum(b.count * abs(b.confidence - b.accuracy) for b in table) / total)


def softmax(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """Row-wise softmax of ``logits / temperature``."""
    z = np.asarray(logits, np.float64) / temperature
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    probabilities: np.ndarray = e / e.sum(axis=1, keepdims=True)
    return probabilities


def fit_temperature(logits: np.ndarray, labels: np.ndarray) -> float:
    """The temperature that minimises the negative log-likelihood of ``labels`` (a 1-D search)."""
    labels = np.asarray(labels, np.int64)
    rows = np.arange(len(labels))

    def nll(t: float) -> float:
        p = softmax(logits, t)[rows, labels]
        return float(-np.log(np.maximum(p, 1e-12)).mean())

    grid = np.exp(np.linspace(np.log(0.25), np.log(8.0), 121))
    best = min(grid, key=nll)
    # Refine around the best grid point.
    fine = np.exp(np.linspace(np.log(best) - 0.03, np.log(best) + 0.03, 61))
    return float(min(fine, key=nll))
