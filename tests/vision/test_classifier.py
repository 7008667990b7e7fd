"""The shipped glyph classifier: loads, reads held-out glyphs, fails clearly on a bad model."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from digitise.errors import InputError
from digitise.sheet.glyphs import GlyphSubset, load_digit_glyphs
from digitise.vision.classifier import (
    CLASSES,
    DEFAULT_MODEL,
    GLYPH_BOX,
    GLYPH_SIZE,
    OnnxGlyphClassifier,
    digit_probabilities,
    ink_percentile,
    load_classifier,
    normalise_glyph,
)


def test_normalise_keeps_aspect_and_centres() -> None:
    ink = np.zeros((100, 60), np.float32)
    ink[10:90, 28:34] = 0.5  # a pale, thin upright stroke: a "1"
    glyph = normalise_glyph(ink)
    assert glyph.shape == (GLYPH_SIZE, GLYPH_SIZE)
    rows = np.flatnonzero(glyph.max(axis=1) > 0.1)
    cols = np.flatnonzero(glyph.max(axis=0) > 0.1)
    assert rows[-1] - rows[0] + 1 == GLYPH_BOX
    assert cols[-1] - cols[0] + 1 <= 3  # still thin: aspect kept
    assert abs((rows[0] + rows[-1]) / 2 - (GLYPH_SIZE - 1) / 2) <= 1
    assert glyph.max() == pytest.approx(1.0)  # pale ink stretched to full level


def test_normalise_of_blank_is_blank() -> None:
    assert not normalise_glyph(np.zeros((30, 30), np.float32)).any()


def test_shipped_model_is_small_and_described() -> None:
    assert DEFAULT_MODEL.is_file()
    assert DEFAULT_MODEL.stat().st_size <= 2 * 1024 * 1024
    meta = json.loads(DEFAULT_MODEL.with_suffix(".json").read_text())
    assert tuple(meta["classes"]) == CLASSES
    assert meta["temperature"] > 0
    assert meta["glyph_size"] == GLYPH_SIZE


def test_predict_gives_probabilities_per_glyph() -> None:
    classifier = load_classifier()
    rng = np.random.default_rng(0)
    batch = rng.random((5, GLYPH_SIZE, GLYPH_SIZE)).astype(np.float32)
    p = classifier.predict(batch)
    assert p.shape == (5, len(CLASSES))
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-4)
    assert classifier.predict(np.zeros((0, GLYPH_SIZE, GLYPH_SIZE), np.float32)).shape == (0, len(CLASSES))
    with pytest.raises(ValueError):
        classifier.predict(np.zeros((2, 10, 10), np.float32))


def test_held_out_glyphs_are_read(digits_png: Path) -> None:
    test = load_digit_glyphs(digits_png, GlyphSubset.TEST)
    classifier = load_classifier()
    glyphs = np.stack([normalise_glyph(g.astype(np.float32) / 255.0) for d in range(10) for g in test[d]])
    truth = np.array([d for d in range(10) for _ in test[d]])
    p = digit_probabilities(classifier.predict(glyphs), classifier.classes)
    dice = np.isin(truth, range(1, 7))
    dice_guess = p[dice][:, 1:7].argmax(axis=1) + 1
    assert (dice_guess == truth[dice]).mean() >= 0.98
    assert (p.argmax(axis=1) == truth).mean() >= 0.95


def test_missing_or_broken_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        OnnxGlyphClassifier(tmp_path / "none.onnx")
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a model")
    with pytest.raises(InputError, match="metadata"):
        OnnxGlyphClassifier(broken)
    broken.with_suffix(".json").write_text(json.dumps({"classes": list(CLASSES), "glyph_size": GLYPH_SIZE}))
    with pytest.raises(InputError, match="ONNX"):
        OnnxGlyphClassifier(broken)


@given(st.integers(1, 500), st.sampled_from([90.0, 95.0, 50.0, 99.0]), st.sampled_from([np.float32, np.float64]),
       st.integers(0, 2**32 - 1))
def test_ink_percentile_is_numpys_percentile_to_the_bit(n: int, percent: float, dtype: type, seed: int) -> None:
    values = np.random.default_rng(seed).random(n).astype(dtype)
    assert ink_percentile(values.copy(), percent) == float(np.percentile(values, percent))


def test_reading_leaves_nothing_in_the_users_home(tmp_path: Path) -> None:
    """onnxruntime on Linux keeps a telemetry device id under ~/.cache/Microsoft, and warns on every run
    where it cannot: digitise turns its telemetry off before it starts (a user may still set it on)."""
    import subprocess
    import sys

    home = tmp_path / "home"
    home.mkdir()
    page = Path(__file__).resolve().parents[2] / "samples" / "alice-bruno" / "light" / "page-001.jpg"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORT_")}
    done = subprocess.run([sys.executable, "-m", "digitise.cli", "read", str(page), "-o", str(tmp_path / "r.json")],
                          capture_output=True, text=True, timeout=300, check=False, env={**env, "HOME": str(home)})
    assert done.returncode == 0, done.stderr
    assert not done.stderr, done.stderr
    assert sorted(p.relative_to(home) for p in home.rglob("*")) == []
