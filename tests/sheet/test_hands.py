"""digitise.sheet.hands: other writers' digits as glyphs the renderer draws, one writer at a time."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from digitise.errors import InputError
from digitise.sheet.fonthand import BOX, SIDE
from digitise.sheet.hands import HandSource, chunking_plausible, chunks, load_hand, to_glyph, writer_glyphs
from digitise.sheet.handwriting import GlyphBank
from tests.conftest import SHARED

HANDS = SHARED / "data" / "hands"
needs_hands = pytest.mark.skipif(not (HANDS / "semeion.npz").is_file(),
                                 reason=f"the hand sources (../shared/data/hands) not found at {HANDS}")


@pytest.fixture(scope="module")
def semeion() -> HandSource:
    return load_hand(HANDS / "semeion.npz")


@pytest.fixture(scope="module")
def optdigits() -> HandSource:
    return load_hand(HANDS / "optdigits_orig_tra.npz")


def _assert_glyphs(glyphs: list[np.ndarray]) -> None:
    """As ``load_digit_glyphs`` gives them: 20 x 20 uint8, white ink on a black ground, the ink about 15 px long."""
    for glyph in glyphs:
        assert glyph.shape == (BOX, BOX) and glyph.dtype == np.uint8
        assert glyph.max() > 200 and glyph[0].max() == glyph[-1].max() == 0
        ys, xs = np.nonzero(glyph > 40)
        assert SIDE - 2 <= max(np.ptp(ys), np.ptp(xs)) + 1 <= SIDE + 1


def test_a_binary_bitmap_becomes_a_smooth_grey_glyph() -> None:
    square = np.zeros((16, 16), np.uint8)
    square[2:14, 4:12] = 255
    square[5:11, 7:9] = 0  # a "0" drawn as a block ring
    glyph = to_glyph(square, binary=True)
    assert glyph is not None
    _assert_glyphs([glyph])
    # Anti-aliased, not blocky: the edge has greys between paper and ink; the hole stays paper.
    assert ((glyph > 30) & (glyph < 225)).sum() >= 10
    assert glyph[BOX // 2, BOX // 2] < 40
    narrow = to_glyph(square, binary=True, squeeze=0.5)
    assert narrow is not None and np.count_nonzero(narrow.max(axis=0) > 40) < np.count_nonzero(glyph.max(axis=0) > 40)
    assert to_glyph(np.zeros((16, 16), np.uint8), binary=True) is None


def test_chunks_cover_the_source_in_equal_runs() -> None:
    runs = chunks(1934, 30)
    assert len(runs) == 30 and runs[0].start == 0 and runs[-1].stop == 1934
    assert all(a.stop == b.start for a, b in itertools.pairwise(runs))
    assert {len(r) for r in runs} <= {64, 65}


def test_writer_runs_are_believed_only_when_look_alikes_sit_together() -> None:
    rng = np.random.default_rng(0)
    # Ten writers one after another, each writing every digit twice alike (a dot at its own place).
    labels = np.tile(np.arange(10), 20)
    images = np.zeros((200, 10, 10), np.uint8)
    for i, digit in enumerate(labels):
        images[i, i // 20, digit] = 255
        images[i, rng.integers(10), rng.integers(10)] = 60  # and a speck, so no two are the same
    assert chunking_plausible(images, labels, 10)
    shuffled = rng.permutation(200)
    assert not chunking_plausible(images[shuffled], labels[shuffled], 10)


def test_a_missing_or_malformed_source_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="hand source not found"):
        load_hand(tmp_path / "none.npz")
    bad = tmp_path / "bad.npz"
    np.savez(bad, x=np.zeros((3, 16, 16), np.uint8), y=np.array([1, 2]))
    with pytest.raises(InputError, match="expected x"):
        load_hand(bad)


@needs_hands
def test_semeion_is_glyphs_of_every_digit_drawable_by_the_renderer(semeion: HandSource) -> None:
    assert semeion.writers is None and len(semeion.glyphs) == len(semeion.labels) == 1593
    by_digit = semeion.by_digit()
    assert all(len(by_digit[d]) > 150 for d in range(10))
    _assert_glyphs(list(semeion.glyphs[::40]))
    GlyphBank(by_digit)


@needs_hands
def test_usps_reads_its_two_files_as_one_grey_source() -> None:
    usps = load_hand([HANDS / "usps_train.npz", HANDS / "usps_test.npz"])
    assert usps.name == "usps_train" and usps.writers is None
    assert len(usps.glyphs) == 7291 + 2007
    _assert_glyphs(list(usps.glyphs[::500]))


@needs_hands
def test_optdigits_keeps_its_thirty_writers(optdigits: HandSource) -> None:
    assert optdigits.writers == 30
    _assert_glyphs(list(optdigits.glyphs[::100]))


@needs_hands
def test_a_writer_is_a_few_exemplars_of_each_digit_the_same_for_the_same_seed(semeion: HandSource) -> None:
    hand = writer_glyphs(semeion, np.random.default_rng(7), per_digit=3)
    again = writer_glyphs(semeion, np.random.default_rng(7), per_digit=3)
    other = writer_glyphs(semeion, np.random.default_rng(8), per_digit=3)
    assert sorted(hand) == list(range(10))
    assert all(len(hand[d]) == 3 for d in range(10))
    assert all(np.array_equal(a, b) for d in range(10) for a, b in zip(hand[d], again[d], strict=True))
    assert any(not np.array_equal(a, b) for d in range(10) for a, b in zip(hand[d], other[d], strict=True))
    # The exemplars are the source's own glyphs of that digit, three different ones.
    by_digit = semeion.by_digit()
    for digit, glyphs in hand.items():
        assert len({g.tobytes() for g in glyphs}) == 3
        assert all(any(g is s for s in by_digit[digit]) for g in glyphs)
    with pytest.raises(ValueError, match="per_digit"):
        writer_glyphs(semeion, np.random.default_rng(0), per_digit=0)


@needs_hands
def test_an_optdigits_writer_is_one_writers_run(optdigits: HandSource) -> None:
    runs = chunks(len(optdigits.labels), 30)
    index = {id(g): i for i, g in enumerate(optdigits.glyphs)}
    for seed in range(8):
        hand = writer_glyphs(optdigits, np.random.default_rng(seed), per_digit=3)
        picked = {d: [index[id(g)] for g in hand[d]] for d in range(10)}
        run = max(runs, key=lambda r: sum(i in r for d in range(10) for i in picked[d]))
        for digit in range(10):
            assert all(optdigits.labels[i] == digit for i in picked[digit])
            written = [i for i in run if optdigits.labels[i] == digit]
            if written:
                # The writer's own glyphs of the digit, as many as asked for when it wrote that many.
                assert set(picked[digit]) <= set(written)
                assert len(set(picked[digit])) == min(3, len(written))
            else:
                # A digit the writer never wrote: drawn from the whole source.
                assert len(picked[digit]) == 3
