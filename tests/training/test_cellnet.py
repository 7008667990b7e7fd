"""Training the whole-cell models: calibration, figures, and a tiny run through to a loadable ONNX model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from digitise.errors import InputError, OutputError
from digitise.sheet.handwriting import HANDWRITING_VERSION
from digitise.training.celldata import CellSamples
from digitise.training.cellnet import (
    COUNTS,
    HEADS,
    CellNetOptions,
    Temperatures,
    cell_figures,
    fit_temperatures,
    probabilities,
    train_cellnets,
)
from digitise.vision.cellnet import CENTRE_SHAPE, OUTPUTS, POINT_SHAPE, OnnxCellNet


def _samples(n: int, shape: tuple[int, int], seed: int) -> CellSamples:
    rng = np.random.default_rng(seed)
    counts = np.zeros((n, HEADS), np.int64)
    counts[np.arange(n), rng.integers(0, HEADS, n)] = rng.integers(0, 3, n)
    marks = (rng.random((n, 3)) < 0.2).astype(np.int64)
    inputs = (rng.random((n, *shape)) * 255).astype(np.uint8)
    return CellSamples(inputs, counts, marks, rng.integers(0, 4, n))


def _logits_for(data: CellSamples, sharpness: float, rng: np.random.Generator) -> np.ndarray:
    """Logits that favour the truth by ``sharpness`` (overconfident when large), with noise."""
    n = len(data)
    heads = rng.normal(0, 1, (n, HEADS, COUNTS))
    heads[np.arange(n)[:, None], np.arange(HEADS)[None, :], data.counts] += 2.0
    marks = np.where(data.marks == 1, 2.0, -2.0) + rng.normal(0, 1.5, (n, 3))
    return np.concatenate([heads.reshape(n, -1), marks], axis=1) * sharpness


def test_temperatures_undo_overconfidence() -> None:
    rng = np.random.default_rng(0)
    data = _samples(800, (4, 4), 1)
    logits = _logits_for(data, 4.0, rng)
    t = fit_temperatures(logits, data)
    assert t.counts > 1.5 and all(m > 1.5 for m in t.marks)
    raw = cell_figures(probabilities(logits, Temperatures(1.0, (1.0, 1.0, 1.0))), data)
    fitted = cell_figures(probabilities(logits, t), data)
    assert fitted["top1"] == raw["top1"]  # a temperature does not change the ranking
    assert fitted["ece_top1"] < raw["ece_top1"]
    p = probabilities(logits, t)
    assert p.shape == (len(data), OUTPUTS)
    assert p[:, :HEADS * COUNTS].reshape(-1, HEADS, COUNTS).sum(axis=2) == pytest.approx(1.0)


def test_a_tiny_training_run_exports_models_the_reader_loads(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("onnx", reason="the export needs onnx (the train extra)")
    cache = tmp_path / "cells"
    cache.mkdir()
    # A cache of labelled cells stands in for the rendered pages (generation is tested apart).
    for k, part in enumerate(("fit_normal", "fit_centre", "val_normal", "val_centre")):
        for kind, shape in (("point", POINT_SHAPE), ("centre", CENTRE_SHAPE)):
            s = _samples(40, shape, 10 * k + len(kind))
            np.savez(cache / f"{part}_{kind}.ink{HANDWRITING_VERSION}.npz", inputs=s.inputs, counts=s.counts, marks=s.marks, levels=s.levels)
    out = tmp_path / "models"
    report = train_cellnets(CellNetOptions(output=out, epochs=1, cache=cache, threads=1, augment=True))
    assert set(report.figures) == {"point", "centre"}
    for path, shape in zip(report.models, (POINT_SHAPE, CENTRE_SHAPE), strict=True):
        net = OnnxCellNet(path, shape)
        p = net.predict(np.zeros((3, *shape), np.float32))
        assert p.shape == (3, OUTPUTS)
        assert p[:, :HEADS * COUNTS].reshape(3, HEADS, COUNTS).sum(axis=2) == pytest.approx(1.0, abs=1e-5)
    with pytest.raises(OutputError, match="exists already"):
        train_cellnets(CellNetOptions(output=out, epochs=1, cache=cache, threads=1))
    # A second model of a kind goes beside the first, under the name the reader averages in.
    first = {path: path.read_bytes() for path in report.models}
    second = train_cellnets(CellNetOptions(output=out, epochs=1, cache=cache, threads=1, seed=2, second=True,
                                           kinds=("point",)))
    assert [path.name for path in second.models] == ["cellnet_point_b.onnx"]
    assert (out / "cellnet_point_b.json").is_file()
    assert {path: path.read_bytes() for path in report.models} == first


def test_centre_matches_beyond_the_first_chunk_come_from_their_own_cache_files(tmp_path: Path) -> None:
    from digitise.training.cellnet import training_samples as cached_samples

    sizes = {"fit_normal": 5, "fit_centre": 7, "fit_centre1500-1600": 3, "val_normal": 4, "val_centre": 6}
    for k, (part, n) in enumerate(sizes.items()):
        for kind, shape in (("point", (4, 4)), ("centre", (4, 8))):
            s = _samples(n, shape, 10 * k + len(kind))
            np.savez(tmp_path / f"{part}_{kind}.ink{HANDWRITING_VERSION}.npz", inputs=s.inputs, counts=s.counts, marks=s.marks, levels=s.levels)
    data = cached_samples(CellNetOptions(output=tmp_path, cache=tmp_path, centre_matches=600))
    assert len(data["fit"]["centre"]) == 7 + 3  # every centre chunk
    assert len(data["fit"]["point"]) == 5 + 7  # the point squares of the first chunk only, as shipped
    assert len(data["val"]["centre"]) == 6 and len(data["val"]["point"]) == 4 + 6
    with pytest.raises(Exception, match="centre matches"):
        cached_samples(CellNetOptions(output=tmp_path, cache=tmp_path, centre_matches=7001))


@pytest.mark.parametrize(("hand", "options"), [("fonthand", {"font_hand": True}),
                                               ("mnist", {"mnist": Path("mnist-data")})])
def test_cells_written_with_another_hand_are_cached_apart(tmp_path: Path, hand: str, options: dict[str, Any]) -> None:
    """Cells of pages written with the font hand or MNIST's other digits too are other cells: never read as (nor
    over) plain ones."""
    from digitise.training.cellnet import training_samples as cached_samples

    for k, part in enumerate(("fit_normal", "fit_centre", "val_normal", "val_centre")):
        for kind, shape in (("point", (4, 4)), ("centre", (4, 8))):
            s = _samples(3 + k, shape, 10 * k + len(kind))
            np.savez(tmp_path / f"{part}_{hand}_{kind}.ink{HANDWRITING_VERSION}.npz", inputs=s.inputs,
                     counts=s.counts, marks=s.marks, levels=s.levels)
    data = cached_samples(CellNetOptions(output=tmp_path, cache=tmp_path, **options))
    assert len(data["fit"]["point"]) == 3 + 4 and len(data["val"]["centre"]) == 6


def test_the_font_hand_and_mnist_are_one_at_a_time(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="one at a time"):
        train_cellnets(CellNetOptions(output=tmp_path / "out", font_hand=True, mnist=tmp_path))


def test_augmentation_keeps_shape_and_range_and_is_seeded() -> None:
    torch = pytest.importorskip("torch")
    from digitise.training.cellnet import augment_batch

    x = torch.zeros(16, 1, *CENTRE_SHAPE)
    x[:, :, 15:35, 60:100] = 1.0
    a = augment_batch(torch, x, torch.Generator().manual_seed(3), True)
    b = augment_batch(torch, x, torch.Generator().manual_seed(3), True)
    assert a.shape == x.shape and torch.equal(a, b)
    assert float(a.min()) >= 0.0 and float(a.max()) <= 1.0
    assert not torch.equal(a, x)
    # Most of the ink stays (no cell is distorted out of view).
    assert float(a.sum(dim=(1, 2, 3)).min()) > 0.4 * float(x[0].sum())


def test_elastic_bending_moves_strokes_a_little_and_is_seeded() -> None:
    torch = pytest.importorskip("torch")
    from digitise.training.cellnet import elastic_batch

    x = torch.zeros(64, 1, *POINT_SHAPE)
    x[:, :, 20:44, 22:26] = 1.0  # a "1": one upright stroke
    a = elastic_batch(torch, x, torch.Generator().manual_seed(5), 1.0)
    b = elastic_batch(torch, x, torch.Generator().manual_seed(5), 1.0)
    assert a.shape == x.shape and torch.equal(a, b)
    assert float(a.min()) >= 0.0 and float(a.max()) <= 1.0
    moved = (a - x).abs().sum(dim=(1, 2, 3)) > 1e-3
    # Most cells bent, some left as drawn (the same share as the affine distortions).
    assert 0.5 < float(moved.float().mean()) < 1.0
    # A bend, not a new glyph: the ink stays where the stroke was, give or take a few pixels.
    near = torch.zeros_like(x)
    near[:, :, 14:50, 16:32] = 1.0
    assert float((a * near).sum()) > 0.97 * float(a.sum())
    assert torch.equal(elastic_batch(torch, x, torch.Generator().manual_seed(5), 0.0), x)


def test_cached_cells_are_only_reused_for_the_seeds_they_hold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """More whole matches than a cache holds generate only the new seeds; other counts never reuse a file."""
    from digitise.training import cellnet

    asked: list[tuple[int, int, str | None]] = []

    def fake_generate(seeds: list[int], key: str, *, only: str | None = None, **_: object) -> dict[str, CellSamples]:
        asked.append((seeds[0], seeds[-1] + 1, only))
        return {"point": _samples(len(seeds), POINT_SHAPE, seeds[0]), "centre": _samples(1, CENTRE_SHAPE, seeds[0])}

    monkeypatch.setattr(cellnet, "generate", fake_generate)
    small = CellNetOptions(tmp_path / "out", matches=140, centre_matches=10, val_matches=(2, 3), cache=tmp_path)
    first = cellnet.training_samples(small)
    assert sorted(asked) == [(0, 140, None), (1000, 1010, "centre"), (8000, 8002, None), (8100, 8103, "centre")]
    asked.clear()
    more = cellnet.training_samples(CellNetOptions(tmp_path / "out", matches=200, centre_matches=10, val_matches=(2, 3),
                                           cache=tmp_path))
    assert asked == [(140, 200, None)]  # only the new whole matches
    assert len(more["fit"]["point"]) == len(first["fit"]["point"]) + 60
    asked.clear()
    # Many-digit matches have seeds of their own and go to the point model only.
    multi = cellnet.training_samples(CellNetOptions(tmp_path / "out", matches=200, centre_matches=10, multi_matches=4,
                                            val_matches=(2, 3), cache=tmp_path))
    assert asked == [(5000, 5004, "multi")]
    assert len(multi["fit"]["point"]) == len(more["fit"]["point"]) + 4
    assert len(multi["fit"]["centre"]) == len(more["fit"]["centre"])
    with pytest.raises(InputError):
        cellnet.training_samples(CellNetOptions(tmp_path / "out", matches=1001, cache=tmp_path))
    with pytest.raises(InputError, match="many-digit"):
        cellnet.training_samples(CellNetOptions(tmp_path / "out", multi_matches=3001, cache=tmp_path))
