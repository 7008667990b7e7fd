"""benchmarks/bench_unseen_glyphs.py: the pages are written with the glyph folder's held-out split, nothing else changes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import benchmarks.bench_unseen_glyphs as unseen
from digitise.sheet.glyphs import GlyphSubset, load_digit_glyphs, write_digit_glyphs


def _glyph(value: int) -> np.ndarray:
    glyph = np.zeros((20, 20), np.uint8)
    glyph[4:16, 9:11] = value  # a stroke whose brightness names the glyph
    return glyph


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    for digit in range(10):
        write_digit_glyphs(tmp_path, digit, [_glyph(100 + 10 * digit + n) for n in range(10)])
    unseen._FOLDER[:] = [tmp_path]
    yield tmp_path
    unseen._FOLDER.clear()


def test_the_default_held_out_glyphs_come_from_the_folders_test_split(folder: Path) -> None:
    drawn = unseen.unseen_glyphs(None, GlyphSubset.TEST)
    # The loader's 80/20 cut: the last two of each digit's ten, in order.
    assert {d: [int(g.max()) for g in gs] for d, gs in drawn.items()} == \
        {d: [100 + 10 * d + 8, 100 + 10 * d + 9] for d in range(10)}


def test_other_sources_and_splits_are_loaded_as_before(folder: Path, digits_png: Path) -> None:
    for subset in GlyphSubset:
        mine, theirs = unseen.unseen_glyphs(digits_png, subset), load_digit_glyphs(digits_png, subset)
        assert all(np.array_equal(a, b) for d in theirs for a, b in zip(mine[d], theirs[d], strict=True))
    assert len(unseen.unseen_glyphs(None, GlyphSubset.TRAIN)[2]) == len(load_digit_glyphs(None, GlyphSubset.TRAIN)[2])


def test_a_folder_without_mnist_is_one_line_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert unseen.main(["--mnist", str(tmp_path / "none"), "--work", str(tmp_path / "work"), "--skip-speed"]) == 2
    said = capsys.readouterr().err.strip()
    assert "\n" not in said and str(tmp_path / "none") in said and "mnist" in said.lower()
