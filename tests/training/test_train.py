"""The glyph classifier's training data: synthetic cells cut into labelled glyphs (no PyTorch needed)."""

from __future__ import annotations

import numpy as np
import pytest

from digitise.training.train import synthetic_samples
from tests.conftest import DIGITS_PNG


def test_synthetic_samples_are_the_same_in_worker_processes() -> None:
    """Deterministic for a seed whatever the number of jobs (the workers start by forkserver)."""
    if not DIGITS_PNG.is_file():
        pytest.skip(f"../shared/data/digits.png not found at {DIGITS_PNG}")
    from digitise.sheet.glyphs import GlyphSubset, load_digit_glyphs

    glyphs = load_digit_glyphs(DIGITS_PNG, GlyphSubset.TRAIN)
    alone, x_labels = synthetic_samples(glyphs, 500, seed=1, jobs=1)
    pooled, y_labels = synthetic_samples(glyphs, 500, seed=1, jobs=2)
    assert alone.shape[0] > 500 and alone.dtype == np.float32
    assert alone.tobytes() == pooled.tobytes() and np.array_equal(x_labels, y_labels)
