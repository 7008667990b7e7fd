"""Handwritten digits of writers other than MNIST's, as glyphs the renderer draws: one writer at a time.

The hand sources are small public data sets (``../shared/data/hands``: USPS,
Semeion, the original 32 x 32 optdigits bitmaps), each an ``.npz`` of ``x``
(uint8, N x H x W, ink high, paper 0) and ``y`` (labels 0-9). They are
coarser than a scan: 16 or 32 px, Semeion's and optdigits' binary. Each digit
is brought to the convention of :func:`digitise.sheet.glyphs.load_digit_glyphs`
the way MNIST made its digits of NIST's binary ones: smoothed at four times
the size (a binary bitmap's staircase blurred, then sharpened back to a pen's
edge), its ink scaled into a 20 x 20 box (longer side 15 px, centred by its
mass, clear of the box's edge) with anti-aliased grey. :func:`writer_glyphs` then gives one writer's
few exemplars of each digit, so a page is written in one hand, as a real note is.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from digitise.errors import InputError
from digitise.sheet.fonthand import BOX, SIDE

#: How much a source bitmap is enlarged before it is smoothed.
UPSCALE = 4
#: The smoothing's Gaussian sigma, in source pixels: rounds a binary bitmap's staircase.
BLUR = 0.55
#: Width of the soft threshold that sharpens a smoothed binary stroke again (0-1 grey scale): soft enough
#: that the glyph keeps a grey edge as MNIST's do, which a writer's weight thins or thickens.
EDGE = 0.4
#: Sources stored as writer after writer: file stem -> number of writers, each a run of equal length.
WRITERS = {"optdigits_orig_tra": 30}
#: Sources whose digits were stretched to fill their square: file stem -> the width kept (Semeion's
#: "1" is as wide as its "0"; MNIST's digits are about 0.8 as wide as tall).
SQUEEZE = {"semeion": 0.75}
#: A writer chunking is believed when a digit's nearest look-alike of the same digit lies in its own
#: chunk this many times more often than chance.
PLAUSIBLE = 3.0


@dataclass(frozen=True)
class HandSource:
    """Digit glyphs of one hand source, in the source's order."""

    #: Name (the first file's stem).
    name: str
    #: Glyphs: uint8 20 x 20, ink white (255) on black (0), as ``load_digit_glyphs`` gives them.
    glyphs: tuple[np.ndarray, ...]
    #: The digit of each glyph.
    labels: np.ndarray
    #: Writers stored one after another in equal runs, or ``None`` (writers unknown or mixed).
    writers: int | None

    def by_digit(self) -> dict[int, list[np.ndarray]]:
        """Every glyph, by digit (0-9)."""
        return {d: [self.glyphs[i] for i in np.flatnonzero(self.labels == d)] for d in range(10)}


def to_glyph(image: np.ndarray, *, binary: bool, squeeze: float = 1.0) -> np.ndarray | None:
    """One source bitmap (uint8, ink high) as a 20 x 20 glyph; ``None`` when it holds no ink.

    Enlarged :data:`UPSCALE` times (cubic) and blurred a little; a binary
    bitmap's blurred stroke is then sharpened back to a soft-edged pen line,
    so it is drawn with round strokes, not blocks; a grey one is brought back
    to full ink at its darkest. ``squeeze`` narrows it.
    """
    big = cv2.resize(image.astype(np.float32) / 255.0, None, fx=UPSCALE * squeeze, fy=UPSCALE,
                     interpolation=cv2.INTER_CUBIC)
    big = cv2.GaussianBlur(big, (0, 0), BLUR * UPSCALE)
    if binary:
        big = 1.0 / (1.0 + np.exp(-(big - 0.5) / (EDGE / 4.0)))
    elif big.max() > 0:
        big = big / big.max()  # a thin grey stroke the blur paled: its darkest point is full ink again
    big = np.clip(big, 0.0, 1.0)
    ys, xs = np.nonzero(big > 40 / 255)
    if ys.size == 0:
        return None
    crop = big[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
    scale = SIDE / max(crop.shape)
    size = (max(1, round(crop.shape[1] * scale)), max(1, round(crop.shape[0] * scale)))
    small = np.round(cv2.resize(crop, size, interpolation=cv2.INTER_AREA) * 255.0).astype(np.uint8)
    moments = cv2.moments(small)
    cx = moments["m10"] / moments["m00"] if moments["m00"] else small.shape[1] / 2
    cy = moments["m01"] / moments["m00"] if moments["m00"] else small.shape[0] / 2
    x0 = int(np.clip(round(BOX / 2 - cx), 1, BOX - 1 - small.shape[1]))
    y0 = int(np.clip(round(BOX / 2 - cy), 1, BOX - 1 - small.shape[0]))
    box = np.zeros((BOX, BOX), np.uint8)
    box[y0:y0 + small.shape[0], x0:x0 + small.shape[1]] = small
    return box


def chunks(count: int, writers: int) -> list[range]:
    """The index runs of ``writers`` writers stored one after another in ``count`` digits (equal lengths)."""
    bounds = [round(w * count / writers) for w in range(writers + 1)]
    return [range(a, b) for a, b in itertools.pairwise(bounds)]


def chunking_plausible(images: np.ndarray, labels: np.ndarray, writers: int) -> bool:
    """Whether ``images`` look stored writer by writer: a digit's nearest same-digit neighbour falls in its own
    chunk at least :data:`PLAUSIBLE` times as often as it would were the order random."""
    owner = np.empty(len(labels), np.int64)
    for w, run in enumerate(chunks(len(labels), writers)):
        owner[run.start:run.stop] = w
    same = total = 0
    for digit in range(10):
        idx = np.flatnonzero(labels == digit)
        if idx.size < 2:
            continue
        flat = images[idx].reshape(idx.size, -1).astype(np.float32) / 255.0
        sq = (flat * flat).sum(axis=1)
        dist = sq[:, None] + sq[None, :] - 2.0 * flat @ flat.T
        np.fill_diagonal(dist, np.inf)
        same += int((owner[idx[dist.argmin(axis=1)]] == owner[idx]).sum())
        total += idx.size
    return total > 0 and same / total >= PLAUSIBLE / writers


def load_hand(path: str | Path | Sequence[str | Path]) -> HandSource:
    """A hand source from one ``.npz`` (``x``, ``y``) or several read as one (USPS's train and test files).

    Binary sources (only 0 and 255) are smoothed into pen strokes; a source of
    :data:`WRITERS` keeps its writer runs when they look real
    (:func:`chunking_plausible`). Raises :class:`InputError` when a file is
    missing or not such an archive.
    """
    paths = [Path(path)] if isinstance(path, (str, Path)) else [Path(p) for p in path]
    if not paths:
        raise InputError("no hand source given")
    xs, ys = [], []
    for file in paths:
        if not file.is_file():
            raise InputError("hand source not found", file)
        try:
            with np.load(file) as data:
                x, y = np.asarray(data["x"], np.uint8), np.asarray(data["y"]).astype(np.int64).ravel()
        except (OSError, ValueError, KeyError) as error:
            raise InputError(f"not a hand source archive (x, y): {error}", file) from error
        if x.ndim != 3 or len(x) != len(y) or not np.isin(y, np.arange(10)).all():
            raise InputError(f"expected x (N x H x W) and y (N labels 0-9), got {x.shape} and {y.shape}", file)
        xs.append(x)
        ys.append(y)
    images, labels = np.concatenate(xs), np.concatenate(ys)
    name = paths[0].stem
    binary = bool(np.isin(images, (0, 255)).all())
    squeeze = next((s for key, s in SQUEEZE.items() if name.startswith(key)), 1.0)
    glyphs, kept = [], []
    for i, image in enumerate(images):
        glyph = to_glyph(image, binary=binary, squeeze=squeeze)
        if glyph is not None:
            glyphs.append(glyph)
            kept.append(i)
    writers = WRITERS.get(name) if len(paths) == 1 else None
    if writers is not None and (len(kept) != len(images) or not chunking_plausible(images, labels, writers)):
        writers = None
    return HandSource(name, tuple(glyphs), labels[kept], writers)


def writer_glyphs(source: HandSource, rng: np.random.Generator, per_digit: int = 3) -> dict[int, list[np.ndarray]]:
    """One writer's exemplars: up to ``per_digit`` glyphs of each digit, the same for the same ``rng`` state.

    With writer runs (:attr:`HandSource.writers`), one writer is drawn and its
    glyphs of each digit are taken (fewer when it wrote fewer; a digit it never
    wrote is drawn from the whole source). Else ``per_digit`` random glyphs of
    each digit stand in for a writer.
    """
    if per_digit < 1:
        raise ValueError("per_digit must be at least 1")
    pool = np.arange(len(source.labels))
    if source.writers is not None:
        pool = np.asarray(chunks(len(source.labels), source.writers)[int(rng.integers(source.writers))])
    drawn: dict[int, list[np.ndarray]] = {}
    for digit in range(10):
        idx = pool[source.labels[pool] == digit]
        if idx.size == 0:
            idx = np.flatnonzero(source.labels == digit)
        if idx.size == 0:
            drawn[digit] = []
            continue
        picked = rng.choice(idx, size=min(per_digit, idx.size), replace=False)
        drawn[digit] = [source.glyphs[int(i)] for i in picked]
    return drawn
