"""Adapting the point-square reader to one writer's hand, from squares whose writing the rules settled.

One person usually writes a whole match. Once the match is solved, the turns
the solver is sure of say what is written in each of their squares: a few
hundred labelled samples of this writer. :func:`learn_hand` fine-tunes the
last layer of each whole-cell point model (:class:`~digitise.vision.cellnet.LastLayer`)
on them, pulled towards the shipped weights so that few samples move it
little; :meth:`AdaptedHand.read_again` then reads a square again: its
first reading times how much likelier the adapted layer finds each count
than the shipped one (so a square the adapted layer sees as the shipped one
did keeps its reading exactly), combined with the segmenting reader as the
first reading was. Pure numpy and scipy: no I/O, deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from digitise.notation.readings import CellReading
from digitise.vision.cellnet import MAX_COUNT, VALUES, CellNetOutput, LastLayer, candidates_of, split_output
from digitise.vision.cells import TOP_CANDIDATES, CellAnalysis, Combination, WholeCell, combine_readings

#: The pull towards the shipped last layer: the penalty on the squared change of its weights, per sample
#: learned from is divided by the samples (a mean loss), so more samples move it further.
PULL = 0.05
#: The squares learned from at which the pull is PULL (it is PULL * PULL_SQUARES / n for n squares).
PULL_SQUARES = 200
#: Whether the last layer's biases are fine-tuned too.
ADAPT_BIAS = False
#: Fewer labelled squares than this teach nothing reliable: the shipped reader is kept.
MIN_SAMPLES = 40
#: L-BFGS iterations of the fine-tuning (it converges well within them on a match's few hundred squares).
ITERATIONS = 60
#: How a square read again is pooled with the segmenting reader's first reading of it (when it had one).
COMBINATION = Combination(0.75, 0.01, 1.0)
#: Count rows of a model's last layer: len(VALUES) softmaxes of MAX_COUNT + 1 counts.
_HEADS = len(VALUES) * (MAX_COUNT + 1)


@dataclass(frozen=True, slots=True)
class HandSample:
    """A square of this writer and what the solved match says is written in it."""

    whole: WholeCell
    digits: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class AdaptedHand:
    """The point models' last layers fitted to one writer (one entry per member model)."""

    heads: tuple[LastLayer, ...]
    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]
    #: How many squares it learned from.
    samples: int

    def count_ratio(self, whole: WholeCell) -> np.ndarray:
        """len(VALUES) x (MAX_COUNT + 1): how much likelier each count is for the adapted layers than the shipped."""
        shipped = np.mean([h.count_probabilities(f[None]) for h, f in zip(self.heads, whole.features, strict=True)],
                          axis=0)[0]
        adapted = np.mean([h.count_probabilities(f[None], w, b) for h, f, w, b in
                           zip(self.heads, whole.features, self.weights, self.biases, strict=True)], axis=0)[0]
        ratio: np.ndarray = adapted / np.maximum(shipped, 1e-12)
        return ratio

    def read_again(self, whole: WholeCell, top: int = TOP_CANDIDATES) -> tuple[CellReading, ...]:
        """The square's candidate readings with the adapted layers, combined as its first reading was."""
        first = split_output(whole.row)
        counts = np.clip(first.counts * self.count_ratio(whole), 0.0, None)
        counts /= np.maximum(counts.sum(axis=1, keepdims=True), 1e-300)
        output = CellNetOutput(counts, first.letters, first.crossed, first.arrow)
        analysis = CellAnalysis(candidates_of(output, top), 0.0, round(first.arrow, 6), round(first.letters, 6))
        if whole.segmented is not None:
            analysis = combine_readings(analysis, whole.segmented, top, COMBINATION)
        return analysis.candidates


def count_labels(digits: Sequence[int]) -> np.ndarray:
    """How many times each of VALUES is written among ``digits`` (at most MAX_COUNT)."""
    return np.array([min(MAX_COUNT, list(digits).count(v)) for v in VALUES], np.int64)


def learn_hand(samples: Sequence[HandSample], heads: Sequence[LastLayer], *, pull: float | None = None,
               min_samples: int | None = None) -> AdaptedHand | None:
    """The last layers fine-tuned on ``samples``; None when there are too few or the models keep no features.

    ``pull`` and ``min_samples`` default to :data:`PULL` and :data:`MIN_SAMPLES`."""
    pull = PULL if pull is None else pull
    usable = [s for s in samples if len(s.whole.features) == len(heads)]
    if not heads or len(usable) < (MIN_SAMPLES if min_samples is None else min_samples):
        return None
    labels = np.stack([count_labels(s.digits) for s in usable])
    weights, biases = [], []
    # One BLAS thread: these products are small (threads cost more than they give, and fight a batch's
    # other workers), and the sums' order, so the bytes, must not depend on the cores.
    with threadpool_limits(limits=1, user_api="blas"):
        for m, head in enumerate(heads):
            features = np.stack([np.asarray(s.whole.features[m], np.float64) for s in usable])
            w, b = _fine_tune(head, features, labels, pull)
            weights.append(w)
            biases.append(b)
    return AdaptedHand(tuple(heads), tuple(weights), tuple(biases), len(usable))


def _fine_tune(head: LastLayer, features: np.ndarray, labels: np.ndarray, pull: float) -> tuple[np.ndarray, np.ndarray]:
    """The count rows of ``head`` minimising the samples' mean cross-entropy plus the pull to the shipped rows."""
    from scipy.optimize import minimize  # heavy (~0.5 s to import): loaded only when a hand is learnt

    w0, b0 = head.weight[:_HEADS], head.bias[:_HEADS]
    n, width = features.shape
    t = head.count_temperature
    onehot = np.zeros((n, len(VALUES), MAX_COUNT + 1))
    onehot[np.arange(n)[:, None], np.arange(len(VALUES))[None, :], labels] = 1.0

    # The pull is per square learned from: few squares move the layer less than many.
    strength = pull * PULL_SQUARES / n
    # The biases stay: they say how often each count is written, which a few sure turns tell badly.
    free = np.concatenate([np.ones(_HEADS * width), np.full(_HEADS, 1.0 if ADAPT_BIAS else 0.0)])

    def loss(x: np.ndarray) -> tuple[float, np.ndarray]:
        x = x * free
        dw, db = x[:_HEADS * width].reshape(_HEADS, width), x[_HEADS * width:]
        z = ((features @ (w0 + dw).T + b0 + db) / t).reshape(n, len(VALUES), MAX_COUNT + 1)
        z -= z.max(axis=2, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=2, keepdims=True))
        value = -float((onehot * logp).sum()) / n + 0.5 * strength * float(x @ x)
        g = ((np.exp(logp) - onehot) / (n * t)).reshape(n, _HEADS)
        grad = (np.concatenate([(g.T @ features).ravel(), g.sum(axis=0)]) + strength * x) * free
        return value, grad

    found = minimize(loss, np.zeros(_HEADS * width + _HEADS), jac=True, method="L-BFGS-B",
                     options={"maxiter": ITERATIONS})
    x = np.asarray(found.x, np.float64) * free
    return w0 + x[:_HEADS * width].reshape(_HEADS, width), b0 + x[_HEADS * width:]


__all__ = ["AdaptedHand", "HandSample", "count_labels", "learn_hand"]
