"""digitise.training.hands: a glyph folder of the glyph source's TRAIN digits and other hands', split kept."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from digitise.errors import InputError
from digitise.sheet.glyphs import GlyphSubset, load_digit_glyphs
from digitise.training.hands import write_hand_glyphs


def _hand(path: Path, per_digit: int, seed: int) -> Path:
    """A small hand source: per digit, ``per_digit`` 16 x 16 binary bars of a slant of their own."""
    rng = np.random.default_rng(seed)
    x = np.zeros((10 * per_digit, 16, 16), np.uint8)
    for k in range(len(x)):
        col = int(rng.integers(4, 12))
        x[k, 2:14, col:col + 2] = 255
        x[k, 2:4, 4:12] = 255 * (k % 2)
    np.savez(path, x=x, y=np.repeat(np.arange(10), per_digit))
    return path


def test_the_folder_trains_on_the_glyph_source_and_every_hand_and_holds_out_the_sources_test(
        tmp_path: Path, digits_png: Path) -> None:
    a, b = _hand(tmp_path / "a.npz", 30, 1), _hand(tmp_path / "b.npz", 500, 2)
    folder = write_hand_glyphs(tmp_path / "glyphs", [a, (b,)], digits_png, per_digit=100)
    train, test = load_digit_glyphs(folder, GlyphSubset.TRAIN), load_digit_glyphs(folder, GlyphSubset.TEST)
    source_train = load_digit_glyphs(digits_png, GlyphSubset.TRAIN)
    source_test = {d: {g.tobytes() for g in v} for d, v in load_digit_glyphs(digits_png, GlyphSubset.TEST).items()}
    for digit in range(10):
        expected = len(source_train[digit]) + 30 + 100
        assert expected - 3 <= len(train[digit]) <= expected
        # Nothing held out of the glyph source is trained on, and what is held out is all the source's.
        assert not any(g.tobytes() in source_test[digit] for g in train[digit])
        assert all(g.tobytes() in source_test[digit] for g in test[digit])
        # The hands are shuffled in: the validation tenth (the end of TRAIN) holds hand glyphs too.
        sources = {g.tobytes() for g in source_train[digit]}
        assert any(g.tobytes() not in sources for g in train[digit][-len(train[digit]) // 10:])
    again = write_hand_glyphs(tmp_path / "again", [a, (b,)], digits_png, per_digit=100)
    assert sorted(p.read_bytes() for p in again.iterdir()) == sorted(p.read_bytes() for p in folder.iterdir())


def test_no_hand_or_a_missing_one_is_a_clear_error(tmp_path: Path, digits_png: Path) -> None:
    with pytest.raises(InputError, match="no hand source"):
        write_hand_glyphs(tmp_path / "g", [], digits_png)
    with pytest.raises(InputError, match="not found"):
        write_hand_glyphs(tmp_path / "g", [tmp_path / "absent.npz"], digits_png)
