"""Adapting the point reader's last layer to one writer (digitise.vision.adapt)."""

from __future__ import annotations

import numpy as np
import pytest

from digitise.vision.adapt import AdaptedHand, HandSample, count_labels, learn_hand
from digitise.vision.cellnet import MAX_COUNT, OUTPUTS, VALUES, LastLayer, best_multisets
from digitise.vision.cells import WholeCell

HEADS = len(VALUES) * (MAX_COUNT + 1)
WIDTH = 16


def _layer(rng: np.random.Generator) -> LastLayer:
    return LastLayer(rng.normal(0, 0.3, (OUTPUTS, WIDTH)), rng.normal(0, 0.1, OUTPUTS), 1.0)


def _cell(layer: LastLayer, features: np.ndarray) -> WholeCell:
    """A square as a one-model reader with ``layer`` reads it: its row and its features."""
    counts = layer.count_probabilities(features[None])[0]
    row = np.concatenate([counts.ravel(), [0.0, 0.0, 0.0]])
    return WholeCell(row, (features,))


def _top(counts: np.ndarray) -> tuple[int, ...]:
    return best_multisets(counts, 1)[0][0]


def test_count_labels_say_how_often_each_value_is_written() -> None:
    assert count_labels((3, 5, 3)).tolist() == [0, 0, 2, 0, 1, 0]
    assert count_labels(()).tolist() == [0] * len(VALUES)
    assert count_labels((1,) * 6).tolist() == [MAX_COUNT, 0, 0, 0, 0, 0]


def test_too_few_squares_or_no_features_teach_nothing() -> None:
    layer = _layer(np.random.default_rng(1))
    cell = _cell(layer, np.ones(WIDTH))
    assert learn_hand([HandSample(cell, (3,))] * 5, [layer]) is None
    assert learn_hand([HandSample(cell, (3,))] * 100, []) is None
    # A square without the features of every model is left out.
    bare = WholeCell(cell.row, ())
    assert learn_hand([HandSample(bare, (3,))] * 100, [layer]) is None


def test_a_layer_left_as_shipped_reads_every_square_as_it_was_read() -> None:
    rng = np.random.default_rng(2)
    layer = _layer(rng)
    hand = AdaptedHand((layer,), (layer.weight[:HEADS],), (layer.bias[:HEADS],), 0)
    for _ in range(5):
        cell = _cell(layer, np.abs(rng.normal(0, 1, WIDTH)))
        from digitise.vision.cellnet import candidates_of, split_output

        assert hand.read_again(cell) == candidates_of(split_output(cell.row), 5)


def test_a_writers_shape_the_shipped_layer_misreads_is_learned_from_the_sure_squares() -> None:
    """This writer's "3" lands where the shipped layer reads "5": after seeing labelled 3s, it reads the 3s it
    has not seen as 3, and still reads 5s (another shape) as 5."""
    rng = np.random.default_rng(3)
    weight, bias = np.zeros((OUTPUTS, WIDTH)), np.zeros(OUTPUTS)
    bias[0:HEADS:MAX_COUNT + 1] = 4.0  # every value: written 0 times, unless a feature says otherwise
    five = 4 * (MAX_COUNT + 1)
    weight[five + 1, 0], weight[five, 0] = 6.0, -6.0  # feature 0: the stroke of a 5
    layer = LastLayer(weight, bias, 1.0)

    def square(*on: int) -> WholeCell:
        features = np.abs(rng.normal(0, 0.05, WIDTH))
        features[list(on)] += 1.0
        return _cell(layer, features)

    # This writer's 3 shares the 5's stroke (feature 0) and has a hook of its own (feature 1).
    threes, fives, unseen, other_five = [square(0, 1) for _ in range(50)], [square(0) for _ in range(30)], \
        square(0, 1), square(0)
    assert _top(layer.count_probabilities(unseen.features[0][None])[0]) == (5,)
    samples = [HandSample(c, (3,)) for c in threes] + [HandSample(c, (5,)) for c in fives]
    hand = learn_hand(samples, [layer], pull=0.001)
    assert hand is not None and hand.samples == 80
    assert hand.read_again(unseen)[0].digits == (3,)
    assert hand.read_again(other_five)[0].digits == (5,)
    # The same samples, the same layer: byte for byte.
    again = learn_hand(samples, [layer], pull=0.001)
    assert again is not None and again.weights[0].tobytes() == hand.weights[0].tobytes()


def test_a_strong_pull_keeps_the_shipped_layer() -> None:
    rng = np.random.default_rng(4)
    layer = _layer(rng)
    cells = [_cell(layer, np.abs(rng.normal(0, 1, WIDTH))) for _ in range(50)]
    hand = learn_hand([HandSample(c, (2,)) for c in cells], [layer], pull=1e6)
    assert hand is not None
    assert hand.weights[0] == pytest.approx(layer.weight[:HEADS], abs=1e-4)
    assert hand.read_again(cells[0])[0].digits == _top(layer.count_probabilities(cells[0].features[0][None])[0])
