"""digitise.sheet.fonthand: a hand drawn from fonts, and the glyph folder a model trains on it with."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from digitise.errors import InputError
from digitise.sheet.fonthand import BOX, FONT_DIRS, font_hand_glyphs, write_mixed_glyphs
from digitise.sheet.glyphs import GlyphSubset, load_digit_glyphs


@pytest.mark.skipif(not (FONT_DIRS[1].is_dir() and any(FONT_DIRS[1].glob("*.ttf"))),
                    reason="the Liberation fonts are not installed (Debian: fonts-liberation; scripts/bootstrap)")
def test_the_two_font_sets_are_kept_apart() -> None:
    training = font_hand_glyphs(per_digit=20, seed=5, faces="training")
    measured = font_hand_glyphs(per_digit=20, seed=5, faces="liberation")
    for digit in range(10):
        assert all(g.shape == (BOX, BOX) for g in training[digit] + measured[digit])
        assert not any(np.array_equal(a, b) for a in training[digit] for b in measured[digit])
    with pytest.raises(InputError, match="unknown font set 'comic'"):
        font_hand_glyphs(faces="comic")


def test_a_mixed_glyph_folder_keeps_the_held_out_glyphs_held_out(tmp_path: Path) -> None:
    """TRAIN is MNIST's training glyphs and font glyphs; TEST holds MNIST's held-out ones, never trained on;
    the tenth of TRAIN that writes the validation matches holds both hands."""
    rng = np.random.default_rng(0)
    # Stand-ins for MNIST glyphs, white on black as a glyph folder keeps them (a light one is inverted).
    mnist = {d: [rng.integers(0, 120, (BOX, BOX), dtype=np.uint8) for _ in range(50)] for d in range(10)}
    fonts = font_hand_glyphs(per_digit=50, seed=9, faces="training")
    folder = write_mixed_glyphs(tmp_path / "mixed", mnist, fonts)
    train = load_digit_glyphs(folder, GlyphSubset.TRAIN)
    test = load_digit_glyphs(folder, GlyphSubset.TEST)
    for digit in (1, 7):
        def among(glyphs: list[np.ndarray], pool: list[np.ndarray]) -> int:
            return sum(any(np.array_equal(g, p) for p in pool) for g in glyphs)

        assert len(train[digit]) == 80 and len(test[digit]) == 20
        assert among(mnist[digit][40:], train[digit]) == 0 and among(mnist[digit][40:], test[digit]) == 10
        assert among(train[digit][72:], mnist[digit][:40]) == 4 and among(train[digit][72:], fonts[digit]) == 4
    with pytest.raises(InputError, match="expected as many MNIST as font glyphs of the digit 0"):
        write_mixed_glyphs(tmp_path / "short", {d: g[:10] for d, g in mnist.items()}, fonts)
