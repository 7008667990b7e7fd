"""Training on many hands: the glyph source's TRAIN digits and other writers' (``digitise train --hands``).

A reader trained on one source of handwriting (MNIST's, through
``digits.png``) reads other hands much worse. The hand sources of
:mod:`digitise.sheet.hands` (USPS, Semeion, optdigits: other writers, other
pens, other habits) are written into one glyph folder with the glyph
source's TRAIN digits, which ``--glyphs`` then trains on like any folder.

The folder keeps :func:`~digitise.sheet.glyphs.load_digit_glyphs`' split: per
digit, the TRAIN part (the first four fifths) is the glyph source's TRAIN
glyphs and up to :data:`PER_DIGIT` of each hand's, shuffled together (so its
last tenth, which writes the validation matches, is of every hand); the TEST
part is the glyph source's TEST glyphs, cycled to the length the split needs.
A hand left out of training is simply not given: the benchmarks measure on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from digitise.errors import InputError
from digitise.fileio import make_folder
from digitise.sheet.glyphs import GlyphSubset, load_digit_glyphs, write_digit_glyphs
from digitise.sheet.hands import load_hand

#: Most glyphs a digit taken from one hand (USPS alone has ~900 of some digits: it would drown the others).
PER_DIGIT = 400
#: The shuffle's seed.
SEED = 20261205


def write_hand_glyphs(folder: Path, hands: Sequence[Path | Sequence[Path]], glyphs: Path | None = None,
                      *, per_digit: int = PER_DIGIT, seed: int = SEED) -> Path:
    """A glyph folder of ``glyphs``' TRAIN digits and each hand source's (a file, or files read as one)."""
    if not hands:
        raise InputError("no hand source given")
    train = load_digit_glyphs(glyphs, GlyphSubset.TRAIN)
    test = load_digit_glyphs(glyphs, GlyphSubset.TEST)
    by_hand = [load_hand(h).by_digit() for h in hands]
    rng = np.random.default_rng(seed)
    make_folder(folder)
    for digit in range(10):
        pool = list(train.get(digit, ()))
        for hand in by_hand:
            mine = hand.get(digit, [])
            picked = rng.permutation(len(mine))[:per_digit] if len(mine) > per_digit else np.arange(len(mine))
            pool.extend(mine[int(i)] for i in sorted(picked))
        order = rng.permutation(len(pool))
        kept = [pool[int(i)] for i in order[: len(pool) - len(pool) % 4]]
        held = list(test.get(digit, ()))
        if not kept or not held:
            raise InputError(f"no glyph of the digit {digit} to train or hold out", glyphs)
        # The loader's TRAIN is the first four fifths: as many TEST glyphs as a quarter of what trains.
        tail = [held[k % len(held)] for k in range(len(kept) // 4)]
        write_digit_glyphs(folder, digit, kept + tail)
    return folder


__all__ = ["PER_DIGIT", "write_hand_glyphs"]
