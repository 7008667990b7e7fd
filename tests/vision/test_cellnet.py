"""The whole-cell reader: its inputs, candidates from count heads, the shipped models on real cells.

Real cells are cut by the real page code from a synthetic page written with
the held-out TEST glyphs (never trained on).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from digitise.errors import InputError
from digitise.notation.readings import CellReading
from digitise.vision import cell_reader as cells_module
from digitise.vision.cellnet import (
    CENTRE_SHAPE,
    MAX_COUNT,
    OUTPUTS,
    POINT_SHAPE,
    VALUES,
    OnnxCellNet,
    best_multisets,
    candidates_of,
    cellnets_available,
    centre_input,
    load_cellnets,
    point_input,
    split_output,
)
from digitise.vision.cells import (
    CellAnalysis,
    CellKind,
    CellReader,
    CellReadError,
    Combination,
    combine_readings,
)

# --- inputs ---------------------------------------------------------------------------------------


def test_point_input_is_the_whole_square_resized_with_ink_stretched() -> None:
    ink = np.zeros((150, 128), np.float32)
    ink[20:40, 10:30] = 0.4  # pale pencil in the top-left corner
    x = point_input(ink)
    assert x.shape == POINT_SHAPE and x.dtype == np.float32
    assert x.max() == pytest.approx(1.0)
    # It stays where it was in the square: the top-left part of the input.
    ys, xs = np.nonzero(x > 0.5)
    assert ys.max() < POINT_SHAPE[0] * 0.3 and xs.max() < POINT_SHAPE[1] * 0.3
    assert not point_input(np.zeros((150, 128), np.float32)).any()


def test_centre_input_crops_to_the_ink_and_keeps_its_aspect() -> None:
    ink = np.zeros((110, 1200), np.float32)
    ink[30:80, 700:760] = 1.0  # one blob, 5 x 6 mm, far to the right
    ink[5, 5] = 1.0  # a speck: does not widen the crop
    x = centre_input(ink)
    assert x.shape == CENTRE_SHAPE
    ys, xs = np.nonzero(x > 0.5)
    width, height = xs.max() - xs.min() + 1, ys.max() - ys.min() + 1
    # Scaled at most CENTRE_MAX_SCALE, aspect kept (60 x 50 px of ink), centred in the input.
    assert width / height == pytest.approx(60 / 50, rel=0.15)
    assert abs((xs.min() + xs.max()) / 2 - CENTRE_SHAPE[1] / 2) <= 2
    # Ink wider than the input at that scale is shrunk to fit, not cut.
    wide = np.zeros((110, 1200), np.float32)
    wide[30:80, 100:1100] = 1.0
    xw = centre_input(wide)
    assert (xw[:, 0] == 0).all() and xw[:, 5].any() and xw[:, -6].any()
    assert not centre_input(np.zeros((110, 1200), np.float32)).any()
    with pytest.raises(ValueError):
        centre_input(np.zeros((3, 4, 5), np.float32))


# --- candidates from the count heads --------------------------------------------------------------


def _heads(rows: dict[int, list[float]]) -> np.ndarray:
    counts = np.zeros((len(VALUES), MAX_COUNT + 1))
    counts[:, 0] = 1.0
    for value, row in rows.items():
        counts[VALUES.index(value)] = row
    return counts


def test_best_multisets_are_the_most_probable_products_best_first() -> None:
    counts = _heads({3: [0.1, 0.8, 0.1, 0, 0], 5: [0.7, 0.3, 0, 0, 0], 6: [0.4, 0.6, 0, 0, 0]})
    found = best_multisets(counts, 50)
    # Brute force over every reading of at most four digits.
    brute = {}
    for choice in itertools.product(range(MAX_COUNT + 1), repeat=len(VALUES)):
        if sum(choice) <= MAX_COUNT:
            p = float(np.prod([counts[v, c] for v, c in enumerate(choice)]))
            if p > 0:
                brute[tuple(d for d, n in zip(VALUES, choice, strict=True) for _ in range(n))] = p
    expected = sorted(brute.items(), key=lambda kv: -kv[1])
    assert [p for _, p in found] == pytest.approx([p for _, p in expected][:len(found)])
    assert found[0] == ((3, 6), pytest.approx(0.8 * 0.7 * 0.6))
    assert {d for d, _ in found} == set(brute)


def test_readings_of_more_than_four_digits_are_left_out() -> None:
    counts = _heads({1: [0, 0, 0, 0, 1.0], 2: [0.2, 0.8, 0, 0, 0]})
    found = best_multisets(counts, 5)
    assert found == [((1, 1, 1, 1), pytest.approx(0.2))]


def test_candidates_of_a_model_row() -> None:
    row = np.zeros(OUTPUTS)
    row[: len(VALUES) * (MAX_COUNT + 1)] = _heads({4: [0.05, 0.95, 0, 0, 0]}).ravel()
    row[-3:] = [0.01, 0.9, 0.2]
    split = split_output(row)
    assert (split.letters, split.crossed, split.arrow) == pytest.approx((0.01, 0.9, 0.2))
    assert candidates_of(split, 5) == (CellReading((4,), 0.95), CellReading((), 0.05))


# --- the reader with fake models ------------------------------------------------------------------


class _Fixed:
    """A fake cell model: every cell reads as ``digits`` with probability ``p``."""

    def __init__(self, digits: tuple[int, ...], p: float = 0.9, crossed: float = 0.0, arrow: float = 0.0) -> None:
        counts = np.zeros((len(VALUES), MAX_COUNT + 1))
        counts[:, 0] = 1.0
        for v in set(digits):
            n = digits.count(v)
            counts[VALUES.index(v)] = 0.0
            counts[VALUES.index(v), n] = p
            counts[VALUES.index(v), 0] = 1 - p
        self.row = np.concatenate([counts.ravel(), [0.0, crossed, arrow]]).astype(np.float32)
        self.calls: list[int] = []

    def predict(self, inputs: np.ndarray) -> np.ndarray:
        self.calls.append(len(inputs))
        return np.tile(self.row, (len(inputs), 1))


class _NoGlyphs:
    """The glyph classifier for result squares: every glyph is a 7."""

    from digitise.vision.classifier import CLASSES as classes

    def predict(self, glyphs: np.ndarray) -> np.ndarray:
        out = np.zeros((len(glyphs), len(self.classes)), np.float32)
        out[:, self.classes.index("7")] = 1.0
        return out


def _blob(shape: tuple[int, int]) -> np.ndarray:
    ink = np.zeros(shape, np.float32)
    ink[40:90, 40:80] = 1.0
    return ink


def test_points_and_centre_go_to_their_models_results_are_segmented() -> None:
    point, centre = _Fixed((5, 2), 0.9), _Fixed((3, 3), 0.8, crossed=0.95)
    reader = CellReader(_NoGlyphs(), cellnets=(point, centre))  # type: ignore[arg-type]
    cells = [(_blob((150, 128)), CellKind.POINT), (_blob((110, 1200)), CellKind.CENTRE),
             (_blob((150, 128)), CellKind.RESULT), (_blob((150, 128)), CellKind.POINT)]
    got = reader.analyse_many(cells)
    assert point.calls == [2] and centre.calls == [1]  # one batch per model
    # A point square is also segmented (the fake glyph model sees a 7, which no point square holds)
    # and the two readings combined: the whole-cell reading stays on top.
    assert got[0].candidates[0].digits == (2, 5)
    assert got[0].crossed == 0.0  # an X counts in the centre only
    # The centre's digits are the model's; its X is the X finder's (a plain blob: none), not the model's.
    assert got[1].candidates[0].digits == (3, 3) and got[1].crossed == 0.0
    assert got[2].candidates[0].digits == (7,)
    assert got[3].candidates == got[0].candidates


def test_only_point_squares_the_model_is_unsure_of_are_segmented_too(monkeypatch: pytest.MonkeyPatch) -> None:
    segmented: list[CellKind] = []
    real = cells_module.segment_cell

    def spy(ink: np.ndarray, px_per_mm: float = cells_module.PX_PER_MM, kind: CellKind | None = None) -> object:
        segmented.append(kind)
        return real(ink, px_per_mm, kind)

    monkeypatch.setattr(cells_module, "segment_cell", spy)
    sure = CellReader(_NoGlyphs(), cellnets=(_Fixed((5, 2), 0.999), None))  # type: ignore[arg-type]
    got = sure.analyse_many([(_blob((150, 128)), CellKind.POINT)])[0]
    # The model alone: its probabilities as they are, no segmented reading pooled in.
    assert segmented == []
    assert got.candidates[0] == CellReading((2, 5), pytest.approx(0.999 ** 2))
    unsure = CellReader(_NoGlyphs(), cellnets=(_Fixed((5, 2), 0.9), None))  # type: ignore[arg-type]
    pooled = unsure.analyse_many([(_blob((150, 128)), CellKind.POINT)])[0]
    assert segmented == [CellKind.POINT]
    assert pooled.candidates[0].digits == (2, 5) and pooled.candidates[0].probability != pytest.approx(0.81)


def test_combined_readings_are_a_product_of_experts_over_multisets() -> None:
    whole = CellAnalysis((CellReading((3, 5), 0.6), CellReading((3,), 0.3)), 0.0, 0.0, 0.02)
    # The segmenting reader lists digits in written order, and mostly sees a lone 3.
    segmented = CellAnalysis((CellReading((3,), 0.7), CellReading((5, 3), 0.2)), 0.0, 0.1, 0.5)
    got = combine_readings(whole, segmented, 5)
    weights = {(3,): (0.3 * 0.7) ** 0.5, (3, 5): (0.6 * 0.2) ** 0.5}
    total = sum(weights.values())
    assert [c.digits for c in got.candidates] == [(3,), (3, 5)]
    # Normalised to the whole-cell reader's listed mass (0.9).
    assert got.candidates[0].probability == pytest.approx(0.9 * weights[(3,)] / total, abs=1e-6)
    assert got.arrow == pytest.approx(0.1) and got.letters == pytest.approx(0.02)
    # A reading only one reader lists gets the floor from the other.
    alone = combine_readings(whole, CellAnalysis((CellReading((6,), 1.0),), 0.0, 0.0, 0.0), 5)
    assert {c.digits for c in alone.candidates} == {(3, 5), (3,), (6,)}
    assert sum(c.probability for c in alone.candidates) == pytest.approx(0.9, abs=1e-5)


def test_a_square_both_readers_are_sure_of_stays_sure_however_long_their_lists() -> None:
    rivals = [(1,), (2,), (3,), (), (5, 5), (1, 5), (5, 6)]
    whole = CellAnalysis((CellReading((5,), 0.99), *(CellReading(r, 1e-3) for r in rivals)), 0.0, 0.0, 0.0)
    segmented = CellAnalysis((CellReading((5,), 0.9999), *(CellReading(r, 1e-5) for r in rivals)), 0.0, 0.0, 0.0)
    got = combine_readings(whole, segmented, 8)
    assert got.candidates[0].digits == (5,)
    # Each rival keeps what the two readers said of it (1e-3 and 1e-5), not the floor (0.01): with
    # seven rivals at the floor the best reading could not pass 0.93.
    assert got.candidates[0].probability > 0.99
    assert got.candidates[1].probability == pytest.approx(
        whole_mass(whole) * (1e-3 * 1e-5) ** 0.5 / ((0.99 * 0.9999) ** 0.5 + 7 * (1e-3 * 1e-5) ** 0.5), abs=1e-6)


def whole_mass(analysis: CellAnalysis) -> float:
    """The probability mass a reader's candidates list."""
    return min(1.0, sum(c.probability for c in analysis.candidates))


def test_a_weighted_sharpened_combination() -> None:
    whole = CellAnalysis((CellReading((3, 5), 0.6), CellReading((3,), 0.3)), 0.0, 0.0, 0.0)
    segmented = CellAnalysis((CellReading((3,), 0.7), CellReading((5, 3), 0.2)), 0.0, 0.0, 0.0)
    how = Combination(weight=0.8, floor=0.01, temperature=0.5)
    got = combine_readings(whole, segmented, 5, how)
    weights = {(3,): (0.3 ** 0.8 * 0.7 ** 0.2) ** 2, (3, 5): (0.6 ** 0.8 * 0.2 ** 0.2) ** 2}
    total = sum(weights.values())
    # Leaning on the whole-cell reader puts its reading first.
    assert [c.digits for c in got.candidates] == [(3, 5), (3,)]
    assert got.candidates[0].probability == pytest.approx(0.9 * weights[(3, 5)] / total, abs=1e-6)
    # The default is the plain geometric mean.
    assert combine_readings(whole, segmented, 5) == combine_readings(whole, segmented, 5, Combination(0.5, 0.01, 1.0))


def test_a_centre_combination_keeps_the_x_finders_cross_and_the_models_arrow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cells_module, "CENTRE_COMBINATION", Combination(0.7, 0.01, 1.0))
    point, centre = _Fixed((5, 2), 0.9), _Fixed((3, 3), 0.8, crossed=0.95, arrow=0.3)
    reader = CellReader(_NoGlyphs(), cellnets=(point, centre))  # type: ignore[arg-type]
    got = reader.analyse_many([(_blob((110, 1200)), CellKind.CENTRE)])[0]
    assert got.candidates[0].digits == (3, 3)
    assert got.crossed == 0.0 and got.arrow == pytest.approx(0.3)


def test_a_failing_cell_model_is_a_clear_error() -> None:
    class Broken:
        def predict(self, inputs: np.ndarray) -> np.ndarray:
            raise RuntimeError("model file truncated")

    reader = CellReader(_NoGlyphs(), cellnets=(Broken(), Broken()))  # type: ignore[arg-type]
    with pytest.raises(CellReadError, match="cell model failed: RuntimeError: model file truncated"):
        reader.read_cell(_blob((150, 128)), CellKind.POINT)


# --- the shipped models ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shipped() -> CellReader:
    if not cellnets_available():
        pytest.skip("whole-cell models not shipped")
    return CellReader(cellnets=load_cellnets())


def test_shipped_models_are_deterministic_and_small(shipped: CellReader) -> None:
    from digitise.vision.cellnet import CENTRE_MODEL, POINT_MODEL

    assert POINT_MODEL.stat().st_size + CENTRE_MODEL.stat().st_size <= 2_000_000
    rng = np.random.default_rng(3)
    inputs = rng.random((7, *POINT_SHAPE)).astype(np.float32)
    point, _ = load_cellnets()
    first = point.predict(inputs)
    assert first.tobytes() == point.predict(inputs).tobytes()
    # Batched or alone, the same bytes.
    assert point.predict(inputs[2:3]).tobytes() == first[2:3].tobytes()
    assert first.shape == (7, OUTPUTS)
    heads = first[:, : len(VALUES) * (MAX_COUNT + 1)].reshape(7, len(VALUES), MAX_COUNT + 1)
    assert heads.sum(axis=2) == pytest.approx(np.ones((7, len(VALUES))), abs=1e-5)


def test_shipped_point_model_reads_a_rendered_page(shipped: CellReader) -> None:
    """A synthetic page written with held-out TEST glyphs, cut by the real page code, read whole."""
    from digitise.game.selfplay import SelfPlayOptions, play_match
    from digitise.notation.template import load_template
    from digitise.sheet.glyphs import GlyphSubset, load_digit_glyphs
    from digitise.sheet.synth import render_match_pages
    from digitise.vision.images import PageImage
    from digitise.vision.read import analyse_page
    from tests.conftest import DIGITS_PNG

    if not DIGITS_PNG.is_file():
        pytest.skip(f"../shared/data/digits.png not found at {DIGITS_PNG}")
    template = load_template("a4")
    match = play_match(41, SelfPlayOptions(length=1))
    page = render_match_pages(match, template=template, seed=41, degrade="light",
                              glyphs=load_digit_glyphs(DIGITS_PNG, GlyphSubset.TEST), dpi=200)[0]
    reading, _ = analyse_page(PageImage("test", 1, page.image, 200.0), template, shipped, header=False)
    got = {b.index: b for b in reading.boards}
    right = total = 0
    for board in page.truth["boards"]:
        for name, digits in board["cells"].items():
            if name in ("centre", "Bres", "Wres"):
                continue
            candidates = got[board["index"]].cells.get(name, ())
            total += 1
            right += bool(candidates) and sorted(candidates[0].digits) == sorted(digits)
    assert total >= 15
    assert right >= 0.9 * total, f"{right} of {total} point squares read right"


def test_shipped_point_models_give_the_features_their_last_layer_reads(shipped: CellReader) -> None:
    """Adapting to a writer fine-tunes the last layer on these features: from them and the layer kept in the
    model's metadata, the model's own count probabilities come back."""
    from digitise.vision.cellnet import POINT_MODEL, POINT_MODEL_B

    rng = np.random.default_rng(5)
    inputs = rng.random((6, *POINT_SHAPE)).astype(np.float32)
    for path in (POINT_MODEL, POINT_MODEL_B):
        net = OnnxCellNet(path, POINT_SHAPE)
        answer = net.answer(inputs)
        assert answer.probabilities.tobytes() == net.predict(inputs).tobytes()
        (head,), (features,) = net.heads, answer.features
        assert features.shape == (6, head.weight.shape[1]) and (features >= 0).all()
        counts = answer.probabilities[:, : len(VALUES) * (MAX_COUNT + 1)].reshape(6, len(VALUES), MAX_COUNT + 1)
        assert head.count_probabilities(features) == pytest.approx(counts, abs=1e-5)
    point, _ = load_cellnets()
    mean = point.answer(inputs)  # type: ignore[attr-defined]
    assert len(mean.features) == len(point.heads) == 2  # type: ignore[attr-defined]
    assert mean.probabilities.tobytes() == point.predict(inputs).tobytes()


def test_a_model_without_features_answers_probabilities_alone() -> None:
    from digitise.vision.cellnet import MeanCellNet, ShiftedCellNet, run_answer

    net = ShiftedCellNet(MeanCellNet((_Fixed((3,), 0.9), _Fixed((5,), 0.8))), ((0, 0), (1, 0)))
    assert net.heads == ()
    answer = run_answer(net, [np.zeros(CENTRE_SHAPE, np.float32)] * 2, CENTRE_SHAPE)
    assert answer.features == () and answer.probabilities.shape == (2, OUTPUTS)


def test_a_mean_of_models_answers_their_mean_probabilities() -> None:
    from digitise.vision.cellnet import MeanCellNet

    a, b = _Fixed((3, 3), 0.9), _Fixed((5,), 0.5)
    got = MeanCellNet((a, b)).predict(np.zeros((2, *CENTRE_SHAPE), np.float32))
    assert got.shape == (2, OUTPUTS)
    assert got[0] == pytest.approx((a.row + b.row) / 2)
    counts = got[:, : len(VALUES) * (MAX_COUNT + 1)].reshape(2, len(VALUES), MAX_COUNT + 1)
    assert counts.sum(axis=2) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        MeanCellNet(())


def test_a_second_model_of_a_kind_is_averaged_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from digitise.vision import cellnet

    if not cellnets_available():
        pytest.skip("whole-cell models not shipped")
    second = tmp_path / "cellnet_point_b.onnx"
    shutil.copyfile(cellnet.POINT_MODEL, second)
    shutil.copyfile(cellnet.POINT_MODEL.with_suffix(".json"), second.with_suffix(".json"))
    monkeypatch.setattr(cellnet, "POINT_MODEL_B", second)
    monkeypatch.setattr(cellnet, "CENTRE_MODEL_B", tmp_path / "absent.onnx")
    cellnet.load_cellnets.cache_clear()
    try:
        point, centre = cellnet.load_cellnets()
        assert isinstance(point, cellnet.ShiftedCellNet) and isinstance(centre, cellnet.ShiftedCellNet)
        assert isinstance(point.net, cellnet.MeanCellNet) and len(point.net.nets) == 2
        assert not isinstance(centre.net, cellnet.MeanCellNet)
        # Two copies of one model: their mean is that model's answer.
        inputs = np.random.default_rng(5).random((3, *POINT_SHAPE)).astype(np.float32)
        alone = OnnxCellNet(cellnet.POINT_MODEL, POINT_SHAPE).predict(inputs)
        assert point.net.predict(inputs) == pytest.approx(alone, abs=1e-6)
    finally:
        cellnet.load_cellnets.cache_clear()


class _Ink:
    """A fake cell model whose answer for value 1 is how much ink its input has in one pixel."""

    def __init__(self, y: int, x: int) -> None:
        self.y, self.x = y, x

    def predict(self, inputs: np.ndarray) -> np.ndarray:
        out = np.zeros((len(inputs), OUTPUTS), np.float32)
        counts = out[:, : len(VALUES) * (MAX_COUNT + 1)].reshape(len(inputs), len(VALUES), MAX_COUNT + 1)
        counts[:, :, 0] = 1.0
        ink = inputs[:, self.y, self.x]
        counts[:, 0, 1], counts[:, 0, 0] = ink, 1.0 - ink
        return out


def test_shifted_inputs_move_by_whole_pixels_and_blank_what_moved_in() -> None:
    from digitise.vision.cellnet import shifted

    x = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4) + 1.0
    right = shifted(x, 1, 0)
    assert (right[:, :, 1:] == x[:, :, :-1]).all() and (right[:, :, 0] == 0).all()
    up = shifted(x, 0, -1)
    assert (up[:, :-1] == x[:, 1:]).all() and (up[:, -1] == 0).all()
    assert (shifted(x, 0, 0) == x).all()


def test_a_shifted_model_answers_the_mean_over_its_shifts_sharpened() -> None:
    from digitise.vision.cellnet import SHIFTS, ShiftedCellNet

    x = np.zeros((1, *CENTRE_SHAPE), np.float32)
    x[0, 10, 20] = 1.0  # one inked pixel: the fake model sees it only unshifted
    got = ShiftedCellNet(_Ink(10, 20), SHIFTS).predict(x)
    assert got.shape == (1, OUTPUTS)
    assert got[0, 1] == pytest.approx(1 / len(SHIFTS))  # P(one "1") averaged over five copies
    sharp = ShiftedCellNet(_Ink(10, 20), SHIFTS, temperature=0.5).predict(x)
    p = 1 / len(SHIFTS)
    assert sharp[0, 1] == pytest.approx(p ** 2 / (p ** 2 + (1 - p) ** 2), rel=1e-5)
    counts = sharp[:, : len(VALUES) * (MAX_COUNT + 1)].reshape(1, len(VALUES), MAX_COUNT + 1)
    assert counts.sum(axis=2) == pytest.approx(1.0)
    assert ShiftedCellNet(_Ink(10, 20), SHIFTS).predict(x[:0]).shape == (0, OUTPUTS)
    with pytest.raises(ValueError):
        ShiftedCellNet(_Ink(0, 0), ())


def test_a_shifted_model_can_ask_again_only_about_cells_it_was_unsure_of() -> None:
    from digitise.vision.cellnet import SHIFTS, ShiftedCellNet

    x = np.zeros((2, *CENTRE_SHAPE), np.float32)
    x[0, 10, 20] = 1.0  # read "1" for certain: left as it is
    x[1, 10, 20] = 0.5  # "1" or nothing, even odds: asked again, shifted
    net = ShiftedCellNet(_Ink(10, 20), SHIFTS, unsure_below=0.95)
    got = net.predict(x)
    assert got[0] == pytest.approx(_Ink(10, 20).predict(x[:1])[0])
    assert got[1, 1] == pytest.approx(0.5 / len(SHIFTS))
    sure = np.zeros((1, *CENTRE_SHAPE), np.float32)
    sure[0, 10, 20] = 1.0
    assert net.predict(sure).tobytes() == _Ink(10, 20).predict(sure).tobytes()


def test_a_missing_or_broken_cell_model_is_a_clear_error_naming_its_file(tmp_path: Path) -> None:
    model = tmp_path / "cellnet_point.onnx"
    with pytest.raises(InputError, match="not found") as found:
        OnnxCellNet(model, POINT_SHAPE)
    assert found.value.path == str(model)
    model.write_bytes(b"not a model")
    meta = model.with_suffix(".json")
    with pytest.raises(InputError, match=r"metadata missing \(run `digitise train --cellnet`\)") as found:
        OnnxCellNet(model, POINT_SHAPE)
    assert found.value.path == str(meta)
    for text in ("{not json", "[1, 2]"):
        meta.write_text(text, encoding="utf-8")
        with pytest.raises(InputError, match="bad model metadata"):
            OnnxCellNet(model, POINT_SHAPE)
    meta.write_text(json.dumps({"input_shape": list(CENTRE_SHAPE)}), encoding="utf-8")
    with pytest.raises(InputError, match="model reads"):
        OnnxCellNet(model, POINT_SHAPE)
    meta.write_text(json.dumps({"input_shape": list(POINT_SHAPE)}), encoding="utf-8")
    with pytest.raises(InputError, match="ONNX"):
        OnnxCellNet(model, POINT_SHAPE)
