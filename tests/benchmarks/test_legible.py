"""benchmarks/bench_legible.py: the held-out glyphs it leaves out are the ones its rule names."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from benchmarks.bench_legible import HARD_GLYPHS, clear_glyphs
from digitise.sheet.glyphs import GlyphSubset, load_digit_glyphs
from digitise.vision.classifier import digit_probabilities, load_classifier, normalise_glyph


def test_only_the_hard_held_out_glyphs_are_left_out(digits_png: Path) -> None:
    test = load_digit_glyphs(digits_png, GlyphSubset.TEST)
    cleared = clear_glyphs(digits_png, GlyphSubset.TEST)
    for digit, drawn in test.items():
        # Which of the digit's test glyphs is no longer among those drawn, found by content, in order.
        gone = {i for i, g in enumerate(drawn) if not any(np.array_equal(g, c) for c in cleared[digit])}
        assert gone == set(HARD_GLYPHS.get(digit, ()))
        assert len(cleared[digit]) == len(drawn) - len(gone)
    # The training glyphs are not the benchmark's: untouched.
    train = load_digit_glyphs(digits_png, GlyphSubset.TRAIN)
    assert {d: len(g) for d, g in clear_glyphs(digits_png, GlyphSubset.TRAIN).items()} == \
        {d: len(g) for d, g in train.items()}


def test_the_hard_glyphs_are_those_the_classifier_reads_as_another_digit(digits_png: Path) -> None:
    # The rule HARD_GLYPHS is documented with: each held-out glyph of 1-6 read clean and alone, among 1-6.
    # A retrained classifier may read others wrong (or these right): then the list is out of date.
    classifier = load_classifier()
    misread: dict[int, set[int]] = {}
    for digit, drawn in load_digit_glyphs(digits_png, GlyphSubset.TEST).items():
        if not 1 <= digit <= 6:
            continue
        batch = np.stack([normalise_glyph(g.astype(np.float32) / 255.0) for g in drawn])
        read = digit_probabilities(classifier.predict(batch), classifier.classes)[:, 1:7].argmax(axis=1) + 1
        wrong = {i for i, r in enumerate(read) if r != digit}
        if wrong:
            misread[digit] = wrong
    assert misread == {d: set(i) for d, i in HARD_GLYPHS.items()}
