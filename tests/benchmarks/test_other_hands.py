"""benchmarks/bench_other_hands.py: the other hands are glyphs as digits.png's are, the same on every run."""

from __future__ import annotations

import numpy as np

from benchmarks.bench_other_hands import other_hand_glyphs
from digitise.sheet.fonthand import BOX
from digitise.sheet.glyphs import GlyphSubset
from digitise.sheet.handwriting import GlyphBank
from digitise.vision.classifier import digit_probabilities, load_classifier, normalise_glyph


def test_the_other_hands_are_glyphs_of_every_digit_the_same_each_run() -> None:
    drawn = other_hand_glyphs(per_digit=12)
    again = other_hand_glyphs(per_digit=12)
    assert sorted(drawn) == list(range(10))
    for digit, glyphs in drawn.items():
        assert len(glyphs) == 12
        assert all(g.shape == (BOX, BOX) and g.dtype == np.uint8 and g.max() > 200 for g in glyphs)
        assert all(np.array_equal(a, b) for a, b in zip(glyphs, again[digit], strict=True))
        # No two alike: each glyph is bent its own way.
        assert len({g.tobytes() for g in glyphs}) == 12
    GlyphBank(drawn)  # drawable by the renderer as digits.png's glyphs are


def test_the_other_hands_are_legible_digits_to_the_reader() -> None:
    # A hand the models never saw, yet digits: the glyph classifier reads most of them, alone and clean, as
    # the digit they are (were they scribbles, the benchmark would measure nothing but noise).
    classifier = load_classifier()
    drawn = other_hand_glyphs(per_digit=40)
    right = total = 0
    for digit in range(1, 7):
        batch = np.stack([normalise_glyph(g.astype(np.float32) / 255.0) for g in drawn[digit]])
        read = digit_probabilities(classifier.predict(batch), classifier.classes)[:, 1:7].argmax(axis=1) + 1
        right += int((read == digit).sum())
        total += len(read)
    assert right / total > 0.8, right / total


def test_only_the_held_out_glyphs_are_replaced() -> None:
    from benchmarks import bench_other_hands

    assert len(bench_other_hands._hands(None, GlyphSubset.TEST)[3]) == bench_other_hands.PER_DIGIT
